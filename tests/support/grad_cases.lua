-- tests/support/grad_cases.lua — the float64 finite-difference cases of every
-- differentiable registry op, keyed by its registry name: the elementwise and
-- shape ops here; grad_cases_more.lua (reductions, ordering, index, segments,
-- matmul), grad_cases_nn.lua (nn, conv, pooling, resizing, all_reduce_sum) and
-- grad_cases_linalg.lua (tf.linalg)
-- hold the rest of the one table this module returns.
-- M[name](add) calls add(label, f, inputs, opts) once per check:
--   f       a Lua function of the inputs (float64 tensors) that runs the op
--   opts    gradcheck's options (second_order, none = false, eps, rtol, ...);
--           second_only = true: gc.check_second alone (the op is a gradient's)
-- tests/spec/grad/cases_spec.lua runs each through tests/support/gradcheck.lua
-- and refuses a differentiable op without a case here. Hand-checked values
-- and composite functions stay in tests/spec/grad/*_spec.lua.
local tide = require "tide"
local gc = require "gradcheck"

local M = {}
local R = gc.random

-- A [2, 3] view of a [3, 2] tensor (non-contiguous) with values in [lo, hi).
local function TR(lo, hi, seed) return R({ 3, 2 }, lo, hi, seed):transpose() end
-- Strided [rows, cols] inputs in [-1, 1): a transposed view and a stepped view.
local function transposed(rows, cols, seed) return R({ cols, rows }, -1, 1, seed):transpose() end
local function stepped(rows, cols, seed) return R({ rows, 2 * cols }, -1, 1, seed):slice { {}, { nil, nil, 2 } } end

---------------------------------------------------------------------------
-- Elementwise, one input: a contiguous and a transposed input each, in
-- ranges away from kinks and poles (seeds as tests/spec/grad/math_spec.lua
-- numbered them), and second order where the second derivative is not trivial.
---------------------------------------------------------------------------

-- op name -> list of { label, f, lo, hi, seed }
local UNARY = {
  neg = { { "", tide.neg, nil, nil, 17 } }, square = { { "", tide.square, nil, nil, 27 } },
  exp = { { "", tide.exp, nil, nil, 6 } }, expm1 = { { "", tide.expm1, nil, nil, 7 } },
  sin = { { "", tide.sin, nil, nil, 24 } }, cos = { { "", tide.cos, nil, nil, 2 } },
  tanh = { { "", tide.tanh, nil, nil, 29 } }, sigmoid = { { "", tide.sigmoid, nil, nil, 22 } },
  softplus = { { "", tide.nn.softplus, nil, nil, 25 } }, erf = { { "", tide.erf, nil, nil, 4 } },
  selu = { { "", tide.nn.selu, nil, nil, 21 } }, elu = { { "", tide.nn.elu, nil, nil, 3 } },
  gelu = {
    { "", tide.nn.gelu, nil, nil, 8 },
    { "tail", tide.nn.gelu, -9, -5, 9 },
    { "tanh", function(x) return tide.nn.gelu(x, { approximate = true }) end, nil, nil, 10 },
    { "tanh tail", function(x) return tide.nn.gelu(x, { approximate = true }) end, -9, -5, 11 },
  },
  leaky_relu = {
    { "alpha 0.3", function(x) return tide.nn.leaky_relu(x, 0.3) end, nil, nil, 12 },
    { "alpha 2", function(x) return tide.nn.leaky_relu(x, { alpha = 2 }) end, nil, nil, 13 },
  },
  relu = { { "", tide.relu, nil, nil, 19 } }, abs = { { "", tide.abs, nil, nil, 1 } },
  sign = { { "", tide.sign, nil, nil, 23 } },
  log = { { "", tide.log, 0.5, 2, 14 } }, log1p = { { "", tide.log1p, -0.5, 2, 15 } },
  sqrt = { { "", tide.sqrt, 0.5, 2, 26 } }, rsqrt = { { "", tide.rsqrt, 0.5, 2, 20 } },
  reciprocal = { { "", tide.reciprocal, 0.5, 2, 18 } },
  tan = { { "", tide.tan, -1.2, 1.2, 28 } }, erfc = { { "", tide.erfc, nil, nil, 5 } },
}
local SECOND = {
  tanh = { tide.tanh }, sigmoid = { tide.sigmoid }, exp = { tide.exp }, tan = { tide.tan }, erfc = { tide.erfc },
  gelu = { tide.nn.gelu, function(x) return tide.nn.gelu(x, { approximate = true }) end },
}
for name, list in pairs(UNARY) do
  M[name] = function(add)
    for _, c in ipairs(list) do
      local f, lo, hi, k = c[2], c[3] or -2, c[4] or 2, c[5]
      local tag = c[1] == "" and "" or c[1] .. ", "
      add(tag .. "contiguous", f, { R({ 2, 3 }, lo, hi, k) })
      add(tag .. "transposed", f, { TR(lo, hi, k + 50) })
    end
    for i, f in ipairs(SECOND[name] or {}) do
      local tag = i > 1 and "approximate, " or ""
      add(tag .. "second order", f, { R({ 2, 3 }, -1, 1, 3) }, { second_order = true })
      add(tag .. "second order, transposed", f, { TR(-1, 1, 4) }, { second_order = true })
    end
  end
end

---------------------------------------------------------------------------
-- Elementwise, two inputs: every broadcasting pair of shapes and strided
-- inputs, with { a range, b range } and seeds k as math_spec numbered them.
---------------------------------------------------------------------------

local BINARY = {
  add = { 1, tide.add }, sub = { 2, tide.sub }, mul = { 3, tide.mul },
  div = { 4, tide.div, { -2, 2 }, { 0.5, 2 } },
  pow = { 5, tide.pow, { 0.5, 2 }, { -1, 2 } },
  -- a / b stays inside (2, 3): away from mod's jumps.
  mod = { 6, tide.mod, { 2.2, 2.8 }, { 1, 1.05 } },
  maximum = { 7, tide.maximum }, minimum = { 8, tide.minimum },
  div_no_nan = { 9, tide.divide_no_nan, { -2, 2 }, { 0.5, 2 } },
  squared_difference = { 10, tide.squared_difference },
  atan2 = { 11, tide.atan2, { -2, 2 }, { 0.5, 2 } },
  xlogy = { 12, tide.xlogy, { -2, 2 }, { 0.5, 2 } },
  xlog1py = { 13, tide.xlog1py, { -2, 2 }, { -0.5, 2 } },
  xdivy = { 14, tide.xdivy, { -2, 2 }, { 0.5, 2 } },
}
-- Shape pairs: same, trailing broadcast both ways, both stretched, 0-d.
local SHAPES = {
  { { 2, 3 }, { 2, 3 } }, { { 2, 3 }, { 3 } }, { { 3 }, { 2, 3 } }, { { 2, 1 }, { 1, 3 } },
  { { 1, 3 }, { 2, 1 } }, { { 2, 3 }, {} },
}
local function shape_text(s) return "[" .. table.concat(s, ",") .. "]" end
local SECOND_BINARY = { div_no_nan = true, squared_difference = true, atan2 = true, xlogy = true, xlog1py = true,
  xdivy = true }
for name, c in pairs(BINARY) do
  local k, f, ra, rb = c[1], c[2], c[3] or { -2, 2 }, c[4] or { -2, 2 }
  M[name] = function(add)
    for j, s in ipairs(SHAPES) do
      add(shape_text(s[1]) .. " " .. shape_text(s[2]), f,
        { R(s[1], ra[1], ra[2], k * 10 + j), R(s[2], rb[1], rb[2], k * 10 + j + 5) })
    end
    local a = TR(ra[1], ra[2], k)
    local b = R({ 3, 4 }, rb[1], rb[2], k + 7):slice { {}, { 0, 4, 2 } }:transpose() -- [2, 3], strides (2, 4)
    add("non-contiguous", f, { a, b })
    add("non-contiguous, broadcast", f, { a, R({ 2, 1 }, rb[1], rb[2], k + 9) })
    if SECOND_BINARY[name] then
      add("second order", f, { R({ 2, 3 }, -1, 1, 7), R({ 3 }, 0.5, 1.5, 8) }, { second_order = true })
    end
  end
end
local mul, div = M.mul, M.div
function M.mul(add)
  mul(add)
  add("second order", tide.mul, { R({ 2, 3 }, -1, 1, 1), R({ 3 }, -1, 1, 2) }, { second_order = true })
end
function M.div(add)
  div(add)
  add("second order", tide.div, { R({ 2, 1 }, -1, 1, 3), R({ 1, 3 }, 0.5, 1.5, 4) }, { second_order = true })
  add("second order, transposed", tide.div, { TR(-1, 1, 5), R({ 2, 3 }, 0.5, 1.5, 6) }, { second_order = true })
end

---------------------------------------------------------------------------
-- where, clip_by_value, cast, copy
---------------------------------------------------------------------------

function M.where(add)
  local cond = tide.tensor({ { true, false, true }, { false, false, true } })
  local f = function(x, y) return tide.where(cond, x, y) end
  add("same shapes", f, { R({ 2, 3 }, -1, 1, 1), R({ 2, 3 }, -1, 1, 2) })
  add("broadcast", f, { R({ 3 }, -1, 1, 3), R({ 2, 1 }, -1, 1, 4) })
  add("transposed, 0-d", f, { TR(-1, 1, 5), R({}, -1, 1, 6) })
end

function M.clip_by_value(add)
  local t = tide.tensor({ { -3, -0.5, 0.2 }, { 0.7, 2, 5 } }, "float64")
  local f = function(x, lo, hi) return tide.clip_by_value(x, lo, hi) end
  add("tensor bounds", f, { t, tide.tensor(-1, "float64"), tide.tensor({ 1, 1.5, 2.5 }, "float64") })
  add("transposed, broadcast bounds", f,
    { t:transpose(), tide.tensor({ { -1 }, { -0.6 }, { 0 } }, "float64"), tide.tensor({ 0.5, 1 }, "float64") })
end

function M.cast(add)
  add("float64 -> float32 -> float64", function(v) return tide.cast(tide.cast(v, "float32"), "float64") * 1 end,
    { tide.tensor({ 0.5, 1.5 }, "float64") }, { eps = 1e-2, rtol = 1e-4 })
end

-- copy: tide.contiguous of a strided view.
function M.copy(add)
  add("transposed", function(v) return tide.contiguous(v) end, { TR(-1, 1, 3) })
  add("times its input", function(v) return tide.contiguous(v) * v end, { transposed(3, 4, 47) })
end

---------------------------------------------------------------------------
-- Views and shape ops
---------------------------------------------------------------------------

function M.reshape(add)
  local x = transposed(3, 4, 1)
  add("[2,6]", function(v) return v:reshape { 2, 6 } end, { x })
  add("flat, twice", function(v) return v:reshape { -1 } * v:reshape { -1 } end, { x })
end

function M.squeeze(add)
  -- (squeeze without axes needs known dims to find the 1s: not with None dims)
  add("every 1", function(v) return tide.squeeze(v) end, { R({ 1, 3, 1, 2 }, -1, 1, 2) }, { none = false })
  add("axis -2, transposed", function(v) return tide.squeeze(v, { -2 }) end,
    { R({ 3, 1, 2 }, -1, 1, 3):transpose { 2, 1, 0 } })
end

function M.expand_dims(add)
  add("axis 1", function(v) return tide.expand_dims(v, 1) end, { stepped(2, 3, 4) })
  add("axes -1 and 0", function(v) return tide.expand_dims(v, -1) * tide.expand_dims(v, 0):reshape { 2, 3, 1 } end,
    { stepped(2, 3, 4) })
end

function M.transpose(add)
  local x = R({ 2, 3, 4 }, -1, 1, 5)
  add("reverse", function(v) return v:transpose() end, { x })
  add("perm {1,-1,0}", function(v) return v:transpose { 1, -1, 0 } end, { x })
  add("perm {2,0,1}, stepped", function(v) return v:transpose { 2, 0, 1 } end, { x:slice { {}, { nil, nil, -1 } } })
end

function M.broadcast_to(add)
  add("[3,1] -> [2,3,4]", function(v) return tide.broadcast_to(v, { 2, 3, 4 }) end, { R({ 3, 1 }, -1, 1, 6) })
  add("transposed -> [4,2,3]", function(v) return tide.broadcast_to(v, { 4, 2, 3 }) end, { transposed(2, 3, 7) })
end

-- sum_to (x, shape) has no public name: run through the registry, to like's shape.
local function sum_to(x, like)
  local binding, dispatch = require "tide.binding", require "tide.dispatch"
  return dispatch.run(binding.C.TIDE_OP_SUM_TO, nil, { dispatch.promote(x), tide.shape(like) }, 1)
end
function M.sum_to(add)
  local like = R({ 3, 1 }, -1, 1, 8)
  add("to [3,1]", function(v) return sum_to(v, like) end, { R({ 2, 3, 4 }, -1, 1, 9) }, { second_order = true })
  add("to [3,2], transposed", function(v) return sum_to(v, tide.zeros({ 3, 2 }, { dtype = "float64" })) end,
    { transposed(3, 2, 10) }, { second_order = true })
  add("twice", function(v) return sum_to(v, like) * sum_to(v, like) end, { R({ 1, 3, 5 }, -1, 1, 11) })
end

-- slice: x[i], steps, negative steps, shrink, newaxis and '...'.
function M.slice(add)
  local x = transposed(4, 5, 8)
  add("x[2]", function(v) return v[2] end, { x })
  add("x[-1] * x[0]", function(v) return v[-1] * v[0] end, { x })
  add("steps", function(v) return v:slice { { 1, 4, 2 }, { nil, nil, -2 } } end, { x })
  add("negative step, shrink", function(v) return v:slice { { nil, nil, -1 }, 3 } end, { x })
  add("newaxis", function(v) return v:slice { tide.newaxis, 1, { -1, 0, -1 }, tide.newaxis } end, { x })
  add("'...' first", function(v) return v:slice { "...", { 1, 3 } } end, { R({ 2, 3, 4 }, -1, 1, 9) })
  add("'...' between", function(v) return v:slice { 1, "...", 0 } end, { R({ 2, 3, 4 }, -1, 1, 10):transpose { 2, 1, 0 } })
  add("stepped input", function(v) return v:slice { { 1, 3 }, {} } end, { stepped(4, 3, 11) })
  add("second order", function(v) return v:slice { { nil, nil, -2 }, { 1, 4 } } * v:slice { { 1, 4, 2 }, { 0, 3 } } end,
    { R({ 4, 5 }, -1, 1, 12) }, { second_order = true })
  add("second order, tanh", function(v) return tide.tanh(v[1]) * v:slice { 0, { nil, nil, -1 } } end,
    { transposed(3, 4, 13) }, { second_order = true })
end

function M.slice_update(add)
  local su = tide.slice_update
  local x = transposed(4, 5, 16)
  add("steps", function(a, b) return su(a, { { 1, 3 }, { nil, nil, -2 } }, b) end, { x, R({ 2, 3 }, -1, 1, 17) })
  add("shrink, stepped update", function(a, b) return su(a, { 2 }, b) end, { x, stepped(1, 5, 18):reshape { 5 } })
  add("newaxis", function(a, b) return su(a, { tide.newaxis, -1, { 3, 0, -1 } }, b) end, { x, R({ 1, 3 }, -1, 1, 19) })
  add("one element", function(a, b) return su(a, { 1, 2 }, b) end, { x, R({}, -1, 1, 20) })
  add("second order", function(a, b) return su(a * a, { { 0, 4, 3 }, { 1, 3 } }, tide.sin(b)) * a end,
    { R({ 4, 3 }, -1, 1, 21), R({ 2, 2 }, -1, 1, 22) }, { second_order = true })
end

function M.concat(add)
  local a, b, c = transposed(3, 2, 23), stepped(3, 4, 24), R({ 3, 1 }, -1, 1, 25)
  add("axis 1, strided", function(p, q, r) return tide.concat({ p, q, r }, 1) end, { a, b, c })
  add("axis 0", function(p, q) return tide.concat({ p, q }, 0) end, { a:transpose(), R({ 1, 3 }, -1, 1, 26) })
  add("one input", function(p) return tide.concat({ p }, 0) end, { a })
  add("axis -3", function(p, q) return tide.concat({ p, q }, -3) end,
    { R({ 1, 2, 2 }, -1, 1, 27), R({ 2, 2, 2 }, -1, 1, 28):slice { { nil, nil, -1 } } })
  add("second order", function(p, q) return tide.concat({ p * q, tide.tanh(q), p }, 1) * tide.concat({ q, p, q }, 1) end,
    { R({ 2, 3 }, -1, 1, 29), transposed(2, 3, 30) }, { second_order = true })
end

function M.tile(add)
  add("{2,1,3}", function(v) return tide.tile(v, { 2, 1, 3 }) end, { R({ 2, 3, 2 }, -1, 1, 34):transpose { 1, 0, 2 } })
  add("{3,2}, stepped", function(v) return tide.tile(v, { 3, 2 }) end, { stepped(2, 3, 35) })
  add("{1,1}", function(v) return tide.tile(v, { 1, 1 }) end, { transposed(2, 3, 36) })
  add("0-d", function(v) return tide.tile(v, { multiples = {} }) * v end, { R({}, -1, 1, 37) })
  add("second order", function(v) return tide.tile(tide.tanh(v), { 2, 2 }) * tide.tile(v, { 2, 2 }) end,
    { R({ 2, 3 }, -1, 1, 38) }, { second_order = true })
end

-- pad (CONSTANT; REFLECT and SYMMETRIC are gathers: tests/spec/grad/shape_spec.lua)
function M.pad(add)
  add("transposed", function(v) return tide.pad(v, { { 1, 2 }, { 0, 3 } }) end, { transposed(4, 3, 39) })
  add("value 1.5, stepped", function(v) return tide.pad(v, { { 0, 0 }, { 2, 1 } }, "CONSTANT", 1.5) end,
    { stepped(2, 3, 40) })
  add("3-d", function(v) return tide.pad(v, { { 1, 1 }, { 0, 0 }, { 2, 0 } }) end,
    { R({ 2, 3, 2 }, -1, 1, 41):transpose { 2, 0, 1 } })
end

function M.reverse(add)
  add("axes {0,-1}", function(v) return tide.reverse(v, { 0, -1 }) end, { R({ 4, 5 }, -1, 1, 44):slice { { 1, 3 } } })
  add("axis 1, transposed", function(v) return tide.reverse(v, { 1 }) end, { transposed(3, 4, 45) })
  add("no axes", function(v) return tide.reverse(v, { axis = {} }) end, { R({ 2, 2 }, -1, 1, 46) })
end

-- The other families' cases, in one table with these.
for _, more in ipairs { require "grad_cases_more", require "grad_cases_nn", require "grad_cases_linalg",
                        require "grad_cases_special", require "grad_cases_activations" } do
  for name, fn in pairs(more) do
    assert(M[name] == nil, "grad_cases: two entries for op " .. name)
    M[name] = fn
  end
end

return M
