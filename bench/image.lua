-- bench/image.lua — the JPEG pipeline of issue 14: decode, resize to 64x64,
-- random flip, batch of 32, over the JPEGs bench/image_peers.py make wrote
-- into IMAGE_BENCH_DIR (held in memory, as the tf.data peer holds them), in
-- images/s (medians of 5 epochs): a tide.data pipeline over the bytes as a
-- string tensor (map parallel 1 and AUTOTUNE, set against tf.data's), the
-- same op chain in a Lua loop, eagerly and as one traced function per image;
-- then each op alone, per image.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

local dir = os.getenv("IMAGE_BENCH_DIR") or "/tmp/tide_image_bench"
local blobs = {}
local p = io.popen('ls "' .. dir .. '"')
for name in p:lines() do
  if name:match("%.jpg$") then
    local f = assert(io.open(dir .. "/" .. name, "rb"))
    blobs[#blobs + 1] = f:read("a")
    f:close()
  end
end
p:close()
if #blobs == 0 then
  io.stderr:write("bench/image.lua: no JPEGs in " .. dir .. " (run bench/image_peers.py make)\n")
  os.exit(1)
end
local tensors = {}
for i, s in ipairs(blobs) do tensors[i] = tide.from_buffer(s, { #s }, "uint8") end
local I = tide.image
local BATCH = 32

-- One epoch with `prep` per image; images/s.
local function epoch(prep, inputs)
  local t0 = timing.wall()
  local n = 0
  for i = 1, #inputs, BATCH do
    local batch = {}
    for j = i, math.min(i + BATCH - 1, #inputs) do batch[#batch + 1] = prep(inputs[j]) end
    local b = tide.stack(batch)
    n = n + b.shape[1]
  end
  return n / (timing.wall() - t0)
end

local function median_rate(prep, inputs)
  epoch(prep, inputs) -- warm-up
  local rates = {}
  for r = 1, 5 do
    collectgarbage()
    rates[r] = epoch(prep, inputs)
  end
  table.sort(rates)
  return rates[3]
end

-- tide.data: the JPEGs as a string tensor, the map traced and run on the
-- pipeline's threads, batched and prefetched; images/s, median of 5 epochs.
local strings = tide.tensor(blobs, "string")
local function pipeline_rate(parallel)
  local ds = tide.data.Dataset.from_tensor_slices(strings):map(function(s)
    return I.random_flip_left_right(I.resize(I.decode_jpeg(s, { channels = 3 }), { 64, 64 }))
  end, { parallel = parallel }):batch(BATCH):prefetch(tide.data.AUTOTUNE)
  local rates = {}
  for r = 0, 5 do
    collectgarbage()
    local t0, n = timing.wall(), 0
    for b in ds:iter() do n = n + b.shape[1] end
    if r > 0 then rates[r] = n / (timing.wall() - t0) end -- r = 0: the warm-up (the trace)
  end
  table.sort(rates)
  return rates[3]
end
timing.emit("jpeg_pipeline_parallel1", pipeline_rate(1), "img/s")
timing.emit("jpeg_pipeline_autotune", pipeline_rate(tide.data.AUTOTUNE), "img/s")

local function eager(s)
  return I.random_flip_left_right(I.resize(I.decode_jpeg(s, { channels = 3 }), { 64, 64 }), { seed = 1 })
end
timing.emit("jpeg_loop_eager", median_rate(eager, blobs), "img/s")

local traced = tide.trace(function(b)
  return I.random_flip_left_right(I.resize(I.decode_jpeg(b, { channels = 3 }), { 64, 64 }), { seed = 1 })
end, { input_signature = { tide.TensorSpec({ tide.None }, "uint8") } })
timing.emit("jpeg_loop_traced", median_rate(traced, tensors), "img/s")

-- Each step alone, per image (us): where the time goes.
local decoded = {}
for i, s in ipairs(blobs) do decoded[i] = I.decode_jpeg(s, { channels = 3 }) end
local k = 0
local function next_index() k = k % #blobs + 1 return k end
timing.emit("jpeg_decode_per_image", timing.measure(function() I.decode_jpeg(blobs[next_index()]) end, 100, 5) * 1e6, "us")
local resized = I.resize(decoded[1], { 64, 64 })
timing.emit("jpeg_resize64_per_image", timing.measure(function() I.resize(decoded[next_index()], { 64, 64 }) end, 100, 5) * 1e6, "us")
timing.emit("jpeg_flip64_per_image", timing.measure(function() I.random_flip_left_right(resized, { seed = 1 }) end, 200, 5) * 1e6, "us")
