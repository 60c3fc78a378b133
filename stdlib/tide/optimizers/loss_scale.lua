-- stdlib/tide/optimizers/loss_scale.lua — LossScaleOptimizer (Keras 3's): dynamic
-- loss scaling around an inner optimizer, for float16 training (mixed_float16).
--
--   local opt = tide.optimizers.LossScaleOptimizer(tide.optimizers.Adam(), {initial_scale = 2^15})
--   local loss = tape:run(function() return opt:scale_loss(loss_fn(model(x), y)) end)
--   opt:apply(tape:gradient(loss, vars), vars)  -- unscales; skips the step on inf/NaN
--
-- Each step: gradients are divided by the scale; when any is not finite the
-- step is skipped (the inner optimizer and its iterations are left alone),
-- the scale halves and the count of good steps restarts; after
-- dynamic_growth_steps finite steps in a row the scale doubles. The choice is
-- a tide.cond and the scale's update a where, so a traced train step decides
-- in the graph, at each call, with no Lua branch on tensor values.
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local variable = require "tide.variable"
local tape_mod = require "tide.tape"
local control = require "tide.tracing.control"
local optimizer = require "tide.optimizers.optimizer"
local A = require "tide.optimizers.arguments"

local Optimizer, Variable, is_variable = optimizer.Optimizer, variable.Variable, variable.is_variable
local istensor, describe = binding.istensor, A.describe
local cast, where = math_ops.cast, math_ops.where
local fmt = string.format

local M = {}

local LossScaleOptimizer = class("LossScaleOptimizer", Optimizer)
M.LossScaleOptimizer = LossScaleOptimizer

local names_used = 0
local function auto_name()
  names_used = names_used + 1
  return names_used == 1 and "loss_scale_optimizer" or ("loss_scale_optimizer_" .. (names_used - 1))
end

-- Properties: the learning rate and iterations are the inner optimizer's;
-- variables are the scale's two, then the inner optimizer's (Keras's order).
local GET = {
  learning_rate = function(self) return rawget(self, "inner_optimizer").learning_rate end,
  iterations = function(self) return rawget(self, "inner_optimizer").iterations end,
  variables = function(self)
    local out = { rawget(self, "step_counter"), rawget(self, "dynamic_scale") }
    for _, v in ipairs(rawget(self, "inner_optimizer").variables) do out[#out + 1] = v end
    return out
  end,
  built = function(self) return rawget(self, "inner_optimizer").built end,
}

LossScaleOptimizer.__index = function(self, k)
  local get = GET[k]
  if get then return get(self) end
  return LossScaleOptimizer[k]
end

LossScaleOptimizer.__newindex = function(self, k, v)
  if k == "learning_rate" then
    local inner = rawget(self, "inner_optimizer")
    inner.learning_rate = v
    rawset(self, "_learning_rate", rawget(inner, "_learning_rate")) -- what checkpoints read
    return
  end
  if GET[k] then binding.error(fmt("LossScaleOptimizer: '%s' cannot be set", k)) end
  rawset(self, k, v)
end

-- LossScaleOptimizer(inner_optimizer, {initial_scale = 2^15,
-- dynamic_growth_steps = 2000, name=}) (also all in one table).
function LossScaleOptimizer:__init(...)
  local o = A.parse("LossScaleOptimizer", { "inner_optimizer", "initial_scale", "dynamic_growth_steps", "name" }, ...)
  local inner = o.inner_optimizer
  if not class.is_instance(inner, Optimizer) then
    binding.error(fmt("LossScaleOptimizer: inner_optimizer must be an optimizer (e.g. tide.optimizers.Adam()), " ..
      "got %s", describe(inner)))
  end
  if class.is_instance(inner, LossScaleOptimizer) then
    binding.error("LossScaleOptimizer: inner_optimizer is already a LossScaleOptimizer")
  end
  local scale = o.initial_scale == nil and 2 ^ 15 or o.initial_scale
  if type(scale) ~= "number" or not (scale > 0 and scale < math.huge) then
    binding.error(fmt("LossScaleOptimizer: initial_scale must be a positive finite number, got %s", describe(scale)))
  end
  local steps = o.dynamic_growth_steps == nil and 2000 or o.dynamic_growth_steps
  if type(steps) ~= "number" or steps < 1 or steps ~= math.floor(steps) then
    binding.error(fmt("LossScaleOptimizer: dynamic_growth_steps must be a positive integer, got %s", describe(steps)))
  end
  if o.name ~= nil and type(o.name) ~= "string" then
    binding.error(fmt("LossScaleOptimizer: name must be a string, got %s", describe(o.name)))
  end
  rawset(self, "__name", "LossScaleOptimizer")
  rawset(self, "name", o.name or auto_name())
  rawset(self, "inner_optimizer", inner)
  rawset(self, "initial_scale", scale)
  rawset(self, "dynamic_growth_steps", steps)
  -- the inner optimizer must not scale again (Keras clears its loss_scale_factor)
  rawset(inner, "loss_scale_factor", nil)
  -- made now, eagerly: a traced step only reads and assigns them
  local counter = Variable(0, { dtype = "int64", name = "step_counter", trainable = false })
  local dyn = Variable(scale, { dtype = "float32", name = "dynamic_scale", trainable = false })
  rawset(self, "step_counter", counter)
  rawset(self, "dynamic_scale", dyn)
  -- what tide.train.Checkpoint reads of an optimizer: its own variables, and
  -- the inner optimizer's slots, model variables and learning rate (shared tables)
  rawset(self, "_variables", { counter, dyn })
  rawset(self, "_slots", rawget(inner, "_slots"))
  rawset(self, "_trainable", rawget(inner, "_trainable"))
  rawset(self, "_learning_rate", rawget(inner, "_learning_rate"))
end

function LossScaleOptimizer:__tostring()
  return fmt("<tide.optimizers.LossScaleOptimizer '%s' (%s), scale %g>", self.name,
    tostring(rawget(self, "inner_optimizer")), rawget(self, "dynamic_scale"):item())
end

-- The loss times the current scale (in the loss's dtype): take gradients of this.
function LossScaleOptimizer:scale_loss(loss)
  if is_variable(loss) then loss = variable.read(loss) end
  if not istensor(loss) then
    binding.error(fmt("LossScaleOptimizer: scale_loss expects a tensor, got %s", describe(loss)))
  end
  if not dtype.is_float[loss.dt] then
    binding.error(fmt("LossScaleOptimizer: scale_loss expects a float loss, got %s", loss.dtype))
  end
  return loss * cast(rawget(self, "dynamic_scale"), loss.dtype)
end

function LossScaleOptimizer:build(var_list)
  rawget(self, "inner_optimizer"):build(var_list)
end

function LossScaleOptimizer:get_slot(v, slot) return rawget(self, "inner_optimizer"):get_slot(v, slot) end

function LossScaleOptimizer:exclude_from_weight_decay(opts)
  return rawget(self, "inner_optimizer"):exclude_from_weight_decay(opts)
end

function LossScaleOptimizer:finalize_variable_values(var_list)
  rawget(self, "inner_optimizer"):finalize_variable_values(var_list)
end

-- g / scale, computed in float32 for half gradients (a scale above 65504
-- is infinite in float16).
local function unscale(g, scale)
  if g.dtype == "float16" or g.dtype == "bfloat16" then return cast(cast(g, "float32") / scale, g.dtype) end
  return g / cast(scale, g.dtype)
end

-- True (a bool tensor) when every gradient is finite; nil when a gradient
-- is not a float tensor (the inner optimizer names what is wrong).
local function all_finite(grads, n)
  local finite
  for i = 1, n do
    local g = grads[i]
    if g ~= nil then
      if is_variable(g) then g = variable.read(g) end
      if not istensor(g) or not dtype.is_float[g.dt] then return nil end
      local f = reduce_ops.reduce_all(math_ops.is_finite(g))
      finite = finite and math_ops.logical_and(finite, f) or f
    end
  end
  return finite
end

-- One step over grads[i] (nil: none) for vars[i], i = 1..n.
local function apply_scaled(self, grads, vars, n)
  local inner = rawget(self, "inner_optimizer")
  local finite = all_finite(grads, n)
  if finite == nil then -- nothing to check (every gradient nil), or a wrong one: the inner step says which
    return inner:apply(grads, vars)
  end
  inner:build(vars) -- slots made here, not inside the cond's branch (a subgraph when traced)
  local scale, counter = rawget(self, "dynamic_scale"), rawget(self, "step_counter")
  local growth = rawget(self, "dynamic_growth_steps")
  control.cond(finite, function()
    local s = variable.read(scale)
    local unscaled = {}
    for i = 1, n do
      local g = grads[i]
      if g ~= nil then
        if is_variable(g) then g = variable.read(g) end
        unscaled[i] = unscale(g, s)
      end
    end
    inner:apply(unscaled, vars)
    local grow = math_ops.equal(counter, growth - 1)
    scale:assign(where(grow, s * 2, s))
    counter:assign(where(grow, cast(0, "int64"), counter + 1))
  end, function()
    scale:assign(scale * 0.5)
    counter:assign(0)
  end)
  return inner.iterations
end

-- Keras's apply(grads, trainable_variables): grads as a loss made with
-- scale_loss gives them.
function LossScaleOptimizer:apply(grads, vars)
  if type(grads) ~= "table" or is_variable(grads) then
    binding.error(fmt("LossScaleOptimizer: apply expects a list of gradients, got %s", describe(grads)))
  end
  if vars == nil then
    local inner = rawget(self, "inner_optimizer")
    if not inner.built then
      binding.error("LossScaleOptimizer: apply without variables needs a built optimizer; call " ..
        "optimizer:build(vars) first, or pass the variables")
    end
    vars = rawget(inner, "_trainable")
  elseif type(vars) ~= "table" or is_variable(vars) then
    binding.error(fmt("LossScaleOptimizer: apply expects a list of Variables, got %s", describe(vars)))
  end
  return apply_scaled(self, grads, vars, #vars)
end

-- apply_gradients{{gradient, variable}, ...}, the gradients of a scaled loss.
function LossScaleOptimizer:apply_gradients(pairs_list)
  if type(pairs_list) ~= "table" or is_variable(pairs_list) then
    binding.error(fmt("LossScaleOptimizer: apply_gradients expects a list of {gradient, variable} pairs, got %s",
      describe(pairs_list)))
  end
  local grads, vars, n = {}, {}, #pairs_list
  for i = 1, n do
    local p = pairs_list[i]
    if type(p) ~= "table" or is_variable(p) then
      binding.error(fmt("LossScaleOptimizer: apply_gradients: pair %d is %s; each entry must be a " ..
        "{gradient, variable} table", i, describe(p)))
    end
    grads[i], vars[i] = p[1], p[2]
  end
  return apply_scaled(self, grads, vars, n)
end

-- minimize(loss_fn, var_list): the loss function runs under a new tape and
-- its result is scaled. A loss tensor (with {tape=}) must already come from
-- scale_loss.
function LossScaleOptimizer:minimize(loss, var_list, opts)
  if A.is_callable(loss) then
    local fn = loss
    loss = function() return self:scale_loss(fn()) end
    opts = opts or {}
    if opts.tape == nil then
      local o = {}
      for k, v in pairs(opts) do o[k] = v end
      o.tape = tape_mod.GradientTape()
      local value = o.tape:run(loss)
      return Optimizer.minimize(self, value, var_list, o)
    end
  end
  return Optimizer.minimize(self, loss, var_list, opts)
end

-- Keras's config: name, the inner optimizer serialized, initial_scale, dynamic_growth_steps.
function LossScaleOptimizer:get_config()
  local inner = rawget(self, "inner_optimizer")
  return { name = self.name, inner_optimizer = { class_name = inner.__name, config = inner:get_config() },
           initial_scale = self.initial_scale, dynamic_growth_steps = self.dynamic_growth_steps }
end

-- The function that makes an optimizer from {class_name=, config=}:
-- tide.optimizers (a module that requires this one) sets its deserialize here.
local deserialize_inner = nil
function M.set_deserialize(fn) deserialize_inner = fn end

-- LossScaleOptimizer.from_config(config) (or :from_config): inner_optimizer
-- may be an optimizer or its serialized {class_name=, config=}.
function LossScaleOptimizer.from_config(a, b)
  local config = rawequal(a, LossScaleOptimizer) and b or a
  if type(config) ~= "table" then
    binding.error(fmt("LossScaleOptimizer.from_config: expects a config table, got %s", describe(config)))
  end
  local inner = config.inner_optimizer
  if type(inner) == "table" and getmetatable(inner) == nil then inner = deserialize_inner(inner) end
  return LossScaleOptimizer(inner, { initial_scale = config.initial_scale,
    dynamic_growth_steps = config.dynamic_growth_steps, name = config.name })
end

return M
