-- tests/support/grad_cases_more.lua — the rest of tests/support/grad_cases.lua's
-- table (which merges it): reductions, scans, ordering, gather and scatters,
-- segments, matmul, nn, conv and pooling, image resizing, all_reduce_sum.
local tide = require "tide"
local gc = require "gradcheck"

local M = {}
local R = gc.random

-- A [2, 3, 4] input (contiguous) and a [2, 3, 4] view of a [4, 3, 2] one.
local function inputs(lo, hi, seed)
  return R({ 2, 3, 4 }, lo, hi, seed), R({ 4, 3, 2 }, lo, hi, seed + 1):transpose()
end

---------------------------------------------------------------------------
-- Reductions: every axis spec, with and without keepdims, on a contiguous
-- and a transposed input (seeds k * 10 as tests/spec/grad/reduce_spec.lua
-- numbered its reducers).
---------------------------------------------------------------------------

-- Axis specs: all (nil), one, negative, several, several with a negative, all listed.
local AXES = { { nil }, { 0 }, { -1 }, { 1 }, { { 0, 2 } }, { { -1, 1 } }, { { 0, 1, 2 } } }
local function axes_text(ax) return type(ax) == "table" and "{" .. table.concat(ax, ",") .. "}" or tostring(ax) end

local REDUCERS = {
  sum = { 1, tide.reduce_sum, -1, 1 }, mean = { 2, tide.reduce_mean, -1, 1 },
  max = { 3, tide.reduce_max, -1, 1 }, min = { 4, tide.reduce_min, -1, 1 },
  prod = { 5, tide.reduce_prod, 0.5, 1.5 },
}
for name, r in pairs(REDUCERS) do
  local k, f, lo, hi = r[1], r[2], r[3], r[4]
  M[name] = function(add)
    local x, xt = inputs(lo, hi, k * 10)
    for _, ax in ipairs(AXES) do
      for _, keep in ipairs { false, true } do
        local tag = "axes " .. axes_text(ax[1]) .. (keep and ", keepdims" or "")
        add(tag, function(v) return f(v, ax[1], keep) end, { x })
        add(tag .. ", transposed", function(v) return f(v, ax[1], keep) end, { xt })
      end
    end
  end
end

-- second order: the square of the reduction is not linear
for _, name in ipairs { "sum", "mean" } do
  local first, f = M[name], REDUCERS[name][2]
  M[name] = function(add)
    first(add)
    local x, xt = inputs(-1, 1, 5)
    add("second order", function(v) return tide.square(f(v * v, 1)) end, { x }, { second_order = true })
    add("second order, axes {0,-1} keepdims", function(v) return tide.square(f(v * v, { 0, -1 }, true)) end, { xt },
      { second_order = true })
    add("second order, all axes", function(v) return tide.square(f(v)) end, { x }, { second_order = true })
  end
end

do -- prod with zeros: TF's exclusive-cumprod formula
  local first = M.prod
  M.prod = function(add)
    first(add)
    local x = tide.tensor({ { 2, 0, 3 }, { 0, 0, 5 }, { 1, 4, 2 } }, "float64")
    add("zeros, axis -1", function(v) return tide.reduce_prod(v, -1) end, { x })
    add("zeros, axes {0,1}, transposed", function(v) return tide.reduce_prod(v, { 0, 1 }) end, { x:transpose() })
  end
end

---------------------------------------------------------------------------
-- Scans: every exclusive/reverse combination along every axis
---------------------------------------------------------------------------

local FLAGS = { { false, false }, { true, false }, { false, true }, { true, true } }
local function scan_cases(add, f, x, xt)
  for _, fl in ipairs(FLAGS) do
    for _, ax in ipairs { 0, 1, -1 } do
      local tag = string.format("axis %d%s%s", ax, fl[1] and ", exclusive" or "", fl[2] and ", reverse" or "")
      add(tag, function(v) return f(v, ax, fl[1], fl[2]) end, { x })
      add(tag .. ", transposed", function(v) return f(v, ax, fl[1], fl[2]) end, { xt })
    end
  end
end

function M.cumsum(add) scan_cases(add, tide.cumsum, inputs(-1, 1, 1)) end

function M.cumprod(add)
  scan_cases(add, tide.cumprod, inputs(0.5, 1.5, 2))
  add("second order", function(v) return tide.cumprod(v, 1) end, { R({ 2, 3 }, 0.5, 1.5, 3) }, { second_order = true })
end

function M.cumulative_logsumexp(add)
  local f = tide.cumulative_logsumexp
  local x, xt = inputs(-2, 2, 40)
  for _, fl in ipairs(FLAGS) do
    for _, ax in ipairs { 0, 1, -1 } do
      local tag = string.format("axis %d%s%s", ax, fl[1] and ", exclusive" or "", fl[2] and ", reverse" or "")
      add(tag, function(v) return f(v, ax, fl[1], fl[2]) end, { x })
      add(tag .. ", transposed", function(v) return f(v, ax, fl[1], fl[2]) end, { xt })
    end
    add(string.format("second order%s%s", fl[1] and ", exclusive" or "", fl[2] and ", reverse" or ""),
      function(v) return f(v, 1, fl[1], fl[2]) end, { R({ 2, 3 }, -1, 1, 41) }, { second_order = true })
  end
end

---------------------------------------------------------------------------
-- Ordering, gather and scatter_add
---------------------------------------------------------------------------

function M.sort(add)
  local x, xt = inputs(-1, 1, 4)
  for _, ax in ipairs { 0, 1, 2, -1 } do
    for _, dir in ipairs { "ASCENDING", "DESCENDING" } do
      add("axis " .. ax .. " " .. dir, function(v) return tide.sort(v, ax, dir) end, { x })
      add("axis " .. ax .. " " .. dir .. ", transposed", function(v) return tide.sort(v, ax, dir) end, { xt })
    end
  end
  add("second order", function(v) return tide.sort(v) end, { R({ 5 }, -1, 1, 6) }, { second_order = true })
end

function M.top_k(add)
  local x3, xt = inputs(-1, 1, 7)
  add("k 2", function(v) return (tide.top_k(v, 2)) end, { x3 })
  add("k 4, transposed", function(v) return (tide.top_k(v, 4)) end, { xt })
  add("k 1, 1-D", function(v) return (tide.top_k(v, 1)) end, { R({ 5 }, -1, 1, 8) })
  add("k 3, int64 indices", function(v) return (tide.top_k(v, 3, { index_type = "int64" })) end, { R({ 2, 5 }, -1, 1, 9) })
end

function M.gather(add)
  local x, xt = inputs(-1, 1, 11)
  local idx = tide.tensor { { 1, 0, 1 }, { 2, 2, 0 } }
  for i, v in ipairs { x, xt } do
    local tag = i == 2 and ", transposed" or ""
    add("axis 0" .. tag, function(p) return tide.gather(p, { 1, 1, 0 }) end, { v })
    add("axis 1" .. tag, function(p) return tide.gather(p, idx, 1) end, { v })
    add("axis -1, int64" .. tag, function(p) return tide.gather(p, tide.tensor({ 3, 0 }, "int64"), -1) end, { v })
    add("axis 1, batch_dims 1" .. tag, function(p) return tide.gather(p, idx, 1, 1) end, { v })
    add("axis 2, batch_dims 1" .. tag, function(p) return tide.gather(p, idx, { axis = 2, batch_dims = 1 }) end, { v })
    add("axis -1, batch_dims 2" .. tag,
      function(p) return tide.gather(p, tide.tensor { { { 0 }, { 3 }, { 3 } }, { { 1 }, { 2 }, { 0 } } }, -1, 2) end,
      { v })
  end
  add("second order", function(p) return tide.gather(p, { 1, 0, 1 }) end, { R({ 2, 3 }, -1, 1, 12) },
    { second_order = true })
end

function M.scatter_add(add)
  local scatter = tide.scatter_add
  local base, upd = R({ 4, 3 }, -1, 1, 13), R({ 5, 3 }, -1, 1, 14)
  local idx = tide.tensor { 3, 0, 3, 1, 3 }
  add("repeated indices", function(b, u) return scatter(b, idx, u) end, { base, upd }, { second_order = true })
  add("times base", function(b, u) return scatter(b, idx, u) * b end, { base:transpose():transpose(), upd })
  local b3, bt = inputs(-1, 1, 15)
  local bidx = tide.tensor { { 1, 0, 1 }, { 2, 2, 0 } }
  for i, b in ipairs { b3, bt } do
    local tag = i == 2 and ", transposed" or ""
    add("axis 1, batch_dims 1" .. tag, function(bb, u) return scatter(bb, bidx, u, { axis = 1, batch_dims = 1 }) end,
      { b, R({ 2, 3, 4 }, -1, 1, 16) })
    add("axis -1" .. tag, function(bb, u) return scatter(bb, bidx, u, { axis = -1 }) end,
      { b, R({ 3, 2, 3, 2 }, -1, 1, 17):transpose() })
  end
end

---------------------------------------------------------------------------
-- n-d gathers and scatters, segments
---------------------------------------------------------------------------

function M.gather_nd(add)
  local p = R({ 3, 4 }, -1, 1, 3)
  add("elements, repeated", function(x) return tide.gather_nd(x, { { 2, 1 }, { 0, 3 }, { 2, 1 } }) end, { p },
    { second_order = true })
  add("rows, int64", function(x) return tide.gather_nd(x, tide.tensor({ { 1 }, { 1 }, { 0 } }, "int64")) end, { p })
  add("rows, transposed", function(x) return tide.gather_nd(x, { { 1 }, { 0 } }) end, { R({ 4, 3 }, -1, 1, 4):transpose() })
  add("batch_dims 1", function(x) return tide.gather_nd(x, { { { 2 }, { 0 } }, { { 1 }, { 1 } } }, { batch_dims = 1 }) end,
    { R({ 2, 3, 2 }, -1, 1, 5) })
  add("empty tuples", function(x) return tide.gather_nd(x, tide.zeros({ 2, 0 }, "int32")) end, { R({ 2, 2 }, -1, 1, 6) })
end

function M.tensor_scatter_nd_add(add)
  local t, u = R({ 4, 2 }, -1, 1, 7), R({ 3, 2 }, -1, 1, 8)
  local idx = { { 1 }, { 3 }, { 1 } }
  add("repeated rows", function(a, b) return tide.tensor_scatter_nd_add(a, idx, b) end, { t, u }, { second_order = true })
  add("times tensor", function(a, b) return tide.tensor_scatter_nd_add(a, idx, b) * a end, { t, u })
  add("batch_dims 1", function(a, b) return tide.tensor_scatter_nd_add(a, { { { 0 } }, { { 2 } } }, b, { batch_dims = 1 }) end,
    { R({ 2, 3 }, -1, 1, 9), R({ 2, 1 }, -1, 1, 10) })
end

function M.tensor_scatter_nd_update(add)
  local idx = { { 0, 2 }, { 1, 0 } }
  add("elements", function(a, b) return tide.tensor_scatter_nd_update(a, idx, b) end,
    { R({ 2, 3 }, -1, 1, 11), R({ 2 }, -1, 1, 12) }, { second_order = true })
end

local IDS = { 0, 0, 2, 2, 2, 3 } -- segment 1 empty
function M.segment_sum(add)
  add("", function(v) return tide.segment_sum(v, IDS) end, { R({ 6, 2 }, -1, 1, 17) }, { second_order = true })
end
function M.segment_mean(add)
  add("", function(v) return tide.segment_mean(v, IDS) end, { R({ 6, 2 }, -1, 1, 17) }, { second_order = true })
  add("int64 ids, transposed", function(v) return tide.segment_mean(v, tide.tensor({ 0, 1, 1, 1, 4, 4 }, "int64")) end,
    { R({ 2, 6 }, -1, 1, 18):transpose() })
end
-- (distinct values: no ties)
function M.segment_max(add)
  add("", function(v) return tide.segment_max(v, IDS) end, { R({ 6, 3 }, -1, 1, 19) })
end
function M.segment_min(add)
  add("", function(v) return tide.segment_min(v, IDS) end, { R({ 6, 3 }, -1, 1, 19) })
end
function M.segment_prod(add)
  add("", function(v) return tide.segment_prod(v, IDS) end, { R({ 6, 2 }, 0.5, 1.5, 20) }, { second_order = true })
  add("one and two zeros in a segment", function(v) return tide.segment_prod(v, { 0, 0, 0, 1, 1, 1, 2 }) end,
    { tide.tensor({ 0.5, 0, 2, 0, 0, 3, -1.5 }, "float64") })
end

-- unsorted: dropped rows (-1), empty segments, prefix ids
local UIDS = { 3, 0, -1, 3, 0, 1 }
for _, name in ipairs { "sum", "max", "min" } do
  M["unsorted_segment_" .. name] = function(add)
    local fn = tide["unsorted_segment_" .. name]
    add("", function(v) return fn(v, UIDS, 5) end, { R({ 6, 2 }, -1, 1, 21) })
  end
end
do
  local first = M.unsorted_segment_sum
  M.unsorted_segment_sum = function(add)
    first(add)
    add("prefix ids", function(v) return tide.unsorted_segment_sum(v, { { 0, 2 }, { 2, -1 }, { 1, 0 } }, 3) end,
      { R({ 3, 2, 2 }, -1, 1, 23) }, { second_order = true })
  end
end
function M.unsorted_segment_prod(add)
  add("", function(v) return tide.unsorted_segment_prod(v, UIDS, 5) end, { R({ 6, 2 }, 0.5, 1.5, 22) },
    { second_order = true })
  add("zeros", function(v) return tide.unsorted_segment_prod(v, { 0, 0, 1, 0, -1 }, 2) end,
    { tide.tensor({ 2, 0, 0, 3, 0 }, "float64") })
end

---------------------------------------------------------------------------
-- matmul: every pair of transpose flags, batch broadcasting, 1-D operands,
-- strided views, second order
---------------------------------------------------------------------------

function M.matmul(add)
  local mm = tide.matmul
  local a, at = R({ 3, 4 }, -1, 1, 1), R({ 4, 3 }, -1, 1, 2)
  local b, bt = R({ 4, 2 }, -1, 1, 3), R({ 2, 4 }, -1, 1, 4)
  add("a b", function(x, y) return mm(x, y) end, { a, b })
  add("a^T b", function(x, y) return mm(x, y, { transpose_a = true }) end, { at, b })
  add("a b^T", function(x, y) return mm(x, y, { transpose_b = true }) end, { a, bt })
  add("a^T b^T", function(x, y) return mm(x, y, true, true) end, { at, bt })
  add("adjoints", function(x, y) return mm(x, y, { adjoint_a = true, adjoint_b = true }) end, { at, bt })
  local ba, bb = R({ 2, 1, 3, 4 }, -1, 1, 5), R({ 5, 4, 2 }, -1, 1, 6)
  add("[2,1,3,4] @ [5,4,2]", function(x, y) return mm(x, y) end, { ba, bb })
  add("matrix @ batch", function(x, y) return mm(x, y) end, { R({ 3, 4 }, -1, 1, 7), bb })
  add("batch^T @ batch", function(x, y) return mm(x, y, true, false) end,
    { R({ 5, 4, 3 }, -1, 1, 8), R({ 1, 4, 2 }, -1, 1, 9) })
  add("transposed @ stepped", function(x, y) return mm(x, y) end,
    { R({ 2, 1, 4, 3 }, -1, 1, 10):transpose { 0, 1, 3, 2 }, R({ 5, 8, 2 }, -1, 1, 11):slice { {}, { nil, nil, 2 } } })
  add("negative step @ transposed^T", function(x, y) return mm(x, y, false, true) end,
    { R({ 6, 4 }, -1, 1, 12):slice { { nil, nil, -2 } }, R({ 4, 2 }, -1, 1, 13):transpose() })
  local v, w = R({ 4 }, -1, 1, 14), R({ 4 }, -1, 1, 15)
  local m, batch = R({ 4, 3 }, -1, 1, 16), R({ 2, 3, 4 }, -1, 1, 17)
  add("[4] @ [4,3]", function(x, y) return mm(x, y) end, { v, m })
  add("[2,3,4] @ [4]", function(x, y) return mm(x, y) end, { batch, v })
  add("[4] @ [2,4,3]", function(x, y) return mm(x, y) end, { v, batch:transpose { 0, 2, 1 } })
  add("dot", function(x, y) return mm(x, y) end, { v, w })
  -- transpose flags do not apply to a vector
  add("vector, flags", function(x, y) return mm(x, y, true, true) end, { v, m:transpose() })
  add("second order, batch", function(x, y) return mm(x, y) end,
    { R({ 2, 1, 3, 4 }, -1, 1, 18), R({ 5, 4, 2 }, -1, 1, 19) }, { second_order = true })
  add("second order, flags", function(x, y) return mm(x, y, true, true) end,
    { R({ 4, 3 }, -1, 1, 20):slice { { nil, nil, -1 } }, R({ 2, 4 }, -1, 1, 21) }, { second_order = true })
  add("second order, vector", function(x, y) return mm(x, y) end, { R({ 4 }, -1, 1, 22), R({ 3, 4, 2 }, -1, 1, 23) },
    { second_order = true })
  -- A nonlinear use: the second derivative of sum(tanh(A B)) is not constant.
  add("second order, tanh", function(x, y) return tide.tanh(mm(x, y)) end,
    { R({ 3, 4 }, -1, 1, 24), R({ 4, 2 }, -1, 1, 25) }, { second_order = true })
end

return M
