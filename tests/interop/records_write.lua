-- tests/interop/records_write.lua — writes TFRecords of Examples (every feature kind)
-- with tide into the folder given, for records_check.py to read with TF.
local tide = require "tide"
local dir = assert(arg[1], "usage: records_write.lua DIR")

local records = {}
for i = 1, 20 do
  local words = {}
  for k = 1, i % 4 do words[k] = string.format("w%d_%d", i, k) end
  records[i] = tide.io.serialize_example {
    id = { int64_list = { i * 1000003 } },
    big = { int64_list = { 4611686018427387905LL + i } },
    vec = tide.tensor({ i / 8, -i, i * i }, "float32"),
    name = string.format("name-%d\0bin\255", i),
    tags = { int64_list = (function() local t = {} for k = 1, i % 3 do t[k] = k * i end return t end)() },
    words = { bytes_list = words },
  }
end
for _, comp in ipairs { "", "GZIP", "ZLIB" } do
  local w = tide.io.TFRecordWriter(dir .. "/examples_" .. (comp == "" and "plain" or comp) .. ".tfrecord",
    { compression_type = comp })
  for _, r in ipairs(records) do w:write(r) end
  w:close()
end
-- a large record across many zlib chunks
local w = tide.io.TFRecordWriter(dir .. "/big.tfrecord", { compression_type = "GZIP" })
w:write(string.rep("0123456789", 300000))
w:close()
