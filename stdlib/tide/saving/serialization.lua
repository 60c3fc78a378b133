-- stdlib/tide/saving/serialization.lua — keras.saving.serialize_keras_object and deserialize_keras_object: any
-- Keras object as the dict Keras 3 writes into config.json ({module, class_name, config, registered_name}), and back.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local tensor_shape = require "tide.tensor_shape"
local variable = require "tide.variable"
local activations = require "tide.activations"
local losses = require "tide.losses"
local metrics = require "tide.metrics"
local optimizers = require "tide.optimizers"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local mixed_precision = require "tide.mixed_precision"
local layer_mod = require "tide.layers.layer"
local registration = require "tide.layers.object_registration"
local keras_config = require "tide.saving.keras_config"

local fmt = string.format
local None = tensor_shape.None
local M = {}

local function plain_table(x) return type(x) == "table" and getmetatable(x) == nil end

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

-- Keras's object for a dtype policy (a layer config's dtype).
local function policy_out(name)
  return { module = "keras", class_name = "DTypePolicy", config = { name = name }, registered_name = None }
end

-- A function's Keras name: a registered one's "package>name", else a builtin activation's, loss's or metric's.
local function function_name(fn)
  if registration.is_registered(fn) then return registration.get_registered_name(fn) end
  local a = activations.serialize(fn)
  if type(a) == "string" then return a end
  for _, family in ipairs { losses, metrics } do
    local ok, s = pcall(family.serialize, fn)
    if ok and type(s) == "table" then return s.config end
  end
end

local serialize

-- A layer's dict: keras_config's Keras form (the .keras writer's), the dtype as a DTypePolicy object and, once
-- built, build_config's input shape.
local function layer_out(l)
  local spec = layer_mod.serialize(l)
  local out
  if spec.class_name == "Sequential" or (spec.class_name == "Model" and plain_table(spec.config) and
    spec.config.input_layers ~= nil) then
    out = keras_config.to_keras(l, "serialize_keras_object")
  else
    out = keras_config.layer_to_keras(spec)
  end
  local cls = getmetatable(l)
  if registration.is_registered(cls) then
    out.module, out.registered_name = None, registration.get_registered_name(cls)
  end
  if plain_table(out.config) and type(out.config.dtype) == "string" then out.config.dtype = policy_out(out.config.dtype) end
  local shape = rawget(l, "_build_input_shape")
  if rawget(l, "built") and type(shape) == "table" then
    local s = {}
    for i = 1, #shape do s[i] = shape[i] == nil and None or shape[i] end
    if shape.n then for i = 1, shape.n do if shape[i] == nil then s[i] = None end end end
    out.build_config = { input_shape = s }
  end
  return out
end

-- An object of one of Keras's families with its own serialize: the family's dict, module and registered_name
-- as Keras writes them.
local FAMILIES = {
  { is = losses.is_loss, ser = losses.serialize, module = "keras.losses" },
  { is = metrics.is_metric, ser = metrics.serialize, module = "keras.metrics" },
  { is = optimizers.is_optimizer, ser = optimizers.serialize, module = "keras.optimizers" },
  { is = initializers.is_initializer, ser = initializers.serialize, module = "keras.initializers" },
  { is = regularizers.is_regularizer, ser = regularizers.serialize, module = "keras.regularizers" },
  { is = constraints.is_constraint, ser = constraints.serialize, module = "keras.constraints" },
}

serialize = function(obj)
  local op = "serialize_keras_object"
  if obj == nil or obj == None then return nil end
  local t = type(obj)
  if t == "boolean" or t == "number" or t == "string" then return obj end
  if dtype.is_dtype(obj) then return dtype.name(obj) end
  if variable.is_variable(obj) then obj = obj:value() end
  if binding.istensor(obj) then
    return { class_name = "__tensor__", config = { value = obj:totable(), dtype = obj.dtype } }
  end
  if t == "function" then
    local name = function_name(obj)
    if name == nil then
      fail(op, "this function is neither one of Keras's (activations, losses, metrics) nor registered with " ..
        "register_keras_serializable(fn, package, name)")
    end
    return { module = "builtins", class_name = "function", config = name, registered_name = "function" }
  end
  if t ~= "table" then fail(op, "cannot serialize a %s", t) end
  if layer_mod.is_layer(obj) then return layer_out(obj) end
  if mixed_precision.is_policy(obj) then return policy_out(mixed_precision.serialize(obj)) end
  for _, f in ipairs(FAMILIES) do
    if f.is(obj) then
      local s = f.ser(obj)
      local cls = getmetatable(obj)
      local reg = registration.is_registered(cls)
      return { module = reg and None or f.module, class_name = s.class_name, config = serialize(s.config),
        registered_name = reg and registration.get_registered_name(cls) or None }
    end
  end
  local mt = getmetatable(obj)
  if mt ~= nil then
    -- any other object with get_config (a user's class): Keras's custom-object form
    if type(obj.get_config) ~= "function" then
      fail(op, "cannot serialize %s: to be serializable, a class must implement get_config()", tostring(obj))
    end
    local cfg = obj:get_config()
    if type(cfg) ~= "table" then fail(op, "get_config() of %s must return a table, got %s", tostring(obj), type(cfg)) end
    return { module = None, class_name = mt.__name,
      config = serialize(cfg), registered_name = registration.get_registered_name(mt) or None }
  end
  local out = {}
  for k, v in pairs(obj) do
    if type(k) ~= "string" and type(k) ~= "number" then fail(op, "table keys must be strings or numbers, got %s", type(k)) end
    local s = serialize(v)
    out[k] = s == nil and None or s
  end
  return out
end

-- serialize_keras_object(obj): Keras 3's dict for a layer or model, loss, metric, optimizer, initializer,
-- regularizer, constraint, dtype policy, a Keras or registered function, a tensor ("__tensor__"), or a table of
-- these; numbers, strings, booleans and nil as they are.
M.serialize_keras_object = serialize

local deserialize

local KERAS_FAMILY = {
  ["keras.losses"] = losses, ["keras.metrics"] = metrics, ["keras.optimizers"] = optimizers,
  ["keras.initializers"] = initializers, ["keras.regularizers"] = regularizers, ["keras.constraints"] = constraints,
}

-- A function from its dict's name: the registry (scope, global, custom_objects), then Keras's activations,
-- losses and metrics.
local function function_in(op, name, custom)
  if type(name) ~= "string" then fail(op, "a function's config must be its name, got %s", type(name)) end
  local fn = registration.get_registered_object(name, custom)
  if fn ~= nil then return fn end
  local ok, a = pcall(activations.get, name)
  if ok and type(a) == "function" then return a end
  for _, family in ipairs { losses, metrics } do
    local ok2, f = pcall(family.deserialize, { class_name = "function", config = name })
    if ok2 and type(f) == "function" then return f end
  end
  fail(op, "unknown function '%s': register it with register_keras_serializable(fn, package, name) or pass it " ..
    "in custom_objects", name)
end

local function strip_nulls(v)
  if v == None then return nil end
  if not plain_table(v) then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = strip_nulls(x) end
  return out
end

local function build_from(l, bc)
  if plain_table(bc) and plain_table(bc.input_shape) and not rawget(l, "built") then
    local shape = {}
    local n = #bc.input_shape
    for i = 1, n do shape[i] = bc.input_shape[i] ~= None and bc.input_shape[i] or nil end
    shape.n = n
    l:build(shape)
  end
  return l
end

local function is_layer_class(c)
  while type(c) == "table" do
    if c == layer_mod.Layer then return true end
    c = rawget(c, "super")
  end
  return false
end

deserialize = function(config, custom, op)
  op = op or "deserialize_keras_object"
  if config == nil or config == None then return nil end
  local t = type(config)
  if t == "boolean" or t == "number" then return config end
  if t == "string" then
    -- a bare name: a registered or Keras function/class name, as Keras's (else the string itself)
    local obj = registration.get_registered_object(config, custom)
    if obj ~= nil then return obj end
    return config
  end
  if t ~= "table" then fail(op, "cannot deserialize a %s", t) end
  if not plain_table(config) then return config end
  if type(config.class_name) ~= "string" then
    local out = {}
    for k, v in pairs(config) do out[k] = deserialize(v, custom, op) end
    return out
  end
  local cls_name, module, cfg = config.class_name, config.module, config.config
  local reg_name = type(config.registered_name) == "string" and config.registered_name or nil
  if cls_name == "__tensor__" or cls_name == "__numpy__" then
    if not plain_table(cfg) or cfg.value == nil then fail(op, "a %s needs config = {value=, dtype=}", cls_name) end
    return convert.tensor(cfg.value, cfg.dtype, op)
  end
  if cls_name == "__tuple__" then return deserialize(plain_table(cfg) and cfg.value or {}, custom, op) end
  if cls_name == "__bytes__" then return plain_table(cfg) and cfg.value or "" end
  if cls_name == "function" then return function_in(op, cfg, custom) end
  if cls_name == "DTypePolicy" or cls_name == "FloatDTypePolicy" then
    return mixed_precision.get(plain_table(cfg) and cfg.name or cfg, op)
  end
  local family = type(module) == "string" and KERAS_FAMILY[module]
  if family and not reg_name then
    local c = strip_nulls(cfg)
    if family == losses or family == metrics then
      return family.deserialize({ class_name = cls_name, config = c }, registration.merged(custom))
    end
    return family.deserialize({ class_name = cls_name, config = c })
  end
  local user = registration.lookup(cls_name, reg_name, custom)
  if module == "keras.layers" or module == "keras" or module == "keras.src.models.functional" or
    layer_mod.registry[cls_name] or is_layer_class(user) then
    local spec = { module = module, class_name = cls_name, config = cfg, registered_name = config.registered_name }
    local l
    if cls_name == "Sequential" or cls_name == "Functional" then
      l = layer_mod.deserialize(keras_config.from_keras(spec, op, custom), custom)
    else
      l = layer_mod.deserialize(keras_config.layer_from_keras(spec, op), custom)
    end
    return build_from(l, config.build_config)
  end
  if user ~= nil then
    if type(user) == "function" then return user end
    if type(user) == "table" and type(user.from_config) == "function" then return user:from_config(strip_nulls(cfg)) end
    if type(user) == "table" then return user(strip_nulls(cfg)) end
  end
  fail(op, "unknown class '%s'%s: register it with register_keras_serializable or pass it in custom_objects",
    cls_name, reg_name and (" (registered name '" .. reg_name .. "')") or "")
end

-- deserialize_keras_object(config, {custom_objects=}): the object a serialize_keras_object dict (or a config.json
-- entry) describes. Classes and functions are found by registered name, then class name, in custom_object_scope's
-- table, the register_keras_serializable table and custom_objects, then among tide's own.
function M.deserialize_keras_object(config, opts)
  local op = "deserialize_keras_object"
  if opts ~= nil and type(opts) ~= "table" then fail(op, "options must be a table {custom_objects=}, got %s", type(opts)) end
  local custom = opts and opts.custom_objects
  if custom ~= nil and type(custom) ~= "table" then
    fail(op, "custom_objects must be a table of names to classes or functions, got %s", type(custom))
  end
  for k in pairs(opts or {}) do
    if k ~= "custom_objects" and k ~= "safe_mode" then fail(op, "unknown option '%s' (expected: custom_objects, safe_mode)", tostring(k)) end
  end
  return deserialize(config, custom, op)
end

return M
