-- stdlib/tide/losses/focal.lua — Keras 3's crossentropies for hard examples and noisy labels: binary and
-- categorical focal crossentropy, and the categorical generalized cross entropy (class indices as labels).
local common = require "tide.losses.common"
local regression = require "tide.losses.regression"

local ops = common.ops
local nn = ops.nn
local EPS = common.EPSILON
local M = {}
M.impl = {}

local prepare = regression.prepare

-- binary_focal_crossentropy: the clipped binary crossentropy weighed by (1 - p_t)^gamma (and by alpha
-- for the positives, 1 - alpha for the negatives, with apply_class_balancing), averaged over `axis`.
function M.impl.binary_focal_crossentropy(op, y_true, y_pred, p, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  local ls = p.label_smoothing
  if ls ~= 0 then y_true = y_true * (1 - ls) + 0.5 * ls end
  if p.from_logits then y_pred = ops.sigmoid(y_pred) end
  local out = ops.clip_by_value(y_pred, EPS, 1 - EPS)
  local bce = -(y_true * ops.log(out) + (1 - y_true) * ops.log(1 - out))
  local p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
  local focal = ops.pow(1 - p_t, p.gamma) * bce
  if p.apply_class_balancing then focal = (y_true * p.alpha + (1 - y_true) * (1 - p.alpha)) * focal end
  return ops.reduce_mean(focal, p.axis)
end

-- categorical_focal_crossentropy: -alpha (1 - p)^gamma y log p summed over `axis`, p the (softmaxed,
-- renormalized, clipped) predictions.
function M.impl.categorical_focal_crossentropy(op, y_true, y_pred, p, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  if y_pred.shape.rank == 0 then
    common.error(string.format("%s: y_true and y_pred must have at least one dimension (the classes), got shape ()",
      op))
  end
  local ls = p.label_smoothing
  if ls ~= 0 then y_true = y_true * (1 - ls) + ls / ops.cast(ops.size_along(y_true, -1), y_pred.dtype) end
  if p.from_logits then y_pred = nn.softmax(y_pred, p.axis) end
  local out = y_pred / ops.reduce_sum(y_pred, p.axis, true)
  out = ops.clip_by_value(out, EPS, 1 - EPS)
  local cce = -y_true * ops.log(out)
  return ops.reduce_sum(ops.pow(1 - out, p.gamma) * p.alpha * cce, p.axis)
end

-- categorical_generalized_cross_entropy: (1 - p^q) / q, p the probability y_pred gives the class index
-- y_true (shaped as y_pred without its last dim, or with a last dim of 1).
function M.impl.categorical_generalized_cross_entropy(op, y_true, y_pred, p)
  y_pred = common.float_input(op, "y_pred", y_pred)
  local labels = common.label_input(op, "y_true", y_true)
  local rp = y_pred.shape.rank
  if rp == 0 then
    common.error(string.format("%s: y_pred must have at least one dimension (the classes), got shape ()", op))
  end
  if rp and labels.shape.rank == rp and labels.shape[rp] == 1 then labels = ops.squeeze(labels, { -1 }) end
  if rp and labels.shape.rank ~= nil and labels.shape.rank ~= rp - 1 then
    common.error(string.format("%s: y_true has shape %s but y_pred has shape %s; y_true must hold class indices " ..
      "shaped like y_pred without its last dim", op, tostring(labels.shape), tostring(y_pred.shape)))
  end
  -- one_hot(labels) from each class's position along the last axis (known only when the graph runs, maybe);
  -- labels outside the classes match none, as Keras's one_hot gives them a row of zeros
  local positions = ops.cumsum(ops.ones_like(y_pred), -1) - 1
  local one_hot = ops.cast(ops.equal(positions, ops.expand_dims(ops.cast(labels, y_pred.dtype), -1)), y_pred.dtype)
  local prob = ops.reduce_sum(y_pred * one_hot, -1)
  return (1 - ops.pow(prob, p.q)) / p.q
end

local function check_bool(name) return function(op, v) return common.want_bool(op, name, v) end end
local function check_smoothing(op, v) return common.want_number(op, "label_smoothing", v, 0, 1) end
local function check_axis(op, v) return common.want_int(op, "axis", v) end
local function check_number(name) return function(op, v) return common.want_number(op, name, v) end end
local function check_q(op, v)
  if type(v) ~= "number" or not (v > 0 and v < 1) then
    common.error(string.format("%s: q must be a number in (0, 1), got %s", op, tostring(v)))
  end
  return v
end

M.classes = {
  { class = "BinaryFocalCrossentropy", name = "binary_focal_crossentropy",
    params = { { "apply_class_balancing", false, check_bool "apply_class_balancing" },
      { "alpha", 0.25, check_number "alpha" }, { "gamma", 2, check_number "gamma" },
      { "from_logits", false, check_bool "from_logits" }, { "label_smoothing", 0, check_smoothing },
      { "axis", -1, check_axis } },
    order = { "apply_class_balancing", "alpha", "gamma", "from_logits", "label_smoothing", "axis", "reduction", "name",
      "dtype" } },
  { class = "CategoricalFocalCrossentropy", name = "categorical_focal_crossentropy",
    params = { { "alpha", 0.25, check_number "alpha" }, { "gamma", 2, check_number "gamma" },
      { "from_logits", false, check_bool "from_logits" }, { "label_smoothing", 0, check_smoothing },
      { "axis", -1, check_axis } },
    order = { "alpha", "gamma", "from_logits", "label_smoothing", "axis", "reduction", "name", "dtype" } },
  { class = "CategoricalGeneralizedCrossEntropy", name = "categorical_generalized_cross_entropy",
    params = { { "q", 0.5, check_q } }, order = { "q", "reduction", "name", "dtype" } },
}

-- Keras's functions do not align ranks (its classes do).
M.no_align_in_function = { binary_focal_crossentropy = true, categorical_focal_crossentropy = true }

return M
