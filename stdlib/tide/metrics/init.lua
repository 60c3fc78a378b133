-- stdlib/tide/metrics/init.lua — tide.metrics (Keras 3's keras.metrics): the face that hands
-- on the Metric classes, the accuracy functions, get() by name, and resolve().
--   base.lua          Metric, Mean, Sum, MeanMetricWrapper (the mean of a function's values)
--   accuracy.lua      the accuracy functions and their classes
--   confusion.lua     Precision, Recall, AUC
--   loss_metrics.lua  the metrics that average a loss function, RootMeanSquaredError
--   names.lua         get(), names(), is_metric, is_deferred, resolve()
local base = require "tide.metrics.base"
local accuracy = require "tide.metrics.accuracy"
local names = require "tide.metrics.names"

local M = {}

M.Metric = base.Metric
for k, cls in pairs(names.classes) do M[k] = cls end

-- The accuracies as functions f(y_true, y_pred, [parameter]) giving per-sample 1s and 0s.
for _, spec in ipairs(accuracy.classes) do M[spec.name] = accuracy[spec.name] end

for _, name in ipairs { "names", "is_metric", "is_deferred", "get", "resolve" } do M[name] = names[name] end

return M
