-- stdlib/tide/losses/serialization.lua — keras.losses.serialize/deserialize and keras.metrics' (the same
-- rules for both families): an object of the family becomes {module=, class_name=, config=}, one of its
-- functions {module="builtins", class_name="function", config=name, registered_name="function"}, and back.
local common = require "tide.losses.common"

local fmt = string.format
local M = {}

-- serialize and deserialize for a family described by f:
--   prefix ("tide.losses"), module ("keras.losses"), noun ("loss"), object ("a Loss"),
--   is_instance(x), function_name(fn) (nil when fn is none of the family's), function_named(name),
--   class_named(name), get(name) (what get() gives for a name), hint (how to serialize another function).
function M.make(f)
  local function serialize(x)
    local op = f.prefix .. ".serialize"
    if x == nil then return nil end
    if f.is_instance(x) then return { module = f.module, class_name = x.__name, config = x:get_config() } end
    if type(x) == "function" then
      local name = f.function_name(x)
      if name == nil then
        common.error(fmt("%s: this function is none of %s' functions; %s", op, f.prefix, f.hint))
      end
      return { module = "builtins", class_name = "function", config = name, registered_name = "function" }
    end
    common.error(fmt("%s: expected %s or a %s function, got %s", op, f.object, f.noun, type(x)))
  end

  -- custom_objects maps names to the user's classes and functions, looked up first.
  local function deserialize(config, custom_objects)
    local op = f.prefix .. ".deserialize"
    if config == nil then return nil end
    if custom_objects ~= nil and type(custom_objects) ~= "table" then
      common.error(fmt("%s: custom_objects must be a table of names to classes or functions, got %s", op,
        type(custom_objects)))
    end
    custom_objects = custom_objects or {}
    if type(config) == "string" then
      local custom = custom_objects[config]
      if type(custom) == "function" then return custom end
      if type(custom) == "table" then return custom() end
      return f.get(config)
    end
    if type(config) ~= "table" or type(config.class_name) ~= "string" then
      common.error(fmt("%s: expected a name or {class_name=, config=}, got %s", op, tostring(config)))
    end
    if config.class_name == "function" then
      local name = config.config
      local fn = custom_objects[name] or f.function_named(name)
      if type(fn) ~= "function" then common.error(fmt("%s: unknown %s function '%s'", op, f.noun, tostring(name))) end
      return fn
    end
    local cls = custom_objects[config.class_name] or f.class_named(config.class_name)
    if type(cls) ~= "table" then common.error(fmt("%s: unknown %s class '%s'", op, f.noun, config.class_name)) end
    local c = {}
    for k, v in pairs(config.config or {}) do c[k] = v end
    return cls:from_config(c)
  end

  return serialize, deserialize
end

return M
