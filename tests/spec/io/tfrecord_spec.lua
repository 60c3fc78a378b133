-- tests/spec/io/tfrecord_spec.lua — TFRecord files: tide.io.TFRecordWriter and
-- tf_record_iterator round trips (plain, GZIP, ZLIB), files TF 2.21 wrote
-- (tests/fixtures/data), byte-identical output, and every bad file an error
-- naming the file and the byte offset, never a crash.
local tide = require "tide"
local tmp = require "tmp"

local FIX = dofile("tests/fixtures/data/records_expected.lua")
local DIR = "tests/fixtures/data/"

local function read_all(path, opts)
  local out = {}
  for r in tide.io.tf_record_iterator(path, opts) do out[#out + 1] = r end
  return out
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- The message of the error fn raises (fails when it raises none).
local function error_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(err)
end

describe("TFRecord files", function()
  local big = string.rep("0123456789abcdef\0\255", 70000) -- 1.3 MB: many zlib chunks
  local records = { "", "a", "\0\1\2\255", big, "last" }

  for _, comp in ipairs { "", "GZIP", "ZLIB" } do
    it("round-trips records through TFRecordWriter and tf_record_iterator (" .. (comp == "" and "plain" or comp) .. ")",
      function()
        local path = tmp.name("_rt")
        local w = tide.io.TFRecordWriter(path, { compression_type = comp })
        for _, r in ipairs(records) do w:write(r) end
        w:close()
        w:close() -- closing twice is allowed
        local got = read_all(path, { compression_type = comp })
        assert.are.equal(#records, #got)
        for i, r in ipairs(records) do assert.is_true(r == got[i], "record " .. i) end
        if comp ~= "" then assert.is_true(#slurp(path) < #big / 10) end
        os.remove(path)
      end)
  end

  it("takes TF's bare compression string as options", function()
    local path = tmp.name("_bare")
    local w = tide.io.TFRecordWriter(path, "GZIP")
    w:write("x")
    w:close()
    assert.are.same({ "x" }, read_all(path, "GZIP"))
    assert.are.equal("\31\139", slurp(path):sub(1, 2))
    os.remove(path)
  end)

  it("reads the TFRecords TensorFlow wrote, plain and GZIP", function()
    for _, case in ipairs { { "examples.tfrecord", "" }, { "examples.tfrecord.gz", "GZIP" } } do
      local got = read_all(DIR .. case[1], { compression_type = case[2] })
      assert.are.equal(#FIX.serialized, #got)
      for i, s in ipairs(FIX.serialized) do assert.is_true(s == got[i], case[1] .. " record " .. i) end
    end
  end)

  it("writes the same bytes TensorFlow writes", function()
    local path = tmp.name("_same")
    local w = tide.io.TFRecordWriter(path)
    for _, s in ipairs(FIX.serialized) do w:write(s) end
    w:close()
    assert.is_true(slurp(path) == slurp(DIR .. "examples.tfrecord"))
    os.remove(path)
  end)

  it("flush makes records readable before close", function()
    for _, comp in ipairs { "", "GZIP" } do
      local path = tmp.name("_flush")
      local w = tide.io.TFRecordWriter(path, { compression_type = comp })
      w:write("one")
      w:flush()
      assert.are.same({ "one" }, read_all(path, { compression_type = comp }))
      w:write("two")
      w:close()
      assert.are.same({ "one", "two" }, read_all(path, { compression_type = comp }))
      os.remove(path)
    end
  end)

  it("a corrupt record is an error naming the file and the byte offset, after the good ones", function()
    local path = DIR .. "corrupt.tfrecord"
    assert.are.equal(1, FIX.verdicts["corrupt.tfrecord"].records) -- TF also read one record, then failed
    local it = tide.io.tf_record_iterator(path)
    assert.is_true(it() == FIX.serialized[1])
    local err = error_of(it)
    assert.matches("TFRecord file '" .. path:gsub("%p", "%%%0") .. "'", err)
    assert.matches("corrupted record at byte offset " .. FIX.offsets[2], err)
    assert.matches("checksum of the record's %d+ bytes of data", err)
    -- the error sticks: the reader does not resynchronize on garbage
    assert.matches("corrupted record at byte offset " .. FIX.offsets[2], error_of(it))
  end)

  it("a truncated file is an error naming the file and the byte offset, after the whole records", function()
    local path = DIR .. "truncated.tfrecord"
    assert.are.equal(2, FIX.verdicts["truncated.tfrecord"].records)
    assert.matches("truncated record at " .. FIX.offsets[3], FIX.verdicts["truncated.tfrecord"].error)
    local n = 0
    local err = error_of(function()
      for _ in tide.io.tf_record_iterator(path) do n = n + 1 end
    end)
    assert.are.equal(2, n)
    assert.matches("truncated.tfrecord", err)
    assert.matches("truncated record at byte offset " .. FIX.offsets[3], err)
  end)

  it("truncated and corrupt GZIP files are errors naming the file", function()
    local gz = slurp(DIR .. "examples.tfrecord.gz")
    local path = tmp.name("_cut.gz")
    spit(path, gz:sub(1, math.floor(#gz * 0.6)))
    assert.matches("cut.gz'.*truncated record at byte offset %d+", error_of(read_all, path, { compression_type = "GZIP" }))
    local bad = gz:sub(1, 20) .. string.char((gz:byte(21) + 77) % 256) .. gz:sub(22)
    spit(path, bad)
    local err = error_of(read_all, path, { compression_type = "GZIP" })
    assert.matches("cut.gz'", err)
    os.remove(path)
  end)

  it("a GZIP file read as plain says to pass compression_type", function()
    assert.matches('compression_type="GZIP"', error_of(read_all, DIR .. "examples.tfrecord.gz"))
  end)

  it("garbage of any kind is an error, never a crash", function()
    local path = tmp.name("_junk")
    math.randomseed(11)
    for trial = 1, 60 do
      local bytes = {}
      for i = 1, math.random(0, 200) do bytes[i] = string.char(math.random(0, 255)) end
      spit(path, table.concat(bytes))
      for _, comp in ipairs { "", "GZIP", "ZLIB" } do
        local ok, res = pcall(read_all, path, { compression_type = comp })
        if ok then
          assert.are.equal(0, #res, "trial " .. trial) -- only an empty file reads cleanly
        else
          assert.matches("junk'", tostring(res))
        end
      end
    end
    os.remove(path)
  end)

  it("refuses bad arguments with clear errors", function()
    assert.matches("cannot create '/nonexistent%-dir/x'", error_of(tide.io.TFRecordWriter, "/nonexistent-dir/x"))
    assert.matches('compression_type must be "", "GZIP" or "ZLIB", got "LZ4"',
      error_of(tide.io.TFRecordWriter, tmp.name("_x"), { compression_type = "LZ4" }))
    assert.matches("unknown option 'compresion_type'",
      error_of(tide.io.TFRecordWriter, tmp.name("_x"), { compresion_type = "GZIP" }))
    assert.matches("path must be a string", error_of(tide.io.TFRecordWriter, 42))
    assert.matches("'/nonexistent%.tfrecord' cannot be opened", error_of(tide.io.tf_record_iterator, "/nonexistent.tfrecord"))
    local path = tmp.name("_closed")
    local w = tide.io.TFRecordWriter(path)
    assert.matches("a record must be a string of bytes, got number", error_of(w.write, w, 5))
    w:close()
    assert.matches("is closed", error_of(w.write, w, "x"))
    assert.matches("is closed", error_of(w.flush, w))
    os.remove(path)
  end)

  it("a reader reports offsets and can be closed early", function()
    local r = tide.io.Reader(DIR .. "examples.tfrecord")
    assert.are.equal(0, r:offset())
    r:next()
    assert.are.equal(FIX.offsets[2], r:offset())
    r:close()
    assert.is_nil(r:next())
  end)
end)

describe("TFRecord reader and writer handles", function()
  local prog = require "tide_program"

  it("are closed once when an owner's finalizer closes them after their own finalizer ran", function()
    -- In one collection (and at lua_close) finalizers run in no set order: a
    -- proxy whose __gc calls close() may come after the handle's finalizer.
    -- The child process aborts (a double free) if a handle is closed twice.
    local dir = prog.make_tmpdir("tfrecord_gc")
    prog.write_file(dir .. "/child.lua", [[
      local tfrecord = require "tide.io.tfrecord"
      local dir = arg[1]
      local w0 = tfrecord.TFRecordWriter(dir .. "/a.tfrecord"); w0:write("x"); w0:close()
      for i = 1, 200 do
        local r = tfrecord.Reader(dir .. "/a.tfrecord")
        local p = newproxy(true)
        getmetatable(p).__gc = function() r:close(); r:close() end
        local w = tfrecord.TFRecordWriter(dir .. "/w" .. (i % 4) .. ".tfrecord")
        local q = newproxy(true)
        getmetatable(q).__gc = function() w:close(); w:close() end
        if i % 2 == 0 then _G["keep" .. i] = { p, q } end -- these live until lua_close
      end
      collectgarbage(); collectgarbage()
      local r = tfrecord.Reader(dir .. "/a.tfrecord")
      assert(r:next() == "x" and r:next() == nil and r:offset() == nil)
      r:close(); r:close()
      print("done")
    ]])
    local rc, out, err = prog.sh(dir, "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 " ..
      prog.quote(prog.path) .. " " .. prog.quote(dir .. "/child.lua") .. " " .. prog.quote(dir))
    prog.remove_tmpdir(dir)
    assert.are.equal(0, rc, err)
    assert.are.equal("done\n", out)
  end)
end)
