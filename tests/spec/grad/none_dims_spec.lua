-- tests/spec/grad/none_dims_spec.lua — gradients traced with unknown (None)
-- dims: broadcasting decided when the graph runs (sum_to), results as well
-- shaped as their inputs while tracing, and the ops that used static dims
-- (slice's zeros, mean's count, tile, pad, concat, conv backprop shapes).
-- tests/support/gradcheck.lua runs every finite-difference check with None dims too.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local ffi, C = binding.ffi, binding.C
local None = tide.None

local R = gc.random

local function sum_to(x, target)
  local a = ffi.new("tide_attrs")
  for i, d in ipairs(target) do a.ints[i - 1] = d end
  a.nints = #target
  return dispatch.run_view(C.TIDE_OP_SUM_TO, a, x)
end

-- The gradients of sum(f(...) * w) w.r.t. the arguments, as a list.
local function grads(f, w)
  return function(...)
    local xs = { ... }
    local tape = tide.GradientTape()
    local y = tape:run(function()
      for _, x in ipairs(xs) do tape:watch(x) end
      return tide.reduce_sum(f(unpack(xs)) * w)
    end)
    return unpack(tape:gradient(y, xs, { unconnected_gradients = "zero" }))
  end
end

local function sig(...)
  local s = {}
  for i, d in ipairs { ... } do s[i] = tide.TensorSpec(d, "float64") end
  return { input_signature = s }
end

describe("sum_to (the gradients' unbroadcast)", function()
  it("sums over the dims broadcasting added or stretched", function()
    local x = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float64")
    h.close(sum_to(x, { 3 }), { 5, 7, 9 }, 0)
    h.close(sum_to(x, { 2, 1 }), { { 6 }, { 15 } }, 0)
    h.close(sum_to(x, { 1, 1 }), { { 21 } }, 0)
    h.close(sum_to(x, {}), { 21 }, 0)
    assert.are.same({}, sum_to(x, {}).shape:as_list())
    h.close(sum_to(x:reshape { 1, 2, 3 }, { 2, 3 }), x, 0)
    h.close(sum_to(tide.tensor({ { 1, 2 } }, "int32"), { 2 }), { 1, 2 }, 0)
  end)

  it("is a view of x when nothing is summed, and a copy otherwise", function()
    local x = tide.zeros({ 1, 2, 300 }, "float32")
    local same, summed = sum_to(x, { 2, 300 }), sum_to(x, { 1, 300 })
    x[0][1][5] = 7
    assert.are.equal(7, same[1][5]:item())
    assert.are.equal(0, summed[0][5]:item())
    -- a small (inline) x is copied: its bytes live in its header
    local small = tide.tensor({ { 1, 2 } }, "float32")
    h.close(sum_to(small, { 2 }), { 1, 2 }, 0)
  end)

  it("names what is wrong with the target", function()
    local x = R({ 2, 3 })
    h.errors("sum_to: cannot sum shape [2, 3] to a shape of rank 3", sum_to, x, { 1, 2, 3 })
    h.errors("sum_to: cannot sum shape [2, 3] to [2, 2] (that shape does not broadcast to it)", sum_to, x, { 2, 2 })
    h.errors("sum_to: the shape has a negative dimension (-1 at 0)", sum_to, x, { -1, 3 })
    h.errors("sum_to", sum_to, tide.tensor { true }, { 1 })
  end)
end)

describe("gradients traced with None dims", function()
  it("sum an operand that broadcasts along a None dim only when it runs", function()
    -- a [None, 3] and b [None, 3]: at run time b is [1, 3] and broadcasts, so
    -- its gradient sums over the rows (TF's BroadcastGradientArgs)
    local w = R({ 4, 3 }, -1, 1, 2)
    local f = grads(function(a, b) return a * b end, w)
    local tf = tide.trace(f, sig({ None, 3 }, { None, 3 }))
    local a, b = R({ 4, 3 }, -1, 1, 3), R({ 1, 3 }, -1, 1, 4)
    local ga, gb = tf(a, b)
    local ea, eb = f(a, b)
    assert.are.same({ 1, 3 }, gb.shape:as_list())
    h.close(gb, eb, 1e-12)
    h.close(ga, ea, 1e-12)
    -- and the other way round, with the same trace
    ga, gb = tf(b, a)
    assert.are.same({ 1, 3 }, ga.shape:as_list())
    h.close(ga, (f(b, a)), 1e-12)
    assert.are.equal(1, tf:trace_count())
  end)

  it("keep the dims known while tracing", function()
    local seen = {}
    local tf = tide.trace(function(x, bias)
      local gx, gb = grads(function(p, q) return tide.tanh(p + q) end, 1)(x, bias)
      seen[1], seen[2] = gx.shape:as_list(), gb.shape:as_list()
      return gx, gb
    end, sig({ None, 3 }, { 3 }))
    tf:get_concrete_function()
    assert.are.same({ None, 3 }, seen[1])
    assert.are.same({ 3 }, seen[2])
  end)

  it("of a slice write dy into zeros of the input's run-time shape", function()
    local f = grads(function(x) return x:slice { { 1, 3 }, { nil, nil, 2 } } end, 1)
    local tf = tide.trace(f, sig({ None, None }))
    for _, shape in ipairs { { 4, 3 }, { 3, 5 } } do
      local x = R(shape, -1, 1, 5)
      local g = tf(x)
      assert.are.same(shape, g.shape:as_list())
      h.close(g, (f(x)), 0)
    end
  end)

  it("of a mean over None axes divide by the count when the graph runs", function()
    local f = grads(function(x) return tide.reduce_mean(x, { 0, 2 }) end, 1)
    local tf = tide.trace(f, sig({ None, None, None }))
    local x = R({ 2, 3, 4 }, -1, 1, 6)
    h.close(tf(x), (f(x)), 1e-15)
    h.close(tf(x), h.values(tide.fill({ 2, 3, 4 }, 1 / 8, { dtype = "float64" })), 1e-15)
  end)

  it("of a convolution size its backprop ops when the graph runs", function()
    local f = grads(function(x, k) return tide.nn.conv2d(x, k, 2, "SAME") end, 1)
    local tf = tide.trace(f, sig({ None, None, None, 2 }, { 3, 3, None, None }))
    local x, k = R({ 2, 5, 4, 2 }, -1, 1, 7), R({ 3, 3, 2, 3 }, -1, 1, 8)
    local gx, gk = tf(x, k)
    local ex, ek = f(x, k)
    assert.are.same({ 2, 5, 4, 2 }, gx.shape:as_list())
    assert.are.same({ 3, 3, 2, 3 }, gk.shape:as_list())
    h.close(gx, ex, 1e-12)
    h.close(gk, ek, 1e-12)
  end)
end)

describe("nn ops traced with None dims", function()
  it("dropout draws x's run-time shape; sparse cross-entropy reads a None class count when it runs", function()
    local x = R({ 3, 4 }, -1, 1, 9)
    local drop = function(v)
      tide.random.set_seed(4)
      return tide.nn.dropout(v, 0.5, { seed = 1 })
    end
    h.close(tide.trace(drop, sig({ None, None }))(x), drop(x), 0)
    local labels = tide.tensor { { 0, 2 }, { 1, 1 } }
    local xent = function(l, v) return tide.nn.sparse_softmax_cross_entropy_with_logits(l, v) end
    local logits = R({ 2, 2, 3 }, -2, 2, 10)
    local tf = tide.trace(xent, { input_signature = { tide.TensorSpec({ None, None }, "int32"),
      tide.TensorSpec({ None, None, None }, "float64") } })
    local got = tf(labels, logits)
    assert.are.same({ 2, 2 }, got.shape:as_list())
    h.close(got, xent(labels, logits), 1e-12)
  end)

  it("layer_norm's gamma of a [C] vector needs all but one normalized dim known", function()
    local g = R({ 6 }, 0.5, 1.5, 11)
    local ln = function(v) return tide.nn.layer_norm(v, { axis = { 1, 2 }, gamma = g }) end
    local x = R({ 2, 2, 3 }, -1, 1, 12)
    h.close(tide.trace(ln, sig({ None, 2, None }))(x), ln(x), 1e-12)
    h.errors("layer_norm: gamma has shape (6,) but x (shape (None, None, None)) has 2 normalized axes of unknown " ..
      "(None) size", tide.trace(ln, sig({ None, None, None })), x)
  end)
end)
