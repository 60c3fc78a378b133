-- stdlib/tide/optimizers/multi.lua — Keras 3's OptimizerMap (variable paths, or Lua patterns matching them, to
-- optimizers, with a default) and MultiOptimizer (each variable updated by the optimizer its map gives it).
local binding = require "tide.binding"
local class = require "tide.class"
local variable = require "tide.variable"
local optimizer = require "tide.optimizers.optimizer"
local loss_scale = require "tide.optimizers.loss_scale"
local A = require "tide.optimizers.arguments"

local Optimizer, Variable, is_variable = optimizer.Optimizer, variable.Variable, variable.is_variable
local describe = A.describe
local fmt = string.format

local M = {}

local function is_optimizer(x) return class.is_instance(x, Optimizer) end

---------------------------------------------------------------------------
-- OptimizerMap
---------------------------------------------------------------------------

local OptimizerMap = class("OptimizerMap")
M.OptimizerMap = OptimizerMap

local function check_entry(key, opt)
  if type(key) ~= "string" then binding.error("OptimizerMap: keys must be strings, got " .. describe(key)) end
  if not is_optimizer(opt) then
    binding.error(fmt("OptimizerMap: the optimizer for '%s' must be an optimizer, got %s", key, describe(opt)))
  end
  if class.is_instance(opt, loss_scale.LossScaleOptimizer) then
    binding.error("OptimizerMap: an entry cannot be a LossScaleOptimizer")
  end
  if class.is_instance(opt, M.MultiOptimizer) then binding.error("OptimizerMap: an entry cannot be a MultiOptimizer") end
end

-- OptimizerMap(default_optimizer, {[path or pattern] = optimizer, ...}).
function OptimizerMap:__init(default_optimizer, optimizer_map)
  if not is_optimizer(default_optimizer) then
    binding.error("OptimizerMap: default_optimizer must be an optimizer, got " .. describe(default_optimizer))
  end
  if optimizer_map ~= nil and (type(optimizer_map) ~= "table" or getmetatable(optimizer_map) ~= nil) then
    binding.error("OptimizerMap: optimizer_map must be a table of path = optimizer, got " .. describe(optimizer_map))
  end
  self.default_optimizer = default_optimizer
  self._map, self._keys = {}, {}
  local keys = {}
  for k in pairs(optimizer_map or {}) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do self:set(k, optimizer_map[k]) end
end

-- set(key, optimizer): a new entry (a key given twice is an error, as Keras's).
function OptimizerMap:set(key, opt)
  check_entry(key, opt)
  if self._map[key] ~= nil then binding.error(fmt("OptimizerMap: '%s' is already in the map", key)) end
  self._map[key] = opt
  self._keys[#self._keys + 1] = key
end

-- get(path): the exact key's optimizer, else the one whose key (a Lua pattern) matches the whole path, else
-- the default; two matching patterns are an error.
function OptimizerMap:get(path)
  if self._map[path] then return self._map[path] end
  local found
  for _, k in ipairs(self._keys) do
    if path:match("^" .. k .. "$") then
      if found then binding.error(fmt("OptimizerMap: several optimizers match variable '%s' ('%s', '%s')", path,
        found, k)) end
      found = k
    end
  end
  return found and self._map[found] or self.default_optimizer
end

-- map(variable): the optimizer for it, by its name (tide's names carry the layer path).
function OptimizerMap:__call(v) return self:get(v.name) end

-- The optimizers in the map, the default last (each once).
function OptimizerMap:optimizers()
  local out, seen = {}, {}
  for _, k in ipairs(self._keys) do
    local o = self._map[k]
    if not seen[o] then seen[o], out[#out + 1] = true, o end
  end
  if not seen[self.default_optimizer] then out[#out + 1] = self.default_optimizer end
  return out
end

local function serialize_opt(o) return { class_name = o.__name, config = o:get_config() } end

function OptimizerMap:get_config()
  local map = {}
  for _, k in ipairs(self._keys) do map[k] = serialize_opt(self._map[k]) end
  return { default_optimizer = serialize_opt(self.default_optimizer), optimizer_map = map }
end

-- The function that makes an optimizer from {class_name=, config=}: tide.optimizers (which requires this
-- module) sets its deserialize here.
local deserialize_opt = nil
function M.set_deserialize(fn) deserialize_opt = fn end

function OptimizerMap.from_config(a, b)
  local config = rawequal(a, OptimizerMap) and b or a
  local des = deserialize_opt
  local map = {}
  for k, v in pairs(config.optimizer_map or {}) do map[k] = des(v) end
  return OptimizerMap(des(config.default_optimizer), map)
end

---------------------------------------------------------------------------
-- MultiOptimizer
---------------------------------------------------------------------------

local MultiOptimizer = class("MultiOptimizer", Optimizer)
M.MultiOptimizer = MultiOptimizer

local GET = {
  learning_rate = function()
    binding.error("MultiOptimizer: it has no learning_rate of its own; read the inner optimizers' (optimizers)")
  end,
  iterations = function(self) return rawget(self, "_iterations") end,
  optimizers = function(self) return rawget(self, "_inner") end,
  variables = function(self)
    local out = { rawget(self, "_iterations") }
    for _, o in ipairs(rawget(self, "_inner")) do
      for _, v in ipairs(o.variables) do out[#out + 1] = v end
    end
    return out
  end,
}

MultiOptimizer.__index = function(self, k)
  local get = GET[k]
  if get then return get(self) end
  return MultiOptimizer[k]
end

MultiOptimizer.__newindex = function(self, k, v)
  if k == "learning_rate" then
    binding.error("MultiOptimizer: set the learning rate on the inner optimizers (optimizers) instead")
  end
  if GET[k] then binding.error(fmt("MultiOptimizer: '%s' cannot be set", k)) end
  rawset(self, k, v)
end

local names_used = 0

-- MultiOptimizer(optimizer_map, {loss_scale_factor=, name=}): optimizer_map an OptimizerMap or a function
-- variable -> optimizer.
function MultiOptimizer:__init(...)
  local o = A.parse("MultiOptimizer", { "optimizer_map", "loss_scale_factor", "name" }, ...)
  local map = o.optimizer_map
  if not (class.is_instance(map, OptimizerMap) or type(map) == "function") then
    binding.error("MultiOptimizer: optimizer_map must be an OptimizerMap or a function of a variable, got " ..
      describe(map))
  end
  if o.loss_scale_factor ~= nil then A.CHECKS.positive("MultiOptimizer", "loss_scale_factor", o.loss_scale_factor) end
  if o.name ~= nil and type(o.name) ~= "string" then
    binding.error("MultiOptimizer: name must be a string, got " .. describe(o.name))
  end
  names_used = names_used + 1
  rawset(self, "__name", "MultiOptimizer")
  rawset(self, "name", o.name or (names_used == 1 and "multi_optimizer" or ("multi_optimizer_" .. (names_used - 1))))
  rawset(self, "_map", map)
  rawset(self, "loss_scale_factor", o.loss_scale_factor)
  rawset(self, "built", false)
  local inner = class.is_instance(map, OptimizerMap) and map:optimizers() or {}
  for _, opt in ipairs(inner) do rawset(opt, "loss_scale_factor", o.loss_scale_factor) end
  rawset(self, "_inner", inner)
  rawset(self, "_owner", {}) -- variable -> its optimizer
  local iterations = Variable(0, { dtype = "int64", name = "iteration", trainable = false })
  rawset(self, "_iterations", iterations)
  -- what checkpoints read of an optimizer
  rawset(self, "_variables", { iterations })
  rawset(self, "_slots", {})
  rawset(self, "_trainable", {})
end

function MultiOptimizer:__tostring()
  return fmt("<tide.optimizers.MultiOptimizer '%s' (%d optimizers)>", self.name, #rawget(self, "_inner"))
end

local function optimizer_for(self, v)
  local opt = self._map(v)
  if not is_optimizer(opt) then
    binding.error(fmt("MultiOptimizer: the map gave %s for variable '%s'; it must give an optimizer", describe(opt),
      tostring(v.name)))
  end
  if class.is_instance(opt, loss_scale.LossScaleOptimizer) or class.is_instance(opt, MultiOptimizer) then
    binding.error(fmt("MultiOptimizer: variable '%s' maps to a %s, which cannot be inside a MultiOptimizer",
      tostring(v.name), opt.__name))
  end
  return opt
end

-- build(var_list): each variable to its optimizer (found once), each optimizer built on its own.
function MultiOptimizer:build(var_list)
  if type(var_list) ~= "table" or is_variable(var_list) then
    binding.error("MultiOptimizer: build expects a list of Variables, got " .. describe(var_list))
  end
  local owner, inner = rawget(self, "_owner"), rawget(self, "_inner")
  local groups = {}
  for i, v in ipairs(var_list) do
    if not is_variable(v) then
      binding.error(fmt("MultiOptimizer: variable %d of the list is %s where a tide.Variable is due", i, describe(v)))
    end
    local opt = owner[v]
    if not opt then
      opt = optimizer_for(self, v)
      owner[v] = opt
      local known = false
      for _, o in ipairs(inner) do known = known or rawequal(o, opt) end
      if not known then
        rawset(opt, "loss_scale_factor", self.loss_scale_factor)
        inner[#inner + 1] = opt
      end
      local t = rawget(self, "_trainable")
      t[#t + 1] = v
    end
    groups[opt] = groups[opt] or {}
    table.insert(groups[opt], v)
  end
  for _, o in ipairs(inner) do
    if groups[o] then o:build(groups[o]) end
    for v, s in pairs(rawget(o, "_slots") or {}) do rawget(self, "_slots")[v] = s end
  end
  rawset(self, "built", true)
end

function MultiOptimizer:get_slot(v, slot)
  local opt = rawget(self, "_owner")[v]
  return opt and opt:get_slot(v, slot)
end

function MultiOptimizer:scale_loss(loss)
  if self.loss_scale_factor then return loss * self.loss_scale_factor end
  return loss
end

-- apply(grads, vars): each optimizer applies its variables' gradients (nil gradients as each treats them);
-- iterations + 1.
function MultiOptimizer:apply(grads, vars)
  if type(grads) ~= "table" or is_variable(grads) then
    binding.error("MultiOptimizer: apply expects a list of gradients, got " .. describe(grads))
  end
  if vars == nil then
    if not self.built then
      binding.error("MultiOptimizer: apply without variables needs a built optimizer; call optimizer:build(vars) " ..
        "first, or pass the variables")
    end
    vars = rawget(self, "_trainable")
  elseif type(vars) ~= "table" or is_variable(vars) then
    binding.error("MultiOptimizer: apply expects a list of Variables, got " .. describe(vars))
  end
  self:build(vars)
  local owner, order, by = rawget(self, "_owner"), {}, {}
  for i = 1, #vars do
    local opt = owner[vars[i]]
    if not by[opt] then by[opt], order[#order + 1] = { g = {}, v = {} }, opt end
    local b = by[opt]
    b.v[#b.v + 1] = vars[i]
    b.g[#b.v] = grads[i]
  end
  for _, opt in ipairs(rawget(self, "_inner")) do
    local b = by[opt]
    if b then
      local any = false
      for k = 1, #b.v do any = any or b.g[k] ~= nil end
      if any then opt:apply(b.g, b.v) end
    end
  end
  rawget(self, "_iterations"):assign_add(1)
  return rawget(self, "_iterations")
end

function MultiOptimizer:apply_gradients(pairs_list)
  if type(pairs_list) ~= "table" or is_variable(pairs_list) then
    binding.error("MultiOptimizer: apply_gradients expects a list of {gradient, variable} pairs, got " ..
      describe(pairs_list))
  end
  local grads, vars = {}, {}
  for i, p in ipairs(pairs_list) do
    if type(p) ~= "table" or is_variable(p) then
      binding.error(fmt("MultiOptimizer: apply_gradients: pair %d is %s; each entry must be a {gradient, variable} " ..
        "table", i, describe(p)))
    end
    grads[i], vars[i] = p[1], p[2]
  end
  return self:apply(grads, vars)
end

function MultiOptimizer:finalize_variable_values(var_list)
  local owner, by = rawget(self, "_owner"), {}
  for _, v in ipairs(var_list or rawget(self, "_trainable")) do
    local opt = owner[v]
    if opt then
      by[opt] = by[opt] or {}
      table.insert(by[opt], v)
    end
  end
  for opt, list in pairs(by) do opt:finalize_variable_values(list) end
end

function MultiOptimizer:get_config()
  local map = rawget(self, "_map")
  if not class.is_instance(map, OptimizerMap) then
    binding.error("MultiOptimizer: get_config needs an OptimizerMap (a function map cannot be serialized)")
  end
  return { optimizer_map = { class_name = "OptimizerMap", config = map:get_config() },
    loss_scale_factor = self.loss_scale_factor, name = self.name }
end

function MultiOptimizer.from_config(a, b)
  local config = rawequal(a, MultiOptimizer) and b or a
  if type(config) ~= "table" or type(config.optimizer_map) ~= "table" then
    binding.error("MultiOptimizer.from_config: the config must hold optimizer_map")
  end
  local map = config.optimizer_map
  if getmetatable(map) == nil then map = OptimizerMap.from_config(map.config or map) end
  return MultiOptimizer(map, { loss_scale_factor = config.loss_scale_factor, name = config.name })
end

return M
