-- stdlib/tide/metrics/mean_wrapper.lua — Keras 3's public MeanMetricWrapper: the mean of any function's
-- values, with the function's keyword arguments, serialized by the function's name.
local common = require "tide.losses.common"
local keras_mask = require "tide.keras_mask"
local losses_base = require "tide.losses.base"
local base = require "tide.metrics.base"
local functions = require "tide.metrics.functions"

local M = {}

---------------------------------------------------------------------------
-- MeanMetricWrapper{fn, name=, dtype=, ...}: the public class (Keras's), any function's mean
---------------------------------------------------------------------------

local MMW = common.class("MeanMetricWrapper", base.Mean)
M.MeanMetricWrapper = MMW

-- MeanMetricWrapper{fn, name=, dtype=, key=value...} or MeanMetricWrapper(fn, {name=, ...}): the mean of
-- fn(y_true, y_pred, {key=value...}) (fn's keyword arguments are the other keys); fn may be a function or
-- the name of one of tide.metrics' functions.
function MMW:__init(fn, opts)
  local op = "MeanMetricWrapper"
  local o = {}
  if type(fn) == "table" and getmetatable(fn) == nil and opts == nil then
    for k, v in pairs(fn) do o[k] = v end
    local pos = { "fn", "name", "dtype" }
    for i = 1, #o do
      if pos[i] == nil then common.error(op .. ": takes at most 3 positional entries (fn, name, dtype)") end
      if o[pos[i]] ~= nil then common.error(string.format("%s: %s given twice", op, pos[i])) end
      o[pos[i]], o[i] = o[i], nil
    end
  else
    if opts ~= nil and (type(opts) ~= "table" or getmetatable(opts) ~= nil) then
      common.error(string.format("%s: expects (fn, {options}), got a %s for the options", op, type(opts)))
    end
    for k, v in pairs(opts or {}) do o[k] = v end
    o.fn = fn
  end
  local f = o.fn
  -- a serialized function ({class_name="function", config=name}) or a name: one of tide.metrics' functions
  if type(f) == "table" and getmetatable(f) == nil and type(f.config) == "string" then f = f.config end
  if type(f) == "string" then
    local name = f
    f = functions.get(name)
    if f == nil then common.error(string.format("%s: no tide.metrics function named '%s'", op, name)) end
  end
  if type(f) ~= "function" then
    common.error(string.format("%s: fn must be a function (or a tide.metrics function's name), got %s", op, type(f)))
  end
  self:_init_base(op, o.name == nil and "mean_metric_wrapper" or o.name, o.dtype)
  self._fn = f
  local kwargs = {}
  for k, v in pairs(o) do
    if k ~= "fn" and k ~= "name" and k ~= "dtype" then kwargs[k] = v end
  end
  self._fn_kwargs = kwargs
  self:_add_mean_state()
end

function MMW:update_state(y_true, y_pred, sample_weight)
  local in_mask = keras_mask.get(y_pred)
  local values
  if next(self._fn_kwargs) == nil then values = self._fn(y_true, y_pred) else values = self._fn(y_true, y_pred,
    self._fn_kwargs) end
  if in_mask ~= nil then
    if sample_weight ~= nil then
      sample_weight = common.like_input(self.name, "sample_weight", sample_weight, self.dtype)
    end
    sample_weight = losses_base.apply_mask(sample_weight, in_mask, self.dtype, "sum")
  end
  return base.Mean.update_state(self, values, sample_weight)
end

-- fn is serialized by name as Keras does ({module=, class_name="function", config=name}) when it is one of
-- tide.metrics' or tide.losses' functions; any other function stays in the config as it is (in memory only).
function MMW:get_config()
  local c = base.Metric.get_config(self)
  local name = functions.name_of(self._fn)
  c.fn = name and { module = "builtins", class_name = "function", config = name, registered_name = "function" }
    or self._fn
  for k, v in pairs(self._fn_kwargs) do c[k] = v end
  return c
end

return M
