-- stdlib/tide/losses/probabilistic.lua — the crossentropies (binary, categorical,
-- sparse categorical; from probabilities clipped to [1e-7, 1 - 1e-7] or from logits), KL divergence, Poisson.
local common = require "tide.losses.common"
local regression = require "tide.losses.regression"

local ops = common.ops
local nn = ops.nn
local EPS = common.EPSILON
local M = {}
M.impl = {}

local prepare = regression.prepare

-- The size of x's last dim as a float tensor of dtype dt (computed when the graph runs if unknown).
local function last_dim(x, dt)
  return ops.cast(ops.size_along(x, -1), dt)
end

function M.impl.binary_crossentropy(op, y_true, y_pred, p, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  local ls = p.label_smoothing
  if ls ~= 0 then y_true = y_true * (1 - ls) + 0.5 * ls end
  local bce
  if p.from_logits then
    bce = nn.sigmoid_cross_entropy_with_logits(y_true, y_pred)
  else
    local out = ops.clip_by_value(y_pred, EPS, 1 - EPS)
    bce = -(y_true * ops.log(out) + (1 - y_true) * ops.log(1 - out))
  end
  return ops.reduce_mean(bce, p.axis)
end

function M.impl.categorical_crossentropy(op, y_true, y_pred, p, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  if y_pred.shape.rank == 0 then
    common.error(string.format("%s: y_true and y_pred must have at least one dimension (the classes), got shape ()",
      op))
  end
  local ls = p.label_smoothing
  if ls ~= 0 then y_true = y_true * (1 - ls) + ls / last_dim(y_true, y_pred.dtype) end
  local axis = p.axis
  if p.from_logits then
    return nn.softmax_cross_entropy_with_logits(y_true, y_pred, axis)
  end
  -- Keras renormalizes the probabilities along the class axis before clipping.
  local out = y_pred / ops.reduce_sum(y_pred, axis, true)
  out = ops.clip_by_value(out, EPS, 1 - EPS)
  return -ops.reduce_sum(y_true * ops.log(out), axis)
end

-- Labels as class indices shaped like y_pred without its class axis; the
-- losses, and for ignore_class the mask of the entries that count.
function M.impl.sparse_categorical_crossentropy(op, y_true, y_pred, p)
  y_pred = common.float_input(op, "y_pred", y_pred)
  local labels = common.label_input(op, "y_true", y_true)
  local sp, sl = y_pred.shape, labels.shape
  local rank = sp.rank
  if rank == 0 then
    common.error(string.format("%s: y_pred must have at least one dimension (the classes), got shape ()", op))
  end
  if rank and p.axis ~= -1 and p.axis ~= rank - 1 then
    common.error(string.format("%s: only axis=-1 (the last) is supported, got axis=%s", op, tostring(p.axis)))
  end
  if rank and sl.rank == rank and sl[rank] == 1 then labels = ops.squeeze(labels, { -1 }) end
  sl = labels.shape
  if rank and sl.rank then
    local ok = sl.rank == rank - 1
    local None = require("tide.tensor_shape").None
    for i = 1, ok and sl.rank or 0 do
      ok = ok and (sl[i] == sp[i] or sl[i] == None or sp[i] == None)
    end
    if not ok then
      common.error(string.format("%s: y_true has shape %s but y_pred has shape %s; y_true must be y_pred's shape " ..
        "without its last dim (class indices), or with a last dim of 1", op, tostring(sl), tostring(sp)))
    end
  end
  local valid
  if p.ignore_class ~= nil then
    valid = ops.not_equal(labels, p.ignore_class)
    labels = ops.where(valid, labels, 0)
    y_pred = ops.where(ops.expand_dims(valid, -1), y_pred, 0)
  end
  local logits = y_pred
  if not p.from_logits then logits = ops.log(ops.clip_by_value(y_pred, EPS, 1 - EPS)) end
  local res = nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
  if valid ~= nil then
    res = ops.where(valid, res, 0)
    return res, valid
  end
  return res
end

function M.impl.kl_divergence(op, y_true, y_pred, _, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  y_true = ops.clip_by_value(y_true, EPS, 1)
  y_pred = ops.clip_by_value(y_pred, EPS, 1)
  return ops.reduce_sum(y_true * ops.log(y_true / y_pred), -1)
end

function M.impl.poisson(op, y_true, y_pred, _, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  return ops.reduce_mean(y_pred - y_true * ops.log(y_pred + EPS), -1)
end

local function check_bool(name) return function(op, v) return common.want_bool(op, name, v) end end
local function check_smoothing(op, v) return common.want_number(op, "label_smoothing", v, 0, 1) end
local function check_axis(op, v) return common.want_int(op, "axis", v) end
local function check_ignore(op, v) return common.want_int(op, "ignore_class", v) end

M.classes = {
  { class = "BinaryCrossentropy", name = "binary_crossentropy",
    params = { { "from_logits", false, check_bool "from_logits" }, { "label_smoothing", 0, check_smoothing },
      { "axis", -1, check_axis } },
    order = { "from_logits", "label_smoothing", "axis", "reduction", "name", "dtype" } },
  { class = "CategoricalCrossentropy", name = "categorical_crossentropy",
    params = { { "from_logits", false, check_bool "from_logits" }, { "label_smoothing", 0, check_smoothing },
      { "axis", -1, check_axis } },
    order = { "from_logits", "label_smoothing", "axis", "reduction", "name", "dtype" } },
  { class = "SparseCategoricalCrossentropy", name = "sparse_categorical_crossentropy",
    params = { { "from_logits", false, check_bool "from_logits" }, { "ignore_class", nil, check_ignore },
      { "axis", -1, check_axis } },
    order = { "from_logits", "ignore_class", "reduction", "axis", "name", "dtype" } },
  { class = "KLDivergence", name = "kl_divergence", params = {}, order = { "reduction", "name", "dtype" } },
  { class = "Poisson", name = "poisson", params = {}, order = { "reduction", "name", "dtype" } },
}

-- Keras's functions do not align ranks (its classes do); sparse never needs it.
M.no_align_in_function = { binary_crossentropy = true, categorical_crossentropy = true, kl_divergence = true,
  poisson = true }

return M
