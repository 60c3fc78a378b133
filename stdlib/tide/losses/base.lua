-- stdlib/tide/losses/base.lua — the Loss base class (Keras 3's): reductions,
-- sample weights and masks, and the factory that wraps a loss function as a class.
local common = require "tide.losses.common"
local keras_mask = require "tide.keras_mask"

local ops = common.ops
local M = {}

-- Keras 3's reductions ("none" and Keras's None are one).
local REDUCTIONS = { sum_over_batch_size = true, sum = true, none = true, mean = true, mean_with_sample_weight = true }
local REDUCTION_LIST = "\"sum_over_batch_size\", \"sum\", \"none\", \"mean\" or \"mean_with_sample_weight\""

function M.standardize_reduction(op, reduction)
  if reduction == nil then return "sum_over_batch_size" end
  if not REDUCTIONS[reduction] then
    common.error(string.format("%s: reduction must be %s, got %s", op, REDUCTION_LIST,
      type(reduction) == "string" and ("\"" .. reduction .. "\"") or tostring(reduction)))
  end
  return reduction
end

-- Keras's apply_mask: a mask (bool, shaped like the values) folded into the
-- sample weights. For the mean reductions the valid entries weigh total/valid,
-- so that dividing by the batch size gives the mean over the valid ones.
function M.apply_mask(sample_weight, mask, dt, reduction)
  if mask == nil then return sample_weight end
  local float_mask
  if reduction == "mean" or reduction == "sum_over_batch_size" then
    local total = common.count(mask, dt)
    local valid = ops.reduce_sum(ops.cast(mask, dt))
    float_mask = ops.where(mask, ops.divide_no_nan(total, valid), 0)
  else
    float_mask = ops.cast(mask, dt)
  end
  if sample_weight == nil then return float_mask end
  float_mask, sample_weight = common.squeeze_or_expand(float_mask, sample_weight)
  return sample_weight * float_mask
end

-- Keras's reduce_values: values reduced as `reduction` says (a scalar, or an
-- empty vector, is returned as it is, as Keras does).
local function reduce_values(values, sample_weight, reduction)
  local s = values.shape
  if reduction == "none" or s.rank == 0 or (s.rank == 1 and s[1] == 0) then return values end
  local loss = ops.reduce_sum(values)
  if reduction == "sum" then return loss end
  local divisor
  if reduction == "mean_with_sample_weight" and sample_weight ~= nil then
    divisor = ops.reduce_sum(sample_weight)
  else
    divisor = common.count(values, loss.dtype)
  end
  return ops.divide_no_nan(loss, divisor)
end

-- Keras's reduce_weighted_values: weights (and a mask) applied, then the reduction.
function M.reduce_weighted_values(op, values, sample_weight, mask, reduction)
  local dt = values.dtype
  if sample_weight ~= nil then sample_weight = common.like_input(op, "sample_weight", sample_weight, dt) end
  sample_weight = M.apply_mask(sample_weight, mask, dt, reduction)
  if sample_weight ~= nil then
    values, sample_weight = common.squeeze_or_expand(values, sample_weight)
    common.check_broadcast(op, "the losses", values, "sample_weight", sample_weight)
    values = values * sample_weight
  end
  return reduce_values(values, sample_weight, reduction)
end

---------------------------------------------------------------------------
-- Loss
---------------------------------------------------------------------------

local Loss = common.class("Loss")
M.Loss = Loss

-- Loss{name=, reduction="sum_over_batch_size", dtype=nil}: subclasses give
-- `call(y_true, y_pred)` returning the unreduced losses (and optionally a mask).
function Loss:__init(...)
  local o = common.options("Loss", { "name", "reduction", "dtype" }, ...)
  self:_init_base("Loss", o.name or common.auto_name(self.__name), o.reduction, o.dtype)
end

function Loss:_init_base(op, name, reduction, dt)
  self.name = common.want_name(op, "name", name)
  self.reduction = M.standardize_reduction(op, reduction)
  self.dtype = common.float_dtype(op, dt)
end

function Loss:call()
  common.error(self.__name .. ": a Loss subclass must define call(y_true, y_pred)")
end

-- loss(y_true, y_pred, sample_weight): the reduced loss. y_pred is made a
-- float tensor of the loss's dtype (y_pred's own when dtype is nil, but
-- float16 and bfloat16 become float32, as Keras's losses compute in floatx:
-- a mixed-precision model's loss is float32, so loss scaling cannot overflow it).
function Loss:__call(y_true, y_pred, sample_weight)
  local op = self.name or self.__name
  local in_mask = keras_mask.get(y_pred) -- y_pred's Keras mask (padded time steps) weighs its entries 0
  y_pred = common.float_input(op, "y_pred", y_pred, self.dtype)
  if self.dtype == nil and (y_pred.dtype == "float16" or y_pred.dtype == "bfloat16") then
    y_pred = ops.cast(y_pred, "float32")
  end
  local values, mask = self:call(y_true, y_pred)
  if in_mask ~= nil then mask = mask ~= nil and ops.logical_and(in_mask, mask) or in_mask end
  return M.reduce_weighted_values(op, values, sample_weight, mask, self.reduction)
end

function Loss:get_config()
  return { name = self.name, reduction = self.reduction }
end

function Loss.from_config(cls, config) return cls(config) end

-- Loss:extend("MyLoss"): a subclass (define MyLoss:call(y_true, y_pred)); it keeps
-- Loss's metamethods, so its instances are called as losses.
function Loss.extend(cls, name) return common.class(name, cls) end

function Loss:__tostring()
  return string.format("<tide.losses.%s name=%s>", self.__name, tostring(self.name))
end

---------------------------------------------------------------------------
-- Classes that wrap a loss function (Keras's LossFunctionWrapper)
---------------------------------------------------------------------------

-- M.wrapper{class=, fn=, name=, params={{name, default, check}, ...}, order={...}}:
-- a Loss class whose call aligns ranks (Keras's squeeze_or_expand) and
-- calls impl(y_true, y_pred, params). `order` is Keras's constructor argument
-- order (positional entries of the options table); check(op, value) validates one.
function M.wrapper(spec)
  local cls = common.class(spec.class, Loss)
  cls.params = spec.params
  cls.impl = spec.impl
  local order = spec.order
  function cls:__init(...)
    local op = spec.class
    local o = common.options(op, order, ...)
    self:_init_base(op, o.name == nil and spec.name or o.name, o.reduction, o.dtype)
    for _, p in ipairs(spec.params) do
      local v = o[p[1]]
      if v == nil then v = p[2] end
      if p[3] and v ~= nil then v = p[3](op, v) end
      self[p[1]] = v
    end
  end
  function cls:call(y_true, y_pred)
    local p = {}
    for _, q in ipairs(spec.params) do p[q[1]] = self[q[1]] end
    return spec.impl(self.name, y_true, y_pred, p, not spec.no_align)
  end
  function cls:get_config()
    local c = Loss.get_config(self)
    for _, q in ipairs(spec.params) do
      if q.config ~= false then c[q[1]] = self[q[1]] end
    end
    return c
  end
  return cls
end

return M
