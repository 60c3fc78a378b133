-- bench/data_sparse.lua — SparseTensor elements in tide.data: a TFRecord of
-- 20,000 Examples with a VarLenFeature (0-15 int64 values each), parsed
-- record by record in a traced map and batched (128) in C, against the same
-- batch run in Lua above the C map; from_tensor_slices of a sparse value
-- (build, a pass of rows, a pass batched). Records/s, median of 5 passes.
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

-- from_tensor_slices of a [n, 32] sparse value with 4 values a row (every
-- 8th row empty): the build (median of 5), one pass of single rows read in
-- Lua, and one pass batched (128) in C, rows/s (median of 5).
local function sparse_value(n)
  local flat, vals = {}, {}
  for r = 0, n - 1 do
    if r % 8 ~= 7 then
      for k = 0, 3 do
        flat[#flat + 1] = r
        flat[#flat + 1] = r % 4 + k * 7
        vals[#vals + 1] = r + k
      end
    end
  end
  local idx = tide.tensor(flat, "int64"):reshape { #vals, 2 }
  return tide.SparseTensor(idx, tide.tensor(vals, "float32"), { n, 32 })
end

local function median5(fn)
  local times = {}
  for r = 1, 5 do
    collectgarbage()
    local t0 = timing.wall()
    fn()
    times[r] = timing.wall() - t0
  end
  table.sort(times)
  return times[3]
end

for _, n in ipairs { 10000, 100000 } do
  local sp = sparse_value(n)
  local tag = math.floor(n / 1000) .. "k"
  local ds
  timing.emit("sparse_from_tensor_slices_build_" .. tag,
    median5(function() ds = tide.data.Dataset.from_tensor_slices(sp) end), "s")
  local rows = 0
  local t = median5(function()
    rows = 0
    for _ in ds:iter { prefetch = false } do rows = rows + 1 end
  end)
  assert(rows == n, rows)
  timing.emit("sparse_from_tensor_slices_rows_" .. tag, n / t, "rows/s")
  local batched = ds:batch(128)
  t = median5(function()
    rows = 0
    for e in batched:iter() do rows = rows + e.dense_shape:totable()[1] end
  end)
  assert(rows == n, rows)
  timing.emit("sparse_from_tensor_slices_pass_" .. tag, n / t, "rows/s")
end
os.remove(path)
