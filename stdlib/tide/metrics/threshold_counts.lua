-- stdlib/tide/metrics/threshold_counts.lua — Keras 3's confusion counts per threshold (TruePositives,
-- TrueNegatives, FalsePositives, FalseNegatives) and the metrics read off 200 even thresholds at a constraint.
local common = require "tide.losses.common"
local base = require "tide.metrics.base"
local confusion = require "tide.metrics.confusion"

local ops = common.ops
local M = {}

---------------------------------------------------------------------------
-- TruePositives, TrueNegatives, FalsePositives, FalseNegatives
---------------------------------------------------------------------------

-- Cls{thresholds=0.5, name=, dtype=}: the weighted count of one confusion cell per threshold
-- (a scalar for one threshold), predictions counted positive when above the threshold.
local function condition_count(class_name, cell)
  local cls = common.class(class_name, base.Metric)
  function cls:__init(...)
    local o = common.options(class_name, { "thresholds", "name", "dtype" }, ...)
    self:_init_base(class_name, o.name, o.dtype)
    self.init_thresholds = o.thresholds
    self.thresholds = confusion.parse_thresholds(class_name, o.thresholds, 0.5)
    self._evenly = confusion.evenly_distributed(self.thresholds)
    self.accumulator = self:add_variable({ #self.thresholds }, "accumulator", "float32")
  end
  function cls:update_state(y_true, y_pred, sample_weight)
    confusion.update_confusion(self.name, { [cell] = self.accumulator }, y_true, y_pred, self.thresholds,
      { evenly = self._evenly, sample_weight = sample_weight })
  end
  function cls:result()
    local r = self.accumulator:read_value()
    if #self.thresholds == 1 then r = r[0] end
    return r
  end
  function cls:get_config()
    local c = base.Metric.get_config(self)
    c.thresholds = self.init_thresholds
    return c
  end
  return cls
end

M.TruePositives = condition_count("TruePositives", "tp")
M.TrueNegatives = condition_count("TrueNegatives", "tn")
M.FalsePositives = condition_count("FalsePositives", "fp")
M.FalseNegatives = condition_count("FalseNegatives", "fn")

---------------------------------------------------------------------------
-- SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision
---------------------------------------------------------------------------

local function rate(a, b) return ops.divide_no_nan(a, a + b) end

-- The curves each metric reads: (constrained, dependent) from tp, fp, tn, fn.
local CURVES = {
  SensitivityAtSpecificity = function(tp, fp, tn, fn) return rate(tn, fp), rate(tp, fn) end,
  SpecificityAtSensitivity = function(tp, fp, tn, fn) return rate(tp, fn), rate(tn, fp) end,
  PrecisionAtRecall = function(tp, fp, _, fn) return rate(tp, fn), rate(tp, fp) end,
  RecallAtPrecision = function(tp, fp, _, fn) return rate(tp, fp), rate(tp, fn) end,
}

-- Cls{value, num_thresholds=200, class_id=, name=, dtype=} (value is named as the
-- constraint: specificity, sensitivity, recall, precision): the best dependent rate over the
-- thresholds whose constrained rate is >= value (0 when none is).
local function at_constraint(class_name, value_name)
  local cls = common.class(class_name, base.Metric)
  local curves = CURVES[class_name]
  function cls:__init(...)
    local o = common.options(class_name, { value_name, "num_thresholds", "class_id", "name", "dtype" }, ...)
    local v = o[value_name]
    if v == nil then common.error(string.format("%s: %s is required (a number in [0, 1])", class_name, value_name)) end
    self[value_name] = common.want_number(class_name, value_name, v, 0, 1)
    self.value = v
    local n = o.num_thresholds == nil and 200 or o.num_thresholds
    self.num_thresholds = common.want_int(class_name, "num_thresholds", n, 1)
    if o.class_id ~= nil then self.class_id = common.want_int(class_name, "class_id", o.class_id, 0) end
    self:_init_base(class_name, o.name, o.dtype)
    if n == 1 then
      self.thresholds, self._evenly = { 0.5 }, false
    else
      self.thresholds = { 0 }
      for i = 1, n - 2 do self.thresholds[#self.thresholds + 1] = i / (n - 1) end
      self.thresholds[#self.thresholds + 1] = 1
      self._evenly = true
    end
    local k = #self.thresholds
    self.true_positives = self:add_variable({ k }, "true_positives", "float32")
    self.false_positives = self:add_variable({ k }, "false_positives", "float32")
    self.true_negatives = self:add_variable({ k }, "true_negatives", "float32")
    self.false_negatives = self:add_variable({ k }, "false_negatives", "float32")
  end
  function cls:update_state(y_true, y_pred, sample_weight)
    confusion.update_confusion(self.name, { tp = self.true_positives, fp = self.false_positives,
      tn = self.true_negatives, fn = self.false_negatives }, y_true, y_pred, self.thresholds,
      { evenly = self._evenly, class_id = self.class_id, sample_weight = sample_weight })
  end
  function cls:result()
    local constrained, dependent = curves(self.true_positives:read_value(), self.false_positives:read_value(),
      self.true_negatives:read_value(), self.false_negatives:read_value())
    local feasible = ops.greater_equal(constrained, self.value)
    -- Keras's ops.max(where(feasible, dependent, 0), initial=0)
    return ops.maximum(ops.reduce_max(ops.where(feasible, dependent, 0)), 0)
  end
  function cls:get_config()
    local c = base.Metric.get_config(self)
    c.class_id, c.num_thresholds, c[value_name] = self.class_id, self.num_thresholds, self[value_name]
    return c
  end
  return cls
end

M.SensitivityAtSpecificity = at_constraint("SensitivityAtSpecificity", "specificity")
M.SpecificityAtSensitivity = at_constraint("SpecificityAtSensitivity", "sensitivity")
M.PrecisionAtRecall = at_constraint("PrecisionAtRecall", "recall")
M.RecallAtPrecision = at_constraint("RecallAtPrecision", "precision")

return M
