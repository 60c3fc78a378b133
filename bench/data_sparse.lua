-- bench/data_sparse.lua — SparseTensor elements in tide.data: a TFRecord of
-- 20,000 Examples with a VarLenFeature (0-15 int64 values each), parsed
-- record by record in a traced map and batched (128) in C, against the same
-- batch run in Lua above the C map; from_tensor_slices of a sparse value
-- (build and one pass). Records/s, median of 5 passes.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local lua_engine = require "tide.data.lua_engine"

local nrec = 20000
local path = os.getenv("DATA_BENCH_SPARSE_RECORDS") or "bench_sparse.tfrecord"
local w = tide.io.TFRecordWriter(path)
for i = 0, nrec - 1 do
  local tags = {}
  for k = 1, i % 16 do tags[k] = i * 16 + k end
  w:write(tide.io.serialize_example { tags = { int64_list = tags }, label = { int64_list = { i % 10 } } })
end
w:close()
local features = { tags = tide.io.VarLenFeature("int64"), label = tide.io.FixedLenFeature({}, "int64") }
local parsed = tide.data.TFRecordDataset(path)
  :map(function(r) return tide.io.parse_single_example(r, features) end)
local batched = parsed:batch(128)

-- Records per second over a pass read by nextf_of(), median of 5.
local function rate(open)
  local times = {}
  for r = 1, 5 do
    collectgarbage()
    local t0 = timing.wall()
    local nextf = open()
    local count = 0
    while true do
      local flat = nextf()
      if flat == nil then break end
      count = count + flat[1].shape[1] -- the label component: [batch]
    end
    assert(count == nrec, count)
    times[r] = timing.wall() - t0
  end
  table.sort(times)
  return nrec / times[3]
end
local dataset = require "tide.data.dataset"
timing.emit("sparse_varlen_parse_batch_c", rate(function() return dataset.open(batched) end), "records/s")
timing.emit("sparse_varlen_parse_batch_lua", rate(function() return lua_engine.open(batched) end), "records/s")

-- from_tensor_slices of a [10000, 32] sparse value with 4 values a row.
local n = 10000
local idx, vals = {}, {}
for r = 0, n - 1 do
  for k = 0, 3 do
    idx[#idx + 1] = { r, r % 4 + k * 7 }
    vals[#vals + 1] = r + k
  end
end
local sp = tide.SparseTensor(idx, tide.tensor(vals, "float32"), { n, 32 })
local t0 = timing.wall()
local ds = tide.data.Dataset.from_tensor_slices(sp)
timing.emit("sparse_from_tensor_slices_build_10k", timing.wall() - t0, "s")
t0 = timing.wall()
local count = 0
for _ in ds:batch(128):iter() do count = count + 1 end
timing.emit("sparse_from_tensor_slices_pass_10k", n / (timing.wall() - t0), "rows/s")
os.remove(path)
