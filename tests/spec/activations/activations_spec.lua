-- tests/spec/activations/activations_spec.lua — tide.activations against
-- Keras 3's values (tests/fixtures/keras/layers.lua), names and errors.
local tide = require "tide"
local h = require "helpers"
local A = tide.activations
local F = dofile("tests/fixtures/keras/layers.lua")

describe("tide.activations", function()
  local x = tide.tensor(F.activations.x, "float32")

  it("match Keras 3 by name (leaky_relu's slope 0.2, gelu's exact erf form, swish = silu)", function()
    local n = 0
    for name, want in pairs(F.activations.y) do
      h.close(A.get(name)(x), want, 1e-5)
      n = n + 1
    end
    assert.is_true(n >= 20)
    h.close(A.leaky_relu(tide.tensor({ -1 }, "float32")), { -0.2 }, 1e-7)
    assert.are.equal(A.swish, A.silu)
  end)

  it("take Keras's options", function()
    h.close(A.relu(x, { negative_slope = 0.1, max_value = 5, threshold = 0.5 }), F.relu_options.y, 1e-6)
    h.close(A.leaky_relu(tide.tensor({ -2, 3 }, "float32"), { negative_slope = 0.5 }), { -1, 3 }, 1e-7)
    h.close(A.elu(tide.tensor({ -1, 2 }, "float64"), { alpha = 2 }), { 2 * (math.exp(-1) - 1), 2 }, 1e-12)
    h.close(A.softmax(tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), { axis = 0 }),
      { { 0.11920292, 0.11920292 }, { 0.88079708, 0.88079708 } }, 1e-6)
    h.close(A.gelu(tide.tensor({ 1 }, "float32"), { approximate = true }), { 0.841192 }, 1e-6)
  end)

  it("work traced and differentiate", function()
    local f = tide.trace(function(v) return A.get("mish")(v) + A.get("selu")(v) end)
    h.close(f(x), (A.mish(x) + A.selu(x)):totable(), 1e-6)
    local v = tide.Variable({ 0.5, -1 })
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(A.swish(v)) end)
    local s = 1 / (1 + math.exp(-0.5))
    h.close(tape:gradient(y, v)[0], { s + 0.5 * s * (1 - s) }, 1e-6)
  end)

  it("get passes functions through, maps nil to linear, and serializes names", function()
    local fn = function(t) return t * 2 end
    assert.are.equal(fn, A.get(fn))
    assert.are.equal(A.linear, A.get(nil))
    assert.are.equal("relu", A.serialize(A.get("relu")))
    assert.are.equal("silu", A.serialize(A.get("swish")))
    assert.are.equal(fn, A.serialize(fn))
    assert.are.equal(A.tanh, A.deserialize("tanh"))
  end)

  it("errors name the activation", function()
    h.errors("unknown activation 'rel'", A.get, "rel")
    h.errors("known: celu, elu, exponential", A.get, "nope")
    h.errors("expected an activation name or a function, got number", A.get, 3)
    h.errors("at least 1 dimension", A.softmax, tide.tensor(1.0))
  end)
end)
