-- bench/data_cache.lua — the cache stage over Fashion-MNIST-sized elements
-- (60,000 x {uint8 [28,28], uint8 label}): from_tensor_slices -> cache() or
-- cache(file) -> batch(128), elements/s of the first pass (which writes the
-- cache) and of a later pass (which reads it), median of 3 (a fresh cache per
-- writing run). The file lives in DATA_BENCH_DIR (default /tmp); its write
-- includes the fsyncs at the end. Runs on any build (public API only), so a
-- build of an older tree gives the "before" figures.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local D = tide.data.Dataset

local train = tide.datasets.fashion_mnist.load_data()
local x, y = train[1], train[2]
local n = x.shape[1]
local dir = os.getenv("DATA_BENCH_DIR") or "/tmp"
local path = string.format("%s/tide_bench_cache_%d.cache", dir, math.random(1, 1e9))

local function pipeline(file) return D.from_tensor_slices { x, y }:cache(file):batch(128) end

-- Seconds for one whole pass over ds.
local function pass(ds)
  collectgarbage()
  local t0 = timing.wall()
  local count = 0
  for a in ds:iter() do count = count + a.shape[1] end
  assert(count == n, count)
  return timing.wall() - t0
end

local function median(t)
  table.sort(t)
  return t[math.ceil(#t / 2)]
end

for _, kind in ipairs { "memory", "file" } do
  local file = kind == "file" and path or nil
  local writes, reads = {}, {}
  for r = 1, 3 do
    if file then os.remove(file) end
    local ds = pipeline(file)
    writes[r] = pass(ds)
    reads[r] = pass(ds)
  end
  timing.emit("cache_" .. kind .. "_write", n / median(writes), "elements/s")
  timing.emit("cache_" .. kind .. "_read", n / median(reads), "elements/s")
end
-- a new pipeline over the finished file: read without running the input
local reads = {}
for r = 1, 3 do reads[r] = pass(pipeline(path)) end
timing.emit("cache_file_read_new_pipeline", n / median(reads), "elements/s")
os.remove(path)
