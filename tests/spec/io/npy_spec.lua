-- tests/spec/io/npy_spec.lua — tide.io.read_npy / write_npy: files numpy wrote
-- (tests/fixtures/npy/gen.py: every shared dtype, both byte orders, Fortran
-- order, versions 1-3), the exact bytes numpy.save writes, round trips, and
-- hostile files (clear errors naming the fault).
local tide = require "tide"
local tmp = require "tmp"
local cases = dofile("tests/fixtures/npy/cases.lua")

local FIX = "tests/fixtures/npy/"

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function write_bytes(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function flat(t)
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end
  end
  walk(t:totable())
  return out
end

-- Read a hostile variant of a file; the error message.
local function error_of(bytes)
  local p = tmp.name()
  write_bytes(p, bytes)
  local ok, err = pcall(tide.io.read_npy, p)
  os.remove(p)
  assert.is_false(ok, "a hostile file was read")
  return tostring(err)
end

-- A version 1.0 file with the given header text (padded as numpy pads) and data.
local function npy(header, data)
  local total = 10 + #header + 1
  local pad = (64 - total % 64) % 64
  local h = header .. string.rep(" ", pad) .. "\n"
  return "\147NUMPY\1\0" .. string.char(#h % 256, math.floor(#h / 256)) .. h .. (data or "")
end

describe("tide.io.read_npy", function()
  for _, c in ipairs(cases) do
    it("reads " .. c.name .. ".npy as numpy wrote it", function()
      local t = tide.io.read_npy(FIX .. c.name .. ".npy")
      assert.are.equal(c.dtype, t.dtype)
      assert.are.same(c.shape, t.shape)
      assert.are.same(c.values, flat(t))
    end)
  end

  it("names the dtype tide lacks (int16, complex64) and refuses structured arrays", function()
    for _, name in ipairs { "int16", "complex64" } do
      local ok, err = pcall(tide.io.read_npy, FIX .. name .. ".npy")
      assert.is_false(ok)
      assert.truthy(tostring(err):find("which tide does not have", 1, true), tostring(err))
    end
    local ok, err = pcall(tide.io.read_npy, FIX .. "structured.npy")
    assert.is_false(ok)
    assert.truthy(tostring(err):find("structured array", 1, true), tostring(err))
  end)

  it("refuses hostile files with a clear error", function()
    local good = read_bytes(FIX .. "float32.npy")
    local data = good:sub(129)
    assert.are.equal(24, #data)
    local function has(msg, needle) assert.truthy(msg:find(needle, 1, true), msg) end
    has(error_of(""), "not a .npy file")
    has(error_of("\147NUMPZ" .. good:sub(7)), "not a .npy file")
    has(error_of(good:sub(1, 9)), "not a .npy file")
    has(error_of(good:sub(1, 60)), "truncated in its header")
    has(error_of(good:sub(1, 140)), "truncated")
    has(error_of(good .. "x"), "longer than its array")
    has(error_of("\147NUMPY\9\0" .. good:sub(9)), "version 9.0")
    has(error_of("\147NUMPY\2\0\255\255\255\127"), "claims a header of")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", data)), "other than")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False}", data)), "lacks one of")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", data)), "not True or False")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", data)), "whole numbers")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", data)), "not a tuple")
    has(error_of(npy("['descr', '<f4']", data)), "not a Python dict")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } extra", data)), "follows the dict")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", data)), "more than 8 dims")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", data)), "overflows")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, ), }", data)), "too large")
    has(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }", data)), "truncated")
    has(error_of(npy("{'descr': '<f4\0', 'fortran_order': False, 'shape': (2, 3), }", data)), "NUL byte")
    has(error_of(npy("{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }", data)), "'<u4'")
    has(error_of(npy("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", "\0\0\17\0")), "not Unicode in element 0")
    has(error_of(npy("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", "a\0\0\0b\0\0\0c\0\0\0\0\216\0\0")),
      "not Unicode in element 1")
    has(error_of(npy("{'descr': '|S0', 'fortran_order': False, 'shape': (1000000000000,), }", "")), "strings of width 0")
    has(error_of(npy("{'descr': '|S4', 'fortran_order': False, 'shape': (3,), }", "abcdefgh")), "truncated")
    has(error_of(npy("{'descr': '|S99999999999', 'fortran_order': False, 'shape': (3,), }", "abcdefgh")), "'|S99999999999'")
  end)

  it("names a missing file and refuses a path that is not a string", function()
    local ok, err = pcall(tide.io.read_npy, "/nonexistent/x.npy")
    assert.is_false(ok)
    assert.truthy(tostring(err):find("cannot open '/nonexistent/x.npy'", 1, true), tostring(err))
    ok, err = pcall(tide.io.read_npy, 5)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("path must be a non-empty string", 1, true), tostring(err))
  end)
end)

describe("tide.io.write_npy", function()
  it("writes the bytes numpy.save writes, for every dtype", function()
    for _, c in ipairs(cases) do
      -- little-endian, C order, v1.0 (strings are written as bytes: "S")
      if c.name:match("^[%w]+$") and c.name ~= "version2" and c.name ~= "version3" and c.name ~= "unicode" then
        local t = tide.io.read_npy(FIX .. c.name .. ".npy")
        local p = tmp.name()
        tide.io.write_npy(p, t)
        assert.are.equal(read_bytes(FIX .. c.name .. ".npy"), read_bytes(p), c.name)
        os.remove(p)
      end
    end
  end)

  it("writes string tensors as bytes ('S', as wide as the longest) that read back the same", function()
    local t = tide.io.read_npy(FIX .. "unicode.npy")
    local p = tmp.name()
    tide.io.write_npy(p, t)
    local head = read_bytes(p):sub(11, 40)
    assert.truthy(head:find("'descr': '|S6'", 1, true), head) -- "h\195\169llo" is 6 bytes
    assert.are.same(t:totable(), tide.io.read_npy(p):totable())
    tide.io.write_npy(p, tide.tensor({ "", "" }, "string"))
    assert.are.same({ "", "" }, tide.io.read_npy(p):totable())
    assert.truthy(read_bytes(p):find("'|S1'", 1, true))
    os.remove(p)
  end)

  it("writes views (transposed, sliced) in C order and Variables by value", function()
    local x = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32")
    local p = tmp.name()
    tide.io.write_npy(p, x:transpose())
    local back = tide.io.read_npy(p)
    assert.are.same({ 3, 2 }, back.shape)
    assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, back:totable())
    tide.io.write_npy(p, tide.Variable(tide.tensor({ 7, 8 }, "int64")))
    assert.are.same({ 7, 8 }, tide.io.read_npy(p):totable())
    os.remove(p)
  end)

  it("refuses dtypes numpy lacks and values that are not tensors, leaving no file", function()
    local p = tmp.name()
    local ok, err = pcall(tide.io.write_npy, p, tide.ones({ 2 }, "bfloat16"))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("numpy has no bfloat16 dtype (cast to float32 first)", 1, true), tostring(err))
    ok, err = pcall(tide.io.write_npy, p, { 1, 2 })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("expects a tensor or a Variable", 1, true), tostring(err))
    assert.is_nil(io.open(p, "rb"))
    ok, err = pcall(tide.io.write_npy, "/nonexistent/dir/x.npy", tide.ones { 2 })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("/nonexistent/dir/x.npy", 1, true), tostring(err))
  end)
end)
