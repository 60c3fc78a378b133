-- tests/spec/data/files_spec.lua — TFRecordDataset and TextLineDataset: the
-- records of TF's own files (tests/fixtures/data, made by TF 2.21), GZIP, the
-- corrupt and truncated files TF refuses (under both engines), lines with "\r\n" and gzip, and errors.
local tide = require "tide"
local h = require "helpers"
local engines = require "data_engines"
local prog = require "tide_program"
local E = dofile("tests/fixtures/data/records_expected.lua")
local D = "tests/fixtures/data/"

local function strings(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:item() end
  return out
end

describe("TFRecordDataset", function()
  engines.each(function() -- the source reads in C under both; what is above it runs in each engine
    it("reads the records TF wrote, plain and GZIP, each a 0-d string", function()
      local ds = tide.data.TFRecordDataset(D .. "examples.tfrecord")
      assert.are.equal("string", ds.element_spec.dtype)
      assert.are.same(E.serialized, strings(ds))
      assert.are.same(E.serialized, strings(tide.data.TFRecordDataset({ D .. "examples.tfrecord.gz" },
        { compression_type = "GZIP" })))
      local two = strings(tide.data.TFRecordDataset { D .. "examples.tfrecord", D .. "examples.tfrecord" })
      assert.are.equal(2 * #E.serialized, #two)
    end)

    it("feeds parsing and batching, again from the start at each pass", function()
      local ds = tide.data.TFRecordDataset(D .. "examples.tfrecord"):batch(2)
      for _ = 1, 2 do
        local sizes = {}
        for b in ds:iter() do sizes[#sizes + 1] = b.shape[1] end
        assert.are.same({ 2, 1 }, sizes)
      end
    end)

    it("stops at a corrupt or truncated record after the records TF reads too, naming the file and offset", function()
      for name, v in pairs(E.verdicts) do
        local got, err = {}, nil
        local ok, e = pcall(function() for x in tide.data.TFRecordDataset(D .. name):iter() do got[#got + 1] = x end end)
        if not ok then err = tostring(e) end
        assert.are.equal(v.records, #got, name)
        assert.truthy(err and err:find(name, 1, true), tostring(err))
        -- tide names the offset where the bad record starts (TF names its data's, 12 bytes on, for a checksum)
        local at = tostring(E.offsets[v.records + 1])
        assert.truthy(err:find("offset " .. at, 1, true), err .. " should name offset " .. at)
      end
    end)
  end)

  it("names bad arguments and missing files", function()
    h.errors('compression_type must be "", "ZLIB" or "GZIP", got "LZ4"', tide.data.TFRecordDataset,
      D .. "examples.tfrecord", { compression_type = "LZ4" })
    h.errors("filenames must be a path or a non-empty list", tide.data.TFRecordDataset, {})
    h.errors("unknown option 'compression'", tide.data.TFRecordDataset, "x", { compression = "GZIP" })
    h.errors("no_such_file.tfrecord", function()
      for _ in tide.data.TFRecordDataset("no_such_file.tfrecord"):iter() do end
    end)
  end)
end)

describe("TextLineDataset", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("lines") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  it("gives each line without its \\n or \\r\\n, empty lines included, across files and gzip", function()
    prog.write_file(dir .. "/a.txt", "alpha\nbeta\r\n\ngamma")
    prog.write_file(dir .. "/b.txt", "last line\n")
    os.execute("gzip -c " .. dir .. "/a.txt > " .. dir .. "/a.txt.gz")
    local want = { "alpha", "beta", "", "gamma", "last line" }
    assert.are.same(want, strings(tide.data.TextLineDataset { dir .. "/a.txt", dir .. "/b.txt" }))
    assert.are.same({ "alpha", "beta", "", "gamma" },
      strings(tide.data.TextLineDataset(dir .. "/a.txt.gz", { compression_type = "GZIP" })))
    prog.write_file(dir .. "/empty.txt", "")
    assert.are.same({}, strings(tide.data.TextLineDataset(dir .. "/empty.txt")))
  end)

  it("feeds a traced map of string ops on the pipeline's threads", function()
    prog.write_file(dir .. "/n.txt", "1,2\n3,4\n")
    local ds = tide.data.TextLineDataset(dir .. "/n.txt"):map(function(line)
      return tide.strings.to_number(tide.strings.split(line, ","), { out_type = "int32" })
    end, { parallel = 2 })
    local got = {}
    for x in ds:iter() do got[#got + 1] = x:totable() end
    assert.are.same({ { 1, 2 }, { 3, 4 } }, got)
    h.errors('compression_type must be "" or "GZIP", got "ZLIB"', tide.data.TextLineDataset, dir .. "/n.txt",
      { compression_type = "ZLIB" })
  end)
end)
