-- stdlib/tide/metrics/init.lua — tide.metrics (Keras 3's keras.metrics): the face that hands
-- on the Metric classes, the accuracy functions, get() by name, and resolve().
--   base.lua          Metric, Mean, Sum, wrapper() (tide's classes that average a function)
--   accuracy.lua      the accuracy functions and their classes
--   confusion.lua     Precision, Recall, AUC
--   loss_metrics.lua  the metrics that average a loss function, RootMeanSquaredError
--   threshold_counts.lua  TruePositives ... FalseNegatives, SensitivityAtSpecificity and its kin
--   iou.lua           IoU, MeanIoU, BinaryIoU, OneHotIoU, OneHotMeanIoU
--   fscore.lua        FBetaScore, F1Score
--   regression_stats.lua  R2Score, PearsonCorrelation, ConcordanceCorrelation (and their functions)
--   mean_wrapper.lua  MeanMetricWrapper (Keras's public class: any function's mean)
--   functions.lua     the metric functions by name (and Keras's loss functions under their names)
--   names.lua         get(), names(), is_metric, is_deferred, resolve(), serialize(), deserialize()
local base = require "tide.metrics.base"
local functions = require "tide.metrics.functions"
local names = require "tide.metrics.names"

local M = {}

M.Metric = base.Metric
for k, cls in pairs(names.classes) do M[k] = cls end

-- The functions (accuracies, correlations, and Keras's loss functions under keras.metrics' names).
for name, fn in pairs(functions.by_name) do M[name] = fn end

for _, name in ipairs { "names", "is_metric", "is_deferred", "get", "resolve", "serialize", "deserialize" } do
  M[name] = names[name]
end

return M
