-- tests/spec/data/cache_file_spec.lua — ds:cache(filename): the first full pass
-- writes the file (atomically), later passes and later pipelines read it without
-- running the input, a partial pass keeps nothing, a corrupt file is an error.
local tide = require "tide"
local h = require "helpers"
local prog = require "tide_program"
local exists = require("tide.file").exists
local D = tide.data.Dataset

-- The names in dir (ls), sorted.
local function listing(dir)
  local p = io.popen("ls -A " .. prog.quote(dir))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  table.sort(out)
  return out
end

local function read_all(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function write_all(p, s)
  local f = assert(io.open(p, "wb"))
  f:write(s)
  f:close()
end

-- A generator dataset of {i (int32 scalar), [i, i+0.5] float64, "s<i>" string}
-- that counts its passes in counter.passes.
local function source(n, counter)
  local function gen()
    counter.passes = counter.passes + 1
    local i = -1
    return function()
      i = i + 1
      if i < n then
        return { tide.tensor(i, "int32"), tide.tensor({ i, i + 0.5 }, "float64"), tide.tensor("s" .. i) }
      end
    end
  end
  return D.from_generator(gen, { output_signature = {
    tide.TensorSpec({}, "int32"), tide.TensorSpec({ 2 }, "float64"), tide.TensorSpec({}, "string") } })
end

-- Each element of a list dataset as a Lua list of its components' totable()s.
local function rows(ds)
  local out = {}
  for a, b, c in ds:iter() do out[#out + 1] = { a:item(), b:totable(), c:item(), a.dtype, b.dtype, c.dtype } end
  return out
end

local function want_rows(n)
  local out = {}
  for i = 0, n - 1 do out[#out + 1] = { i, { i, i + 0.5 }, "s" .. i, "int32", "float64", "string" } end
  return out
end

local stderr_of = h.stderr_of

describe("Dataset:cache(filename)", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("cache") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  it("writes the first full pass, then reads the file: same order, dtypes and strings; the input runs once", function()
    local counter = { passes = 0 }
    local path = dir .. "/c.cache"
    local ds = source(5, counter):cache(path)
    assert.is_false(exists(path))
    assert.are.same(want_rows(5), rows(ds))
    assert.are.equal(1, counter.passes)
    assert.is_true(exists(path))
    assert.are.same({ "c.cache" }, listing(dir)) -- no temporary file left beside it
    assert.are.same(want_rows(5), rows(ds))
    assert.are.same(want_rows(5), rows(ds))
    assert.are.equal(1, counter.passes) -- later passes read the file, not the input
  end)

  it("serves repeat_'s later epochs from the file", function()
    local counter = { passes = 0 }
    local ds = source(3, counter):cache(dir .. "/r.cache"):repeat_(3)
    local want = want_rows(3)
    for i = 1, 6 do want[#want + 1] = want[(i - 1) % 3 + 1] end
    assert.are.same(want, rows(ds))
    assert.are.equal(1, counter.passes)
  end)

  it("reads an existing complete file in a new pipeline without running its input", function()
    local path = dir .. "/c.cache"
    source(4, { passes = 0 }):cache(path):totable()
    local counter = { passes = 0 }
    local again = source(4, counter):cache(path)
    assert.are.same(want_rows(4), rows(again))
    assert.are.equal(0, counter.passes)
    -- the file, not the input, decides: a different input still reads what was cached
    local other = source(9, counter):cache(path)
    assert.are.same(want_rows(4), rows(other))
    assert.are.equal(0, counter.passes)
  end)

  it("keeps a map element's structure and batched shapes (and an empty dataset)", function()
    local path = dir .. "/m.cache"
    local x = tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32")
    local y = tide.tensor({ 7, 8, 9 }, "int64")
    local ds = D.from_tensor_slices { image = x, label = y }:batch(2):cache(path)
    local first = ds:totable()
    local second = ds:totable()
    for _, got in ipairs { first, second } do
      assert.are.equal(2, #got)
      assert.are.same({ { 1, 2 }, { 3, 4 } }, got[1].image:totable())
      assert.are.same({ 7, 8 }, got[1].label:totable())
      assert.are.same({ { 5, 6 } }, got[2].image:totable())
      assert.are.equal("float32", got[2].image.dtype)
      assert.are.equal("int64", got[2].label.dtype)
    end
    local bools = D.from_tensor_slices(tide.tensor({ true, false, true })):cache(dir .. "/b.cache")
    bools:totable()
    local b = {}
    for v in bools:iter() do b[#b + 1] = v:item() end
    assert.are.same({ true, false, true }, b)
    local empty = D.range(0):cache(dir .. "/e.cache")
    assert.are.same({}, empty:totable())
    assert.is_true(exists(dir .. "/e.cache"))
    assert.are.same({}, empty:totable())
  end)

  it("keeps nothing from a partial pass and warns once, naming take().cache()", function()
    local counter = { passes = 0 }
    local path = dir .. "/p.cache"
    local ds = source(6, counter):cache(path)
    local msg = stderr_of(function()
      assert.are.equal(2, #ds:take(2):totable())
      assert.are.equal(3, #ds:take(3):totable())
    end)
    assert.is_truthy(msg:find("take(k):cache()", 1, true))
    local _, n = msg:gsub("stopped before its end", "")
    assert.are.equal(1, n) -- once
    assert.are.same({}, listing(dir)) -- neither the cache nor a temporary file
    -- an iterator dropped midway also keeps nothing
    h.drop(function() ds:iter()() end)
    assert.are.same({}, listing(dir))
    -- take before cache caches the first elements
    local firsts = source(6, counter):take(2):cache(path)
    assert.are.same(want_rows(2), rows(firsts))
    assert.is_true(exists(path))
    assert.are.same(want_rows(2), rows(source(6, counter):take(2):cache(path)))
  end)

  it("keeps nothing when the input fails midway", function()
    local path = dir .. "/f.cache"
    local ds = D.range(4):map(function(v)
      if v:item() == 2 then error("boom") end
      return v
    end):cache(path)
    h.errors("boom", function() ds:totable() end)
    assert.are.same({}, listing(dir))
  end)

  it("refuses a corrupt, truncated or foreign file, naming the file and offset", function()
    local path = dir .. "/c.cache"
    source(3, { passes = 0 }):cache(path):totable()
    local good = read_all(path)
    local function reads(p) return source(3, { passes = 0 }):cache(p):totable() end
    -- a flipped byte inside the second record's data: its CRC fails
    local hdr_len = 12 + #"tide.data.cache 1\n3\nint32\nfloat64\nstring\n" + 4
    local bad = good:sub(1, hdr_len + 14) .. string.char((good:byte(hdr_len + 15) + 1) % 256) .. good:sub(hdr_len + 16)
    write_all(dir .. "/flip.cache", bad)
    local err = h.errors(dir .. "/flip.cache", reads, dir .. "/flip.cache")
    assert.is_truthy(err:find("offset " .. hdr_len, 1, true), err)
    -- cut short: a truncated record
    write_all(dir .. "/cut.cache", good:sub(1, #good - 30))
    err = h.errors(dir .. "/cut.cache", reads, dir .. "/cut.cache")
    assert.is_truthy(err:find("offset", 1, true), err)
    -- cut at a record boundary (no end record): incomplete, never read as complete
    write_all(dir .. "/noend.cache", good:sub(1, hdr_len))
    h.errors("without its end record", reads, dir .. "/noend.cache")
    -- not a cache file at all
    write_all(dir .. "/text.cache", "hello, this is not a cache\n")
    h.errors(dir .. "/text.cache", reads, dir .. "/text.cache")
    -- a cache of another structure
    h.errors("holds elements of 3 components, but the dataset's have 1", function()
      D.range(3):cache(path):totable()
    end)
    h.errors("holds int32 in component 0, but the dataset has float32", function()
      D.zip { D.from_tensor_slices(tide.zeros { 3 }), D.range(3), D.range(3) }:cache(path):totable()
    end)
    -- well-framed records whose payload does not parse
    local tfrecord = require "tide.io.tfrecord"
    local w = tfrecord.TFRecordWriter(dir .. "/payload.cache")
    w:write("tide.data.cache 1\n1\nint32\n")
    w:write("\1\0\0\0" .. string.rep("\255", 8)) -- rank 1, dim -1
    w:close()
    h.errors("element record at byte offset 42", function()
      D.range(3):map(function(v) return v:cast("int32") end):cache(dir .. "/payload.cache"):totable()
    end)
  end)

  it("checks its argument", function()
    h.errors("filename must be a string", function() D.range(3):cache(5) end)
    h.errors(dir .. "/no/such/folder/c.cache", function() D.range(3):cache(dir .. "/no/such/folder/c.cache"):totable() end)
  end)
end)
