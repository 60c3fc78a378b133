-- tests/spec/activations/activations_more_spec.lua — Keras 3's newer activations (celu ... threshold, glu,
-- sparsemax) against TF 2.21's Keras (tests/fixtures/keras/activations.lua): values and gradients in float32
-- and float64, eager and traced; the compositions' float64 finite differences; names and errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local A = tide.activations
local F = dofile("tests/fixtures/keras/activations.lua")
local TOL = { float32 = 1e-6, float64 = 1e-12 }

-- Each case traces a new Function on purpose: no retracing advice.
require("tide.tracing.retracing").settings.enabled = false

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- value and gradient of sum(f(x) * w), w = 0.1, 0.2, ... as the generator weighs them
local function value_and_grad(f, x)
  local tape = tide.GradientTape()
  local y, s = tape:run(function()
    tape:watch(x)
    local y = f(x)
    local n = y.shape:num_elements()
    local w = tide.reshape(tide.range(1, n + 1):cast(x.dtype) / 10, y.shape:as_list())
    return y, tide.reduce_sum(y * w)
  end)
  return y, tape:gradient(s, x)
end

describe("Keras 3's newer activations against Keras", function()
  for _, case in ipairs(F.cases) do
    for _, dt in ipairs { "float32", "float64" } do
      it(case.id .. ", " .. dt .. ": values and gradients, eager and traced", function()
        local want = case[dt]
        local f = function(x) return A[case.name](x, copy(case.options)) end
        local x = tide.tensor(F.x, dt)
        local y, g = value_and_grad(f, x)
        assert.are.equal(dt, y.dtype)
        h.close(y, want.y, TOL[dt])
        local got_g, want_g = g:totable(), want.grad
        if case.name == "celu" then
          -- at x = 0 Keras's max + min composition takes both sides' slopes (2); the derivative is 1 (times
          -- that entry's weight, 0.5)
          h.close(g:slice { { 0, 1 }, { 4, 5 } }, { { 0.5 } }, 0)
          assert.are.equal(1, want_g[1][5])
          got_g[1][5], want_g[1][5] = 0, 0
        end
        h.close(got_g, want_g, TOL[dt])
        h.close(tide.trace(f)(x), want.y, TOL[dt])
      end)
    end
  end

  it("are tide.ops' names and get()'s, and serialize by name", function()
    for _, name in ipairs { "celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus", "sparse_sigmoid",
      "sparsemax", "squareplus", "tanh_shrink", "threshold" } do
      assert.is_function(A[name], name)
      assert.are.equal(A[name], tide.ops[name], "tide.ops." .. name)
      assert.are.equal(A[name], A.get(name), name)
      assert.are.equal(name, A.serialize(A[name]))
    end
    -- the kernels without a parameter are also tide.<name> and methods
    local x = tide.tensor({ -2, 0.5 }, "float32")
    h.close(x:hard_tanh(), { -1, 0.5 }, 0)
    h.close(tide.sparse_sigmoid(x), { 0, 0.75 }, 0)
  end)
end)

describe("sparsemax", function()
  local S = F.sparsemax

  it("projects onto the simplex (the paper's algorithm; Keras 3.15 is wrong past one entry)", function()
    for _, dt in ipairs { "float32", "float64" } do
      local x = tide.tensor(S.x, dt)
      local y = A.sparsemax(x)
      h.close(y, S.y, dt == "float32" and 1e-6 or 1e-12)
      h.close(tide.reduce_sum(y, -1), { 1, 1, 1, 1 }, 1e-6)
      h.close(A.sparsemax(x, { axis = 0 }), S.y_axis0, 1e-6)
      h.close(tide.trace(function(v) return A.sparsemax(v) end)(x), S.y, 1e-6)
    end
    h.close(A.sparsemax(tide.tensor(S.x_one, "float32")), S.keras_one, 1e-6) -- where Keras is right
  end)

  it("differentiates (float64 finite differences, None dims too)", function()
    gc.check(function(x) return A.sparsemax(x) end, { tide.tensor(S.x, "float64") })
    gc.check(function(x) return A.sparsemax(x, 0) end, { gc.random({ 3, 4 }, -1, 1, 301) })
  end)
end)

describe("glu and threshold (compositions)", function()
  it("differentiate (float64 finite differences)", function()
    gc.check(function(x) return A.glu(x) end, { gc.random({ 2, 4 }, -2, 2, 302) }, { none = false })
    gc.check(function(x) return A.glu(x, { axis = 0 }) end, { gc.random({ 4, 3 }, -2, 2, 303) }, { none = false })
    gc.check(function(x) return A.threshold(x, 0.1, 2) end, { tide.tensor({ { -1, 0.5 }, { 0.3, -0.2 } }, "float64") })
  end)

  it("threshold keeps x's dtype, ints too", function()
    local y = A.threshold(tide.tensor({ 1, 5, 3 }, "int32"), 2, 0)
    assert.are.equal("int32", y.dtype)
    h.close(y, { 0, 5, 3 }, 0)
  end)
end)

describe("errors of the newer activations", function()
  local x = tide.tensor({ { 1, 2, 3 } }, "float32")
  local ints = tide.tensor({ 1, 2 }, "int32")

  it("name the op and the argument", function()
    for _, name in ipairs { "celu", "hard_shrink", "soft_shrink", "squareplus", "glu", "sparsemax" } do
      h.errors(name .. ": x must be a float tensor", A[name], ints)
    end
    for _, name in ipairs { "sparse_plus", "sparse_sigmoid", "hard_tanh", "tanh_shrink" } do
      h.errors(name, A[name], ints)
    end
    h.errors("celu: alpha must not be 0", A.celu, x, 0)
    h.errors("celu: alpha must be a number", A.celu, x, { alpha = "a" })
    h.errors("hard_shrink: threshold must be a number", A.hard_shrink, x, { threshold = {} })
    h.errors("soft_shrink: unknown", A.soft_shrink, x, { thresh = 1 })
    h.errors("squareplus: b must be >= 0", A.squareplus, x, -1)
    h.errors("threshold: threshold and default_value are required", A.threshold, x, 0.5)
    h.errors("threshold: default_value must be a number", A.threshold, x, 0.5, "z")
    h.errors("glu: the size of axis 1 must be even", A.glu, x)
    h.errors("glu: axis 2 is out of range", A.glu, x, 2)
    h.errors("sparsemax: x must have at least 1 dimension", A.sparsemax, tide.tensor(1, "float32"))
    h.errors("sparsemax: axis -3 is out of range", A.sparsemax, x, -3)
  end)
end)
