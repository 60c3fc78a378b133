-- tests/spec/grad/linalg_spec.lua — matmul's gradient: hand-computed values,
-- float64 finite-difference checks for every pair of transpose flags, batch
-- broadcasting, 1-D operands and strided views, and second order.
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"

local rand = gc.random

local grads = gc.gradients -- of sum(f(...)), as a Lua list

local function mm(...) return tide.matmul(...) end

describe("matmul gradient", function()
  it("is dC B^T and A^T dC (hand-computed)", function()
    local a = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float64")
    local b = tide.tensor({ { 1, -1 }, { 2, 0 }, { 0, 3 } }, "float64")
    local g = grads(mm, { a, b })
    -- d/dA sum(A B) = ones(2,2) B^T: each row is B's row sums.
    h.close(g[1], { { 0, 2, 3 }, { 0, 2, 3 } })
    -- d/dB sum(A B) = A^T ones(2,2): each column is A's column sums.
    h.close(g[2], { { 5, 5 }, { 7, 7 }, { 9, 9 } })
    assert.are.same({ 2, 3 }, g[1].shape:as_list())
    assert.are.same({ 3, 2 }, g[2].shape:as_list())
  end)

  it("checks numerically for every pair of transpose flags", function()
    local a, at = rand({ 3, 4 }, -1, 1, 1), rand({ 4, 3 }, -1, 1, 2)
    local b, bt = rand({ 4, 2 }, -1, 1, 3), rand({ 2, 4 }, -1, 1, 4)
    gc.check(function(x, y) return tide.matmul(x, y) end, { a, b })
    gc.check(function(x, y) return tide.matmul(x, y, { transpose_a = true }) end, { at, b })
    gc.check(function(x, y) return tide.matmul(x, y, { transpose_b = true }) end, { a, bt })
    gc.check(function(x, y) return tide.matmul(x, y, true, true) end, { at, bt })
    gc.check(function(x, y) return tide.matmul(x, y, { adjoint_a = true, adjoint_b = true }) end, { at, bt })
  end)

  it("reduces broadcast batch dims back to each operand ([2,1,3,4] @ [5,4,2])", function()
    local a, b = rand({ 2, 1, 3, 4 }, -1, 1, 5), rand({ 5, 4, 2 }, -1, 1, 6)
    assert.are.same({ 2, 5, 3, 2 }, tide.matmul(a, b).shape:as_list())
    gc.check(function(x, y) return tide.matmul(x, y) end, { a, b })
    local g = grads(mm, { a, b })
    assert.are.same({ 2, 1, 3, 4 }, g[1].shape:as_list())
    assert.are.same({ 5, 4, 2 }, g[2].shape:as_list())
    -- a matrix against a batch: its gradient sums over the batch
    gc.check(function(x, y) return tide.matmul(x, y) end, { rand({ 3, 4 }, -1, 1, 7), b })
    gc.check(function(x, y) return tide.matmul(x, y, true, false) end,
      { rand({ 5, 4, 3 }, -1, 1, 8), rand({ 1, 4, 2 }, -1, 1, 9) })
  end)

  it("takes strided inputs: transposed and stepped views", function()
    local a = rand({ 2, 1, 4, 3 }, -1, 1, 10):transpose { 0, 1, 3, 2 }   -- [2,1,3,4], not contiguous
    local b = rand({ 5, 8, 2 }, -1, 1, 11):slice { {}, { nil, nil, 2 } }  -- [5,4,2], stepped
    gc.check(function(x, y) return tide.matmul(x, y) end, { a, b })
    local c = rand({ 6, 4 }, -1, 1, 12):slice { { nil, nil, -2 } }        -- [3,4], negative step
    gc.check(function(x, y) return tide.matmul(x, y, false, true) end, { c, rand({ 4, 2 }, -1, 1, 13):transpose() })
  end)

  it("gives 1-D operands gradients of their own 1-D shape (numpy vectors)", function()
    local v, w = rand({ 4 }, -1, 1, 14), rand({ 4 }, -1, 1, 15)
    local m = rand({ 4, 3 }, -1, 1, 16)
    local batch = rand({ 2, 3, 4 }, -1, 1, 17)
    gc.check(function(x, y) return tide.matmul(x, y) end, { v, m })      -- [4] @ [4,3] -> [3]
    gc.check(function(x, y) return tide.matmul(x, y) end, { batch, v })  -- [2,3,4] @ [4] -> [2,3]
    gc.check(function(x, y) return tide.matmul(x, y) end, { v, batch:transpose { 0, 2, 1 } }) -- [4] @ [2,4,3]
    gc.check(function(x, y) return tide.matmul(x, y) end, { v, w })      -- a dot product, 0-d
    -- transpose flags do not apply to a vector
    gc.check(function(x, y) return tide.matmul(x, y, true, true) end, { v, m:transpose() })
    local g = grads(mm, { v, m })
    assert.are.same({ 4 }, g[1].shape:as_list())
    assert.are.same({ 4, 3 }, g[2].shape:as_list())
    -- d/dv sum(v M) = M's row sums; d/dM = v repeated in each column
    local mt = m:totable()
    local rows = {}
    for i = 1, 4 do rows[i] = mt[i][1] + mt[i][2] + mt[i][3] end
    h.close(g[1], rows, 1e-12)
    local vt = v:totable()
    h.close(g[2], { { vt[1], vt[1], vt[1] }, { vt[2], vt[2], vt[2] }, { vt[3], vt[3], vt[3] },
      { vt[4], vt[4], vt[4] } }, 1e-12)
    local d = grads(mm, { v, w })
    h.close(d[1], w:totable(), 1e-12)
    h.close(d[2], v:totable(), 1e-12)
  end)

  it("differentiates twice", function()
    gc.check(function(x, y) return tide.matmul(x, y) end,
      { rand({ 2, 1, 3, 4 }, -1, 1, 18), rand({ 5, 4, 2 }, -1, 1, 19) }, { second_order = true })
    gc.check(function(x, y) return tide.matmul(x, y, true, true) end,
      { rand({ 4, 3 }, -1, 1, 20):slice { { nil, nil, -1 } }, rand({ 2, 4 }, -1, 1, 21) }, { second_order = true })
    gc.check(function(x, y) return tide.matmul(x, y) end, { rand({ 4 }, -1, 1, 22), rand({ 3, 4, 2 }, -1, 1, 23) },
      { second_order = true })
    -- A nonlinear use: the second derivative of sum(tanh(A B)) is not constant.
    gc.check(function(x, y) return tide.tanh(tide.matmul(x, y)) end,
      { rand({ 3, 4 }, -1, 1, 24), rand({ 4, 2 }, -1, 1, 25) }, { second_order = true })
  end)

  it("sends no gradient to integer operands", function()
    local a = tide.tensor { { 1, 2 }, { 3, 4 } }
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(a)
      return tide.matmul(a, a)
    end)
    assert.is_nil(tape:gradient(y, a))
  end)
end)
