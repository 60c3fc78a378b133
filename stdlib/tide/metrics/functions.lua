-- stdlib/tide/metrics/functions.lua — keras.metrics' functions by name (the accuracies, the correlations,
-- and Keras's loss functions that keras.metrics hands on), and the name of a given one (for serialization).
local accuracy = require "tide.metrics.accuracy"
local regression_stats = require "tide.metrics.regression_stats"
local losses = require "tide.losses"

local M = {}

-- name -> function
local by_name = {}
for _, spec in ipairs(accuracy.classes) do by_name[spec.name] = accuracy[spec.name] end
by_name.pearson_correlation = regression_stats.pearson_correlation
by_name.concordance_correlation = regression_stats.concordance_correlation
-- keras.metrics.binary_crossentropy is keras.losses.binary_crossentropy (and so on)
for _, name in ipairs { "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy",
  "categorical_focal_crossentropy", "categorical_hinge", "hinge", "huber", "kl_divergence", "log_cosh",
  "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error",
  "poisson", "sparse_categorical_crossentropy", "squared_hinge" } do
  by_name[name] = losses[name]
end
M.by_name = by_name

-- The name of fn among keras.metrics' and tide.losses' functions, or nil.
function M.name_of(fn)
  for k, v in pairs(by_name) do
    if v == fn then return k end
  end
  for k, v in pairs(losses) do
    if v == fn and type(k) == "string" then return k end
  end
end

-- The function of that name (keras.metrics' first, then tide.losses'), or nil.
function M.get(name)
  local f = by_name[name]
  if f == nil and type(losses[name]) == "function" and name ~= "get" and name ~= "names" and name ~= "is_loss" then
    f = losses[name]
  end
  return f
end

return M
