-- stdlib/tide/losses/init.lua — tide.losses (Keras 3's keras.losses): the Loss
-- classes, the snake_case loss functions, get() by name, serialize() and deserialize().
local common = require "tide.losses.common"
local base = require "tide.losses.base"
local args = require "tide.args"

local M = {}
M.Loss = base.Loss

-- name -> class or function, as Keras's ALL_OBJECTS_DICT (class names, function names, short aliases).
local by_name = {}

local families = {
  require "tide.losses.regression",
  require "tide.losses.probabilistic",
  require "tide.losses.hinge",
  require "tide.losses.ctc",
  require "tide.losses.focal",
  require "tide.losses.overlap",
}

for _, family in ipairs(families) do
  for _, spec in ipairs(family.classes) do
    local fname = spec.fn or spec.name
    local impl = family.impl[fname]
    assert(impl, "tide.losses: no function for " .. spec.class)
    spec.impl = impl
    local cls = base.wrapper(spec)
    M[spec.class] = cls
    by_name[spec.class] = cls

    -- f(y_true, y_pred, [parameters in Keras's order | {options}]): the unreduced losses.
    local names = {}
    for i, q in ipairs(spec.params) do names[i] = q[1] end
    local align = not (family.no_align_in_function and family.no_align_in_function[fname])
    local function fn(y_true, y_pred, ...)
      local o = args.parse(fname, names, ...)
      local p = {}
      for _, q in ipairs(spec.params) do
        local v = o[q[1]]
        if v == nil then v = q[2] end
        if q[3] and v ~= nil then v = q[3](fname, v) end
        p[q[1]] = v
      end
      return (impl(fname, y_true, y_pred, p, align))
    end
    M[fname] = fn
    by_name[fname] = fn
  end
end

for alias, fname in pairs { mse = "mean_squared_error", MSE = "mean_squared_error", mae = "mean_absolute_error",
  MAE = "mean_absolute_error", mape = "mean_absolute_percentage_error", MAPE = "mean_absolute_percentage_error",
  msle = "mean_squared_logarithmic_error", MSLE = "mean_squared_logarithmic_error", kld = "kl_divergence",
  KLD = "kl_divergence", bce = "binary_crossentropy", BCE = "binary_crossentropy" } do
  by_name[alias] = M[fname]
end

-- The names get() knows, sorted (for error messages and docs).
function M.names()
  local list = {}
  for k in pairs(by_name) do list[#list + 1] = k end
  table.sort(list)
  return list
end

-- True when x is a Loss instance.
function M.is_loss(x) return common.is_instance(x, base.Loss) end

-- get(identifier) as keras.losses.get: nil stays nil; a class name gives an
-- instance with the defaults ("CategoricalCrossentropy"), a function name the
-- function ("categorical_crossentropy", "mse"); {class_name=, config=} an
-- instance with that config; a Loss instance or a Lua function is returned as it is.
function M.get(identifier)
  if identifier == nil then return nil end
  local t = type(identifier)
  if t == "string" then
    local obj = by_name[identifier]
    if obj == nil then
      common.error(string.format("tide.losses.get: unknown loss '%s' (known: %s)", identifier,
        table.concat(M.names(), ", ")))
    end
    if type(obj) == "table" then return obj() end
    return obj
  end
  if M.is_loss(identifier) or t == "function" then return identifier end
  if t == "table" and getmetatable(identifier) == nil and type(identifier.class_name) == "string" then
    local cls = by_name[identifier.class_name]
    if type(cls) ~= "table" then
      common.error(string.format("tide.losses.get: unknown loss class '%s'", identifier.class_name))
    end
    return cls(identifier.config)
  end
  for _, obj in pairs(by_name) do -- a class itself: an instance with the defaults
    if identifier == obj and type(obj) == "table" then return obj() end
  end
  common.error(string.format("tide.losses.get: could not interpret loss identifier %s (a %s); give a name, " ..
    "a Loss, a function or {class_name=, config=}", tostring(identifier), t))
end

-- The name of one of tide.losses' functions, or nil.
local function function_name(fn)
  for k, v in pairs(by_name) do
    if v == fn and M[k] == fn then return k end
  end
end

-- serialize(loss) as keras.losses.serialize: a Loss gives {module="keras.losses", class_name=, config=};
-- one of tide.losses' functions {module="builtins", class_name="function", config=its name,
-- registered_name="function"}; nil stays nil. deserialize(config, custom_objects) as
-- keras.losses.deserialize: what serialize() gave (or a name, as get() takes it) back as a Loss or a
-- function; custom_objects maps names to the user's classes and functions, looked up first.
M.serialize, M.deserialize = require("tide.losses.serialization").make {
  prefix = "tide.losses", module = "keras.losses", noun = "loss", object = "a Loss",
  is_instance = M.is_loss, function_name = function_name,
  function_named = function(name) return by_name[name] end,
  class_named = function(name) return by_name[name] end,
  get = function(name) return M.get(name) end,
  hint = "make it a Loss subclass (tide.losses.Loss:extend) to serialize it",
}

return M
