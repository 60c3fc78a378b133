-- bench/data_interleave.lua — interleave with cheap inner elements, its
-- function run in Lua for each input element (before: the Lua path) and
-- captured once into a template that C threads instantiate (after), at
-- parallel 1 and 2: 16 TFRecord files of 4,000 32-byte records
-- (records/s), the same with a per-file label attached by an inner map that
-- uses the element (records/s), and 1,000 [64, 8] float32 tensors sliced into rows (rows/s);
-- median of 5 passes. bench/data_interleave_peers.py runs the same in tf.data.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local D = tide.data.Dataset

local NFILES, NREC, NROWS = 16, 4000, 1000

-- The Lua path of ds: interleave calls its function in Lua for each element
-- (what every interleave did before its function was captured).
local function lua_path(ds)
  assert(ds.captured, "the function was not captured")
  ds.captured = nil
  ds._c_ok = nil
  return ds
end

local function rate(ds, want, runs)
  local times = {}
  for r = 1, runs do
    collectgarbage()
    local t0 = timing.wall()
    local count = 0
    for b in ds:iter() do count = count + b.shape[1] end
    assert(count == want, count)
    times[r] = timing.wall() - t0
  end
  table.sort(times)
  return want / times[math.ceil(runs / 2)]
end

local dir = os.getenv("DATA_INTERLEAVE_DIR")
local own = not dir
if own then dir = io.popen("mktemp -d"):read("*l") end
local names = {}
for f = 1, NFILES do
  names[f] = string.format("%s/part-%02d.tfrecord", dir, f)
  local w = tide.io.TFRecordWriter(names[f])
  for i = 1, NREC do w:write(string.format("%08d-%023d", f, i)) end
  w:close()
end
local files = D.from_tensor_slices(tide.tensor(names))
for _, p in ipairs { 1, 2 } do
  local function c() return files:interleave(function(n) return tide.data.TFRecordDataset(n) end,
    { cycle_length = 4, parallel = p }):batch(256) end
  local lua = files:interleave(function(n) return tide.data.TFRecordDataset(n) end, { cycle_length = 4, parallel = p })
  timing.emit("interleave_tfrecord_lua_p" .. p, rate(lua_path(lua):batch(256), NFILES * NREC, 5), "records/s")
  timing.emit("interleave_tfrecord_c_p" .. p, rate(c(), NFILES * NREC, 5), "records/s")
end
-- the same files with a label attached per file by the inner map (it uses the
-- element: before, the Lua path; after, its capture bound per element in C)
local labelled = D.from_tensor_slices { tide.tensor(names), tide.range(0, NFILES, 1, "int64") }
for _, p in ipairs { 1, 2 } do
  local function make()
    return labelled:interleave(function(n, label)
      return tide.data.TFRecordDataset(n):map(function(r) return r, label end)
    end, { cycle_length = 4, parallel = p })
  end
  timing.emit("interleave_tfrecord_label_lua_p" .. p, rate(lua_path(make()):batch(256), NFILES * NREC, 5), "records/s")
  timing.emit("interleave_tfrecord_label_c_p" .. p, rate(make():batch(256), NFILES * NREC, 5), "records/s")
end
if own then
  for _, n in ipairs(names) do os.remove(n) end
  os.remove(dir)
end

local x = tide.random.uniform({ NROWS, 64, 8 }, 0, 1, "float32")
local rows = D.from_tensor_slices(x)
for _, p in ipairs { 1, 2 } do
  local function make()
    return rows:interleave(function(t) return D.from_tensor_slices(t) end, { cycle_length = 4, parallel = p })
  end
  timing.emit("interleave_slices_lua_p" .. p, rate(lua_path(make()):batch(256), NROWS * 64, 5), "rows/s")
  timing.emit("interleave_slices_c_p" .. p, rate(make():batch(256), NROWS * 64, 5), "rows/s")
end
