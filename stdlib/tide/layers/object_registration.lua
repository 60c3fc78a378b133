-- stdlib/tide/layers/object_registration.lua — Keras's custom object registry (keras.saving.object_registration):
-- register_keras_serializable's "package>name" table, custom_object_scope, and the lookup loaders go through.
local binding = require "tide.binding"

local fmt = string.format
local M = {}

-- GLOBAL_CUSTOM_OBJECTS ("package>name" or any key -> class or function) and GLOBAL_CUSTOM_NAMES (object -> its
-- registered name, weak: a dropped class leaves no entry).
local custom_objects = {}
local custom_names = setmetatable({}, { __mode = "k" })
-- The scope in force (custom_object_scope's table), replaced, not merged, on entry as Keras does.
local scope = {}

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

-- register(obj, package="Custom", name=obj's class name): obj stored under "package>name"; obj returned.
function M.register(obj, package, name)
  local op = "register_keras_serializable"
  if package == nil then package = "Custom" end
  if type(package) ~= "string" then fail(op, "package must be a string, got %s", type(package)) end
  if package:find(">", 1, true) then fail(op, "package must not contain '>', got '%s'", package) end
  if type(obj) ~= "function" and type(obj) ~= "table" then
    fail(op, "expects a class (made with :extend) or a function, got %s", type(obj))
  end
  if type(obj) == "table" and type(obj.get_config) ~= "function" then
    fail(op, "cannot register a class that does not have a get_config() method (%s)", tostring(obj.__name or obj))
  end
  if name == nil then
    if type(obj) == "function" then fail(op, "a function needs its name: register_keras_serializable(fn, package, name)") end
    name = obj.__name
  end
  if type(name) ~= "string" or name == "" then fail(op, "name must be a non-empty string, got %s", tostring(name)) end
  local key = package .. ">" .. name
  custom_objects[key] = obj
  custom_names[obj] = key
  return obj
end

-- register_keras_serializable(package="Custom", name=nil) as Keras's decorator: a function that registers the class
-- or function it is given and returns it; register_keras_serializable(obj, package, name) registers obj at once.
function M.register_keras_serializable(a, b, c)
  if type(a) == "table" or type(a) == "function" then return M.register(a, b, c) end
  if a ~= nil and type(a) ~= "string" then
    binding.error(fmt("register_keras_serializable: package must be a string, got %s", type(a)))
  end
  if b ~= nil and type(b) ~= "string" then
    binding.error(fmt("register_keras_serializable: name must be a string, got %s", type(b)))
  end
  return function(obj) return M.register(obj, a, b) end
end

-- The registered name of a class or function: "package>name" when registered, else the class's name (nil for a
-- function that has none).
function M.get_registered_name(obj)
  if custom_names[obj] then return custom_names[obj] end
  if type(obj) == "table" then
    local mt = getmetatable(obj)
    if type(obj.__name) == "string" and rawget(obj, "__name") then return obj.__name end
    if mt and type(mt.__name) == "string" then return mt.__name end -- an instance: its class's name
  end
  return nil
end

-- True when obj (a class or function) was registered with register().
function M.is_registered(obj) return custom_names[obj] ~= nil end

-- get_registered_object(name, custom_objects, module_objects): the scope's entry, the global one, the given
-- table's, module_objects', in that order (Keras's); nil when none has it.
function M.get_registered_object(name, given, module_objects)
  if name == nil then return nil end
  if scope[name] ~= nil then return scope[name] end
  if custom_objects[name] ~= nil then return custom_objects[name] end
  if type(given) == "table" and given[name] ~= nil then return given[name] end
  if type(module_objects) == "table" and module_objects[name] ~= nil then return module_objects[name] end
  return nil
end

-- A class for a config entry: its registered name first, then its class name, through get_registered_object.
function M.lookup(class_name, registered_name, given)
  if type(registered_name) == "string" then
    local v = M.get_registered_object(registered_name, given)
    if v ~= nil then return v end
  end
  return M.get_registered_object(class_name, given)
end

-- The live global table (get_custom_objects()): entries put in it are found by every loader.
function M.get_custom_objects() return custom_objects end

-- The scope's table and every global entry merged over given (a new table): what a loader that takes a plain
-- custom_objects table (losses, metrics) sees.
function M.merged(given)
  local out = {}
  for k, v in pairs(custom_objects) do out[k] = v end
  if type(given) == "table" then for k, v in pairs(given) do out[k] = v end end
  for k, v in pairs(scope) do out[k] = v end
  return out
end

local function pack(...) return { n = select("#", ...), ... } end

local Scope = {}
Scope.__index = Scope
Scope.__name = "CustomObjectScope"

-- scope:enter() puts its objects in force (the previous scope kept to restore); scope:exit() restores it.
function Scope:enter()
  if self.backup ~= nil then binding.error("CustomObjectScope: already entered") end
  self.backup = scope
  local t = {}
  for k, v in pairs(self.custom_objects) do t[k] = v end
  scope = t
  return self
end

function Scope:exit()
  if self.backup == nil then binding.error("CustomObjectScope: exit without enter") end
  scope, self.backup = self.backup, nil
end

-- scope:run(fn, ...): fn's results with the scope in force, restored on every way out (errors too).
function Scope:run(fn, ...)
  if type(fn) ~= "function" then binding.error(fmt("CustomObjectScope: run expects a function, got %s", type(fn))) end
  self:enter()
  local res = pack(pcall(fn, ...))
  self:exit()
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- CustomObjectScope(objects[, fn, ...]) / custom_object_scope (the same): a scope object (enter/exit/run);
-- given fn, it runs fn inside the scope and returns fn's results (Lua's form of Python's `with`).
function M.CustomObjectScope(objects, fn, ...)
  if type(objects) ~= "table" then
    binding.error(fmt("custom_object_scope: expects a table of names to classes or functions, got %s", type(objects)))
  end
  for k in pairs(objects) do
    if type(k) ~= "string" then binding.error(fmt("custom_object_scope: names must be strings, got %s", type(k))) end
  end
  local s = setmetatable({ custom_objects = objects }, Scope)
  if fn ~= nil then return s:run(fn, ...) end
  return s
end

return M
