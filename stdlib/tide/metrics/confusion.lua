-- stdlib/tide/metrics/confusion.lua — confusion-matrix metrics as Keras 3 counts
-- them (Precision, Recall, AUC over ROC/PR/PRGAIN curves): counts per threshold
-- in Variables; evenly spaced thresholds take Keras's bucketed path.
local ffi = require "ffi"
local common = require "tide.losses.common"
local convert = require "tide.convert"
local base = require "tide.metrics.base"
local init_scope = require "tide.initializers.init_scope"

local ops = common.ops
local EPS = common.EPSILON
local NEG_INF = -1e10 -- Keras's stand-in for -inf when filtering the top k
local M = {}

local function f32(x) return tonumber(ffi.new("float", x)) end

local update_multi_label -- below

-- The general path's counts: label_pos [1, ...] and pred_pos [thresholds,
-- ...] (bool), w (broadcast like them) or nil; each of vars.tp/fp/tn/fn that
-- is there gets the (weighted) count per threshold, summed over axis 1.
local function count_by_threshold(vars, label_pos, pred_pos, w, dt)
  local function add(var, label, predicted)
    if not var then return end
    local both = ops.logical_and(label, predicted)
    local counted = w and ops.where(both, w, 0) or ops.cast(both, dt)
    var:assign_add(ops.reduce_sum(counted, 1))
  end
  add(vars.tp, label_pos, pred_pos)
  local pred_neg, label_neg = ops.logical_not(pred_pos), ops.logical_not(label_pos)
  add(vars.fp, label_neg, pred_pos)
  add(vars.tn, label_neg, pred_neg)
  add(vars.fn, label_pos, pred_neg)
end

-- Keras's parse_init_thresholds: a number or a list in [0, 1], or the default.
local function parse_thresholds(op, thresholds, default)
  if thresholds == nil then return { default } end
  if type(thresholds) == "number" then thresholds = { thresholds } end
  if type(thresholds) ~= "table" or #thresholds == 0 then
    common.error(string.format("%s: thresholds must be a number or a list of numbers in [0, 1], got %s", op,
      tostring(thresholds)))
  end
  local out = {}
  for i, t in ipairs(thresholds) do
    if type(t) ~= "number" or t ~= t or t < 0 or t > 1 then
      common.error(string.format("%s: thresholds must be in [0, 1], got %s", op, tostring(t)))
    end
    out[i] = t
  end
  return out
end
M.parse_thresholds = parse_thresholds

-- Keras's is_evenly_distributed_thresholds: np.allclose to arange(n) / (n - 1) in float32.
local function evenly_distributed(th)
  local n = #th
  if n < 3 then return false end
  for i = 1, n do
    local want = f32(f32(i - 1) / f32(n - 1))
    if math.abs(th[i] - want) > EPS + 1e-5 * math.abs(want) then return false end
  end
  return true
end
M.evenly_distributed = evenly_distributed

-- Keras's _filter_top_k: entries outside each row's k largest become NEG_INF.
local function filter_top_k(op, x, k)
  local classes = x.shape[x.shape.rank]
  if type(classes) ~= "number" then
    common.error(op .. ": top_k needs y_pred's last dim (the classes) known while tracing")
  end
  local _, idx = ops.top_k(x, k)
  local mask = ops.reduce_sum(ops.one_hot(idx, classes, { dtype = x.dtype }), -2)
  return x * mask + NEG_INF * (1 - mask)
end

-- Keras's multi_label counting: y_true and y_pred [batch, labels]; the
-- counts per threshold and label ([thresholds, labels] Variables), each
-- label's column counted on its own.
update_multi_label = function(op, vars, y_true, y_pred, sw, thresholds, evenly, with_epsilon)
  local dt = "float32"
  if y_pred.shape.rank ~= 2 then
    common.error(string.format("%s: with multi_label, y_pred must be 2-D (samples, labels), got shape %s", op,
      tostring(y_pred.shape)))
  end
  local w = sw ~= nil and ops.broadcast_to(sw, ops.shape(y_pred)) or nil
  local num = #thresholds
  local label = ops.cast(ops.cast(y_true, "bool"), dt)
  if evenly then
    -- bucketed as in the single-label path, with label l's buckets at l * num.. (one segment sum)
    local wt = w or 1
    local n_labels = y_pred.shape[2]
    local true_labels, false_labels = ops.reshape(label * wt, { -1 }), ops.reshape((1 - label) * wt, { -1 })
    local bucket = ops.ceil(ops.clip_by_value(y_pred, 0, 1) * (num - 1)) - 1
    if with_epsilon then bucket = ops.relu(bucket) end
    local offset = ops.cast(ops.range(0, n_labels), dt) * num
    bucket = ops.reshape(ops.cast(bucket + offset, "int32"), { -1 })
    local function counts(values)
      local per = ops.reshape(ops.unsorted_segment_sum(values, bucket, num * n_labels), { n_labels, num })
      return ops.transpose(ops.cumsum(per, 1, false, true)) -- [num, labels]
    end
    local tp, fp = counts(true_labels), counts(false_labels)
    local pos = ops.reduce_sum(label * wt, 0)
    local neg = ops.reduce_sum((1 - label) * wt, 0)
    if vars.tp then vars.tp:assign_add(tp) end
    if vars.fp then vars.fp:assign_add(fp) end
    if vars.tn then vars.tn:assign_add(neg - fp) end
    if vars.fn then vars.fn:assign_add(pos - tp) end
    return
  end
  -- every prediction against every threshold: [thresholds, batch, labels], summed over the batch
  local pred = ops.expand_dims(y_pred, 0)
  local label_pos = ops.expand_dims(ops.cast(y_true, "bool"), 0)
  local thr = ops.reshape(convert.tensor(thresholds, dt, op), { num, 1, 1 })
  local pred_pos = ops.greater(pred, thr)
  count_by_threshold(vars, label_pos, pred_pos, w and ops.expand_dims(w, 0), dt)
end

-- Keras's update_confusion_matrix_variables (one label per prediction): adds
-- to vars.tp/fp/tn/fn (Variables of one entry per threshold) the weighted counts
-- of predictions above each threshold.
function M.update_confusion(op, vars, y_true, y_pred, thresholds, o)
  local dt = "float32" -- Keras's variables are floatx
  y_pred = common.like_input(op, "y_pred", y_pred, dt)
  y_true = common.like_input(op, "y_true", y_true, dt)
  local with_epsilon = o.evenly and (thresholds[1] < 0 or thresholds[#thresholds] > 1)
  y_pred, y_true = common.squeeze_or_expand(y_pred, y_true)
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred)
  local sw = o.sample_weight
  if sw ~= nil then
    sw = ops.expand_dims(common.like_input(op, "sample_weight", sw, dt), -1)
    local _
    _, sw = common.squeeze_or_expand(y_true, sw, false)
    common.check_broadcast(op, "y_pred", y_pred, "sample_weight", sw)
  end
  if o.top_k then y_pred = filter_top_k(op, y_pred, o.top_k) end
  if o.class_id then
    if y_pred.shape.rank == 1 then
      common.error(string.format("%s: with class_id, y_pred must be 2-D (samples, classes), got shape %s", op,
        tostring(y_pred.shape)))
    end
    y_true = ops.gather(y_true, { o.class_id }, { axis = -1 })
    y_pred = ops.gather(y_pred, { o.class_id }, { axis = -1 })
  end
  if o.multi_label then return update_multi_label(op, vars, y_true, y_pred, sw, thresholds, o.evenly, with_epsilon) end
  local weights
  if sw ~= nil then weights = ops.reshape(ops.broadcast_to(sw, ops.shape(y_pred)), { -1 }) end
  if o.label_weights ~= nil then
    local lw = ops.reshape(ops.broadcast_to(ops.expand_dims(o.label_weights, 0), ops.shape(y_pred)), { -1 })
    weights = weights and weights * lw or lw
  end
  local num = #thresholds
  if o.evenly then
    -- Keras's bucketed path: each prediction lands in one bucket, the counts
    -- per threshold are the cumulative sums from the top.
    local w = weights or 1
    local pred = ops.reshape(ops.clip_by_value(y_pred, 0, 1), { -1 })
    local label = ops.reshape(ops.cast(ops.cast(y_true, "bool"), dt), { -1 })
    local true_labels, false_labels = label * w, (1 - label) * w
    local bucket = ops.ceil(pred * (num - 1)) - 1
    if with_epsilon then bucket = ops.relu(bucket) end
    bucket = ops.cast(bucket, "int32")
    local tp = ops.cumsum(ops.unsorted_segment_sum(true_labels, bucket, num), 0, false, true)
    local fp = ops.cumsum(ops.unsorted_segment_sum(false_labels, bucket, num), 0, false, true)
    if vars.tp then vars.tp:assign_add(tp) end
    if vars.fp then vars.fp:assign_add(fp) end
    if vars.tn then vars.tn:assign_add(ops.reduce_sum(false_labels) - fp) end
    if vars.fn then vars.fn:assign_add(ops.reduce_sum(true_labels) - tp) end
    return
  end
  -- The general path: every prediction against every threshold, [thresholds, predictions].
  local pred = ops.reshape(y_pred, { 1, -1 })
  local label_pos = ops.reshape(ops.cast(y_true, "bool"), { 1, -1 })
  local thr = ops.reshape(convert.tensor(thresholds, dt, op), { num, 1 })
  local pred_pos = ops.greater(pred, thr)
  count_by_threshold(vars, label_pos, pred_pos, weights and ops.reshape(weights, { 1, -1 }), dt)
end

---------------------------------------------------------------------------
-- Precision and Recall
---------------------------------------------------------------------------

local function check_top_k(op, v) return common.want_int(op, "top_k", v, 1) end
local function check_class_id(op, v) return common.want_int(op, "class_id", v, 0) end

-- Precision{thresholds=0.5, top_k=, class_id=, name=, dtype=} and Recall{...}.
local function precision_recall(class_name, other)
  local cls = common.class(class_name, base.Metric)
  function cls:__init(...)
    local o = common.options(class_name, { "thresholds", "top_k", "class_id", "name", "dtype" }, ...)
    self:_init_base(class_name, o.name, o.dtype)
    self.init_thresholds = o.thresholds
    self.top_k = o.top_k ~= nil and check_top_k(class_name, o.top_k) or nil
    self.class_id = o.class_id ~= nil and check_class_id(class_name, o.class_id) or nil
    self.thresholds = parse_thresholds(class_name, o.thresholds, self.top_k and NEG_INF or 0.5)
    self._evenly = evenly_distributed(self.thresholds)
    self.true_positives = self:add_variable({ #self.thresholds }, "true_positives", "float32")
    self[other] = self:add_variable({ #self.thresholds }, other, "float32")
  end
  function cls:update_state(y_true, y_pred, sample_weight)
    local vars = { tp = self.true_positives }
    vars[other == "false_positives" and "fp" or "fn"] = self[other]
    M.update_confusion(self.name, vars, y_true, y_pred, self.thresholds, {
      evenly = self._evenly, top_k = self.top_k, class_id = self.class_id, sample_weight = sample_weight })
  end
  function cls:result()
    local tp = self.true_positives:read_value()
    local r = ops.divide_no_nan(tp, tp + self[other])
    if #self.thresholds == 1 then r = r[0] end
    return r
  end
  function cls:get_config()
    local c = base.Metric.get_config(self)
    c.thresholds, c.top_k, c.class_id = self.init_thresholds, self.top_k, self.class_id
    return c
  end
  return cls
end

M.Precision = precision_recall("Precision", "false_positives")
M.Recall = precision_recall("Recall", "false_negatives")

---------------------------------------------------------------------------
-- AUC
---------------------------------------------------------------------------

local CURVES = { ROC = "ROC", roc = "ROC", PR = "PR", pr = "PR", PRGAIN = "PRGAIN", prgain = "PRGAIN" }
local SUMMATIONS = { interpolation = "interpolation", Interpolation = "interpolation", majoring = "majoring",
  Majoring = "majoring", minoring = "minoring", Minoring = "minoring" }

local AUC = common.class("AUC", base.Metric)
M.AUC = AUC

-- AUC{num_thresholds=200, curve="ROC", summation_method="interpolation", name=,
-- dtype=, thresholds=, multi_label=false, num_labels=, label_weights=, from_logits=false}.
function AUC:__init(...)
  local op = "AUC"
  local o = common.options(op, { "num_thresholds", "curve", "summation_method", "name", "dtype", "thresholds",
    "multi_label", "num_labels", "label_weights", "from_logits" }, ...)
  local th
  if o.thresholds ~= nil then
    th = parse_thresholds(op, o.thresholds)
    table.sort(th)
    self.num_thresholds = #th + 2
    local with_ends = { 0 }
    for i, t in ipairs(th) do with_ends[i + 1] = t end
    with_ends[#with_ends + 1] = 1
    self._evenly = evenly_distributed(with_ends)
    self._init_from_thresholds = true
  else
    local n = o.num_thresholds == nil and 200 or o.num_thresholds
    if type(n) ~= "number" or n ~= math.floor(n) or n <= 1 then
      common.error(string.format("AUC: num_thresholds must be an integer > 1, got %s", tostring(n)))
    end
    self.num_thresholds = n
    th = {}
    for i = 0, n - 3 do th[#th + 1] = (i + 1) / (n - 1) end
    self._evenly = true
  end
  self.thresholds = { 0 - EPS }
  for _, t in ipairs(th) do self.thresholds[#self.thresholds + 1] = t end
  self.thresholds[#self.thresholds + 1] = 1 + EPS
  local curve = o.curve == nil and "ROC" or o.curve
  self.curve = CURVES[curve]
  if not self.curve then
    common.error(string.format("AUC: curve must be \"ROC\", \"PR\" or \"PRGAIN\", got %s", tostring(curve)))
  end
  local summation = o.summation_method == nil and "interpolation" or o.summation_method
  self.summation_method = SUMMATIONS[summation]
  if not self.summation_method then
    common.error(string.format("AUC: summation_method must be \"interpolation\", \"majoring\" or \"minoring\", got %s",
      tostring(summation)))
  end
  self:_init_base(op, o.name, o.dtype)
  self.multi_label = o.multi_label ~= nil and common.want_bool(op, "multi_label", o.multi_label)
  if o.num_labels ~= nil then
    if not self.multi_label then common.error("AUC: num_labels is needed only when multi_label is true") end
    self.num_labels = common.want_int(op, "num_labels", o.num_labels, 1)
  end
  if o.label_weights ~= nil then
    self.label_weights = common.like_input(op, "label_weights", o.label_weights, "float32")
  end
  self.from_logits = o.from_logits ~= nil and common.want_bool(op, "from_logits", o.from_logits)
  -- multi_label: counts per threshold and label, made when the label count
  -- is known (num_labels, or y_pred's last dim at the first update), as Keras
  if not self.multi_label or self.num_labels then self:_build_counts() end
end

function AUC:_build_counts()
  local shape = { self.num_thresholds, self.multi_label and self.num_labels or nil }
  init_scope.run(function()
    self.true_positives = self:add_variable(shape, "true_positives", "float32")
    self.false_positives = self:add_variable(shape, "false_positives", "float32")
    self.true_negatives = self:add_variable(shape, "true_negatives", "float32")
    self.false_negatives = self:add_variable(shape, "false_negatives", "float32")
  end)
end

function AUC:update_state(y_true, y_pred, sample_weight)
  if self.from_logits then y_pred = ops.sigmoid(common.float_input(self.name, "y_pred", y_pred)) end
  if not self.true_positives then
    local p = common.float_input(self.name, "y_pred", y_pred)
    local labels = p.shape.rank == 2 and p.shape[2] or nil
    if type(labels) ~= "number" then
      common.error(string.format("AUC: with multi_label, y_pred must be 2-D (samples, labels) with the label count " ..
        "known, got shape %s (or give num_labels=)", tostring(p.shape)))
    end
    self.num_labels = labels
    self:_build_counts()
  end
  M.update_confusion(self.name, { tp = self.true_positives, fp = self.false_positives, tn = self.true_negatives,
    fn = self.false_negatives }, y_true, y_pred, self.thresholds, {
    evenly = self._evenly, sample_weight = sample_weight, multi_label = self.multi_label,
    -- Keras: with multi_label, label_weights weigh the labels' AUCs, not the counts
    label_weights = not self.multi_label and self.label_weights or nil })
end

-- With multi_label, each label's AUC (the sums over thresholds, axis 0)
-- averaged, weighted by label_weights when given; else the one sum.
function AUC:_reduce_labels(per_threshold)
  local by_label = ops.reduce_sum(per_threshold, 0)
  if not self.multi_label then return by_label end
  if not self.label_weights then return ops.reduce_mean(by_label) end
  return ops.divide_no_nan(ops.reduce_sum(by_label * self.label_weights), ops.reduce_sum(self.label_weights))
end

-- Keras's interpolate_pr_auc: the PR curve integrated with precision
-- interpolated between thresholds (Davis & Goadrich 2006).
function AUC:_interpolate_pr_auc(tp, fp, fn)
  local n = self.num_thresholds
  local function head(x) return x:slice { { 0, n - 1 } } end
  local function tail(x) return x:slice { { 1, n } } end
  local dtp = head(tp) - tail(tp)
  local p = tp + fp
  local dp = head(p) - tail(p)
  local prec_slope = ops.divide_no_nan(dtp, ops.maximum(dp, 0))
  local intercept = tail(tp) - prec_slope * tail(p)
  local safe_p_ratio = ops.where(ops.logical_and(ops.greater(head(p), 0), ops.greater(tail(p), 0)),
    ops.divide_no_nan(head(p), ops.maximum(tail(p), 0)), ops.ones_like(tail(p)))
  local increment = ops.divide_no_nan(prec_slope * (dtp + intercept * ops.log(safe_p_ratio)),
    ops.maximum(tail(tp) + tail(fn), 0))
  return self:_reduce_labels(increment)
end

function AUC:result()
  if not self.true_positives then return ops.zeros({}, "float32") end -- multi_label before any update
  local tp, fp = self.true_positives:read_value(), self.false_positives:read_value()
  local tn, fn = self.true_negatives:read_value(), self.false_negatives:read_value()
  if self.curve == "PR" and self.summation_method == "interpolation" then
    return self:_interpolate_pr_auc(tp, fp, fn)
  end
  local recall = ops.divide_no_nan(tp, tp + fn)
  local x, y
  if self.curve == "ROC" then
    x, y = ops.divide_no_nan(fp, fp + tn), recall
  elseif self.curve == "PR" then
    x, y = recall, ops.divide_no_nan(tp, tp + fp)
  else -- PRGAIN
    local scaling = ops.divide_no_nan(tp + fn, tn + fp)
    local recall_gain = 1 - scaling * ops.divide_no_nan(fn, tp)
    local precision_gain = 1 - scaling * ops.divide_no_nan(fp, tp)
    local no_tp = ops.equal(tp, 0)
    recall_gain = ops.maximum(ops.where(no_tp, 0, recall_gain), 0)
    precision_gain = ops.where(no_tp, 1, precision_gain)
    x, y = recall_gain, precision_gain
  end
  local n = self.num_thresholds
  local y0, y1 = y:slice { { 0, n - 1 } }, y:slice { { 1, n } }
  local heights
  if self.summation_method == "interpolation" then
    heights = (y0 + y1) / 2
  elseif self.summation_method == "minoring" then
    heights = ops.minimum(y0, y1)
  else
    heights = ops.maximum(y0, y1)
  end
  return self:_reduce_labels((x:slice { { 0, n - 1 } } - x:slice { { 1, n } }) * heights)
end

function AUC:get_config()
  local c = base.Metric.get_config(self)
  c.num_thresholds, c.curve, c.summation_method = self.num_thresholds, self.curve, self.summation_method
  c.multi_label, c.from_logits, c.num_labels = self.multi_label, self.from_logits, self.num_labels
  c.label_weights = self.label_weights and self.label_weights:totable() or nil
  if self._init_from_thresholds then
    c.thresholds = {}
    for i = 2, #self.thresholds - 1 do c.thresholds[#c.thresholds + 1] = self.thresholds[i] end
  end
  return c
end

return M
