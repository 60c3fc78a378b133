-- The string dtype: constants, reading back (binary-safe), printing, equality,
-- errors of numeric ops, the shape ops TF allows on strings, eagerly and
-- traced, and that none of it leaks or frees a string twice (counted by
-- tide_string_live_count; ASan catches a double free under SANITIZE=1).
local tide = require "tide"
local C = require("tide.binding").C

-- Strings alive after a full collection (finalizers ran).
local function live()
  collectgarbage("collect")
  collectgarbage("collect")
  return tonumber(C.tide_string_live_count())
end

-- Run fn, drop everything it made, and check every string it made is freed.
local function no_leak(fn)
  local before = live()
  fn()
  assert.are.equal(before, live())
end

-- The same for traced functions: tracing keeps its last traces per Lua
-- function (the retracing detector), so a first call warms that up and the
-- later ones must leave the count where it was.
local function steady(fn)
  fn()
  local before = live()
  fn()
  fn()
  assert.are.equal(before, live())
end

local BIN = "x\0y\255\n'\""

describe("string tensors", function()
  it("are made from Lua strings: scalars, lists, nested lists, an explicit dtype", function()
    local s = tide.tensor("abc")
    assert.are.equal("string", s.dtype)
    assert.are.same({}, s.shape)
    assert.are.equal("abc", s:item())
    local v = tide.tensor { "a", "bc", "" }
    assert.are.same({ 3 }, v.shape)
    assert.are.same({ "a", "bc", "" }, v:totable())
    local m = tide.tensor({ { "a", "b" }, { "c", BIN } }, "string")
    assert.are.same({ { "a", "b" }, { "c", BIN } }, m:totable())
    assert.are.equal(BIN, m[1][1]:item()) -- NUL and high bytes survive
    assert.are.same({ 0 }, tide.tensor({}, "string").shape)
    assert.are.equal("string", tide.string)
  end)

  it("refuse mixing strings with numbers or booleans, and wrong dtypes", function()
    assert.has_error(function() tide.tensor { "a", 1 } end,
      "tensor: cannot mix strings and numbers in one tensor (a string at [1], a number at [2])")
    assert.has_error(function() tide.tensor { true, "a" } end,
      "tensor: cannot mix strings and booleans in one tensor (a string at [2], a boolean at [1])")
    assert.has_error(function() tide.tensor({ 1, 2 }, "string") end,
      "tensor: expected a Lua string for a string tensor, got 1 (element [1]) (tide.strings.as_string converts numbers)")
    assert.has_error(function() tide.tensor({ "1" }, "float32") end,
      'tensor: cannot put the string "1" in a float32 tensor (element [1]) (tide.strings.to_number parses numbers)')
  end)

  it("print as TF does, quoted with bytes escaped", function()
    assert.are.equal("tide.Tensor(b'abc', shape=(), dtype=string)", tostring(tide.tensor("abc")))
    assert.are.equal([[tide.Tensor([b'a' b'' b"it's" b'x\x00y\xff\n\'"'], shape=(4,), dtype=string)]],
      tostring(tide.tensor { "a", "", "it's", BIN }))
    assert.are.equal("tide.Tensor(\n[[b'a' b'bb']\n [b'c' b'd']], shape=(2, 2), dtype=string)",
      tostring(tide.tensor { { "a", "bb" }, { "c", "d" } }))
  end)

  it("compare byte-wise with equal and not_equal (broadcasting a Lua string)", function()
    local a = tide.tensor { "a", BIN, "", "ab" }
    local b = tide.tensor { "a", BIN, "x", "a" }
    assert.are.same({ true, true, false, false }, tide.equal(a, b):totable())
    assert.are.same({ false, false, true, true }, tide.not_equal(a, b):totable())
    assert.are.same({ false, false, true, false }, tide.equal(a, ""):totable())
    assert.is_true(tide.tensor("q") == tide.tensor("q"))
    assert.is_false(tide.tensor("q") == tide.tensor("r"))
    assert.has_error(function() tide.equal(a, 1) end,
      "equal: expected a Lua string for a string tensor, got 1 (tide.strings.as_string converts numbers)")
  end)

  it("refuse numeric ops and casts, naming the op and the dtype", function()
    local s = tide.tensor { "1", "2" }
    assert.has_error(function() return s + s end,
      "add: input 1 is a string tensor; add takes a numeric tensor (not bool) (strings work with shape ops, " ..
      "equal/not_equal and tide.strings)")
    assert.has_error(function() tide.reduce_sum(s) end)
    assert.has_error(function() s:cast("float32") end,
      "cast: cannot cast a string tensor (use tide.strings.to_number to parse numbers, tide.strings.as_string " ..
      "for the other way)")
    assert.has_error(function() tide.tensor { 1 }:cast("string") end,
      "cast: cannot cast to string (use tide.strings.as_string)")
    assert.has_error(function() tide.eye(2, 2, { dtype = "string" }) end)
    assert.has_error(function() tide.less(s, s) end)
  end)

  it("zeros and fill give empty strings", function()
    assert.are.same({ "", "" }, tide.zeros({ 2 }, "string"):totable())
    assert.are.same({ { "", "" } }, tide.zeros_like(tide.tensor { { "a", "b" } }):totable())
  end)
end)

describe("shape ops on strings", function()
  local function m() return tide.tensor { { "a", "bb" }, { "c", BIN } } end

  it("reshape, transpose, slice, index, expand_dims, squeeze", function()
    local x = m()
    assert.are.same({ "a", "bb", "c", BIN }, x:reshape { 4 }:totable())
    assert.are.same({ { "a", "c" }, { "bb", BIN } }, x:transpose():totable())
    assert.are.same({ "a", "c", "bb", BIN }, x:transpose():reshape { 4 }:totable()) -- a copy of a strided view
    assert.are.same({ "bb", BIN }, x:slice { {}, 1 }:totable())
    assert.are.equal("c", x[1][0]:item())
    assert.are.same({ { { "a", "bb" }, { "c", BIN } } }, tide.expand_dims(x, 0):totable())
    assert.are.same({ "a", "bb" }, tide.squeeze(x:slice { { 0, 1 } }):totable())
  end)

  it("gather, concat, stack, unstack, tile, identity, reverse, where, broadcast_to, shape", function()
    local x = m()
    assert.are.same({ BIN, "a", BIN }, tide.gather(x:reshape { 4 }, tide.tensor { 3, 0, 3 }):totable())
    assert.are.same({ { "c", BIN } }, tide.gather(x, tide.tensor { 1 }):totable())
    assert.are.same({ "a", "bb", "c", BIN, "a", "bb" }, tide.concat({ x:reshape { 4 }, x[0] }, 0):totable())
    assert.are.same({ { "a", "bb" }, { "a", "bb" } }, tide.stack { x[0], x[0] }:totable())
    assert.are.same({ "c", BIN }, tide.unstack(x)[2]:totable())
    assert.are.same({ { "a", "bb", "a", "bb" } }, tide.tile(x:slice { { 0, 1 } }, { 1, 2 }):totable())
    assert.are.same(x:totable(), tide.identity(x):totable())
    assert.are.same({ "bb", "a" }, tide.reverse(x[0], { 0 }):totable())
    assert.are.same({ "a", "n" }, tide.where(tide.tensor { true, false }, x:slice { {}, 0 }:slice { { 0, 2 } }:reshape { 2 },
      "n"):totable())
    assert.are.same({ { "z", "z" } }, tide.broadcast_to(tide.tensor "z", { 1, 2 }):totable())
    assert.are.same({ 2, 2 }, tide.shape(x):totable())
    assert.are.equal(4, tide.size(x))
    assert.are.equal(2, tide.rank(x):item())
  end)

  it("writes into a string tensor by index", function()
    local x = m()
    x[0] = tide.tensor { "p", "q" }
    assert.are.same({ { "p", "q" }, { "c", BIN } }, x:totable())
    x[1] = "r"
    assert.are.same({ { "p", "q" }, { "r", "r" } }, x:totable())
  end)

  it("leak nothing and free nothing twice, eagerly", function()
    no_leak(function()
      for _ = 1, 3 do
        local x = m()
        local t = x:transpose()
        local views = { x:reshape { 4 }, t, x[1], x:slice { {}, 1 }, tide.expand_dims(x, 1), tide.squeeze(x[0]) }
        local copies = { t:reshape { 4 }, tide.gather(x, tide.tensor { 1, 1, 0 }), tide.concat({ x, t }, 1),
          tide.stack { x, t }, tide.tile(t, { 2, 3 }), tide.identity(t), tide.reverse(t, { 1 }),
          tide.where(tide.tensor { { true, false } }, x, t), tide.broadcast_to(x[0], { 5, 2 }):reshape { 10 },
          tide.equal(x, t), tide.zeros_like(x), tide.gather_nd(t, tide.tensor { { 1, 0 } }) }
        local parts = tide.unstack(t, { axis = 1 })
        x[0] = t[1]
        assert.are.equal(BIN, copies[1]:totable()[4])
        assert.are.equal(#parts, 2)
        assert.are.equal(#views, 6)
      end
    end)
  end)
end)

describe("strings in traced functions", function()
  it("take string inputs of unknown length, capture string constants, return strings", function()
    local k = tide.tensor { "k1", "k2" }
    local f = tide.trace(function(x)
      local both = tide.concat({ x, k }, 0)
      local t = tide.tile(tide.reverse(both, { 0 }), { 2 })
      local g = tide.gather(t, tide.tensor { 0, 1 })
      return both, tide.equal(both, "k1"), tide.where(tide.equal(g, "k2"), g, tide.tensor "other"),
        tide.stack { g, g }:transpose():reshape { -1 }, tide.identity(x)
    end, { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    steady(function()
      for _ = 1, 3 do
        local a, e, w, st, id = f(tide.tensor { "a", BIN })
        assert.are.same({ "a", BIN, "k1", "k2" }, a:totable())
        assert.are.same({ false, false, true, false }, e:totable())
        assert.are.same({ "k2", "other" }, w:totable())
        assert.are.same({ "k2", "k2", "k1", "k1" }, st:totable())
        assert.are.same({ "a", BIN }, id:totable())
      end
      local a = f(tide.tensor { "only" })
      assert.are.same({ "only", "k1", "k2" }, a:totable())
    end)
  end)

  it("run small string intermediates (no inline or arena slots), unstack and slices", function()
    local f = tide.trace(function(x)
      local y = tide.identity(x):reshape { 2, 2 }
      local parts = tide.unstack(y)
      return tide.concat({ parts[2], parts[1], y[0], tide.gather(y, tide.tensor { 1 })[0] }, 0)
    end)
    steady(function()
      for _ = 1, 4 do
        local r = f(tide.tensor { "a", "b", "c", "d" })
        assert.are.same({ "c", "d", "a", "b", "a", "b", "c", "d" }, r:totable())
      end
    end)
  end)

  it("refuse numeric ops on string inputs while tracing", function()
    local f = tide.trace(function(x) return x + 1 end)
    assert.has_error(function() f(tide.tensor { "a" }) end)
    local spec = tide.TensorSpec({ tide.None }, "string")
    assert.are.equal("string", spec.dtype)
  end)
end)
