-- stdlib/tide/losses/overlap.lua — Keras 3's overlap and metric-learning losses: Dice and Tversky (one
-- minus a soft overlap, reduced over `axis`, all axes by default) and Circle (on L2-normalized embeddings).
local common = require "tide.losses.common"
local regression = require "tide.losses.regression"
local keras_mask = require "tide.keras_mask"
local linalg = require "tide.ops.linalg"

local ops = common.ops
local EPS = common.EPSILON
local M = {}
M.impl = {}

local prepare = regression.prepare

-- dice: 1 - 2 sum(y_true y_pred) / (sum(y_true) + sum(y_pred) + eps), the sums over `axis` (nil: all).
function M.impl.dice(op, y_true, y_pred, p, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  local axis = p.axis
  local intersection = ops.reduce_sum(y_true * y_pred, axis)
  return 1 - 2 * intersection / (ops.reduce_sum(y_true, axis) + ops.reduce_sum(y_pred, axis) + EPS)
end

-- tversky: 1 - tp / (tp + alpha fp + beta fn + eps), with fp = sum((1 - y_pred) y_true) and
-- fn = sum(y_pred (1 - y_true)) as Keras names them.
function M.impl.tversky(op, y_true, y_pred, p, align)
  y_true, y_pred = prepare(op, y_true, y_pred, align)
  local axis = p.axis
  local tp = ops.reduce_sum(y_true * y_pred, axis)
  local fp = ops.reduce_sum((1 - y_pred) * y_true, axis)
  local fn = ops.reduce_sum(y_pred * (1 - y_true), axis)
  return 1 - tp / (tp + fp * p.alpha + fn * p.beta + EPS)
end

-- Integer labels as a rank-1 int32 tensor ((N,) or (N, 1)).
local function label_vector(op, what, v)
  local labels = common.label_input(op, what, v)
  local r = labels.shape.rank
  if r == 2 and labels.shape[2] == 1 then labels = ops.reshape(labels, { -1 }) end
  if labels.shape.rank ~= 1 then
    common.error(string.format("%s: %s must be integer labels of shape (N,) or (N, 1), got %s", op, what,
      tostring(labels.shape)))
  end
  return labels:cast("int32")
end

local function embeddings(op, what, v, dt)
  local e = common.float_input(op, what, v, dt)
  if e.shape.rank ~= 2 then
    common.error(string.format("%s: %s must be 2-D embeddings (N, D), got shape %s", op, what, tostring(e.shape)))
  end
  return e
end

-- circle: Circle loss (Sun et al. 2020) of each embedding y_pred[i] against the reference embeddings
-- (y_pred itself by default), positives sharing its label; the losses carry Keras's mask (loss > 0),
-- so a class's mean is over the samples with a loss.
function M.impl.circle(op, y_true, y_pred, p)
  y_pred = embeddings(op, "y_pred", y_pred)
  local labels = label_vector(op, "y_true", y_true)
  local ref = p.ref_embeddings ~= nil and embeddings(op, "ref_embeddings", p.ref_embeddings, y_pred.dtype) or y_pred
  local ref_labels = p.ref_labels ~= nil and label_vector(op, "ref_labels", p.ref_labels) or labels
  local d = ops.maximum(1 - linalg.matmul(y_pred, ref, { transpose_b = true }), 0)
  local pos = ops.equal(ops.reshape(labels, { -1, 1 }), ops.reshape(ref_labels, { 1, -1 }))
  local neg = ops.logical_not(pos)
  if p.remove_diagonal then
    -- Keras's eye(N, M) mask, from positions (cumsum of ones: the batch size may be known only when it runs)
    local function positions(v) return ops.cumsum(ops.ones_like(v), 0) end
    local diag = ops.equal(ops.reshape(positions(labels), { -1, 1 }), ops.reshape(positions(ref_labels), { 1, -1 }))
    pos = ops.logical_and(pos, ops.logical_not(diag))
  end
  local m, gamma = p.margin, p.gamma
  local dt = d.dtype
  local pos_w = ops.maximum((m + d) * ops.cast(pos, dt), 0)
  local neg_w = ops.maximum((1 + m - d) * ops.cast(neg, dt), 0)
  local pos_wd = -gamma * pos_w * (m - d)
  local neg_wd = gamma * neg_w * (1 - m - d)
  local p_loss = ops.reduce_logsumexp(ops.where(pos, pos_wd, -math.huge), 1)
  local n_loss = ops.reduce_logsumexp(ops.where(neg, neg_wd, -math.huge), 1)
  local loss = ops.softplus(p_loss + n_loss)
  local mask = ops.greater(loss, 0)
  keras_mask.set(loss, mask)
  return loss, mask
end

local function check_number(name) return function(op, v) return common.want_number(op, name, v) end end
local function check_bool(name) return function(op, v) return common.want_bool(op, name, v) end end

-- axis: nil (every axis), an integer, or a list of them.
local function check_axes(op, v)
  if type(v) == "number" then return common.want_int(op, "axis", v) end
  if type(v) == "table" and getmetatable(v) == nil then
    for _, a in ipairs(v) do common.want_int(op, "axis", a) end
    return v
  end
  common.error(string.format("%s: axis must be nil, an integer or a list of integers, got %s", op, tostring(v)))
end

-- ref_labels / ref_embeddings: tensors (or tables), checked when the loss runs.
local function any_value(name)
  return function(op, v)
    local t = type(v)
    if t ~= "table" and t ~= "cdata" and t ~= "userdata" then
      common.error(string.format("%s: %s must be a tensor or a table, got %s", op, name, t))
    end
    return v
  end
end

M.classes = {
  { class = "Dice", name = "dice", params = { { "axis", nil, check_axes } },
    order = { "reduction", "name", "axis", "dtype" } },
  { class = "Tversky", name = "tversky",
    params = { { "alpha", 0.5, check_number "alpha" }, { "beta", 0.5, check_number "beta" },
      { "axis", nil, check_axes } },
    order = { "alpha", "beta", "reduction", "name", "axis", "dtype" } },
  { class = "Circle", name = "circle",
    -- the function's order (Keras's): ref_labels, ref_embeddings, remove_diagonal, gamma, margin
    params = { { "ref_labels", nil, any_value "ref_labels", config = false },
      { "ref_embeddings", nil, any_value "ref_embeddings", config = false },
      { "remove_diagonal", true, check_bool "remove_diagonal" }, { "gamma", 80, check_number "gamma" },
      { "margin", 0.4, check_number "margin" } },
    order = { "gamma", "margin", "remove_diagonal", "reduction", "name", "dtype" }, no_align = true },
}

-- Keras's functions do not align ranks (its classes do, but for Circle, whose labels are (N,)).
M.no_align_in_function = { dice = true, tversky = true }

return M
