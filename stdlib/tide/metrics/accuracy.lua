-- stdlib/tide/metrics/accuracy.lua — the accuracy functions of Keras 3 (exact
-- match, binary with a threshold, categorical, sparse categorical, top-k) and their Metric classes.
local common = require "tide.losses.common"
local convert = require "tide.convert"
local args = require "tide.args"
local binding = require "tide.binding"
local base = require "tide.metrics.base"

local ops = common.ops
local M = {}
M.impl = {}

-- Keras's floatx: accuracies are float32 ones and zeros (a metric casts them to its dtype).
local FLOATX = "float32"

-- A tensor of any dtype: Variables read, Lua values converted with tide's inference.
local function any_input(op, what, v)
  if convert.is_variable(v) then return convert.unvariable(v) end
  if binding.istensor(v) then return v end
  local tv = type(v)
  if tv == "number" or tv == "table" or tv == "boolean" then return convert.tensor(v, nil, op) end
  common.error(string.format("%s: %s must be a tensor, a Lua number or a table, got %s", op, what, tv))
end

-- A numeric tensor for predictions: bool is refused, integers pass.
local function numeric_pred(op, v)
  v = any_input(op, "y_pred", v)
  if v.dtype == "bool" then
    common.error(string.format("%s: y_pred must be a numeric tensor, got bool (use y_pred:cast(\"float32\"))", op))
  end
  return v
end

local function need_rank(op, what, x, least)
  local r = x.shape.rank
  if r == nil then
    common.error(string.format("%s: %s has an unknown rank while tracing; give an input_signature with a known rank",
      op, what))
  end
  if least and r < least then
    common.error(string.format("%s: %s must have at least %d dimension(s) (the classes last), got shape %s",
      op, what, least, tostring(x.shape)))
  end
  return r
end

-- accuracy: 1 where y_true equals y_pred (y_true in y_pred's dtype, ranks aligned).
function M.impl.accuracy(op, y_true, y_pred)
  y_pred = numeric_pred(op, y_pred)
  y_true = common.like_input(op, "y_true", y_true, y_pred.dtype)
  y_true, y_pred = common.squeeze_or_expand(y_true, y_pred)
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred)
  return ops.cast(ops.equal(y_true, y_pred), FLOATX)
end

-- binary_accuracy: 1 where (y_pred > threshold) equals y_true.
function M.impl.binary_accuracy(op, y_true, y_pred, p)
  y_pred = numeric_pred(op, y_pred)
  if not common.is_float_name(y_pred.dtype) then y_pred = y_pred:cast(FLOATX) end
  y_true = any_input(op, "y_true", y_true)
  y_true, y_pred = common.squeeze_or_expand(y_true, y_pred)
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred)
  local predicted = ops.cast(ops.greater(y_pred, p.threshold), y_true.dtype)
  return ops.cast(ops.equal(y_true, predicted), FLOATX)
end

-- categorical_accuracy: 1 where the argmax of y_pred is the argmax of y_true (one-hot).
function M.impl.categorical_accuracy(op, y_true, y_pred)
  y_pred = numeric_pred(op, y_pred)
  y_true = any_input(op, "y_true", y_true)
  need_rank(op, "y_pred", y_pred, 1)
  need_rank(op, "y_true", y_true, 1)
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred, " (one-hot labels; for class indices use " ..
    "sparse_categorical_accuracy)")
  return ops.cast(ops.equal(ops.argmax(y_true, -1), ops.argmax(y_pred, -1)), FLOATX)
end

-- sparse_categorical_accuracy: 1 where the argmax of y_pred is the class index y_true.
function M.impl.sparse_categorical_accuracy(op, y_true, y_pred)
  y_pred = numeric_pred(op, y_pred)
  y_true = common.like_input(op, "y_true", y_true, y_pred.dtype)
  local rp = need_rank(op, "y_pred", y_pred, 1)
  local rt = need_rank(op, "y_true", y_true)
  if rt == rp and y_true.shape[rt] == 1 then y_true = ops.squeeze(y_true, { -1 }) end
  local st, sp = y_true.shape, y_pred.shape
  local ok = st.rank == rp - 1
  local None = require("tide.tensor_shape").None
  for i = 1, ok and st.rank or 0 do ok = ok and (st[i] == sp[i] or st[i] == None or sp[i] == None) end
  if not ok then
    common.error(string.format("%s: y_true has shape %s but y_pred has shape %s; y_true must hold class indices " ..
      "shaped like y_pred without its last dim (for one-hot labels use categorical_accuracy)", op,
      tostring(st), tostring(sp)))
  end
  local predicted = ops.cast(ops.argmax(y_pred, -1), y_true.dtype)
  return ops.cast(ops.equal(y_true, predicted), FLOATX)
end

-- TF's in_top_k: a target is in the top k when fewer than k classes score
-- strictly higher (ties at the boundary all count) and its score is finite.
local function in_top_k(targets, predictions, k)
  local target_score = ops.gather(predictions, targets, { axis = 1, batch_dims = 1 })
  local higher = ops.reduce_sum(ops.cast(ops.greater(predictions, ops.expand_dims(target_score, -1)), "int32"), -1)
  return ops.logical_and(ops.less(higher, k), ops.isfinite(target_score))
end
M.in_top_k = in_top_k

-- top_k_categorical_accuracy: 1 where y_true's class (one-hot) is among y_pred's k highest.
function M.impl.top_k_categorical_accuracy(op, y_true, y_pred, p)
  y_pred = common.float_input(op, "y_pred", y_pred)
  y_true = any_input(op, "y_true", y_true)
  local rp = need_rank(op, "y_pred", y_pred, 1)
  need_rank(op, "y_true", y_true, 1)
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred, " (one-hot labels)")
  local true_idx = ops.argmax(y_true, -1)
  local idx_shape = ops.shape(true_idx)
  if rp ~= 2 then y_pred = ops.reshape(y_pred, { -1, y_pred.shape[rp] }) end
  local flat = ops.reshape(true_idx, { -1 })
  local matches = ops.cast(in_top_k(flat, y_pred, p.k), FLOATX)
  if rp ~= 2 then matches = ops.reshape(matches, idx_shape) end
  return matches
end

-- sparse_top_k_categorical_accuracy: 1 where the class index y_true is among y_pred's k highest (or, with
-- from_sorted_ids, among the first k of y_pred's ids, sorted by score already).
function M.impl.sparse_top_k_categorical_accuracy(op, y_true, y_pred, p)
  y_pred = numeric_pred(op, y_pred)
  local rp = need_rank(op, "y_pred", y_pred, 1)
  if p.from_sorted_ids then
    y_true = common.like_input(op, "y_true", y_true, y_pred.dtype)
  else
    y_true = common.label_input(op, "y_true", y_true):cast("int32")
  end
  local rt = need_rank(op, "y_true", y_true)
  local true_shape = rt > 1 and ops.shape(y_true) or nil
  if rp > 2 then y_pred = ops.reshape(y_pred, { -1, y_pred.shape[rp] }) end
  if rt > 1 then y_true = ops.reshape(y_true, { -1 }) end
  local matches
  if p.from_sorted_ids then
    local width = y_pred.shape[2]
    local k = type(width) == "number" and math.min(p.k, width) or p.k
    local head = y_pred:slice { {}, { 0, k } }
    matches = ops.reduce_any(ops.equal(ops.expand_dims(y_true, 1), head), 1)
  else
    matches = in_top_k(y_true, y_pred, p.k)
  end
  matches = ops.cast(matches, FLOATX)
  if true_shape ~= nil then matches = ops.reshape(matches, true_shape) end
  return matches
end

local function check_threshold(op, v) return common.want_number(op, "threshold", v) end
local function check_k(op, v) return common.want_int(op, "k", v, 1) end
local function check_bool(name) return function(op, v) return common.want_bool(op, name, v) end end

M.classes = {
  { class = "Accuracy", name = "accuracy", params = {}, order = { "name", "dtype" } },
  { class = "BinaryAccuracy", name = "binary_accuracy", params = { { "threshold", 0.5, check_threshold } },
    order = { "name", "dtype", "threshold" } },
  { class = "CategoricalAccuracy", name = "categorical_accuracy", params = {}, order = { "name", "dtype" } },
  { class = "SparseCategoricalAccuracy", name = "sparse_categorical_accuracy", params = {},
    order = { "name", "dtype" } },
  { class = "TopKCategoricalAccuracy", name = "top_k_categorical_accuracy", params = { { "k", 5, check_k } },
    order = { "k", "name", "dtype" } },
  { class = "SparseTopKCategoricalAccuracy", name = "sparse_top_k_categorical_accuracy",
    params = { { "k", 5, check_k }, { "from_sorted_ids", false, check_bool "from_sorted_ids" } },
    order = { "k", "name", "dtype", "from_sorted_ids" } },
}

-- The accuracies: classes, and functions f(y_true, y_pred, [parameter]) giving per-sample 1s and 0s.
for _, spec in ipairs(M.classes) do
  local impl = M.impl[spec.name]
  spec.impl = impl
  M[spec.class] = base.wrapper(spec)
  local fname = spec.name
  M[fname] = function(y_true, y_pred, ...)
    local names = {}
    for i, q in ipairs(spec.params) do names[i] = q[1] end
    local o = args.parse(fname, names, ...)
    local p = {}
    for _, q in ipairs(spec.params) do
      local v = o[q[1]]
      if v == nil then v = q[2] end
      p[q[1]] = q[3](fname, v)
    end
    return impl(fname, y_true, y_pred, p)
  end
end

return M
