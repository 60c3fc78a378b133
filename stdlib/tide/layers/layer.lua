-- stdlib/tide/layers/layer.lua — tide.layers.Layer, Keras 3's base layer:
-- configuration in the constructor, weights made lazily by build(input_shape)
-- at the first call, add_weight, call(inputs, {training=}), weights and
-- their tracking (tracking.lua), losses, configs, unique names.
--
--   local Scale = tide.layers.Layer:extend("Scale")
--   function Scale:init(opts) self.factor = opts.factor or 1 end
--   function Scale:build(input_shape)
--     self.w = self:add_weight{name = "w", shape = {input_shape[#input_shape]}, initializer = "ones"}
--   end
--   function Scale:call(x, opts) return x * self.w * self.factor end
--   local y = Scale{factor = 2}(tide.ones{4, 3})
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local variable = require "tide.variable"
local mixed_precision = require "tide.mixed_precision"
local tensor_shape = require "tide.tensor_shape"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local keras_mask = require "tide.keras_mask"
local init_scope = require "tide.initializers.init_scope"
local kwargs = require("tide.initializers.base").kwargs
local tracking = require "tide.layers.tracking"
local registration = require "tide.layers.object_registration"
local keras_tensor = require "tide.layers.keras_tensor"
local check_input_spec = require("tide.layers.input_spec").check
local math_ops = require "tide.ops.math"
local dynamic_shape = require "tide.ops.dynamic_shape"

local Tensor = binding.Tensor
local istype = binding.ffi.istype
local is_variable = variable.is_variable
local None = tensor_shape.None

local M = {}

local Layer = class("Layer")
M.Layer = Layer

local function is_layer(x) return class.is_instance(x, Layer) end
M.is_layer = is_layer

local function class_name(self) return getmetatable(self).__name end

-- "Dense 'dense'": how errors name a layer.
local function who(self)
  return string.format("%s '%s'", class_name(self), tostring(rawget(self, "name")))
end
M.who = who

---------------------------------------------------------------------------
-- Names
---------------------------------------------------------------------------

-- Keras's to_snake_case: "BatchNormalization" -> "batch_normalization",
-- "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d".
local function snake_case(name)
  name = name:gsub("[^%w_]", "")
  name = name:gsub("(.)(%u%l+)", "%1_%2")
  name = name:gsub("(%l)(%u)", "%1_%2")
  return name:lower()
end
M.snake_case = snake_case

local uids = {}

-- A unique name from prefix: prefix, prefix_1, prefix_2, ... (Keras's uniquify).
function M.unique_name(prefix)
  local n = (uids[prefix] or 0) + 1
  uids[prefix] = n
  return n == 1 and prefix or string.format("%s_%d", prefix, n - 1)
end

-- Forget the names handed out (Keras's clear_session does this).
function M.reset_names() uids = {} end

---------------------------------------------------------------------------
-- Properties: layer.weights, layer.trainable, ... are computed on reading
---------------------------------------------------------------------------

local GETTERS, SETTERS = {}, {}

-- Instances index their class through this (class fields, inherited), after
-- the computed properties.
local function layer_index(self, k)
  local get = GETTERS[k]
  if get then return get(self) end
  return getmetatable(self)[k]
end

-- A field assigned for the first time: properties have setters, the rest
-- is stored after tracking notes the field.
local function layer_newindex(self, k, v)
  local set = SETTERS[k]
  if set then return set(self, v) end
  if GETTERS[k] then binding.error(string.format("%s: '%s' is read-only", who(self), tostring(k))) end
  local t = rawget(self, "_tracking")
  if t then tracking.note_field(t, k, v, is_layer) end
  rawset(self, k, v)
end

local function layer_tostring(self)
  return string.format("<%s name=%s, built=%s>", class_name(self), tostring(rawget(self, "name")),
    tostring(rawget(self, "built")))
end

-- The metamethods every layer class carries (Lua reads them raw from the
-- instance's metatable, its class, so each subclass gets its own copy).
local function install_metamethods(cls)
  cls.__index = layer_index
  cls.__newindex = layer_newindex
  cls.__tostring = layer_tostring
  cls.__call = function(self, ...) return self:_call(...) end
end
install_metamethods(Layer)

-- Layer:extend(name): a subclass (of Layer or of any layer class) whose
-- instances are made by Cls{...}; define init(opts), build(input_shape) and
-- call(inputs, opts) on it.
-- Layer classes by name, for configs (Keras's serialization registry):
-- every class made with extend, the first of a name kept (tide's own load
-- first; a user's class that reuses a name is found through custom_objects).
local registry = {}
M.registry = registry

function Layer.extend(parent, name)
  if type(name) ~= "string" or name == "" then
    binding.error("Layer:extend: the class needs a name, e.g. tide.layers.Layer:extend(\"MyLayer\")")
  end
  local cls = class(name, parent)
  install_metamethods(cls)
  if registry[name] == nil then registry[name] = cls end
  return cls
end

-- The Variables and sub-layers this layer owns directly.
local function owned(self) return tracking.owned(self, rawget(self, "_tracking"), is_layer) end

-- Every layer below self (not self), depth first in tracking order, once each.
local function flatten_layers(self, out, seen)
  out, seen = out or {}, seen or { [self] = true }
  local _, subs = owned(self)
  for _, l in ipairs(subs) do
    if not seen[l] then
      seen[l] = true
      out[#out + 1] = l
      flatten_layers(l, out, seen)
    end
  end
  return out
end
M.flatten_layers = flatten_layers

-- layer.weights: own variables (trainable store first), then each
-- sub-layer's weights; each Variable once.
-- layer:build(input_shape) called directly marks the layer built, as
-- Keras's build wrapper does (else its first call would build it again with
-- fresh weights); _maybe_build calls the class's build itself.
local on_built_hook -- M.set_on_built's function, below
function GETTERS.build(self)
  local build = getmetatable(self).build
  return function(layer, input_shape)
    local r = build(layer, input_shape)
    if layer == self and not rawget(self, "built") then
      rawset(self, "built", true)
      rawset(self, "_build_input_shape", input_shape)
      if on_built_hook then on_built_hook(self) end
    end
    return r
  end
end

function GETTERS.weights(self)
  local vars, subs = owned(self)
  local out, seen = {}, {}
  for _, v in ipairs(vars) do
    if not seen[v] then seen[v] = true; out[#out + 1] = v end
  end
  for _, l in ipairs(subs) do
    for _, v in ipairs(l.weights) do
      if not seen[v] then seen[v] = true; out[#out + 1] = v end
    end
  end
  return out
end
GETTERS.variables = GETTERS.weights -- tide's random ops keep no seed state: nothing else to list

function GETTERS.trainable_weights(self)
  if not rawget(self, "_trainable") then return {} end
  local out = {}
  for _, v in ipairs(self.weights) do if v.trainable then out[#out + 1] = v end end
  return out
end
GETTERS.trainable_variables = GETTERS.trainable_weights

function GETTERS.non_trainable_weights(self)
  local all = self.weights
  if not rawget(self, "_trainable") then return all end
  local out = {}
  for _, v in ipairs(all) do if not v.trainable then out[#out + 1] = v end end
  return out
end
GETTERS.non_trainable_variables = GETTERS.non_trainable_weights

function GETTERS.trainable(self) return rawget(self, "_trainable") end

-- Mixed precision (tide.mixed_precision): the policy, and the dtypes it names.
function GETTERS.dtype_policy(self) return rawget(self, "_dtype_policy") end
function GETTERS.compute_dtype(self) return rawget(self, "_dtype_policy").compute_dtype end
function GETTERS.variable_dtype(self) return rawget(self, "_dtype_policy").variable_dtype end
function SETTERS.dtype_policy(self, p)
  p = mixed_precision.get(p, who(self) .. ": dtype_policy")
  rawset(self, "_dtype_policy", p)
  rawset(self, "dtype", p.variable_dtype)
end

-- layer.trainable = b: as Keras, sets the flag of the variables filed as
-- trainable (tapes then watch them or not) and of every sub-layer.
function SETTERS.trainable(self, value)
  if type(value) ~= "boolean" then
    binding.error(string.format("%s: trainable must be true or false, got %s", who(self), tostring(value)))
  end
  rawset(self, "_trainable", value)
  local t = rawget(self, "_tracking")
  local vars, subs = owned(self)
  for _, v in ipairs(vars) do
    if t.store[v] then v.trainable = value end
  end
  for _, l in ipairs(subs) do l.trainable = value end
end

-- Regularizers of weights made by add_weight (Keras keeps variable.regularizer).
local weight_regularizer = setmetatable({}, { __mode = "k" })

-- layer.losses: the losses added during the last top-level call (add_loss,
-- activity regularizers) of this layer and those below it, then one
-- penalty per regularized trainable weight, computed now from its current
-- value (Keras recomputes them at each reading).
function GETTERS.losses(self)
  local out = {}
  for _, x in ipairs(rawget(self, "_losses")) do out[#out + 1] = x end
  for _, l in ipairs(flatten_layers(self)) do
    for _, x in ipairs(rawget(l, "_losses")) do out[#out + 1] = x end
  end
  for _, v in ipairs(self.trainable_weights) do
    local reg = weight_regularizer[v]
    if reg then out[#out + 1] = reg(v) end
  end
  return out
end

---------------------------------------------------------------------------
-- Construction
---------------------------------------------------------------------------

local BASE_KEYS = { name = true, trainable = true, dtype = true, activity_regularizer = true, input_shape = true,
                    input_dim = true, autocast = true }

-- Set the base options in `base` (Keras's common keywords); with only_given,
-- just those present (given by position among a class's own), else all,
-- with their defaults.
local function set_base(self, base, only_given)
  local cname = class_name(self)
  local function given(k) return base[k] ~= nil or not only_given end
  if given("name") then
    local name = base.name
    if name == nil then
      name = M.unique_name(snake_case(cname))
    elseif type(name) ~= "string" or name == "" or name:find("/", 1, true) then
      binding.error(string.format("%s: name must be a non-empty string without '/', got %s", cname, tostring(name)))
    end
    rawset(self, "name", name)
  end
  if given("trainable") then
    local trainable = base.trainable
    if trainable == nil then trainable = true end
    if type(trainable) ~= "boolean" then
      binding.error(string.format("%s: trainable must be true or false, got %s", cname, tostring(trainable)))
    end
    rawset(self, "_trainable", trainable)
  end
  -- dtype: a dtype or policy name, or a Policy; nil takes the global policy
  -- (InputLayer's default is float32 regardless, as Keras's Input)
  if given("dtype") then
    local dt = base.dtype
    if dt == nil then dt = getmetatable(self)._default_dtype end
    local policy = mixed_precision.get(dt, cname .. ": dtype")
    rawset(self, "_dtype_policy", policy)
    rawset(self, "dtype", policy.variable_dtype) -- Keras's layer.dtype: the variables' dtype
  end
  if given("autocast") then rawset(self, "autocast", base.autocast ~= false) end
  if given("activity_regularizer") then
    rawset(self, "activity_regularizer", regularizers.get(base.activity_regularizer, cname .. ": activity_regularizer"))
  end
  if base.input_dim ~= nil then
    rawset(self, "_input_shape_arg", { base.input_dim })
  elseif base.input_shape ~= nil then
    if type(base.input_shape) ~= "table" then
      binding.error(string.format("%s: input_shape must be a list of dims (without the batch), got %s", cname,
        type(base.input_shape)))
    end
    rawset(self, "_input_shape_arg", base.input_shape)
  end
end

-- Cls{...} / Cls(args..., {opts}): the base takes Keras's common keywords
-- (name, trainable, dtype, activity_regularizer, input_shape, input_dim,
-- autocast) out of the options table and passes the rest to self:init.
function Layer:__init(...)
  local n = select("#", ...)
  local argv = { ... }
  local base = {}
  local last = argv[n]
  if type(last) == "table" and getmetatable(last) == nil and not convert.is_variable(last) then
    local rest = {}
    local own = getmetatable(self)._own_options -- a class's options that share a base key's name
    for k, v in pairs(last) do
      if BASE_KEYS[k] and not (own and own[k]) then base[k] = v else rest[k] = v end
    end
    argv[n] = rest
    rawset(self, "_init_opts", rest) -- what get_config returns for a layer that defines none
  end
  rawset(self, "_tracking", tracking.new())
  rawset(self, "_losses", {})
  rawset(self, "built", false)
  set_base(self, base, false)
  self:init(unpack(argv, 1, n))
end

-- Subclasses take their own options here (the base ones are gone from opts).
function Layer:init(...)
  local n = select("#", ...)
  local opts = n > 0 and select(n, ...) or nil
  if n > 1 or (opts ~= nil and (type(opts) ~= "table" or next(opts) ~= nil)) then
    local keys = {}
    if type(opts) == "table" then for k in pairs(opts) do keys[#keys + 1] = tostring(k) end end
    binding.error(string.format("%s: unrecognized arguments%s; a layer class takes its own options in init(opts)",
      class_name(self), #keys > 0 and (" (" .. table.concat(keys, ", ") .. ")") or ""))
  end
end

-- Layer:_kwargs(names, ...): the options a built-in layer's init takes,
-- by name or position in Keras's order (Dense{64, "relu"}); names.keywords
-- more by name only; unknown ones are errors. A base option among the names
-- (Dense's activity_regularizer, InputLayer's dtype and name) is set when
-- it comes by position (by name, __init took it).
function Layer:_kwargs(names, ...)
  local o = kwargs(class_name(self), names, ...)
  local own, base = getmetatable(self)._own_options, {}
  for i = 1, #names do
    local k = names[i]
    if BASE_KEYS[k] and not (own and own[k]) and o[k] ~= nil then base[k], o[k] = o[k], nil end
  end
  if next(base) ~= nil then set_base(self, base, true) end
  return o
end

---------------------------------------------------------------------------
-- Weights
---------------------------------------------------------------------------

local function shape_text(shape)
  local parts = {}
  for i, d in ipairs(shape) do parts[i] = tostring(d) end
  return "(" .. table.concat(parts, ", ") .. (#parts == 1 and ",)" or ")")
end
M.shape_text = shape_text

-- add_weight{shape=, initializer=, dtype=, trainable=true, regularizer=,
-- constraint=, name=, autocast=true}: a new Variable (constraint: what optimizers project
-- it with after each update, as the Variable's own constraint) this layer tracks (Keras's order: shape,
-- initializer, dtype may also come by position). The initializer defaults
-- to "glorot_uniform" for float dtypes and "zeros" otherwise; it runs
-- eagerly even when the layer is built inside tide.trace.
function Layer:add_weight(...)
  local o = kwargs("add_weight", { "shape", "initializer", "dtype", "trainable", "regularizer", "constraint", "name",
    "autocast" }, ...)
  local wname = o.name
  if wname == nil then wname = "variable" end
  if type(wname) ~= "string" then
    binding.error(string.format("%s: add_weight: name must be a string, got %s", who(self), type(wname)))
  end
  local shape = o.shape or {}
  if type(shape) == "number" then shape = { shape } end
  if type(shape) ~= "table" then
    binding.error(string.format("%s: add_weight '%s': shape must be a list of dims, got %s", who(self), wname,
      type(shape)))
  end
  local dims = {}
  for i = 1, #shape do
    local d = shape[i]
    if type(d) ~= "number" or d < 0 or d ~= math.floor(d) then
      binding.error(string.format("%s: add_weight '%s': shape must be fully known non-negative integers, got %s " ..
        "(dim %d is %s)", who(self), wname, shape_text(shape), i - 1, tostring(d)))
    end
    dims[i] = d
  end
  local dt = dtype.names[dtype.code(o.dtype or rawget(self, "dtype"), who(self) .. ": add_weight")]
  local init = o.initializer
  if init == nil then init = dtype.is_float[dtype.code(dt)] and "glorot_uniform" or "zeros" end
  init = initializers.get(init, who(self) .. ": add_weight '" .. wname .. "'")
  local trainable = o.trainable
  if trainable == nil then trainable = true end
  local reg = regularizers.get(o.regularizer, who(self) .. ": add_weight '" .. wname .. "'")
  local con = constraints.get(o.constraint, who(self) .. ": add_weight '" .. wname .. "'")
  local v = init_scope.run(function()
    local value = init(dims, dt)
    if not istype(Tensor, value) then value = convert.tensor(value, dt, "add_weight") end
    return variable.Variable(value, { name = rawget(self, "name") .. "/" .. wname, trainable = trainable, dtype = dt,
      constraint = con, autocast = o.autocast })
  end)
  local t = rawget(self, "_tracking")
  tracking.sight(t, v)
  t.store[v] = trainable
  t.created[#t.created + 1] = v
  if not rawget(self, "_trainable") then v.trainable = false end
  if reg then weight_regularizer[v] = reg end
  return v
end

-- The weights' current values, in layer.weights' order (tensors).
function Layer:get_weights()
  local out = {}
  for i, v in ipairs(self.weights) do out[i] = v:read_value() end
  return out
end

-- Set the weights from a list of tensors or Lua tables, in layer.weights'
-- order; the count and every shape must match (nothing is set otherwise).
function Layer:set_weights(values)
  if type(values) ~= "table" or getmetatable(values) ~= nil then
    binding.error(string.format("%s: set_weights expects a list of tensors, got %s", who(self), type(values)))
  end
  local ws = self.weights
  if #values ~= #ws then
    binding.error(string.format("%s: set_weights was given a list of %d weight(s), but the layer has %d%s", who(self),
      #values, #ws, #ws == 0 and not rawget(self, "built") and " (it is not built yet: call it once, or build(input_shape))" or ""))
  end
  local converted = {}
  for i, v in ipairs(ws) do
    local x = values[i]
    if x == nil then binding.error(string.format("%s: set_weights: value %d is nil", who(self), i)) end
    if is_variable(x) then x = x:read_value() end
    if not istype(Tensor, x) then x = convert.tensor(x, v.dtype, "set_weights") end
    if x.dtype ~= v.dtype then x = x:cast(v.dtype) end
    local want, got = v.shape:as_list(), x.shape:as_list()
    local same = #want == #got
    for k = 1, #want do if want[k] ~= got[k] then same = false end end
    if not same then
      binding.error(string.format("%s: weight '%s' has shape %s, which is not compatible with the value's shape %s",
        who(self), v.name, shape_text(want), shape_text(got)))
    end
    converted[i] = x
  end
  for i, v in ipairs(ws) do v:assign(converted[i]) end
end

-- The number of scalars in the weights (the layer must be built).
function Layer:count_params()
  if not rawget(self, "built") then
    binding.error(string.format("%s: count_params needs a built layer: call it once, or build(input_shape)", who(self)))
  end
  local n = 0
  for _, v in ipairs(self.weights) do n = n + v.shape:num_elements() end
  return n
end

---------------------------------------------------------------------------
-- Configs
---------------------------------------------------------------------------

-- The base configuration (name, trainable, dtype), plus, for a layer class
-- that defines no get_config, the options its constructor was given.
function Layer:get_config()
  local config = {}
  local init_opts = rawget(self, "_init_opts")
  if init_opts and getmetatable(self).get_config == Layer.get_config then
    for k, v in pairs(init_opts) do config[k] = v end
  end
  config.name = rawget(self, "name")
  config.trainable = rawget(self, "_trainable")
  config.dtype = mixed_precision.serialize(rawget(self, "_dtype_policy"))
  local ar = rawget(self, "activity_regularizer")
  if ar then config.activity_regularizer = regularizers.serialize(ar) end
  return config
end

-- Keras's serialize: {class_name = "Dense", config = layer:get_config()}.
function M.serialize(l)
  if not is_layer(l) then
    binding.error(string.format("layers.serialize: expects a layer, got %s", type(l)))
  end
  return { class_name = getmetatable(l).__name, config = l:get_config() }
end

-- Keras's deserialize: the layer serialize described (a layer is returned
-- as it is). Classes come from custom_objects (name -> class) first, then
-- from the classes made with extend.
function M.deserialize(spec, custom_objects)
  if is_layer(spec) then return spec end
  if type(spec) ~= "table" or type(spec.class_name) ~= "string" then
    binding.error(string.format("layers.deserialize: expects {class_name = ..., config = {...}}, got %s",
      type(spec) == "table" and "a table without class_name" or type(spec)))
  end
  local name = spec.class_name
  -- Keras's order: the registered name ("package>Name"), then the class name, in custom_object_scope's table,
  -- the register_keras_serializable table and custom_objects; then tide's classes by name
  local cls = registration.lookup(name, spec.registered_name, custom_objects) or registry[name]
  if cls == nil then
    binding.error(string.format("layers.deserialize: unknown layer class '%s': pass it as custom_objects = " ..
      "{%s = %s} (or define it with tide.layers.Layer:extend(\"%s\") before loading)", name, name, name, name))
  end
  return cls:from_config(spec.config or {}, custom_objects)
end

-- Cls:from_config(config): a new layer from get_config's table.
function Layer.from_config(cls, config)
  if type(config) ~= "table" then
    binding.error(string.format("%s.from_config: expects a config table, got %s", cls.__name, type(config)))
  end
  local copy = {}
  for k, v in pairs(config) do copy[k] = v end
  return cls(copy)
end

---------------------------------------------------------------------------
-- Calling
---------------------------------------------------------------------------

-- Subclasses build their weights here; input_shape is a Lua list of dims
-- (tide.None where unknown), or a list of such lists for a list of inputs.
function Layer:build(input_shape) end -- luacheck: ignore input_shape

function Layer:call(inputs)
  binding.error(string.format("%s: the layer class defines no call(inputs, opts)", who(self)))
end

-- True when x holds a tensor, Variable or KerasTensor somewhere (a
-- structure of inputs), false for a table of numbers (one tensor's values).
local function holds_tensors(x)
  if type(x) ~= "table" or keras_tensor.is(x) then return keras_tensor.is(x) end
  local probe = x
  while type(probe) == "table" and not keras_tensor.is(probe) do
    local _, v = next(probe)
    probe = v
  end
  return istype(Tensor, probe) or is_variable(probe) or keras_tensor.is(probe)
end

-- The dtype float inputs are cast to: the compute dtype (a model's: its
-- variables' dtype, as Keras's models keep their inputs' float32).
function Layer:_input_cast_dtype() return rawget(self, "_dtype_policy").compute_dtype end

-- Inputs as the layer's call sees them: Lua values become tensors (of the
-- layer's input dtype when it is a float dtype), Variables are read, and float
-- tensors of another float dtype are cast (Keras's autocast); structures
-- (lists and tables of tensors) are converted element by element.
function Layer:_convert_input(x)
  if istype(Tensor, x) then
    if rawget(self, "autocast") then
      local dt = self:_input_cast_dtype()
      local code = dtype.codes[dt]
      if x.dt ~= code and dtype.is_float[x.dt] and dtype.is_float[code] then return x:cast(dt) end
    end
    return x
  end
  if is_variable(x) then return self:_convert_input(x:read_value()) end
  if keras_tensor.is(x) then return x end
  if type(x) == "table" and holds_tensors(x) then
    local out = {}
    for k, v in pairs(x) do out[k] = self:_convert_input(v) end
    return out
  end
  if type(x) == "table" or type(x) == "number" or type(x) == "boolean" then
    local dt = self:_input_cast_dtype()
    if not dtype.is_float[dtype.codes[dt]] or type(x) == "boolean" then dt = nil end
    return convert.tensor(x, dt, class_name(self))
  end
  binding.error(string.format("%s: expected a tensor (or a Lua table of numbers), got %s", who(self), type(x)))
end

-- The shape(s) build receives: a Lua list of dims, or a structure of them.
local function shapes_of(x)
  if istype(Tensor, x) or keras_tensor.is(x) then
    local s = x.shape
    if s.rank == nil then return nil end
    return s:as_list()
  end
  if type(x) == "table" then
    local out = {}
    for k, v in pairs(x) do out[k] = shapes_of(v) end
    return out
  end
  return nil
end
M.shapes_of = shapes_of

-- A hook for the saving floor: tide.train's Checkpoint sets it, so that a
-- restore into a model not yet built reaches each layer's weights when the
-- layer builds (TF's deferred restoration). Called with the layer, built.
local on_built = nil
function M.set_on_built(fn) on_built, on_built_hook = fn, fn end

-- build(input_shape) once, eagerly (initial values are made outside any
-- trace in progress, as TF's init_scope), then built = true.
-- A build that fails forgets the weights it made, so that the next call
-- builds afresh.
function Layer:_maybe_build(inputs)
  if rawget(self, "built") then return end
  local shapes = shapes_of(inputs)
  local created = rawget(self, "_tracking").created
  local before = #created
  local build = getmetatable(self).build
  local ok, err = pcall(init_scope.run, function() build(self, shapes) end)
  if not ok then
    local forgotten = {}
    for i = #created, before + 1, -1 do
      forgotten[created[i]] = true
      created[i] = nil
    end
    for _, k in ipairs(rawget(self, "_tracking").keys) do -- self.kernel = self:add_weight(...) before the failure
      if forgotten[rawget(self, k)] then rawset(self, k, nil) end
    end
    error(err, 0)
  end
  rawset(self, "built", true)
  rawset(self, "_build_input_shape", shapes) -- Keras's build_config
  if on_built then on_built(self) end
end

-- The call in progress: { entry = the outermost layer, training = value }.
local call_context = nil

-- Keras's training rule: the value given to this call, else the one of the
-- call this one runs inside, else nil (inference, as a direct call).
local function resolve_training(explicit)
  if explicit ~= nil then
    if type(explicit) ~= "boolean" then
      binding.error("training must be true, false or nil, got " .. tostring(explicit))
    end
    return explicit
  end
  return call_context and call_context.training
end

local function clear_losses(self)
  rawset(self, "_losses", {})
  for _, l in ipairs(flatten_layers(self)) do rawset(l, "_losses", {}) end
end
Layer._clear_losses = clear_losses

-- Add a loss tensor (a scalar) to this layer's losses; inside call or build.
function Layer:add_loss(x)
  if not istype(Tensor, x) then
    binding.error(string.format("%s: add_loss expects a tensor, got %s", who(self), type(x)))
  end
  local losses = rawget(self, "_losses")
  losses[#losses + 1] = x
end

-- layer(inputs, {training=, ...}): convert the inputs, check input_spec,
-- build once, call, and record activity-regularizer losses. Other options
-- are passed to call as they are.
-- Keras's masks on the way out: a layer that supports masking gives its
-- outputs compute_mask(inputs, mask) (where the call left them none); one
-- that does not drops an input's mask, saying so once.
local mask_warned = setmetatable({}, { __mode = "k" })
local function set_output_masks(self, inputs, outputs, input_mask)
  if not self.supports_masking then
    if input_mask ~= nil and not mask_warned[self] then
      mask_warned[self] = true
      io.stderr:write(string.format("tide: warning: %s was passed an input with a mask attached to it, but it " ..
        "does not support masking: the layers after it will not see the mask\n", who(self)))
    end
    return
  end
  -- (a call that set its outputs' masks itself, as Masking's, needs no compute_mask)
  if istype(Tensor, outputs) then
    if keras_mask.get(outputs) ~= nil then return end
    local out_mask = self:compute_mask(inputs, input_mask)
    if istype(Tensor, out_mask) then keras_mask.set(outputs, out_mask) end
    return
  end
  local out_mask = self:compute_mask(inputs, input_mask)
  if type(outputs) == "table" and type(out_mask) == "table" then
    for i, y in ipairs(outputs) do
      if keras_mask.get(y) == nil and istype(Tensor, out_mask[i]) then keras_mask.set(y, out_mask[i]) end
    end
  end
end

-- Keras's compute_mask(inputs, previous_mask): the mask of the outputs (for
-- a layer with supports_masking; default: the input's, unchanged).
function Layer:compute_mask(inputs, mask) return mask end

-- Keras's supports_masking: false unless a layer says so (then its call
-- takes opts.mask and its outputs carry compute_mask's mask).
Layer.supports_masking = false

-- The autocast scope self:call runs in: a float dtype name, false (none), or
-- nil (the current one, unchanged).
local function autocast_scope(self)
  local p = rawget(self, "_dtype_policy")
  local current = variable.autocast_dtype()
  if current ~= nil then
    if not rawget(self, "autocast") or not dtype.is_float[dtype.codes[p.compute_dtype]] then return false end
    if current ~= p.compute_dtype then return p.compute_dtype end
    return nil
  end
  if p.compute_dtype ~= p.variable_dtype and rawget(self, "autocast") then return p.compute_dtype end
  return nil
end

-- self:call(inputs, opts) in Keras's AutocastScope: a mixed layer reads its
-- float variables in its compute dtype; inside one, a layer of another
-- compute dtype reads in its own, and a layer with autocast = false (or a
-- non-float one) casts none.
function Layer:_scoped_call(inputs, opts)
  local scope = autocast_scope(self)
  if scope == nil then return self:call(inputs, opts) end
  local prev = variable.set_autocast(scope or nil)
  local ok, out = pcall(self.call, self, inputs, opts)
  variable.set_autocast(prev)
  if not ok then error(out, 0) end
  return out
end

function Layer:_call(inputs, opts, ...)
  if select("#", ...) > 0 then
    binding.error(string.format("%s: a layer takes (inputs, {options}); pass several inputs as one list {a, b}",
      who(self)))
  end
  if inputs == nil then
    binding.error(string.format("%s: called with nil; pass a tensor (or a list of tensors)", who(self)))
  end
  if istype(Tensor, opts) or is_variable(opts) then
    binding.error(string.format("%s: a layer takes (inputs, {options}); pass several inputs as one list {a, b}",
      who(self)))
  end
  if opts ~= nil and (type(opts) ~= "table" or getmetatable(opts) ~= nil) then
    binding.error(string.format("%s: the second argument must be an options table such as {training = true}, got %s",
      who(self), type(opts)))
  end
  inputs = self:_convert_input(inputs)
  local first = inputs
  if type(first) == "table" and not keras_tensor.is(first) then first = nil end
  if first then check_input_spec(self, first) end
  self:_maybe_build(inputs)
  if first then check_input_spec(self, first) end -- build may have set it
  if keras_tensor.any(inputs) then return keras_tensor.symbolic_call(self, inputs, opts or {}) end
  local call_opts = {}
  for k, v in pairs(opts or {}) do call_opts[k] = v end
  -- Keras's masks: the inputs' mask goes to call as opts.mask (unless given)
  local input_mask = call_opts.mask
  if input_mask == nil then
    input_mask = keras_mask.of(inputs)
    call_opts.mask = input_mask
  end
  local training = resolve_training(call_opts.training)
  call_opts.training = training
  local outer = call_context
  local ok, outputs
  if outer == nil then
    clear_losses(self)
    call_context = { entry = self, training = training }
    ok, outputs = pcall(self._scoped_call, self, inputs, call_opts)
    call_context = nil
  else
    local saved = outer.training
    outer.training = training
    ok, outputs = pcall(self._scoped_call, self, inputs, call_opts)
    outer.training = saved
  end
  if not ok then error(outputs, 0) end
  if outputs ~= nil then set_output_masks(self, inputs, outputs, input_mask) end
  local ar = rawget(self, "activity_regularizer")
  if ar and outputs ~= nil then
    local outs = istype(Tensor, outputs) and { outputs } or outputs
    for _, y in ipairs(outs) do
      if istype(Tensor, y) then
        local loss = ar(y)
        if y.ndim > 0 then -- normalized by the batch size, as Keras 3 (0 for an empty batch)
          local batch = y.shape[1]
          if batch == None then batch = dynamic_shape.shape(y)[0]:cast(loss.dtype) end
          loss = math_ops.divide_no_nan(loss, batch)
        end
        self:add_loss(loss)
      end
    end
  end
  return outputs
end

M.check_input_spec = check_input_spec
return M
