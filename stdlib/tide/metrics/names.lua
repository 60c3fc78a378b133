-- stdlib/tide/metrics/names.lua — metrics by name: get() (Keras's ALL_OBJECTS_DICT and
-- aliases), names(), and resolve(), which turns "accuracy" into the right accuracy for a loss and an output shape.
local common = require "tide.losses.common"
local base = require "tide.metrics.base"
local accuracy = require "tide.metrics.accuracy"
local confusion = require "tide.metrics.confusion"
local loss_metrics = require "tide.metrics.loss_metrics"
local threshold_counts = require "tide.metrics.threshold_counts"
local iou = require "tide.metrics.iou"
local fscore = require "tide.metrics.fscore"
local regression_stats = require "tide.metrics.regression_stats"
local mean_wrapper = require "tide.metrics.mean_wrapper"
local functions = require "tide.metrics.functions"

local M = {}

-- Every Metric class, by name, of the files that define them.
local classes = {}
for _, mod in ipairs { base, accuracy, confusion, loss_metrics, threshold_counts, iou, fscore, regression_stats,
  mean_wrapper } do
  for k, v in pairs(mod) do
    if type(v) == "table" and rawget(v, "__name") == k then classes[k] = v end
  end
end

-- Keras's ALL_OBJECTS_DICT: class names, their snake_case, and short aliases.
local by_name = {}
for k, v in pairs(classes) do
  if type(v) == "table" and common.is_instance(v, base.Metric) == false and rawget(v, "__name") == k
    and k ~= "Metric" then
    by_name[k] = v
    by_name[common.snake_case(k)] = v
  end
end
by_name.auc = classes.AUC
for alias, cls in pairs { mse = classes.MeanSquaredError, MSE = classes.MeanSquaredError,
  mae = classes.MeanAbsoluteError, MAE = classes.MeanAbsoluteError, mape = classes.MeanAbsolutePercentageError,
  MAPE = classes.MeanAbsolutePercentageError, msle = classes.MeanSquaredLogarithmicError,
  MSLE = classes.MeanSquaredLogarithmicError, bce = classes.BinaryCrossentropy, BCE = classes.BinaryCrossentropy } do
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
  if is_binary then return classes.BinaryAccuracy { name = name } end
  if is_sparse then return classes.SparseCategoricalAccuracy { name = name } end
  return classes.CategoricalAccuracy { name = name }
end

-- serialize(metric) as keras.metrics.serialize: a Metric gives {module="keras.metrics", class_name=,
-- config=}; one of tide.metrics' functions {module="builtins", class_name="function", config=its name,
-- registered_name="function"}; nil stays nil. deserialize(config, custom_objects) as
-- keras.metrics.deserialize: what serialize() gave (or a name, as get() takes it) back as a Metric or a
-- function; custom_objects maps class or function names to the user's classes and functions, looked up first.
M.serialize, M.deserialize = require("tide.losses.serialization").make {
  prefix = "tide.metrics", module = "keras.metrics", noun = "metric", object = "a Metric",
  is_instance = function(x) return M.is_metric(x) end, function_name = functions.name_of,
  function_named = functions.get,
  class_named = function(name) return classes[name] end,
  get = function(name) return M.get(name) end,
  hint = "wrap it in a Metric class (tide.metrics.Metric:extend) to serialize it",
}

-- Every Metric class by name (the face hands them on).
M.classes = classes

return M
