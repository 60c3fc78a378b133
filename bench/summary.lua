-- bench/summary.lua — what tide.summary costs the training loop: 10,000
-- scalar writes (us each, median of 7 runs; the writer only queues, its
-- thread writes), a scalar from a tensor, and a 30-bucket histogram.
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local median, emit = timing.measure, timing.emit

local dir = os.tmpname()
os.remove(dir)
local w = tide.summary.create_file_writer(dir)
w:set_as_default()
local S = tide.summary

local N = 10000
local step = 0
emit("scalar_write", median(function()
  for _ = 1, N do
    step = step + 1
    S.scalar("loss", 0.25, { step = step })
  end
end, 1, 7) / N * 1e6, "us")

local t = tide.tensor(0.5, "float32")
emit("scalar_write_tensor", median(function()
  for _ = 1, N do
    step = step + 1
    S.scalar("acc", t, { step = step })
  end
end, 1, 7) / N * 1e6, "us")

S.experimental.set_step(1)
emit("scalar_write_default_step", median(function()
  for _ = 1, N do S.scalar("lr", 0.001) end
end, 1, 7) / N * 1e6, "us")

local weights = tide.random.normal({ 256, 256 }, { seed = 1 })
emit("histogram_65k_values", median(function() S.histogram("w", weights, { step = 1 }) end, 20, 7) * 1e6, "us")

w:close()
os.execute("rm -rf '" .. dir .. "'")
