-- tests/spec/layers/activation_spec.lua — the activation layers beyond
-- Keras's values (keras_more_values_spec): options and their errors, masks
-- passed on and Softmax's mask, None dims in traces, float64 gradient checks
-- of PReLU and the masked and multi-axis Softmax.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers
local keras_mask = require "tide.keras_mask"

local function none_spec(x)
  local d = {}
  for i = 1, x.ndim do d[i] = tide.None end
  return tide.TensorSpec(d, x.dtype)
end

-- layer traced over all-None dims gives its eager values.
local function traced_equals(layer, x, opts)
  local f = tide.trace(function(v) return layer(v, opts) end, { input_signature = { none_spec(x) } })
  h.close(f(x), layer(x, opts):totable(), 1e-6)
end

describe("activation layers", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(21)
    tide.config.set_retracing_warning(false) -- a Function per layer, on purpose
  end)
  after_each(function() tide.config.set_retracing_warning(true) end)

  it("ReLU{6} is relu6 (MobileNet's), options checked as Keras's", function()
    local x = tide.tensor({ { -3, 0.5, 5, 7, 12 } }, "float32")
    h.close(L.ReLU { 6 }(x), { { 0, 0.5, 5, 6, 6 } }, 0)
    h.close(L.ReLU { max_value = 6, threshold = 1, negative_slope = 0.5 }(x), { { -2, -0.25, 5, 6, 6 } }, 0)
    assert.are.equal(6, L.ReLU { 6 }:get_config().max_value)
    h.errors("ReLU: max_value must be a non-negative number", L.ReLU, { -1 })
    h.errors("ReLU: negative_slope must be a non-negative number", L.ReLU, { negative_slope = -0.1 })
    h.errors("ReLU: threshold must be a non-negative number", L.ReLU, { threshold = "x" })
    h.errors("ReLU: unknown option 'slope'", L.ReLU, { slope = 1 })
  end)

  it("LeakyReLU's default slope is Keras 3's 0.3, alpha is its old name; ELU's alpha", function()
    local x = tide.tensor({ -2, 3 }, "float32")
    h.close(L.LeakyReLU()(x), { -0.6, 3 }, 1e-7)
    h.close(L.LeakyReLU { alpha = 0.5 }(x), { -1, 3 }, 1e-7)
    assert.are.equal(0.5, L.LeakyReLU { alpha = 0.5 }:get_config().negative_slope)
    h.errors("LeakyReLU: negative_slope must be a non-negative number", L.LeakyReLU, { -1 })
    h.close(L.ELU { 2 }(x), { 2 * (math.exp(-2) - 1), 3 }, 1e-6)
    assert.are.equal(2, L.ELU:from_config(L.ELU { 2 }:get_config()).alpha) -- (Keras's config drops it)
    h.errors("ELU: alpha must be a number", L.ELU, { "big" })
  end)

  it("PReLU: alpha shaped like the input without the batch, shared axes of size 1, its checks", function()
    local p = L.PReLU { alpha_initializer = "ones", shared_axes = { 1, 2 } }
    local y = p(tide.random.normal { 2, 4, 5, 3 })
    assert.are.same({ 1, 1, 3 }, p.alpha.shape:as_list())
    assert.are.same({ 2, 4, 5, 3 }, y.shape:as_list())
    -- the shared axes may differ at the next call; the channels may not
    p(tide.ones { 1, 7, 2, 3 })
    h.errors("expected axis 3 of the input to have size 3", p, tide.ones { 1, 4, 5, 2 })
    local q = L.PReLU { shared_axes = 1 }
    q(tide.ones { 2, 6, 3 })
    assert.are.same({ 1, 3 }, q.alpha.shape:as_list())
    h.errors("shared_axes must hold axes >= 1", L.PReLU, { shared_axes = { 0 } })
    h.errors("shared_axes 3 is out of range", L.PReLU { shared_axes = 3 }, tide.ones { 2, 3, 4 })
    h.errors("expects an input of rank >= 2", L.PReLU(), tide.ones { 3 })
    h.errors("must be known to build alpha", function()
      L.PReLU()(L.Input { shape = { tide.None, 3 } })
    end)
    local r = L.PReLU { alpha_regularizer = tide.regularizers.L2(0.5), alpha_initializer = tide.initializers.Constant(2) }
    r(tide.ones { 1, 2 })
    h.close(r.losses[1], { 0.5 * 8 }, 1e-6)
  end)

  it("PReLU's gradients (float64) with respect to the input and alpha", function()
    local p = L.PReLU { dtype = "float64", shared_axes = { 1 } }
    local x = tide.random.normal({ 3, 4, 2 }, { dtype = "float64" })
    p(x)
    p.alpha:assign(tide.random.uniform({ 1, 2 }, { minval = 0.1, maxval = 0.9, dtype = "float64" }))
    gc.check(function(v) return p(v) end, { x })
    local alpha = tide.identity(p.alpha:read_value())
    gc.check(function(a) return tide.relu(x) - a * tide.relu(-x) end, { alpha })
  end)

  it("Softmax: a mask leaves positions out (0 there), as a call option or the input's own mask", function()
    local x = tide.tensor({ { 1, 2, 3, 4 }, { 0, 0, 0, 0 } }, "float32")
    local m = tide.tensor({ { true, false, true, false }, { false, false, false, true } }, "bool")
    local y = L.Softmax()(x, { mask = m })
    local e1, e3 = math.exp(1), math.exp(3)
    h.close(y, { { e1 / (e1 + e3), 0, e3 / (e1 + e3), 0 }, { 0, 0, 0, 1 } }, 1e-6)
    -- a mask riding with the input is used, and passed on
    local xm = tide.identity(x)
    keras_mask.set(xm, m)
    local s = L.Softmax()
    local ym = s(xm)
    h.close(ym, y:totable(), 0)
    h.close(keras_mask.get(ym), m:totable(), 0)
    -- broadcast masks (attention's [B, 1, T] over [B, T, T]), float and integer masks
    local scores = tide.random.normal { 2, 3, 3 }
    local keep = tide.tensor({ { { 1, 1, 0 } }, { { 1, 0, 0 } } }, "float32")
    local a = L.Softmax()(scores, { mask = keep })
    h.close(tide.reduce_sum(a, -1), { { 1, 1, 1 }, { 1, 1, 1 } }, 1e-6)
    h.close(a:slice { {}, {}, 2 }, { { 0, 0, 0 }, { 0, 0, 0 } }, 0)
    h.close(L.Softmax()(scores, { mask = keep:cast("int32") }), a:totable(), 0)
    h.errors("the mask must be broadcastable to the input", L.Softmax(), scores, { mask = tide.ones { 2, 4 } })
    h.errors("mask must be a tensor", L.Softmax(), scores, { mask = { 1, 2 } })
  end)

  it("Softmax over several axes, and its gradients (float64) with a mask", function()
    local x = tide.random.normal({ 2, 3, 4 }, { dtype = "float64" })
    local y = L.Softmax { axis = { 1, 2 }, dtype = "float64" }(x)
    h.close(tide.reduce_sum(y, { 1, 2 }), { 1, 1 }, 1e-12)
    gc.check(function(v) return L.Softmax { axis = { 1, 2 }, dtype = "float64" }(v) end, { x })
    local m = tide.tensor({ { { true, true, false, true } }, { { false, true, true, true } } }, "bool")
    gc.check(function(v) return L.Softmax { dtype = "float64" }(v, { mask = m }) end, { x })
  end)

  it("the layers keep their input's mask and run in traces with None dims", function()
    local x = tide.random.normal { 2, 3, 4 }
    local m = tide.tensor({ { true, false, true }, { true, true, false } }, "bool")
    for _, layer in ipairs { L.ReLU { 6 }, L.LeakyReLU(), L.ELU(), L.PReLU { shared_axes = { 1 } }, L.Softmax() } do
      local xm = tide.identity(x)
      keras_mask.set(xm, m)
      if getmetatable(layer).__name ~= "Softmax" then
        h.close(keras_mask.get(layer(xm)), m:totable(), 0)
      end
      traced_equals(layer, x)
    end
    traced_equals(L.Softmax { axis = { 1, 2 } }, x)
  end)
end)
