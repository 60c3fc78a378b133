-- tests/support/grad_cases_nn.lua — tests/support/grad_cases.lua's cases of the
-- nn ops (softmax, the fused cross-entropy), convolutions and pooling with
-- their gradient ops, image resizing with its gradient ops, and all_reduce_sum.
local tide = require "tide"
local gc = require "gradcheck"
local nn = require "tide.ops.nn_conv"
local geo = require "conv_cases"

local M = {}
local R = gc.random

---------------------------------------------------------------------------
-- softmax, log_softmax, the fused sparse cross-entropy
---------------------------------------------------------------------------

local function x34() return R({ 3, 4 }, -2, 2, 21) end

function M.softmax(add)
  local f = tide.nn.softmax
  add("last axis", function(x) return f(x) end, { x34() }, { second_order = true })
  add("axis 1 of 3", function(x) return f(x, 1) end, { R({ 2, 3, 2 }, -2, 2, 5) }, { second_order = true })
  add("transposed", function(x) return f(x, -1) end, { x34():transpose() })
end

function M.log_softmax(add)
  local f = tide.nn.log_softmax
  add("stepped", function(x) return f(x) end, { x34():slice { { 0, 3 }, { 0, 4, 2 } } })
  add("axis 0, transposed", function(x) return f(x, 0) end, { x34():transpose() }, { second_order = true })
end

function M.sparse_softmax_cross_entropy(add)
  local f = tide.nn.sparse_softmax_cross_entropy_with_logits
  local lab, lab2 = tide.tensor { 1, 0, 3 }, tide.tensor { { 0, 2 }, { 1, 1 } }
  add("labels of rank 1", function(x) return f(lab, x) end, { x34() }, { second_order = true })
  add("labels of rank 2", function(x) return f(lab2, x) end, { R({ 3, 2, 2 }, -2, 2, 6):transpose { 1, 2, 0 } })
end

-- ctc_loss: logits time- and batch-major (strided), any blank, lengths shorter than the tensors.
function M.ctc_loss(add)
  local f = tide.nn.ctc_loss
  local labels, lab_len, seq_len = tide.tensor { { 1, 2, 2 }, { 3, 0, 0 } }, tide.tensor { 3, 1 }, tide.tensor { 5, 3 }
  add("time major, blank 0", function(x) return f(labels, x, lab_len, seq_len) end, { R({ 5, 2, 4 }, -2, 2, 31) })
  add("batch major, blank 3, strided", function(x)
    return f(tide.tensor { { 1, 2, 2 }, { 2, 0, 0 } }, x, lab_len, seq_len, { blank_index = 3, logits_time_major = false })
  end, { R({ 5, 2, 4 }, -2, 2, 32):transpose { 1, 0, 2 } })
end

---------------------------------------------------------------------------
-- Convolutions: each padding, stride and dilation on strided views, and the
-- backprop ops to second order
---------------------------------------------------------------------------

function M.conv2d(add)
  for i, c in ipairs(geo.CONV) do
    local x = R({ 2, 6, 5, 2 }, -1, 1, 80 + i):transpose { 0, 2, 1, 3 } -- [2, 5, 6, 2]
    local w = R({ 2, 3, 2, 2 }, -1, 1, 90 + i)
    local o = { strides = c[1], dilations = c[2], padding = c[3] }
    add(geo.conv_name(c), function(a, b) return nn.conv2d(a, b, o) end, { x, w })
  end
  local o = { strides = { 2, 1 }, padding = "SAME", dilations = { 1, 2 } }
  add("second order", function(a, b) return nn.conv2d(a, b, o) end,
    { R({ 2, 4, 5, 2 }, -1, 1, 101), R({ 3, 2, 2, 3 }, -1, 1, 102) }, { second_order = true })
end

local CONV_O = { strides = { 2, 1 }, padding = "SAME", dilations = { 1, 2 } }
function M.conv2d_backprop_input(add)
  add("second order", function(d, b) return nn.conv2d_backprop_input({ 2, 4, 5, 2 }, b, d, CONV_O) end,
    { R({ 2, 2, 5, 3 }, -1, 1, 103), R({ 3, 2, 2, 3 }, -1, 1, 102) }, { second_order = true })
end
function M.conv2d_backprop_filter(add)
  add("second order", function(a, d) return nn.conv2d_backprop_filter(a, { 3, 2, 2, 3 }, d, CONV_O) end,
    { R({ 2, 4, 5, 2 }, -1, 1, 101), R({ 2, 2, 5, 3 }, -1, 1, 103) }, { second_order = true })
end

local function depthwise_inputs()
  return R({ 2, 5, 4, 3 }, -1, 1, 121):transpose { 0, 2, 1, 3 }, R({ 2, 3, 3, 2 }, -1, 1, 122) -- [2, 4, 5, 3]
end
local DW_O = { strides = { 1, 2 }, padding = "SAME", dilations = 1 }
function M.depthwise_conv2d(add)
  local x, w = depthwise_inputs()
  add("second order", function(a, b) return nn.depthwise_conv2d(a, b, DW_O) end, { x, w }, { second_order = true })
  local o2 = { strides = 1, padding = "VALID", dilations = { 2, 1 } }
  add("VALID, dilations 2,1", function(a, b) return nn.depthwise_conv2d(a, b, o2) end, { x, w })
end
function M.depthwise_conv2d_backprop_input(add)
  local _, w = depthwise_inputs()
  add("second order", function(d, b) return nn.depthwise_conv2d_backprop_input({ 2, 4, 5, 3 }, b, d, DW_O) end,
    { R({ 2, 4, 3, 6 }, -1, 1, 123), w }, { second_order = true })
end
function M.depthwise_conv2d_backprop_filter(add)
  local x = depthwise_inputs()
  add("second order", function(a, d) return nn.depthwise_conv2d_backprop_filter(a, { 2, 3, 3, 2 }, d, DW_O) end,
    { x, R({ 2, 4, 3, 6 }, -1, 1, 123) }, { second_order = true })
end

---------------------------------------------------------------------------
-- Pooling and its gradient ops, to second order (the second order of
-- max_pool2d runs max_pool2d_grad_grad)
---------------------------------------------------------------------------

local function pool_x() return R({ 2, 6, 5, 3 }, -1, 1, 131):transpose { 0, 2, 1, 3 } end -- [2, 5, 6, 3], strided
local FEW = { { 2, 2, "VALID" }, { 3, 2, "SAME" }, { { 2, 3 }, 1, "SAME" } }

function M.max_pool2d(add)
  local x = pool_x()
  for _, c in ipairs(FEW) do
    add("square, " .. geo.pool_name(c), function(a) return tide.square(nn.max_pool2d(a, c[1], c[2], c[3])) end, { x },
      { second_order = true })
  end
  -- the upstream gradient depends on x: second order runs max_pool2d_grad_grad
  for _, c in ipairs(geo.POOL) do
    add("square, every window: " .. geo.pool_name(c),
      function(a) return tide.square(nn.max_pool2d(a, c[1], c[2], c[3])) end, { x }, { second_order = true })
    add("tanh of x * x, every window: " .. geo.pool_name(c),
      function(a) return tide.tanh(nn.max_pool2d(a * a, c[1], c[2], c[3])) end, { x }, { second_order = true })
  end
end

function M.avg_pool2d(add)
  local x = pool_x()
  for _, c in ipairs(FEW) do
    add(geo.pool_name(c), function(a) return nn.avg_pool2d(a, c[1], c[2], c[3]) end, { x }, { second_order = true })
  end
end

-- (x, y, dy) and (x, y, g) with y pooled from x; dy and g random.
local function pool_grad_inputs(c)
  local x = R({ 2, 5, 6, 3 }, -1, 1, 141)
  local y = nn.max_pool2d(x, c[1], c[2], c[3])
  return x, R(y.shape:as_list(), -1, 1, 142), R(x.shape:as_list(), -1, 1, 143)
end
function M.max_pool2d_grad(add)
  for _, c in ipairs(geo.POOL) do
    local x, dy = pool_grad_inputs(c)
    add(geo.pool_name(c), function(a, d) return geo.pool_grad(a, d, c[1], c[2], c[3]) end, { x, dy },
      { second_order = true })
  end
end
function M.max_pool2d_grad_grad(add)
  for _, c in ipairs(geo.POOL) do
    local x, _, g = pool_grad_inputs(c)
    add(geo.pool_name(c), function(a, v) return geo.pool_grad_grad(a, v, c[1], c[2], c[3]) end, { x, g },
      { second_order = true })
  end
end

-- avg_pool2d_grad(x, dy): linear in dy, x gives only the shape.
function M.avg_pool2d_grad(add)
  for _, c in ipairs(FEW) do
    local x = R({ 2, 5, 6, 3 }, -1, 1, 144)
    local dy = R(nn.avg_pool2d(x, c[1], c[2], c[3]).shape:as_list(), -1, 1, 145)
    add(geo.pool_name(c), function(a, d)
      return nn.raw.run(nn.raw.ops.avg_pool2d_grad, geo.pool_attrs(c[1], c[2], c[3]), { a, d })
    end, { x, dy }, { second_order = true })
  end
end

---------------------------------------------------------------------------
-- Image resizing, up and down, rank 3 and 4; its gradient ops to second order
---------------------------------------------------------------------------

for _, method in ipairs { "bilinear", "nearest" } do
  M["resize_" .. method] = function(add)
    for _, c in ipairs { { { 2, 4, 5, 2 }, { 7, 3 } }, { { 3, 3, 1 }, { 2, 5 } }, { { 1, 2, 3, 2 }, { 1, 1 } } } do
      add("[" .. table.concat(c[1], ",") .. "] to " .. table.concat(c[2], "x"),
        function(t) return tide.image.resize(t, c[2], { method = method }) end, { R(c[1], -1, 1, 5) })
    end
  end
  M["resize_" .. method .. "_grad"] = function(add)
    add("second order", function(t)
      return tide.image.resize(t, { 5, 2 }, { method = method }) * t:slice { {}, { 0, 1 }, { 0, 1 }, {} }
    end, { R({ 1, 3, 4, 2 }, -1, 1, 6) }, { second_only = true, none = false })
  end
end

---------------------------------------------------------------------------
-- all_reduce_sum (tide.distribute, a world of one here): the all-reduce of
-- the upstream gradient
---------------------------------------------------------------------------

function M.all_reduce_sum(add)
  local D = tide.distribute
  local x = tide.tensor({ { 0.5, -1 }, { 2, 3 } }, "float64")
  local y = tide.tensor({ 1.5, -0.25 }, "float64")
  add("one tensor", function(a) return D.all_reduce_sum(a) * a end, { x })
  add("a list", function(a, b)
    local s = D.all_reduce_op { a, b }
    return tide.reduce_sum(s[1] * s[1], 1) + s[2]
  end, { x, y })
end

return M
