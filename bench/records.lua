-- bench/records.lua — speed of the record formats: CRC-32C (crc32 instruction
-- and tables), TFRecord writing and reading (plain, GZIP), parse_example and
-- CsvDataset; prints `name: value unit` lines, medians of 5 runs.
--   build/tide bench/records.lua
local tide = require "tide"
local ffi = require "ffi"

ffi.cdef [[
uint32_t tide_crc32c_extend(uint32_t crc, const void *data, size_t n);
uint32_t tide_crc32c_extend_portable(uint32_t crc, const void *data, size_t n);
]]
local C = require("tide.binding").C

local function median(fn, reps)
  local t = {}
  for i = 1, reps or 5 do
    local t0 = os.clock()
    fn()
    t[i] = os.clock() - t0
  end
  table.sort(t)
  return t[math.ceil(#t / 2)]
end

local function report(name, value, unit) print(string.format("%s: %.4g %s", name, value, unit)) end

-- CRC-32C over 64 MB
local n = 64 * 1024 * 1024
local buf = ffi.new("uint8_t[?]", n)
for i = 0, n - 1, 4096 do buf[i] = i % 251 end
report("crc32c_hardware", n / median(function() C.tide_crc32c_extend(0, buf, n) end) / 1e9, "GB/s")
report("crc32c_tables", n / median(function() C.tide_crc32c_extend_portable(0, buf, n) end) / 1e9, "GB/s")

-- 100,000 records of 200 bytes (20 MB of data)
local rec = string.rep("x", 190) .. "0123456789"
local count = 100000
local dir = os.tmpname()
for _, comp in ipairs { "", "GZIP" } do
  local path = dir .. (comp == "" and ".plain" or ".gz")
  local tag = comp == "" and "plain" or "gzip"
  report("tfrecord_write_" .. tag, count * #rec / median(function()
    local w = tide.io.TFRecordWriter(path, { compression_type = comp })
    for _ = 1, count do w:write(rec) end
    w:close()
  end, 3) / 1e6, "MB/s")
  report("tfrecord_read_" .. tag, count * #rec / median(function()
    for _ in tide.io.tf_record_iterator(path, { compression_type = comp }) do end
  end, 3) / 1e6, "MB/s")
  os.remove(path)
end

-- parse_example: batches of 256 Examples with a scalar, a [16] float vector, a VarLen and a bytes feature
local examples = {}
for i = 1, 256 do
  local v = {}
  for k = 1, 16 do v[k] = i * k / 7 end
  examples[i] = tide.io.serialize_example { id = { int64_list = { i } }, vec = { float_list = v },
    tags = { int64_list = { i, i + 1, i + 2 } }, name = "name" .. i }
end
local features = { id = tide.io.FixedLenFeature({}, "int64"), vec = tide.io.FixedLenFeature({ 16 }, "float32"),
  tags = tide.io.VarLenFeature("int64"), name = tide.io.FixedLenFeature({}, "string") }
report("parse_example_batch256", 256 * 20 / median(function()
  for _ = 1, 20 do tide.io.parse_example(examples, features) end
end) / 1e3, "k examples/s")
report("parse_single_example", 2000 / median(function()
  for i = 1, 2000 do tide.io.parse_single_example(examples[i % 256 + 1], features) end
end) / 1e3, "k examples/s")

-- CsvDataset: 100,000 rows of int, float, string
local csv = dir .. ".csv"
local f = assert(io.open(csv, "wb"))
for i = 1, 100000 do f:write(i, ",", i / 3, ",\"row ", i, "\"\n") end
f:close()
report("csv_dataset_rows", 100000 / median(function()
  for _ in tide.data.experimental.CsvDataset(csv, { tide.tensor({ 0 }, "int64"), 0, "" }):batch(1000):iter() do end
end, 3) / 1e6, "M rows/s")
os.remove(csv)
os.remove(dir)
