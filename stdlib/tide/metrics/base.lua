-- stdlib/tide/metrics/base.lua — the Metric base class (Keras 3's): state in
-- non-trainable Variables, so a traced step updates it without tracing again;
-- Mean, Sum, and wrapper() (the mean of a function's values: Keras's MeanMetricWrapper, for tide's own classes).
local common = require "tide.losses.common"
local keras_mask = require "tide.keras_mask"
local losses_base = require "tide.losses.base"
local variable = require "tide.variable"

local ops = common.ops
local M = {}

local Metric = common.class("Metric")
M.Metric = Metric

-- Metric{name=, dtype="float32"}: subclasses add their Variables with add_variable
-- and define update_state and result.
function Metric:__init(...)
  local o = common.options("Metric", { "dtype", "name" }, ...) -- Keras 3's order (Mean's is name, dtype)
  self:_init_base("Metric", o.name, o.dtype)
end

function Metric:_init_base(op, name, dt)
  self.name = common.want_name(op, "name", name) or common.auto_name(self.__name)
  self.dtype = common.float_dtype(op, dt) or "float32"
  self.variables = {}
end

-- A new zero Variable of `shape` in the metric's state (not trainable).
function Metric:add_variable(shape, name, dt)
  local v = variable.Variable(ops.zeros(shape, dt or self.dtype), { name = name, trainable = false })
  self.variables[#self.variables + 1] = v
  return v
end

function Metric:update_state()
  common.error(self.__name .. ": a Metric subclass must define update_state")
end

function Metric:result()
  common.error(self.__name .. ": a Metric subclass must define result")
end

-- Every state Variable back to zeros (also inside a traced function).
function Metric:reset_state()
  for _, v in ipairs(self.variables) do v:assign(0) end
end

-- metric(...): update_state(...), then the result.
function Metric:__call(...)
  self:update_state(...)
  return self:result()
end

function Metric:get_config() return { name = self.name, dtype = self.dtype } end

function Metric.from_config(cls, config) return cls(config) end

-- Metric:extend("MyMetric"): a subclass (define __init, update_state and result;
-- call self:_init_base(class_name, name, dtype) and add_variable in __init).
function Metric.extend(cls, name) return common.class(name, cls) end

function Metric:__tostring()
  return string.format("<tide.metrics.%s name=%s>", self.__name, tostring(self.name))
end

-- The rank of x, or an error naming the metric when it is unknown while tracing.
local function known_rank(op, what, x)
  local r = x.shape.rank
  if r == nil then
    common.error(string.format("%s: %s has an unknown rank while tracing; give the traced function an " ..
      "input_signature with a known rank", op, what))
  end
  return r
end

local function range_list(a, b)
  local l = {}
  for i = a, b - 1 do l[#l + 1] = i end
  return l
end

-- Keras's reduce_to_samplewise_values: values (and weights) reduced with
-- reduce_fn to one per sample, the values multiplied by their weights.
function M.reduce_to_samplewise_values(op, values, sample_weight, reduce_fn, dt)
  values = common.like_input(op, "values", values, dt)
  if sample_weight ~= nil then
    sample_weight = common.like_input(op, "sample_weight", sample_weight, dt)
    values, sample_weight = common.squeeze_or_expand(values, sample_weight)
    local wr, vr = known_rank(op, "sample_weight", sample_weight), known_rank(op, "the values", values)
    if vr > wr then values = reduce_fn(values, range_list(wr, vr)) end
    common.check_broadcast(op, "the values", values, "sample_weight", sample_weight)
    if sample_weight.shape.rank > values.shape.rank then
      common.error(string.format("%s: sample_weight has shape %s, of higher rank than the values' %s",
        op, tostring(sample_weight.shape), tostring(values.shape)))
    end
    sample_weight = ops.broadcast_to(sample_weight, ops.shape(values))
    values = values * sample_weight
    if wr > 1 then sample_weight = reduce_fn(sample_weight, range_list(1, wr)) end
  end
  local vr = known_rank(op, "the values", values)
  if vr > 1 then values = reduce_fn(values, range_list(1, vr)) end
  return values, sample_weight
end

---------------------------------------------------------------------------
-- Sum and Mean
---------------------------------------------------------------------------

local Sum = common.class("Sum", Metric)
M.Sum = Sum

function Sum:__init(...)
  local o = common.options("Sum", { "name", "dtype" }, ...)
  self:_init_base("Sum", o.name or "sum", o.dtype)
  self.total = self:add_variable({}, "total")
end

-- update_state(values, sample_weight): adds the (weighted) values.
function Sum:update_state(values, sample_weight)
  values = M.reduce_to_samplewise_values(self.name, values, sample_weight, ops.reduce_sum, self.dtype)
  self.total:assign_add(ops.reduce_sum(values))
end

function Sum:result() return self.total:read_value() end

local Mean = common.class("Mean", Metric)
M.Mean = Mean

function Mean:__init(...)
  local o = common.options("Mean", { "name", "dtype" }, ...)
  self:_init_base("Mean", o.name or "mean", o.dtype)
  self:_add_mean_state()
end

function Mean:_add_mean_state()
  self.total = self:add_variable({}, "total")
  self.count = self:add_variable({}, "count")
end

-- update_state(values, sample_weight): the weighted mean over every call so far
-- (each sample's values averaged first, then weighted by its weight).
function Mean:update_state(values, sample_weight)
  local dt = self.dtype
  local sw
  values, sw = M.reduce_to_samplewise_values(self.name, values, sample_weight, ops.reduce_mean, dt)
  self.total:assign_add(ops.reduce_sum(values))
  local n
  if sw ~= nil then
    n = ops.reduce_sum(sw)
  elseif values.shape.rank >= 1 then
    n = ops.cast(ops.size_along(values, 0), dt)
  else
    n = ops.ones({}, dt)
  end
  self.count:assign_add(n)
end

function Mean:result() return ops.divide_no_nan(self.total, self.count) end

---------------------------------------------------------------------------
-- MeanMetricWrapper: the mean of fn(y_true, y_pred) (Keras's; losses and accuracies use it)
---------------------------------------------------------------------------

-- M.wrapper{class=, name=, impl=, params={{name, default, check}, ...}, order=, align=}:
-- a Mean whose update_state(y_true, y_pred, sample_weight) averages
-- impl(op, y_true, y_pred, params, align) (which may give a mask too).
function M.wrapper(spec)
  local cls = common.class(spec.class, Mean)
  function cls:__init(...)
    local op = spec.class
    local o = common.options(op, spec.order, ...)
    self:_init_base(op, o.name == nil and spec.name or o.name, o.dtype)
    for _, p in ipairs(spec.params) do
      local v = o[p[1]]
      if v == nil then v = p[2] end
      if p[3] and v ~= nil then v = p[3](op, v) end
      self[p[1]] = v
    end
    self:_add_mean_state()
  end
  function cls:update_state(y_true, y_pred, sample_weight)
    local p = {}
    for _, q in ipairs(spec.params) do p[q[1]] = self[q[1]] end
    -- Keras's MeanMetricWrapper: y_pred's mask (padded time steps) weighs 0
    local in_mask = keras_mask.get(y_pred)
    if in_mask ~= nil then
      if sample_weight ~= nil then
        sample_weight = common.like_input(self.name, "sample_weight", sample_weight, self.dtype)
      end
      sample_weight = losses_base.apply_mask(sample_weight, in_mask, self.dtype, "sum")
    end
    local values, mask = spec.impl(self.name, y_true, y_pred, p, spec.align)
    -- Keras folds a mask of the values (ignore_class) into the weights only when
    -- there are weights: unweighted, the masked entries count as zeros in the mean.
    if mask ~= nil and sample_weight ~= nil then
      sample_weight = common.like_input(self.name, "sample_weight", sample_weight, self.dtype)
      sample_weight = losses_base.apply_mask(sample_weight, mask, self.dtype, "sum")
    end
    return Mean.update_state(self, values, sample_weight)
  end
  function cls:get_config()
    local c = Metric.get_config(self)
    for _, q in ipairs(spec.params) do c[q[1]] = self[q[1]] end
    return c
  end
  return cls
end

return M
