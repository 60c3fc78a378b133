-- tests/spec/grad/linalg_spec.lua — matmul's gradient: hand-computed values and
-- shapes for batch broadcasting and 1-D operands (its float64 finite-difference
-- cases, every pair of transpose flags, strided views and second order, are
-- tests/support/grad_cases_more.lua's).
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

  it("reduces broadcast batch dims back to each operand ([2,1,3,4] @ [5,4,2])", function()
    local a, b = rand({ 2, 1, 3, 4 }, -1, 1, 5), rand({ 5, 4, 2 }, -1, 1, 6)
    assert.are.same({ 2, 5, 3, 2 }, tide.matmul(a, b).shape:as_list())
    local g = grads(mm, { a, b })
    assert.are.same({ 2, 1, 3, 4 }, g[1].shape:as_list())
    assert.are.same({ 5, 4, 2 }, g[2].shape:as_list())
  end)

  it("gives 1-D operands gradients of their own 1-D shape (numpy vectors)", function()
    local v, w = rand({ 4 }, -1, 1, 14), rand({ 4 }, -1, 1, 15)
    local m = rand({ 4, 3 }, -1, 1, 16)
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
