-- tests/spec/grad/index_spec.lua — gradients of the index-driven ops (gather_nd,
-- the tensor_scatter_nd family, scatter_nd, boolean_mask, the segment family)
-- checked against float64 finite differences, first and second order, eager
-- and traced (the registry ops' own cases: tests/support/grad_cases_more.lua).
-- Ties, duplicates and zeros are checked against TF's values in
-- tests/spec/ops/index_fixtures_spec.lua.
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"

local R = gc.random

-- The tape's gradients of f(xs...) (seeded with ones) with respect to xs.
local function grad_of(f, xs)
  local tape = tide.GradientTape()
  local y = tape:run(function()
    for _, x in ipairs(xs) do tape:watch(x) end
    return f(unpack(xs))
  end)
  return tape:gradient(y, xs)
end

describe("gradients of gather_nd and the n-d scatters", function()
  -- gather_nd's, tensor_scatter_nd_add's and tensor_scatter_nd_update's finite-difference
  -- cases are tests/support/grad_cases_more.lua's.
  it("tensor_scatter_nd_update: written positions give tensor no gradient", function()
    local t, u = R({ 2, 3 }, -1, 1, 11), R({ 2 }, -1, 1, 12)
    local idx = { { 0, 2 }, { 1, 0 } }
    local g = grad_of(function(a, b) return tide.tensor_scatter_nd_update(a, idx, b) end, { t, u })
    h.close(g[1], { { 1, 1, 0 }, { 0, 1, 1 } }, 0)
    h.close(g[2], { 1, 1 }, 0)
  end)

  it("tensor_scatter_nd_sub and scatter_nd", function()
    local t, u = R({ 4 }, -1, 1, 13), R({ 2 }, -1, 1, 14)
    gc.check(function(a, b) return tide.tensor_scatter_nd_sub(a, { { 1 }, { 1 } }, b) end, { t, u })
    gc.check(function(b) return tide.scatter_nd({ { 3 }, { 0 } }, b, { 5 }) end, { u }, { second_order = true })
    gc.check(function(b) return tide.scatter_nd({ { 0, 1 }, { 1, 1 } }, b, { 2, 2 }) end, { u })
  end)

  it("indices get no gradient", function()
    local g = grad_of(function(p, i) return tide.gather_nd(p, i) end, { R({ 3 }, -1, 1, 15), tide.tensor { { 1 } } })
    assert.is_nil(g[2])
  end)
end)

describe("gradients of boolean_mask", function()
  it("flows back to the kept slices only", function()
    local x = R({ 3, 4 }, -1, 1, 16)
    gc.check(function(v) return tide.boolean_mask(v, { true, false, true }) end, { x }, { second_order = true })
    gc.check(function(v) return tide.boolean_mask(v, { false, true, true, false }, { axis = 1 }) end, { x })
    gc.check(function(v) return tide.boolean_mask(v, { { true, false, false, true }, { false, false, true, true },
      { true, true, false, false } }) end, { x })
    local g = grad_of(function(v) return tide.boolean_mask(v, { true, false, true }) end, { x })
    h.close(g[1], { { 1, 1, 1, 1 }, { 0, 0, 0, 0 }, { 1, 1, 1, 1 } }, 0)
  end)
end)

describe("gradients of the segment family", function()
  -- (the segment ops' own cases are tests/support/grad_cases_more.lua's)
  it("unsorted_segment_mean and _sqrt_n: dropped rows, empty segments, prefix ids", function()
    local x = R({ 6, 2 }, -1, 1, 21)
    local u = { 3, 0, -1, 3, 0, 1 }
    for _, name in ipairs { "mean", "sqrt_n" } do
      local fn = tide["unsorted_segment_" .. name]
      gc.check(function(v) return fn(v, u, 5) end, { x })
    end
    gc.check(function(v) return tide.unsorted_segment_mean(v, { { 0, 2 }, { 2, -1 }, { 1, 0 } }, 4) end,
      { R({ 3, 2, 2 }, -1, 1, 24) })
  end)
end)

describe("gradients of index-driven ops inside traced functions", function()
  it("match the eager ones with None dims (results sized at run time)", function()
    local x = R({ 6, 2 }, -1, 1, 25)
    local ids = tide.tensor { 0, 0, 2, 2, 2, 3 }
    local function loss_grad(v, i)
      local tape = tide.GradientTape()
      local l = tape:run(function()
        tape:watch(v)
        local seg = tide.segment_max(v, i) + tide.segment_sum(v, i)
        local s = tide.boolean_mask(seg, tide.reduce_sum(seg, 1):gt(0))
        return tide.reduce_sum(tide.square(s)) + tide.reduce_sum(tide.gather_nd(v, tide.where(v:gt(0))))
      end)
      return tape:gradient(l, { v })[1]
    end
    local want = loss_grad(x, ids)
    local f = tide.trace(loss_grad, { input_signature = { tide.TensorSpec({ tide.None, 2 }, "float64"),
      tide.TensorSpec({ tide.None }, "int32") } })
    h.close(f(x, ids), want:totable(), 1e-12)
    local y, j = R({ 4, 2 }, -1, 1, 26), tide.tensor { 1, 1, 1, 1 }
    h.close(f(y, j), loss_grad(y, j):totable(), 1e-12)
  end)
end)
