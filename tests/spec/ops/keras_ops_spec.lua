-- tests/spec/ops/keras_ops_spec.lua — tide.ops (keras.ops) against Keras 3 with the TF backend
-- (tests/fixtures/keras_ops/cases.json, written by gen.py beside it), eager and traced, and its errors.
local tide = require "tide"
local json = require "tide.json"
local gc = require "gradcheck"

local f = assert(io.open("tests/fixtures/keras_ops/cases.json", "rb"))
local FIX = json.decode(f:read("*a"))
f:close()

-- the fixture writes NaN and the infinities as strings (JSON has none)
local SPECIAL = { nan = 0 / 0, inf = math.huge, ["-inf"] = -math.huge }
local function unspecial(v)
  if type(v) == "string" and SPECIAL[v] then return SPECIAL[v] end
  if type(v) ~= "table" then return v end
  local t = {}
  for i, x in ipairs(v) do t[i] = unspecial(x) end
  return t
end

local function flatten(v, out)
  if type(v) ~= "table" then out[#out + 1] = unspecial(v) return out end
  for _, x in ipairs(v) do flatten(x, out) end
  return out
end

local function make(e)
  local dtype = e.dtype == "bool" and "bool" or e.dtype
  local t = tide.tensor(unspecial(e.v), dtype)
  -- an empty tensor's list has lost its shape
  if e.shape and #e.shape ~= t.ndim then t = tide.reshape(t, e.shape) end
  return t
end

-- The case's arguments: tensors, lists of tensors, plain values; keyword arguments as the trailing table.
local function call_args(c)
  local a = {}
  for i, arg in ipairs(c.args) do
    if arg.tensor then a[i] = make(arg.tensor)
    elseif arg.tensors then
      local l = {}
      for j, t in ipairs(arg.tensors) do l[j] = make(t) end
      a[i] = l
    else a[i] = arg.value end
  end
  if next(c.kwargs) ~= nil then
    local kw = {}
    for k, v in pairs(c.kwargs) do kw[k] = type(v) == "table" and v.tensor and make(v.tensor) or v end
    a[#a + 1] = kw
  end
  return a
end

local function matches(what, t, e)
  assert(t.dtype == e.dtype, string.format("%s: dtype %s, Keras gives %s", what, t.dtype, e.dtype))
  local got = t.shape:as_list()
  assert(table.concat(got, ",") == table.concat(e.shape, ","),
    string.format("%s: shape (%s), Keras gives (%s)", what, table.concat(got, ","), table.concat(e.shape, ",")))
  local want = flatten(e.v, {})
  local flat = flatten(t:totable(), {})
  assert(#flat == #want, what .. ": element count")
  for i, w in ipairs(want) do
    local v = flat[i]
    assert(v == w or (type(w) == "number" and type(v) == "number" and ((v ~= v and w ~= w) or
      math.abs(v - w) <= 1e-5 * math.max(1, math.abs(w)))),
      string.format("%s: value %d is %s, Keras gives %s", what, i, tostring(v), tostring(w)))
  end
end

describe("tide.ops (keras.ops)", function()
  it("gives Keras 3's values, dtypes and shapes (" .. #FIX.cases .. " cases)", function()
    local only = os.getenv("KERAS_OPS_DEBUG") -- print every failing case instead of stopping at the first
    local bad = {}
    for i, c in ipairs(FIX.cases) do
      if only then
        local ok, err = pcall(function()
          local fn = tide.ops[c.name]
          assert(fn, "no tide.ops." .. c.name)
          local a = call_args(c)
          local r = { fn(unpack(a, 1, table.maxn(a))) }
          if #r == 1 and type(r[1]) == "table" and not tide.is_tensor(r[1]) then r = r[1] end
          assert(#r == #c.results, #r .. " results")
          for j, e in ipairs(c.results) do matches(string.format("case %d %s result %d", i, c.name, j), r[j], e) end
        end)
        if not ok then bad[#bad + 1] = i .. " " .. c.name .. ": " .. tostring(err) end
        goto continue
      end
      do
      local fn = tide.ops[c.name]
      assert.is_function(fn, "tide.ops." .. c.name)
      local a = call_args(c)
      local r = { fn(unpack(a, 1, table.maxn(a))) }
      -- functions of a variable count of results (split, meshgrid, nonzero) return one Lua list
      if #r == 1 and type(r[1]) == "table" and not tide.is_tensor(r[1]) then r = r[1] end
      assert(#r == #c.results, string.format("case %d %s: %d results, Keras gives %d", i, c.name, #r, #c.results))
      for j, e in ipairs(c.results) do matches(string.format("case %d %s result %d", i, c.name, j), r[j], e) end
      end
      ::continue::
    end
    assert(#bad == 0, table.concat(bad, "\n"))
  end)

  it("gives the same values traced as eager for its compositions", function()
    local x = tide.tensor({ { 1.5, -5, 2 }, { 7, 0, -3.25 } }, "float32")
    local idx = tide.tensor { { 2 }, { -1 } }
    local f = tide.trace(function(a, i)
      return tide.ops.take_along_axis(a, i, 1), tide.ops.argmax(a), tide.ops.cumsum(a),
        tide.ops.concatenate { a, a }, tide.ops.clip(a, -1, 2)
    end)
    local got = { f(x, idx) }
    local want = { tide.ops.take_along_axis(x, idx, 1), tide.ops.argmax(x), tide.ops.cumsum(x),
      tide.ops.concatenate { x, x }, tide.ops.clip(x, -1, 2) }
    for k = 1, #want do assert.are.same(want[k]:totable(), got[k]:totable()) end
  end)

  it("has float64 finite-difference gradients for its differentiable compositions (also traced, None dims)", function()
    local x, y = gc.random({ 2, 3, 4 }, -2, 2, 71), gc.random({ 2, 3, 4 }, -2, 2, 72)
    local p = gc.random({ 2, 3, 4 }, 0.5, 2, 73)
    local o = tide.ops
    local idx = tide.tensor { { { 0, 3 }, { 1, -1 }, { 2, 2 } }, { { 3, 3 }, { 0, -4 }, { 1, 2 } } }
    gc.check(function(a) return o.take_along_axis(a, idx, -1) end, { x })
    -- broadcast leading dims (numpy's): eager only, tide broadcasts known dims
    local idx1 = tide.tensor { { { 0, 3 }, { 1, -1 }, { 2, 2 } } }
    gc.check(function(a) return o.take_along_axis(a, idx1, -1) end, { x }, { none = false })
    gc.check(function(a) return o.take_along_axis(a, tide.tensor { 5, 0, 23, -2 }) end, { x })
    gc.check(function(a, b) return o.concatenate { a, b } end, { x, y })
    gc.check(function(a) return o.cumsum(a) end, { x })
    gc.check(function(a) return o.cumprod(a, { axis = 1 }) end, { p })
    gc.check(function(a) return o.clip(a, -1, 1) end, { x })
    gc.check(function(a) return o.log2(a) + o.log10(a) + o.exp2(a) end, { p })
    gc.check(function(a, b) return o.hypot(a, b) + o.logaddexp(a, b) end, { p, y })
    gc.check(function(a) return o.silu(a) + o.softsign(a) + o.hard_sigmoid(a) + o.relu6(a * 4) end, { x })
    gc.check(function(a) return o.log_softmax(a, { axis = 1 }) end, { x })
    gc.check(function(a) return o.swapaxes(o.moveaxis(o.flip(a), 0, -1), 0, 1) end, { x })
    gc.check(function(a, b) return o.outer(a, b) end, { x, y })
    gc.check(function(a) return o.var(a, 1) + o.amax(a, 1) end, { x })
  end)

  it("keeps tide.identity (tf.identity) and tide.trace (tf.function): tide.ops.identity is numpy's eye", function()
    local x = tide.tensor { 1, 2 }
    assert.are.same({ 1, 2 }, tide.identity(x):totable())
    assert.are.same({ { 1, 0 }, { 0, 1 } }, tide.ops.identity(2):totable())
    assert.is_function(tide.trace)
  end)

  it("names the op and the argument in its errors", function()
    local x = tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    assert.has_error(function() tide.ops.take_along_axis(x, tide.tensor { 0 }, 0) end,
      "take_along_axis: x has rank 2, indices rank 1 (they must be equal)")
    assert.has_error(function() tide.ops.take_along_axis(x, tide.tensor { { 0 } }, 2) end,
      "take_along_axis: axis 2 out of range for rank 2")
    assert.has_error(function() tide.ops.linspace(0, 1, { num = -1 }) end,
      "linspace: num must be a whole number >= 0, got -1")
    assert.has_error(function() tide.ops.swapaxes(x, 0, 2) end, "swapaxes: axis 2 out of range for rank 2")
    assert.has_error(function() tide.ops.moveaxis(x, -3, 0) end, "moveaxis: axis -3 out of range for rank 2")
    assert.has_error(function() tide.ops.clip(x, 0) end, "clip: x_min and x_max are required")
    assert.has_error(function() tide.ops.one_hot(tide.tensor { 0 }, 3, { sparse = true }) end,
      "one_hot: sparse = true is not supported (tide has no sparse one_hot)")
  end)
end)
