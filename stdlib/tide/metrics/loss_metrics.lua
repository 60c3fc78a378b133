-- stdlib/tide/metrics/loss_metrics.lua — the metrics that average a loss function (Keras's
-- regression, probabilistic and hinge metrics: MeanMetricWrapper around it), and RootMeanSquaredError.
local common = require "tide.losses.common"
local base = require "tide.metrics.base"
local regression = require "tide.losses.regression"
local probabilistic = require "tide.losses.probabilistic"
local hinge = require "tide.losses.hinge"

local ops = common.ops
local M = {}

-- Metrics that average a loss function (Keras's MeanMetricWrapper around it).
local function bool_check(name) return function(op, v) return common.want_bool(op, name, v) end end
local function smoothing_check(op, v) return common.want_number(op, "label_smoothing", v, 0, 1) end
local function int_check(name) return function(op, v) return common.want_int(op, name, v) end end
local function negated(impl) return function(...) return -impl(...) end end

local LOSS_METRICS = {
  { class = "MeanSquaredError", name = "mean_squared_error", impl = regression.impl.mean_squared_error },
  { class = "MeanAbsoluteError", name = "mean_absolute_error", impl = regression.impl.mean_absolute_error },
  { class = "MeanAbsolutePercentageError", name = "mean_absolute_percentage_error",
    impl = regression.impl.mean_absolute_percentage_error },
  { class = "MeanSquaredLogarithmicError", name = "mean_squared_logarithmic_error",
    impl = regression.impl.mean_squared_logarithmic_error },
  -- the metric is the similarity itself (the loss is its negative)
  { class = "CosineSimilarity", name = "cosine_similarity", impl = negated(regression.impl.cosine_similarity),
    params = { { "axis", -1, int_check "axis" } }, order = { "name", "dtype", "axis" } },
  { class = "LogCoshError", name = "logcosh", impl = regression.impl.log_cosh },
  { class = "KLDivergence", name = "kl_divergence", impl = probabilistic.impl.kl_divergence },
  { class = "Poisson", name = "poisson", impl = probabilistic.impl.poisson },
  { class = "BinaryCrossentropy", name = "binary_crossentropy", impl = probabilistic.impl.binary_crossentropy,
    params = { { "from_logits", false, bool_check "from_logits" }, { "label_smoothing", 0, smoothing_check },
      { "axis", -1, int_check "axis", config = false } },
    order = { "name", "dtype", "from_logits", "label_smoothing" } },
  { class = "CategoricalCrossentropy", name = "categorical_crossentropy",
    impl = probabilistic.impl.categorical_crossentropy,
    params = { { "from_logits", false, bool_check "from_logits" }, { "label_smoothing", 0, smoothing_check },
      { "axis", -1, int_check "axis" } },
    order = { "name", "dtype", "from_logits", "label_smoothing", "axis" } },
  { class = "SparseCategoricalCrossentropy", name = "sparse_categorical_crossentropy",
    impl = probabilistic.impl.sparse_categorical_crossentropy,
    params = { { "from_logits", false, bool_check "from_logits" }, { "ignore_class", nil, int_check "ignore_class" },
      { "axis", -1, int_check "axis" } },
    order = { "name", "dtype", "from_logits", "ignore_class", "axis" } },
  { class = "Hinge", name = "hinge", impl = hinge.impl.hinge },
  { class = "SquaredHinge", name = "squared_hinge", impl = hinge.impl.squared_hinge },
  { class = "CategoricalHinge", name = "categorical_hinge", impl = hinge.impl.categorical_hinge },
}
for _, spec in ipairs(LOSS_METRICS) do
  spec.params = spec.params or {}
  spec.order = spec.order or { "name", "dtype" }
  spec.align = false -- Keras's metrics call the loss functions, which align ranks only where they say so
  M[spec.class] = base.wrapper(spec)
end

-- RootMeanSquaredError{name="root_mean_squared_error", dtype=}: the square root of the mean squared error.
local RMSE = common.class("RootMeanSquaredError", base.Mean)
M.RootMeanSquaredError = RMSE
function RMSE:__init(...)
  local o = common.options("RootMeanSquaredError", { "name", "dtype" }, ...)
  self:_init_base("RootMeanSquaredError", o.name or "root_mean_squared_error", o.dtype)
  self:_add_mean_state()
end
function RMSE:update_state(y_true, y_pred, sample_weight)
  y_pred = common.float_input(self.name, "y_pred", y_pred, self.dtype)
  y_true = common.like_input(self.name, "y_true", y_true, self.dtype)
  y_true, y_pred = common.squeeze_or_expand(y_true, y_pred)
  common.check_same_shape(self.name, "y_true", y_true, "y_pred", y_pred)
  return base.Mean.update_state(self, ops.square(y_pred - y_true), sample_weight)
end
function RMSE:result() return ops.sqrt(base.Mean.result(self)) end

return M
