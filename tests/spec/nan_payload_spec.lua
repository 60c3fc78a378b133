-- NaN payloads never reach Lua: float bytes whose NaN is not the canonical one
-- (any sign, quiet or signalling, any payload, every float dtype) read back
-- through every reader as a plain Lua NaN, never as a forged LuaJIT value.
local tide = require "tide"
local ffi = require "ffi"
local h = require "helpers"
local program = require "tide_program"

local box = ffi.new("double[1]")
local bits = ffi.cast("uint64_t *", box)
local CANONICAL = 0x7ff8000000000000ULL

-- True when v is a Lua number holding exactly the canonical NaN.
local function canonical_nan(v)
  if type(v) ~= "number" or v == v then return false end
  box[0] = v
  return bits[0] == CANONICAL
end

local function assert_canonical(v, where)
  assert(canonical_nan(v), string.format("%s: expected the canonical NaN, got a %s (%s)", where, type(v),
    type(v) == "number" and string.format("bits %s", tostring(bits[0])) or "forged"))
end

-- Little-endian bytes of an unsigned integer of `n` bytes.
local function le(u, n)
  local out = {}
  for i = 1, n do
    out[i] = string.char(tonumber(u % 256))
    u = u / 256
  end
  return table.concat(out)
end

-- NaN bit patterns per dtype: the probes from the issue, every sign, quiet and
-- signalling payloads; float64 walks every LuaJIT type tag (the top 17 bits).
local PATTERNS = {
  float32 = {
    string.char(1, 0, 0xEC, 0xFF),      -- 0xffec0001: read as a "string" before
    "\255\255\255\255",                 -- 0xffffffff: read as nil before
    le(0x7fffffffULL, 4), le(0x7f800001ULL, 4), le(0xff800001ULL, 4), le(0x7fa5a5a5ULL, 4),
    le(0xffc00000ULL, 4), le(0x7fc00001ULL, 4), le(0xffe00000ULL, 4),
  },
  float64 = { le(0xffffffffffffffffULL, 8), le(0x7ff0000000000001ULL, 8), le(0xfff0000000000001ULL, 8),
              le(0x7fffffffffffffffULL, 8), le(0xfff8000000000001ULL, 8) },
  float16 = { le(0x7c01ULL, 2), le(0xfc01ULL, 2), le(0x7fffULL, 2), le(0xffffULL, 2), le(0xfe00ULL, 2),
              le(0x7d55ULL, 2) },
  bfloat16 = { le(0xffecULL, 2), le(0x7f81ULL, 2), le(0xff81ULL, 2), le(0xffffULL, 2), le(0x7fffULL, 2),
               le(0xffc1ULL, 2) },
}
for k = 0, 15 do -- 0xfff8.. to 0xffff.. in the top 17 bits, with a payload below
  local top = 0xfff0000000000000ULL + bit.lshift(0x8ULL + k, 47 - 32) * 2 ^ 32
  PATTERNS.float64[#PATTERNS.float64 + 1] = le(top + 0x20000001ULL, 8)
end

-- Every pattern of every dtype as a one-element tensor: (dtype, bytes, tensor).
local function each_nan(fn)
  for _, dt in ipairs { "float32", "float64", "float16", "bfloat16" } do
    for i, bytes in ipairs(PATTERNS[dt]) do fn(dt .. " pattern " .. i, tide.from_buffer(bytes, {1}, dt)) end
  end
end

describe("NaN payloads", function()
  it("read back as the canonical NaN through item()", function()
    each_nan(function(where, x)
      local v = x:item()
      assert_canonical(v, where)
      assert.are.equal("number", type(v))
      assert.are.equal(0, #tostring(v):gsub("nan", "")) -- "nan" or "-nan": a number's text, no crash
    end)
  end)

  it("read back as the canonical NaN through totable(), of any rank and layout", function()
    each_nan(function(where, x)
      assert_canonical(x:totable()[1], where .. " totable")
      local m = tide.concat({ x, x, x, x }, 0):reshape{2, 2}
      for _, row in ipairs(m:totable()) do
        for _, v in ipairs(row) do assert_canonical(v, where .. " 2x2") end
      end
      for _, row in ipairs(m:transpose():totable()) do -- a strided view
        for _, v in ipairs(row) do assert_canonical(v, where .. " transposed") end
      end
      assert_canonical(x:reshape{}:totable(), where .. " 0-d totable")
    end)
  end)

  it("stay canonical through arithmetic, views, casts and indexing", function()
    each_nan(function(where, x)
      assert_canonical((x + 1):item(), where .. " x + 1")
      assert_canonical((x * x):item(), where .. " x * x")
      assert_canonical((-x):item(), where .. " -x")
      assert_canonical(tide.abs(x):item(), where .. " abs")
      assert_canonical(x:cast("float64"):item(), where .. " cast")
      assert_canonical(x:reshape{1, 1}[0][0]:item(), where .. " x[0][0]")
      assert_canonical(x:sum():item(), where .. " sum")
      assert_canonical(tide.identity(x):item(), where .. " identity")
    end)
  end)

  it("print as nan, never crash tostring", function()
    each_nan(function(where, x)
      local s = tostring(x)
      assert(s:find("[nan]", 1, true), where .. ": " .. s)
      assert(tostring(tide.concat({ x, tide.ones({1}, x.dtype) }, 0)):find("[nan  1.]", 1, true), where)
    end)
  end)

  it("compare as NaN does with Lua operators", function()
    each_nan(function(where, x)
      local one = tide.ones({1}, x.dtype)
      assert.is_false(x < one, where)
      assert.is_false(x <= one, where)
      assert.is_false(one < x, where)
      assert.is_false(x == 1, where)
      assert.is_false(x == 0 / 0, where)          -- NaN equals nothing, even NaN
      assert.is_false(x == tide.identity(x), where)
      assert.is_false(x < 1, where)
    end)
  end)

  it("reach ops that take a number from a one-element tensor as NaN", function()
    each_nan(function(where, x)
      local filled = tide.fill({2}, x:cast("float32"))
      assert_canonical(filled:totable()[2], where .. " fill")
    end)
  end)

  it("read back canonical through a Variable", function()
    each_nan(function(where, x)
      local v = tide.Variable(x, { dtype = x.dtype })
      assert_canonical(v:numpy()[1], where .. " numpy")
      assert_canonical(v:item(), where .. " v:item()")
      assert_canonical(v:read_value():item(), where .. " read_value")
      assert(tostring(v):find("value=[nan]", 1, true), where)
    end)
  end)

  it("read back canonical from a traced function's result", function()
    local f = tide.trace(function(a) return a * 2 end)
    each_nan(function(where, x) assert_canonical(f(x):item(), where .. " traced") end)
  end)

  it("print as nan (never -nan) from tide.print", function()
    local dir = program.make_tmpdir("nanprint")
    local script = dir .. "/p.lua"
    program.write_file(script, [[
      local tide = require "tide"
      tide.print(tide.from_buffer("\255\255\255\255", {1}, "float32"))
      tide.print(tide.from_buffer(string.char(0, 0, 0, 0, 0, 0, 0xf8, 0xff), {1}, "float64"))
      tide.trace(function(x) tide.print(x) end)(tide.from_buffer("\255\255", {1}, "float16"))
    ]])
    local rc, out, err = program.sh(dir, program.quote(program.path) .. " " .. program.quote(script))
    program.remove_tmpdir(dir)
    assert.are.equal(0, rc, err)
    assert.are.equal("[nan]\n[nan]\n[nan]\n", out)
  end)

  it("leave ordinary values and infinities alone", function()
    local x = tide.from_buffer(le(0xff800000ULL, 4) .. le(0x7f800000ULL, 4) .. le(0x80000000ULL, 4), {3}, "float32")
    local t = x:totable()
    assert.are.equal(-math.huge, t[1])
    assert.are.equal(math.huge, t[2])
    assert.are.equal(0, t[3])
    assert.are.equal(-math.huge, 1 / t[3]) -- -0 kept
    h.close(tide.tensor({1.5, -2.25}, "bfloat16"), {1.5, -2.25})
  end)
end)
