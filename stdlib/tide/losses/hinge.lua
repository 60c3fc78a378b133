-- stdlib/tide/losses/hinge.lua — the hinge losses (hinge, squared hinge,
-- categorical hinge); labels of 0/1 become -1/1 first, as Keras does.
local common = require "tide.losses.common"
local regression = require "tide.losses.regression"

local ops = common.ops
local M = {}
M.impl = {}

-- Keras's convert_binary_labels_to_hinge: 2y - 1 when every label is 0 or 1, else y.
local function hinge_labels(y_true)
  local is_binary = ops.reduce_all(ops.logical_or(ops.equal(y_true, 0), ops.equal(y_true, 1)))
  return ops.where(is_binary, 2 * y_true - 1, y_true)
end

function M.impl.hinge(op, y_true, y_pred, _, align)
  y_true, y_pred = regression.prepare(op, y_true, y_pred, align)
  y_true = hinge_labels(y_true)
  return ops.reduce_mean(ops.maximum(1 - y_true * y_pred, 0), -1)
end

function M.impl.squared_hinge(op, y_true, y_pred, _, align)
  y_true, y_pred = regression.prepare(op, y_true, y_pred, align)
  y_true = hinge_labels(y_true)
  return ops.reduce_mean(ops.square(ops.maximum(1 - y_true * y_pred, 0)), -1)
end

function M.impl.categorical_hinge(op, y_true, y_pred, _, align)
  y_true, y_pred = regression.prepare(op, y_true, y_pred, align)
  local pos = ops.reduce_sum(y_true * y_pred, -1)
  local neg = ops.reduce_max((1 - y_true) * y_pred, -1)
  return ops.maximum(neg - pos + 1, 0)
end

M.classes = {
  { class = "Hinge", name = "hinge", params = {}, order = { "reduction", "name", "dtype" } },
  { class = "SquaredHinge", name = "squared_hinge", params = {}, order = { "reduction", "name", "dtype" } },
  { class = "CategoricalHinge", name = "categorical_hinge", params = {}, order = { "reduction", "name", "dtype" } },
}

M.no_align_in_function = { hinge = true, squared_hinge = true, categorical_hinge = true }

return M
