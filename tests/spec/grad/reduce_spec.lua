-- tests/spec/grad/reduce_spec.lua — gradients of reductions (sum, mean, max,
-- min, prod and the composites logsumexp, variance, std, euclidean_norm), scans
-- (cumsum, cumprod, cumulative_logsumexp), ordering (sort, top_k) and index ops (gather, scatter_add):
-- hand-computed values, and the composites against float64 finite differences
-- (the registry ops' finite-difference cases are tests/support/grad_cases_more.lua's).
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"
-- tide.scatter_add once init.lua exports it
local scatter = tide.scatter_add or require("tide.ops.scatter").scatter_add

local R = gc.random
local INF = math.huge

-- The tape's gradients of f(xs...) (seeded with ones) with respect to xs.
local function grad_of(f, xs)
  local tape = tide.GradientTape()
  local y = tape:run(function()
    for _, x in ipairs(xs) do tape:watch(x) end
    return f(unpack(xs))
  end)
  return tape:gradient(y, xs)
end

-- A [2, 3, 4] input (contiguous) and a [2, 3, 4] view of a [4, 3, 2] one.
local function inputs(lo, hi, seed)
  return R({ 2, 3, 4 }, lo, hi, seed), R({ 4, 3, 2 }, lo, hi, seed + 1):transpose()
end

-- Axis specs: all (nil), one, negative, several, several with a negative, all listed.
local AXES = { { nil }, { 0 }, { -1 }, { 1 }, { { 0, 2 } }, { { -1, 1 } }, { { 0, 1, 2 } } }

describe("gradients of reductions", function()
  -- The compositions; the registry's reductions (sum, mean, max, min, prod)
  -- are tests/support/grad_cases_more.lua's, seeds k * 10 for k = 1 .. 5.
  local reducers = {
    { "reduce_logsumexp", tide.reduce_logsumexp, -2, 2, 6 },
    { "reduce_variance", tide.reduce_variance, -1, 1, 7 }, { "reduce_std", tide.reduce_std, -1, 1, 8 },
  }
  for _, r in ipairs(reducers) do
    local name, f, lo, hi, k = r[1], r[2], r[3], r[4], r[5]
    it(name .. " over single, several and all axes, with and without keepdims", function()
      local x, xt = inputs(lo, hi, k * 10)
      for _, ax in ipairs(AXES) do
        for _, keep in ipairs { false, true } do
          gc.check(function(v) return f(v, ax[1], keep) end, { x })
          gc.check(function(v) return f(v, ax[1], keep) end, { xt })
        end
      end
    end)
  end

  it("reduce a 0-d input to itself", function()
    for _, f in ipairs { tide.reduce_sum, tide.reduce_mean, tide.reduce_max, tide.reduce_min, tide.reduce_prod } do
      local g = grad_of(f, { tide.tensor(3, "float64") })
      assert.are.same({}, g[1].shape:as_list())
      h.close(g[1], { 1 })
    end
  end)

  it("mean divides by the count reduced", function()
    local g = grad_of(function(v) return tide.reduce_mean(v, 1) end, { R({ 2, 4 }) })
    h.close(g[1], { { 0.25, 0.25, 0.25, 0.25 }, { 0.25, 0.25, 0.25, 0.25 } })
  end)

  it("splits max/min ties equally, as TF's _MinOrMaxGrad", function()
    local x = tide.tensor({ { 1, 3, 3 }, { 2, 0, 2 } }, "float64")
    h.close(grad_of(function(v) return tide.reduce_max(v, 1) end, { x })[1], { { 0, 0.5, 0.5 }, { 0.5, 0, 0.5 } })
    h.close(grad_of(function(v) return tide.reduce_min(v, 1) end, { x })[1], { { 1, 0, 0 }, { 0, 1, 0 } })
    h.close(grad_of(tide.reduce_max, { x })[1], { { 0, 0.5, 0.5 }, { 0, 0, 0 } })
    h.close(grad_of(function(v) return tide.reduce_min(v, 0, true) end, { x })[1], { { 1, 0, 0 }, { 0, 1, 1 } })
  end)

  it("prod handles zeros with TF's exclusive-cumprod formula", function()
    local x = tide.tensor({ { 2, 0, 3 }, { 0, 0, 5 }, { 1, 4, 2 } }, "float64")
    -- d/dx_i prod = product of the others: one zero leaves only its own slot non-zero
    h.close(grad_of(function(v) return tide.reduce_prod(v, 1) end, { x })[1],
      { { 0, 6, 0 }, { 0, 0, 0 }, { 8, 2, 4 } })
    h.close(grad_of(function(v) return tide.reduce_prod(v, 0) end, { x })[1],
      { { 0, 0, 10 }, { 2, 0, 6 }, { 0, 0, 15 } })
  end)

  it("logsumexp's gradient is softmax, finite on -inf rows", function()
    local x = tide.tensor({ { -INF, -INF }, { 1, -INF }, { 0, math.log(3) } }, "float64")
    local y = tide.reduce_logsumexp(x, 1)
    h.close(y, { -INF, 1, math.log(4) })
    h.close(grad_of(function(v) return tide.reduce_logsumexp(v, 1) end, { x })[1],
      { { 0, 0 }, { 1, 0 }, { 0.25, 0.75 } })
    h.close(grad_of(function(v) return tide.reduce_logsumexp(v, 0, true) end, { x })[1],
      { { 0, 0 }, { math.exp(1) / (1 + math.exp(1)), 0 }, { 1 / (1 + math.exp(1)), 1 } }, 1e-9)
    -- large values do not overflow
    local big = tide.tensor({ 1000, 1000 }, "float64")
    h.close(grad_of(tide.reduce_logsumexp, { big })[1], { 0.5, 0.5 })
  end)

  it("second order: logsumexp and variance", function()
    gc.check(function(v) return tide.reduce_logsumexp(v, -1) end, { R({ 2, 3 }, -1, 1, 8) }, { second_order = true })
    gc.check(function(v) return tide.reduce_variance(v, 0) end, { R({ 3, 2 }, -1, 1, 9) }, { second_order = true })
  end)

  it("reduce_euclidean_norm: axes, keepdims, layouts, second order", function()
    local x, xt = inputs(-2, 2, 30)
    for _, ax in ipairs(AXES) do
      gc.check(function(v) return tide.reduce_euclidean_norm(v, ax[1]) end, { x })
      gc.check(function(v) return tide.reduce_euclidean_norm(v, ax[1], true) end, { xt })
    end
    gc.check(function(v) return tide.reduce_euclidean_norm(v, 1) end, { R({ 2, 3 }, -1, 1, 31) },
      { second_order = true })
    -- x / norm; at a zero vector 0 / 0 (TF's NaN too)
    local g = grad_of(function(v) return tide.reduce_euclidean_norm(v, 1) end,
      { tide.tensor({ { 3, 4 }, { 0, 0 } }, "float64") })[1]
    h.close(g, { { 0.6, 0.8 }, { 0 / 0, 0 / 0 } })
  end)

  it("variance and std have the textbook gradients", function()
    local x = tide.tensor({ 1, 2, 6 }, "float64") -- mean 3, variance 14/3
    h.close(grad_of(tide.reduce_variance, { x })[1], { -4 / 3, -2 / 3, 2 })
    local sd = math.sqrt(14 / 3)
    h.close(grad_of(tide.reduce_std, { x })[1], { -2 / 3 / sd, -1 / 3 / sd, 1 / sd })
  end)
end)

describe("gradients of cumsum and cumprod", function()
  -- Their finite-difference cases (every exclusive/reverse combination, axes,
  -- layouts, second order) are tests/support/grad_cases_more.lua's.
  it("cumsum's gradient is the reverse cumsum", function()
    local x = tide.tensor({ 1, 2, 3 }, "float64")
    h.close(grad_of(tide.cumsum, { x })[1], { 3, 2, 1 })
    h.close(grad_of(function(v) return tide.cumsum(v, 0, true) end, { x })[1], { 2, 1, 0 })
    h.close(grad_of(function(v) return tide.cumsum(v, 0, false, true) end, { x })[1], { 1, 2, 3 })
    h.close(grad_of(function(v) return tide.cumsum(v, 0, true, true) end, { x })[1], { 0, 1, 2 })
  end)

  it("cumulative_logsumexp's gradient is a softmax of each prefix, 0 at -inf, large values fine", function()
    local x = tide.tensor({ 1, 2, 3 }, "float64")
    local e1, e2, e3 = math.exp(1), math.exp(2), math.exp(3)
    -- dy = 1 everywhere: dx_i = sum over j >= i of exp(x_i) / sum_{k <= j} exp(x_k)
    h.close(grad_of(tide.cumulative_logsumexp, { x })[1],
      { e1 / e1 + e1 / (e1 + e2) + e1 / (e1 + e2 + e3), e2 / (e1 + e2) + e2 / (e1 + e2 + e3), e3 / (e1 + e2 + e3) },
      1e-12)
    h.close(grad_of(tide.cumulative_logsumexp, { tide.tensor({ -INF, 2, 3 }, "float64") })[1],
      { 0, 1 + e2 / (e2 + e3), e3 / (e2 + e3) }, 1e-12)
    h.close(grad_of(tide.cumulative_logsumexp, { tide.tensor({ 1000, 1000 }, "float64") })[1], { 1.5, 0.5 })
  end)

  it("cumprod has TF's caveat at zeros: a lone zero's own gradient is 0", function()
    local x = tide.tensor({ 2, 0, 3 }, "float64")
    -- cumprod = [2, 0, 0]; true gradient [1, 2 + 6, 0]; TF (and tide) give 0 at the zero
    h.close(grad_of(tide.cumprod, { x })[1], { 1, 0, 0 })
  end)
end)

describe("gradients of sort and top_k", function()
  it("sort scatters dy back through the permutation", function()
    local x = tide.tensor({ 3, 1, 2 }, "float64")
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x) return tide.sort(x) * tide.tensor({ 10, 20, 30 }, "float64") end)
    h.close(tape:gradient(y, x), { 30, 10, 20 })
    tape = tide.GradientTape()
    y = tape:run(function()
      tape:watch(x) return tide.sort(x, -1, "DESCENDING") * tide.tensor({ 10, 20, 30 }, "float64")
    end)
    h.close(tape:gradient(y, x), { 10, 30, 20 })
  end)

  it("top_k values scatter into zeros along the last axis", function()
    local x = tide.tensor({ { 1, 5, 3 }, { 4, 2, 6 } }, "float64")
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      local v = tide.top_k(x, 2)
      return v * tide.tensor({ 10, 1 }, "float64")
    end)
    h.close(tape:gradient(y, x), { { 0, 10, 1 }, { 1, 0, 10 } })
  end)
end)

describe("gradients of gather and scatter_add", function()
  it("gather accumulates repeated indices into zeros of params' shape", function()
    local p = tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float64")
    local g = grad_of(function(v) return tide.gather(v, { 2, 0, 2 }) end, { p })[1]
    h.close(g, { { 1, 1 }, { 0, 0 }, { 2, 2 } })
    local gi = grad_of(function(v, i) return tide.gather(v, i) end, { p, tide.tensor{ 0 } })
    assert.is_nil(gi[2])
  end)

  it("scatter_add: base gets dy, updates get dy gathered, indices none", function()
    local g = grad_of(function(b, i, u) return scatter(b, i, u) end,
      { tide.zeros({ 3 }, "float64"), tide.tensor{ 2, 2 }, tide.tensor({ 1, 1 }, "float64") })
    h.close(g[1], { 1, 1, 1 })
    assert.is_nil(g[2])
    h.close(g[3], { 1, 1 })
  end)
end)
