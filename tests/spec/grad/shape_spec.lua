-- tests/spec/grad/shape_spec.lua — gradients of the view and shape ops (reshape,
-- squeeze, expand_dims, transpose, broadcast_to, slice and x[i], slice_update,
-- concat, split, unstack, stack, tile, pad, reverse, contiguous, one_hot):
-- hand-computed values, and float64 finite-difference checks of the
-- compositions (split, unstack, stack, mirror pads). The ops' own
-- finite-difference cases are tests/support/grad_cases.lua's.
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"
local slice_update = tide.slice_update

local rand = gc.random

local grads = gc.gradients -- of sum(f(...)), as a Lua list

-- Strided float64 inputs: a transposed view and a stepped view.
local function transposed(rows, cols, seed) return rand({ cols, rows }, -1, 1, seed):transpose() end
local function stepped(rows, cols, seed) return rand({ rows, 2 * cols }, -1, 1, seed):slice { {}, { nil, nil, 2 } } end

describe("gradients of the views", function()
  it("reshape, squeeze and expand_dims put dy back in the input's shape", function()
    local g = grads(function(v) return v:reshape { 6 } * tide.range(6):cast("float64") end, { rand({ 2, 3 }) })
    h.close(g[1], { { 0, 1, 2 }, { 3, 4, 5 } })
  end)

  it("transpose applies the inverse permutation", function()
    local w = tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float64")
    local g = grads(function(v) return v:transpose { 1, 0 } * w end, { rand({ 2, 3 }) })
    h.close(g[1], { { 1, 3, 5 }, { 2, 4, 6 } })
  end)

  it("broadcast_to sums over the broadcast dims", function()
    local g = grads(function(v) return tide.broadcast_to(v, { 5, 2 }) end, { rand({ 1, 2 }) })
    h.close(g[1], { { 5, 5 } })
  end)

  -- sum_to (x, shape), which gradients use when shapes are known only at run
  -- time, has no public name: run through the registry, to like's shape.
  local binding = require "tide.binding"
  local dispatch = require "tide.dispatch"
  local function sum_to(x, like)
    return dispatch.run(binding.C.TIDE_OP_SUM_TO, nil, { dispatch.promote(x), tide.shape(like) }, 1)
  end

  it("sum_to sums x back to like's shape; its gradient broadcasts dy again", function()
    local like = rand({ 3, 1 }, -1, 1, 8)
    h.close(sum_to(tide.tensor({ { { 1, 2 }, { 3, 4 }, { 5, 6 } } }, "float64"), like), { { 3 }, { 7 }, { 11 } })
    h.close(sum_to(tide.ones({ 2, 3 }, { dtype = "float64" }), tide.tensor(0.5, "float64")), 6)
    local g = grads(function(v) return sum_to(v, like) end, { rand({ 2, 3, 4 }) })
    h.close(g[1], tide.ones({ 2, 3, 4 }, { dtype = "float64" }))
    h.errors("sum_to: cannot sum shape [2, 3] to [4]", sum_to, tide.ones { 2, 3 }, tide.ones { 4 })
    h.errors("sum_to: cannot sum shape [3] to a shape of rank 2", sum_to, tide.ones { 3 }, tide.ones { 2, 3 })
    h.errors("sum_to: input must be a numeric tensor", sum_to, tide.tensor { true }, tide.tensor { true })
  end)
end)

describe("slice gradient", function()
  it("puts dy back at the sliced positions, zeros elsewhere", function()
    local x = rand({ 4, 4 })
    local g = grads(function(v) return v:slice { { nil, nil, -2 }, { 1, 3 } } end, { x })
    h.close(g[1], { { 0, 0, 0, 0 }, { 0, 1, 1, 0 }, { 0, 0, 0, 0 }, { 0, 1, 1, 0 } })
    g = grads(function(v) return v[1] * 2 + v[-1] end, { x })
    h.close(g[1], { { 0, 0, 0, 0 }, { 2, 2, 2, 2 }, { 0, 0, 0, 0 }, { 1, 1, 1, 1 } })
    -- overlapping slices add up
    g = grads(function(v) return v:slice { { 0, 2 } } + v:slice { { 1, 3 } } end, { x })
    h.close(g[1], { { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } })
  end)

  it("gives zeros for an empty slice", function()
    local g = grads(function(v) return v:slice { { 2, 2 } } end, { rand({ 3, 2 }) })
    h.close(g[1], { { 0, 0 }, { 0, 0 }, { 0, 0 } })
  end)
end)

describe("slice_update gradient", function()
  it("sends dy outside the slice to x and the slice of dy to update", function()
    local x, u = rand({ 3, 4 }, -1, 1, 14), rand({ 3, 2 }, -1, 1, 15)
    local w = tide.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }, "float64")
    local g = grads(function(a, b) return slice_update(a, { {}, { 1, 3 } }, b) * w end, { x, u })
    h.close(g[1], { { 1, 0, 0, 4 }, { 5, 0, 0, 8 }, { 9, 0, 0, 12 } })
    h.close(g[2], { { 2, 3 }, { 6, 7 }, { 10, 11 } })
  end)
end)

describe("concat, split, unstack and stack gradients", function()
  it("concat gives each input its slab of dy", function()
    local a, b = rand({ 2, 2 }), rand({ 2, 1 }, -1, 1, 3)
    local w = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float64")
    local g = grads(function(p, q) return tide.concat({ p, q }, -1) * w end, { a, b })
    h.close(g[1], { { 1, 2 }, { 4, 5 } })
    h.close(g[2], { { 3 }, { 6 } })
    -- the same tensor twice: both slabs add up
    g = grads(function(p) return tide.concat({ p, p }, 0) end, { a })
    h.close(g[1], { { 2, 2 }, { 2, 2 } })
  end)

  it("split and unstack differentiate through their slices", function()
    -- (with None dims, the split dim's size must be known: the count of pieces depends on it)
    local x = transposed(4, 6, 31)
    local keep_split_dims = { none = false }
    gc.check(function(v)
      local p = tide.split(v, 3, 1)
      return p[1] * p[3] + p[2]
    end, { x }, keep_split_dims)
    gc.check(function(v)
      local p = tide.split(v, { 1, -1, 2 }, 0)
      return tide.reduce_sum(p[1]) + p[2] * p[3]
    end, { x }, keep_split_dims)
    gc.check(function(v)
      local p = tide.unstack(v, { axis = 1 })
      return p[1] * p[6] + p[3]
    end, { x }, keep_split_dims)
    -- an unused piece gets zeros
    local g = grads(function(v) return tide.unstack(v)[2] end, { rand({ 3, 2 }) })
    h.close(g[1], { { 0, 0 }, { 1, 1 }, { 0, 0 } })
  end)

  it("stack differentiates through expand_dims and concat", function()
    local a, b = transposed(2, 3, 32), stepped(2, 3, 33)
    gc.check(function(p, q) return tide.stack({ p, q, p }) end, { a, b })
    gc.check(function(p, q) return tide.stack({ p, q }, -1) end, { a, b })
    local g = grads(function(p, q)
      return tide.stack({ p, q }, 1) * tide.tensor({ { 1, 2 }, { 3, 4 } }, "float64")
    end, { rand({ 2 }), rand({ 2 }, -1, 1, 3) })
    h.close(g[1], { 1, 3 })
    h.close(g[2], { 2, 4 })
  end)
end)

describe("tile, pad and reverse gradients", function()
  it("tile sums dy over the copies", function()
    local g = grads(function(v) return tide.tile(v, { 2, 3 }) end, { rand({ 2, 2 }) })
    h.close(g[1], { { 6, 6 }, { 6, 6 } })
    local w = tide.tensor({ { 1, 2, 3, 4 } }, "float64")
    g = grads(function(v) return tide.tile(v, { 1, 2 }) * w end, { rand({ 1, 2 }) })
    h.close(g[1], { { 4, 6 } })
    -- zero copies: a zero gradient of the input's shape
    g = grads(function(v) return tide.tile(v, { 0, 2 }) end, { rand({ 2, 2 }) })
    h.close(g[1], { { 0, 0 }, { 0, 0 } })
  end)

  it("pad (CONSTANT) gives the slice of dy that holds the input", function()
    local w = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, "float64")
    local g = grads(function(v) return tide.pad(v, { { 1, 0 }, { 0, 2 } }, { constant_values = 3 }) * w end,
      { rand({ 2, 1 }) })
    h.close(g[1], { { 4 }, { 7 } })
  end)

  -- REFLECT and SYMMETRIC are gathers of mirrored indices (ops/shape.lua): they
  -- differentiate through gather's gradient.
  it("pad (REFLECT, SYMMETRIC) differentiates through gather", function()
    -- (mirrored indices need the padded dims' sizes: not with None dims)
    local x = transposed(3, 4, 42)
    gc.check(function(v) return tide.pad(v, { { 1, 2 }, { 2, 0 } }, "REFLECT") end, { x }, { none = false })
    gc.check(function(v) return tide.pad(v, { { 3, 1 }, { 0, 4 } }, "SYMMETRIC") end, { x }, { none = false })
    local g = grads(function(v) return tide.pad(v, { { 2, 2 } }, "REFLECT") end, { rand({ 3 }) })
    h.close(g[1], { 2, 3, 2 })   -- [x2 x1 | x0 x1 x2 | x1 x0]: x0 twice, x1 three times
    g = grads(function(v) return tide.pad(v, { { 1, 1 } }, "SYMMETRIC") end, { rand({ 3 }) })
    h.close(g[1], { 2, 1, 2 })
  end)

  it("pad with no padding (a copy) passes dy through", function()
    gc.check(function(v) return tide.pad(v, { { 0, 0 }, { 0, 0 } }, "REFLECT") end, { transposed(2, 3, 43) })
  end)

  it("reverse reverses dy along the same axes", function()
    local w = tide.tensor({ 1, 2, 3 }, "float64")
    local g = grads(function(v) return tide.reverse(v, { 0 }) * w end, { rand({ 3 }) })
    h.close(g[1], { 3, 2, 1 })
  end)
end)

describe("contiguous, copy and one_hot gradients", function()
  it("contiguous copies pass dy through", function()
    gc.check(function(v) return tide.contiguous(v) end, { rand({ 2, 3 }, -1, 1, 48) })
  end)

  it("one_hot has no gradient; the float operand it meets gets one", function()
    local idx = tide.tensor { 0, 2, 1 }
    local w = rand({ 3, 3 }, -1, 1, 49)
    local g = grads(function(i, v) return tide.one_hot(i, 3, { dtype = "float64" }) * v end, { idx, w })
    assert.is_nil(g[1])
    h.close(g[2], { { 1, 0, 0 }, { 0, 0, 1 }, { 0, 1, 0 } })
  end)
end)
