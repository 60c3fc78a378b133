-- stdlib/tide/metrics/fscore.lua — Keras 3's FBetaScore and F1Score: tp, fp, fn and label weights
-- per class (or summed, for "micro"), made at the first update when the class count is known.
local common = require "tide.losses.common"
local base = require "tide.metrics.base"
local init_scope = require "tide.initializers.init_scope"

local ops = common.ops
local M = {}

local AVERAGES = { micro = true, macro = true, weighted = true }

local FBetaScore = common.class("FBetaScore", base.Metric)
M.FBetaScore = FBetaScore

-- FBetaScore{average=nil|"micro"|"macro"|"weighted", beta=1, threshold=nil, name="fbeta_score", dtype=}:
-- without a threshold, each row's highest score is the predicted class; with one, scores above it.
function FBetaScore:__init(...)
  local o = common.options("FBetaScore", { "average", "beta", "threshold", "name", "dtype" }, ...)
  self:_init_fbeta("FBetaScore", o, o.beta == nil and 1 or o.beta, o.name or "fbeta_score")
end

function FBetaScore:_init_fbeta(op, o, beta, name)
  if o.average ~= nil and not AVERAGES[o.average] then
    common.error(string.format("%s: average must be nil, \"micro\", \"macro\" or \"weighted\", got %s", op,
      tostring(o.average)))
  end
  if type(beta) ~= "number" or beta ~= beta or beta <= 0 then
    common.error(string.format("%s: beta must be a number > 0, got %s", op, tostring(beta)))
  end
  if o.threshold ~= nil and (type(o.threshold) ~= "number" or not (o.threshold > 0 and o.threshold <= 1)) then
    common.error(string.format("%s: threshold must be a number with 0 < threshold <= 1, got %s", op,
      tostring(o.threshold)))
  end
  self:_init_base(op, name, o.dtype)
  self.average, self.beta, self.threshold = o.average, beta, o.threshold
  self.axis = self.average ~= "micro" and 0 or nil
end

function FBetaScore:_build(op, y_true, y_pred)
  local st, sp = y_true.shape, y_pred.shape
  if sp.rank ~= 2 or st.rank ~= 2 then
    common.error(string.format("%s: expects 2-D inputs (batch, classes), got y_true %s and y_pred %s", op,
      tostring(st), tostring(sp)))
  end
  if type(sp[2]) ~= "number" or type(st[2]) ~= "number" then
    common.error(string.format("%s: the classes dim must be known, got y_true %s and y_pred %s", op, tostring(st),
      tostring(sp)))
  end
  local shape = self.average ~= "micro" and { sp[2] } or {}
  init_scope.run(function()
    self.true_positives = self:add_variable(shape, "true_positives")
    self.false_positives = self:add_variable(shape, "false_positives")
    self.false_negatives = self:add_variable(shape, "false_negatives")
    self.intermediate_weights = self:add_variable(shape, "intermediate_weights")
  end)
end

function FBetaScore:update_state(y_true, y_pred, sample_weight)
  local dt = self.dtype
  y_pred = common.float_input(self.name, "y_pred", y_pred, dt)
  y_true = common.like_input(self.name, "y_true", y_true, dt)
  if not self.true_positives then self:_build(self.__name, y_true, y_pred) end
  common.check_same_shape(self.name, "y_true", y_true, "y_pred", y_pred)
  local predicted
  if self.threshold == nil then
    local top = ops.reduce_max(y_pred, -1, true)
    predicted = ops.logical_and(ops.greater_equal(y_pred, top), ops.greater(ops.abs(y_pred), 1e-9))
  else
    predicted = ops.greater(y_pred, self.threshold)
  end
  predicted = ops.cast(predicted, dt)
  local sw
  if sample_weight ~= nil then sw = ops.expand_dims(common.like_input(self.name, "sample_weight", sample_weight, dt), 1) end
  local axis = self.axis
  local function weighted_sum(v)
    if sw ~= nil then v = v * sw end
    if axis == nil then return ops.reduce_sum(v) end
    return ops.reduce_sum(v, axis)
  end
  self.true_positives:assign_add(weighted_sum(predicted * y_true))
  self.false_positives:assign_add(weighted_sum(predicted * (1 - y_true)))
  self.false_negatives:assign_add(weighted_sum((1 - predicted) * y_true))
  self.intermediate_weights:assign_add(weighted_sum(y_true))
end

function FBetaScore:result()
  if not self.true_positives then return ops.zeros({}, self.dtype) end
  local eps = common.EPSILON
  local tp, fp, fn = self.true_positives:read_value(), self.false_positives:read_value(),
    self.false_negatives:read_value()
  local precision = tp / (tp + fp + eps)
  local recall = tp / (tp + fn + eps)
  local b2 = self.beta * self.beta
  local f = precision * recall / (b2 * precision + recall + eps) * (1 + b2)
  if self.average == "weighted" then
    local w = self.intermediate_weights:read_value()
    return ops.reduce_sum(f * (w / (ops.reduce_sum(w) + eps)))
  elseif self.average ~= nil then
    return ops.reduce_mean(f)
  end
  return f
end

function FBetaScore:get_config()
  local c = base.Metric.get_config(self)
  c.average, c.beta, c.threshold = self.average, self.beta, self.threshold
  return c
end

-- F1Score{average=, threshold=, name="f1_score", dtype=}: FBetaScore with beta 1.
local F1Score = common.class("F1Score", FBetaScore)
M.F1Score = F1Score

function F1Score:__init(...)
  local o = common.options("F1Score", { "average", "threshold", "name", "dtype" }, ...)
  self:_init_fbeta("F1Score", o, 1, o.name or "f1_score")
end

function F1Score:get_config()
  local c = FBetaScore.get_config(self)
  c.beta = nil
  return c
end

return M
