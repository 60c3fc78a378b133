-- bench/saving.lua — saving and loading 100 MiB of float32 weights (24 tensors of
-- 4 MiB and 64 of 64 KiB) with tide.safetensors, in MB/s (10^6 bytes a second),
-- medians of 5. tide's save always fsyncs the file and its folder (crash safety),
-- so save_100mb and save_100mb_fsync are the same figure; the peers
-- (bench/saving_torch.py: torch.save/load; bench/saving_safetensors.py: Python's
-- safetensors with numpy) print both, without and with an fsync of the file.
-- Loads read a file the page cache holds (it was just written).
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

local dir = os.getenv("TMPDIR") or "/tmp"
local path = dir .. "/tide_bench_saving.safetensors"

local weights, bytes = {}, 0
for i = 1, 24 do
  weights[string.format("big_%02d", i)] = tide.random.normal({ 1024, 1024 }, { seed = i })
  bytes = bytes + 4 * 1024 * 1024
end
for i = 1, 64 do
  weights[string.format("small_%02d", i)] = tide.random.normal({ 128, 128 }, { seed = 100 + i })
  bytes = bytes + 4 * 128 * 128
end

local save = timing.measure(function() tide.safetensors.save_file(weights, path) end, 1, 5)
timing.emit("save_100mb", bytes / save / 1e6, "MB/s")
timing.emit("save_100mb_fsync", bytes / save / 1e6, "MB/s")
local load = timing.measure(function() tide.safetensors.load_file(path) end, 1, 5)
timing.emit("load_100mb", bytes / load / 1e6, "MB/s")
os.remove(path)
