-- stdlib/tide/losses/regression.lua — the regression losses as Keras 3 computes
-- them: mean squared / absolute / absolute percentage / squared log error, Huber, log-cosh, cosine similarity.
local common = require "tide.losses.common"
local args = require "tide.args"

local ops = common.ops
local EPS = common.EPSILON
local M = {}

-- y_pred as a float tensor, y_true in its dtype, ranks aligned as Keras does, shapes checked.
function M.prepare(op, y_true, y_pred, align)
  y_pred = common.float_input(op, "y_pred", y_pred)
  y_true = common.like_input(op, "y_true", y_true, y_pred.dtype)
  if align ~= false then y_true, y_pred = common.squeeze_or_expand(y_true, y_pred) end
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred)
  return y_true, y_pred
end
local prepare = M.prepare

-- Each impl(op, y_true, y_pred, params, align) gives the losses, reduced over the last axis.
M.impl = {}

function M.impl.mean_squared_error(op, y_true, y_pred)
  y_true, y_pred = prepare(op, y_true, y_pred)
  return ops.reduce_mean(ops.square(y_true - y_pred), -1)
end

function M.impl.mean_absolute_error(op, y_true, y_pred)
  y_true, y_pred = prepare(op, y_true, y_pred)
  return ops.reduce_mean(ops.abs(y_true - y_pred), -1)
end

function M.impl.mean_absolute_percentage_error(op, y_true, y_pred)
  y_true, y_pred = prepare(op, y_true, y_pred)
  local diff = ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), EPS))
  return 100 * ops.reduce_mean(diff, -1)
end

function M.impl.mean_squared_logarithmic_error(op, y_true, y_pred)
  y_true, y_pred = prepare(op, y_true, y_pred)
  local first = ops.log(ops.maximum(y_pred, EPS) + 1)
  local second = ops.log(ops.maximum(y_true, EPS) + 1)
  return ops.reduce_mean(ops.square(first - second), -1)
end

function M.impl.huber(op, y_true, y_pred, p)
  y_true, y_pred = prepare(op, y_true, y_pred)
  local delta = p.delta
  local err = y_pred - y_true
  local abs_err = ops.abs(err)
  return ops.reduce_mean(ops.where(ops.less_equal(abs_err, delta), 0.5 * ops.square(err),
    delta * abs_err - 0.5 * delta * delta), -1)
end

-- Keras computes log(2) in float32 and then converts it, whatever y_pred's dtype.
local LOG2 = tonumber(require("ffi").new("float", math.log(2)))

function M.impl.log_cosh(op, y_true, y_pred)
  y_true, y_pred = prepare(op, y_true, y_pred)
  local x = y_pred - y_true
  return ops.reduce_mean(x + ops.softplus(x * -2) - LOG2, -1)
end

-- Keras's normalize (order 2): x * min(rsqrt(sum(x^2)), 1/epsilon), so a zero vector stays zero.
local function l2_normalize(x, axis)
  local inv = ops.rsqrt(ops.reduce_sum(ops.square(x), axis, true))
  return x * ops.minimum(inv, 1 / EPS)
end

function M.impl.cosine_similarity(op, y_true, y_pred, p)
  y_true, y_pred = prepare(op, y_true, y_pred)
  local axis = p.axis
  if y_pred.shape.rank == 0 then y_true, y_pred = ops.expand_dims(y_true, 0), ops.expand_dims(y_pred, 0) end
  return -ops.reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis)
end

local function check_delta(op, v) return common.want_number(op, "delta", v, 0) end
local function check_axis(op, v) return common.want_int(op, "axis", v) end

-- Keras's classes: name, default name, parameters {name, default, check}, constructor order.
M.classes = {
  { class = "MeanSquaredError", name = "mean_squared_error", params = {}, order = { "reduction", "name", "dtype" } },
  { class = "MeanAbsoluteError", name = "mean_absolute_error", params = {}, order = { "reduction", "name", "dtype" } },
  { class = "MeanAbsolutePercentageError", name = "mean_absolute_percentage_error", params = {},
    order = { "reduction", "name", "dtype" } },
  { class = "MeanSquaredLogarithmicError", name = "mean_squared_logarithmic_error", params = {},
    order = { "reduction", "name", "dtype" } },
  { class = "Huber", name = "huber_loss", fn = "huber", params = { { "delta", 1.0, check_delta } },
    order = { "delta", "reduction", "name", "dtype" } },
  { class = "LogCosh", name = "log_cosh", params = {}, order = { "reduction", "name", "dtype" } },
  { class = "CosineSimilarity", name = "cosine_similarity", params = { { "axis", -1, check_axis } },
    order = { "axis", "reduction", "name", "dtype" } },
}

return M
