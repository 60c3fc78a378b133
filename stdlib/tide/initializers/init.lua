-- stdlib/tide/initializers/init.lua — tide.initializers (Keras 3's): the
-- classes, their snake_case names, and get/serialize/deserialize.
--   local init = tide.initializers.get("he_normal")     -- or GlorotUniform{seed=1}
--   local w = init({784, 128})                          -- float32 tensor
local binding = require "tide.binding"
local class = require "tide.class"
local base = require "tide.initializers.base"
local constant = require "tide.initializers.constant"
local random = require "tide.initializers.random"

local M = {
  Initializer = base.Initializer,
  compute_fans = base.compute_fans,
  init_scope = require("tide.initializers.init_scope").run,
}

-- class name -> snake_case alias, as Keras exports them.
local CLASSES = {
  Zeros = "zeros", Ones = "ones", Constant = "constant", Identity = "identity",
  RandomNormal = "random_normal", RandomUniform = "random_uniform", TruncatedNormal = "truncated_normal",
  VarianceScaling = "variance_scaling", GlorotUniform = "glorot_uniform", GlorotNormal = "glorot_normal",
  HeNormal = "he_normal", HeUniform = "he_uniform", LecunNormal = "lecun_normal", LecunUniform = "lecun_uniform",
  Orthogonal = "orthogonal",
}
local by_name = {}
for cls_name, alias in pairs(CLASSES) do
  local cls = constant[cls_name] or random[cls_name]
  M[cls_name], M[alias] = cls, cls
  by_name[cls_name], by_name[alias] = cls, cls
end

-- Keras's aliases.
for alias, cls_name in pairs { normal = "RandomNormal", uniform = "RandomUniform", one = "Ones", zero = "Zeros",
                               IdentityInitializer = "Identity", OrthogonalInitializer = "Orthogonal" } do
  by_name[alias] = M[cls_name]
end
-- keras.initializers exports these two longer names too (the same classes)
M.IdentityInitializer, M.OrthogonalInitializer = M.Identity, M.Orthogonal

local function names_text()
  local list = {}
  for _, alias in pairs(CLASSES) do list[#list + 1] = alias end
  table.sort(list)
  return table.concat(list, ", ")
end

-- True when x is an initializer object.
function M.is_initializer(x) return class.is_instance(x, base.Initializer) end

-- An initializer from a name ("glorot_uniform", "GlorotUniform"), a config
-- table {class_name=, config=}, an initializer, or a function(shape, dtype);
-- nil stays nil. `what` names the argument in errors.
function M.get(identifier, what)
  what = what or "initializer"
  if identifier == nil or M.is_initializer(identifier) or type(identifier) == "function" then return identifier end
  if type(identifier) == "string" then
    local cls = by_name[identifier]
    if not cls then
      binding.error(string.format("%s: unknown initializer '%s' (known: %s)", what, identifier, names_text()))
    end
    return cls()
  end
  if type(identifier) == "table" and getmetatable(identifier) == nil and identifier.class_name then
    return M.deserialize(identifier, what)
  end
  binding.error(string.format("%s: expected an initializer name, object, config table or function, got %s", what,
    type(identifier)))
end

-- {class_name=, config=} for an initializer (Keras's serialize).
function M.serialize(init)
  if init == nil then return nil end
  if not M.is_initializer(init) then
    binding.error("initializers.serialize: expected an initializer object, got " .. type(init))
  end
  return { class_name = getmetatable(init).__name, config = init:get_config() }
end

-- The initializer a serialize() table describes.
function M.deserialize(config, what)
  local cls = by_name[config.class_name]
  if not cls then
    binding.error(string.format("%s: unknown initializer class '%s'", what or "initializers.deserialize",
      tostring(config.class_name)))
  end
  return cls:from_config(config.config or {})
end

return M
