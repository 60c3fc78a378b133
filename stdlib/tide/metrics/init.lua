-- stdlib/tide/metrics/init.lua — tide.metrics (Keras 3's keras.metrics): the
-- Metric classes, the accuracy functions, get() by name, and resolve(), which
-- turns "accuracy" into the right accuracy for a loss and an output shape.
local common = require "tide.losses.common"
local base = require "tide.metrics.base"
local accuracy = require "tide.metrics.accuracy"
local confusion = require "tide.metrics.confusion"
local regression = require "tide.losses.regression"
local probabilistic = require "tide.losses.probabilistic"
local hinge = require "tide.losses.hinge"

local ops = common.ops
local M = {}

M.Metric, M.Mean, M.Sum = base.Metric, base.Mean, base.Sum
M.Precision, M.Recall, M.AUC = confusion.Precision, confusion.Recall, confusion.AUC

local function add_wrapper(spec)
  M[spec.class] = base.wrapper(spec)
end

-- The accuracies: classes, and functions f(y_true, y_pred, [parameter]) giving per-sample 1s and 0s.
for _, spec in ipairs(accuracy.classes) do
  local impl = accuracy.impl[spec.name]
  spec.impl = impl
  add_wrapper(spec)
  local fname = spec.name
  M[fname] = function(y_true, y_pred, ...)
    local o = require("tide.args").parse(fname, spec.params[1] and { spec.params[1][1] } or {}, ...)
    local p = {}
    for _, q in ipairs(spec.params) do
      local v = o[q[1]]
      if v == nil then v = q[2] end
      p[q[1]] = q[3](fname, v)
    end
    return impl(fname, y_true, y_pred, p)
  end
end

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
  add_wrapper(spec)
end

-- RootMeanSquaredError{name="root_mean_squared_error", dtype=}: the square root of the mean squared error.
local RMSE = common.class("RootMeanSquaredError", base.Mean)
M.RootMeanSquaredError = RMSE
function RMSE:__init(opts)
  local o = common.options("RootMeanSquaredError", { "name", "dtype" }, opts)
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

---------------------------------------------------------------------------
-- Names: get() and resolve()
---------------------------------------------------------------------------

-- Keras's ALL_OBJECTS_DICT: class names, their snake_case, and short aliases.
local by_name = {}
for k, v in pairs(M) do
  if type(v) == "table" and common.is_instance(v, base.Metric) == false and rawget(v, "__name") == k
    and k ~= "Metric" then
    by_name[k] = v
    by_name[common.snake_case(k)] = v
  end
end
by_name.auc = M.AUC
for alias, cls in pairs { mse = M.MeanSquaredError, MSE = M.MeanSquaredError, mae = M.MeanAbsoluteError,
  MAE = M.MeanAbsoluteError, mape = M.MeanAbsolutePercentageError, MAPE = M.MeanAbsolutePercentageError,
  msle = M.MeanSquaredLogarithmicError, MSLE = M.MeanSquaredLogarithmicError, bce = M.BinaryCrossentropy,
  BCE = M.BinaryCrossentropy } do
  by_name[alias] = cls
end

-- The names get() knows, sorted.
function M.names()
  local list = {}
  for k in pairs(by_name) do list[#list + 1] = k end
  list[#list + 1] = "accuracy (deferred)"
  list[#list + 1] = "acc (deferred)"
  table.sort(list)
  return list
end

function M.is_metric(x) return common.is_instance(x, base.Metric) end

-- "accuracy" and "acc" name no class until the loss and the output are known:
-- get() gives this marker, and resolve() (called by compile) replaces it.
local Deferred = {}
Deferred.__index = Deferred
Deferred.__tostring = function(d) return string.format("<tide.metrics deferred '%s'>", d.name) end

function M.is_deferred(x) return getmetatable(x) == Deferred end

local function is_accuracy_name(s) return type(s) == "string" and (s:lower() == "accuracy" or s:lower() == "acc") end

-- get(identifier) as keras.metrics.get: nil stays nil; a name gives a new
-- instance ("sparse_categorical_accuracy", "SparseCategoricalAccuracy", "mse",
-- "auc"), except "accuracy" and "acc", which give a marker that resolve() turns
-- into an accuracy; {class_name=, config=} an instance with that config; a
-- Metric instance or a Lua function is returned as it is; a class is instantiated.
function M.get(identifier)
  if identifier == nil then return nil end
  local t = type(identifier)
  if t == "string" then
    if identifier == "accuracy" or identifier == "acc" then return setmetatable({ name = identifier }, Deferred) end
    local cls = by_name[identifier]
    if cls == nil then
      common.error(string.format("tide.metrics.get: unknown metric '%s' (known: %s)", identifier,
        table.concat(M.names(), ", ")))
    end
    return cls()
  end
  if M.is_metric(identifier) or M.is_deferred(identifier) or t == "function" then return identifier end
  if t == "table" and getmetatable(identifier) == nil and type(identifier.class_name) == "string" then
    local cls = by_name[identifier.class_name]
    if cls == nil then
      common.error(string.format("tide.metrics.get: unknown metric class '%s'", identifier.class_name))
    end
    return cls(identifier.config)
  end
  for _, cls in pairs(by_name) do
    if identifier == cls then return cls() end
  end
  common.error(string.format("tide.metrics.get: could not interpret metric identifier %s (a %s); give a name, " ..
    "a Metric, a function or {class_name=, config=}", tostring(identifier), t))
end

-- True when `loss` (a name, a Loss, a loss function) takes class indices as targets.
local function is_sparse_loss(loss)
  if loss == nil then return false end
  local losses = require "tide.losses"
  if type(loss) == "string" then
    return loss == "sparse_categorical_crossentropy" or loss == "SparseCategoricalCrossentropy"
  end
  if loss == losses.sparse_categorical_crossentropy or loss == losses.SparseCategoricalCrossentropy then return true end
  return common.is_instance(loss, losses.SparseCategoricalCrossentropy)
end

local None = require("tide.tensor_shape").None

local function shape_list(op, what, s)
  if type(s) == "table" and s.rank ~= nil and s.as_list then return s:as_list() end
  if type(s) == "table" then return s end
  common.error(string.format("%s: %s must be a shape (a list of dims, tide.None for unknown ones), got %s", op,
    what, type(s)))
end

-- resolve(identifier, loss, output_shape, target_shape): the Metric that
-- compile uses for one entry of `metrics`. "accuracy" and "acc" (any case, or
-- get()'s marker for them) follow Keras 3's rule on the shapes of the targets
-- and of the model's output: BinaryAccuracy when the output's last dim is 1;
-- else SparseCategoricalAccuracy when the targets have a lower rank than the
-- output, or a last dim of 1; else CategoricalAccuracy. Without target_shape
-- the targets' shape is the one the loss expects: the output's without its
-- last dim for sparse categorical crossentropy, the output's own for any other
-- loss. The metric is named by the identifier ("acc" stays "acc"). Any other
-- identifier goes through get(), and a Lua function is wrapped in a mean.
function M.resolve(identifier, loss, output_shape, target_shape)
  local op = "tide.metrics.resolve"
  if identifier == nil then common.error(op .. ": expected a metric, got nil") end
  local name = M.is_deferred(identifier) and identifier.name or identifier
  if not is_accuracy_name(name) then
    local metric = M.get(identifier)
    if type(metric) == "function" then
      local fn = metric
      local wrapped = base.wrapper { class = "MeanMetricWrapper", params = {}, order = { "name", "dtype" },
        impl = function(_, y_true, y_pred) return fn(y_true, y_pred) end }
      metric = wrapped { name = "mean_metric_wrapper" }
    end
    if type(identifier) == "string" then metric.name = identifier end
    return metric
  end
  local out = shape_list(op, "output_shape", output_shape)
  local out_rank = #out
  if out_rank == 0 then common.error(op .. ": output_shape must have at least one dim to choose an accuracy") end
  local out_last = out[out_rank]
  local t_rank, t_last
  if target_shape ~= nil then
    local t = shape_list(op, "target_shape", target_shape)
    t_rank, t_last = #t, t[#t]
  elseif is_sparse_loss(loss) then
    t_rank, t_last = out_rank - 1, out[out_rank - 1]
  else
    t_rank, t_last = out_rank, out_last
  end
  local is_binary = out_last == 1
  local is_sparse = t_rank < out_rank or (t_last == 1 and out_last ~= None and out_last > 1)
  if is_binary then return M.BinaryAccuracy { name = name } end
  if is_sparse then return M.SparseCategoricalAccuracy { name = name } end
  return M.CategoricalAccuracy { name = name }
end

return M
