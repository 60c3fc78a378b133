-- stdlib/tide/models/model.lua — tide.Model: a Layer that groups layers, made
-- three ways as in Keras 3: functional (tide.Model{inputs=, outputs=}),
-- subclassed (tide.Model:extend("M") with init and call), or Sequential
-- (sequential.lua). Training (compile, fit, ...) comes from training.lua.
--
--   local x = tide.Input{shape = {784}}
--   local y = tide.layers.Dense{10}(tide.layers.Dense{64, activation = "relu"}(x))
--   local model = tide.Model{inputs = x, outputs = y}
local binding = require "tide.binding"
local class = require "tide.class"
local layer_mod = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"
local core = require "tide.layers.core"
local tensor_shape = require "tide.tensor_shape"
local tracking = require "tide.layers.tracking"
local graph = require "tide.models.graph"
local config_mod = require "tide.models.config"
local summary = require "tide.models.summary"
local training = require "tide.models.training"
local safetensors = require "tide.safetensors"
local nest = require "tide.nest"

local Layer = layer_mod.Layer
local is_kt = keras_tensor.is

local M = {}

local Model = Layer:extend("Model")
-- The layers inside a model set their outputs' masks; the model keeps them.
Model.supports_masking = true
function Model:compute_mask() return nil end
-- A model's float inputs are cast to its variables' dtype, not to a mixed
-- policy's compute dtype: each layer casts for itself (Keras's models keep
-- their inputs' float32).
function Model:_input_cast_dtype() return rawget(self, "_dtype_policy").variable_dtype end
M.Model = Model

local function is_model(x) return class.is_instance(x, Model) end
M.is_model = is_model

-- Properties a model adds to a layer's (read through Model's __index).
local GETTERS = {}

local layer_index, layer_newindex = Layer.__index, Layer.__newindex

local function model_index(self, k)
  local get = GETTERS[k]
  if get then return get(self) end
  return layer_index(self, k)
end

local function model_newindex(self, k, v)
  if GETTERS[k] and k ~= "trainable" then
    binding.error(string.format("%s: '%s' is read-only", layer_mod.who(self), tostring(k)))
  end
  return layer_newindex(self, k, v)
end

local function install(cls)
  cls.__index = model_index
  cls.__newindex = model_newindex
end
install(Model)

-- Model:extend("Name"): a subclass; define init(opts) (make the layers,
-- assign them to fields) and call(inputs, opts) (training = opts.training).
function Model.extend(parent, name)
  local cls = Layer.extend(parent, name)
  install(cls)
  return cls
end

---------------------------------------------------------------------------
-- Functional construction
---------------------------------------------------------------------------

local function kt_list(x, what)
  if x == nil then binding.error(string.format("Model: %s= is required (KerasTensors from tide.Input and layers)", what)) end
  if not is_kt(x) and (type(x) ~= "table" or getmetatable(x) ~= nil) then
    binding.error(string.format("Model: %s must be a KerasTensor or a list/table of them (from tide.Input and " ..
      "calling layers on it), got %s", what, type(x)))
  end
  local list = keras_tensor.leaves(x)
  if #list == 0 then
    binding.error(string.format("Model: %s holds no KerasTensor; make them with tide.Input{shape=} and layers", what))
  end
  return list
end

-- Model{inputs, outputs, name} (Keras's Functional(inputs, outputs, name):
-- by position or by name; trainable= too): a functional model (other
-- options are an error); a subclass's own init replaces this one.
function Model:init(...)
  local o = self:_kwargs({ "inputs", "outputs", "name" }, ...)
  local inputs, outputs = o.inputs, o.outputs
  if o.name ~= nil then -- by position (by name, the Layer base took it)
    if type(o.name) ~= "string" or o.name == "" or o.name:find("/", 1, true) then
      binding.error("Model: name must be a non-empty string without '/', got " .. tostring(o.name))
    end
    rawset(self, "name", o.name)
  end
  if inputs == nil and outputs == nil then return end -- a bare Model: a subclass-like container
  local ins, outs = kt_list(inputs, "inputs"), kt_list(outputs, "outputs")
  for i, kt in ipairs(ins) do
    if kt.node == nil or kt.node.inputs ~= nil then
      binding.error(string.format("Model: input %d (%s) is not a tide.Input; a functional model starts from " ..
        "tide.Input{shape=} tensors", i, tostring(kt)))
    end
  end
  local g = graph.map_graph(ins, outs)
  rawset(self, "_graph", g)
  rawset(self, "_inputs_struct", inputs)
  rawset(self, "_outputs_struct", outputs)
  rawset(self, "inputs", ins)
  rawset(self, "outputs", outs)
  self._layers = g.operations -- tracked: the model owns its layers' weights
  rawset(self, "built", true)
end

function Model:is_functional() return rawget(self, "_graph") ~= nil end

-- The layers below the model: the functional graph's operations (Input
-- layers included), a Sequential's list, or a subclass's tracked sub-layers.
function GETTERS.layers(self)
  local list = rawget(self, "_layers")
  local out = {}
  if list then
    for i, l in ipairs(list) do out[i] = l end
    return out
  end
  local _, subs = tracking.owned(self, rawget(self, "_tracking"), layer_mod.is_layer)
  return subs
end

-- Names of the values fit/evaluate report (loss first, then the metrics).
function GETTERS.metrics_names(self)
  local out = {}
  for _, m in ipairs(self.metrics) do out[#out + 1] = m.name end
  return out
end

function GETTERS.metrics(self) return training.metrics(self) end

---------------------------------------------------------------------------
-- Building and calling
---------------------------------------------------------------------------

-- KerasTensors for a shape structure (a list of dims with the batch first,
-- or a list of such lists).
local function inputs_for_shape(shape)
  if type(shape) ~= "table" then
    binding.error("Model:build: input_shape must be a list of dims with the batch first, e.g. {tide.None, 784}")
  end
  if type(shape[1]) == "table" and shape[1] ~= tensor_shape.None then
    local out = {}
    for i, s in ipairs(shape) do out[i] = inputs_for_shape(s) end
    return out
  end
  return core.Input { batch_shape = shape }
end
M.inputs_for_shape = inputs_for_shape

-- build(input_shape): a functional model is built when made; a subclassed
-- model runs its call once over symbolic inputs of that shape, which
-- builds every layer it uses.
function Model:build(input_shape)
  if rawget(self, "_graph") or input_shape == nil then return end
  rawset(self, "built", true) -- symbolic_call must not build again
  local ok, err = pcall(keras_tensor.symbolic_call, self, inputs_for_shape(input_shape), {})
  if not ok then
    rawset(self, "built", false)
    error(err, 0)
  end
end

-- A subclassed model builds its layers by running them; a class that
-- defines its own build gets it called, as a layer's.
function Model:_maybe_build(inputs)
  if rawget(self, "built") then return end
  if getmetatable(self).build ~= Model.build then return Layer._maybe_build(self, inputs) end
  rawset(self, "built", true)
end

-- Keras 3's _standardize_inputs: a model made with a list of Inputs (or
-- one) also takes a table keyed by the Inputs' names (extra keys ignored).
local function by_input_names(self, struct, inputs)
  if type(inputs) ~= "table" or getmetatable(inputs) ~= nil or inputs[1] ~= nil or next(inputs) == nil then
    return inputs
  end
  if not (is_kt(struct) or (nest.is_list(struct) and #struct > 0)) then return inputs end
  local list = is_kt(struct) and { struct } or struct
  local found, missing = false, nil
  for _, kt in ipairs(list) do
    if not is_kt(kt) then return inputs end
    if inputs[kt.name] == nil then missing = missing or kt.name else found = true end
  end
  if not found then return inputs end
  if missing then
    local keys = {}
    for k in pairs(inputs) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    binding.error(string.format("%s: an input is missing (expected one for '%s'; the table has %s)",
      layer_mod.who(self), missing, table.concat(keys, ", ")))
  end
  local out = {}
  for i, kt in ipairs(list) do out[i] = inputs[kt.name] end
  return is_kt(struct) and out[1] or out
end

function Model:call(inputs, opts)
  local g = rawget(self, "_graph")
  if g == nil then
    binding.error(string.format("%s: a model made by subclassing must define call(inputs, opts)", layer_mod.who(self)))
  end
  local struct = rawget(self, "_inputs_struct")
  local flat = graph.flatten_like(struct, by_input_names(self, struct, inputs), layer_mod.who(self))
  return graph.run(g, self.inputs, flat, rawget(self, "_outputs_struct"))
end

-- The layer called `name`, or the one at `index` (0-based, as Keras).
function Model:get_layer(name, index)
  if type(name) == "table" and getmetatable(name) == nil then name, index = name.name, name.index end
  local list = self.layers
  if index ~= nil then
    if list[index + 1] == nil then
      binding.error(string.format("%s: get_layer: index %d is out of range (the model has %d layers)",
        layer_mod.who(self), index, #list))
    end
    return list[index + 1]
  end
  for _, l in ipairs(list) do
    if l.name == name then return l end
  end
  local names = {}
  for i, l in ipairs(list) do names[i] = l.name end
  binding.error(string.format("%s: no layer named '%s' (layers: %s)", layer_mod.who(self), tostring(name),
    table.concat(names, ", ")))
end

-- summary{line_length=, print_fn=}: the table Keras 3 prints.
function Model:summary(opts)
  return summary.print_summary(self, opts)
end

-- The weights under their file names: "<position>/<variable name>", so that
-- a file loads by position into a model of the same structure whose layers
-- were named differently (as Keras's weights files load by structure).
local function named_weights(self)
  local out = {}
  for i, v in ipairs(self.weights) do out[i] = { string.format("%d/%s", i - 1, v.name), v } end
  return out
end

-- model:save(dir, {include_optimizer=true}): the whole model as a SavedModel
-- (serving signature, weights, config, optimizer state); the saving floor
-- (tide.saved_model.keras, loaded with tide.models through `tide`) sets it.
local saver
function M.set_saver(fn) saver = fn end
function Model:save(dir, opts)
  if saver == nil then
    binding.error(layer_mod.who(self) .. ": save needs tide.saved_model; load tide with require \"tide\"")
  end
  return saver(self, dir, opts)
end

-- Weights files by name, as in Keras: a path the saving floor claims
-- (Keras 3's .weights.h5 and .keras, tide.saving) goes to it through this
-- hook, {claims = fn(path), save = fn(model, path), load = fn(model, path)};
-- any other path is tide's safetensors file.
local weights_io
function M.set_weights_io(io) weights_io = io end

-- save_weights(path): every weight in one safetensors file (written to a
-- temporary name, then renamed), or Keras 3's file for a .weights.h5 path.
function Model:save_weights(path)
  if type(path) ~= "string" then binding.error(layer_mod.who(self) .. ": save_weights expects a file path") end
  if weights_io and weights_io.claims(path) then return weights_io.save(self, path) end
  if not rawget(self, "built") or #self.weights == 0 then
    binding.error(layer_mod.who(self) .. ": save_weights: the model has no weights yet (build it or call it once)")
  end
  local tensors = {}
  for _, e in ipairs(named_weights(self)) do tensors[e[1]] = e[2] end
  safetensors.save_file(tensors, path, { metadata = { format = "tide", model = self.name } })
end

-- load_weights(path): weights from save_weights' file (by its name, as
-- save_weights); every name, shape and dtype must match (nothing is set otherwise).
function Model:load_weights(path)
  if type(path) ~= "string" then binding.error(layer_mod.who(self) .. ": load_weights expects a file path") end
  if weights_io and weights_io.claims(path) then return weights_io.load(self, path) end
  local tensors = safetensors.load_file(path)
  local by_position, count = {}, 0
  for key, t in pairs(tensors) do
    local pos = tonumber(key:match("^(%d+)/"))
    if pos == nil then
      binding.error(string.format("%s: load_weights: '%s' holds '%s', which is not a tide weights file's name " ..
        "(<position>/<name>)", layer_mod.who(self), path, key))
    end
    by_position[pos + 1] = t
    count = count + 1
  end
  local ws = self.weights
  if count ~= #ws then
    binding.error(string.format("%s: load_weights: '%s' holds %d weights, but the model has %d", layer_mod.who(self),
      path, count, #ws))
  end
  for i, v in ipairs(ws) do
    local t = by_position[i]
    if t == nil then
      binding.error(string.format("%s: load_weights: '%s' has no weight at position %d", layer_mod.who(self), path, i - 1))
    end
    if t.dtype ~= v.dtype then
      binding.error(string.format("%s: load_weights: weight %d ('%s') is %s in '%s' but %s in the model",
        layer_mod.who(self), i - 1, v.name, t.dtype, path, v.dtype))
    end
  end
  self:set_weights(by_position)
end

-- Keras's get_config: a functional model's graph of layer configs
-- (models/config.lua); a subclass defines its own (the options its init
-- takes), as in Keras, or gets the base layer's.
function Model:get_config()
  if rawget(self, "_graph") then return config_mod.functional_config(self) end
  return Layer.get_config(self)
end

-- Cls:from_config(config, custom_objects): a functional model's config
-- rebuilds the graph (fresh weights); a subclass's config goes to its init.
function Model.from_config(cls, config, custom_objects)
  if cls == Model and type(config) == "table" and config.layers ~= nil then
    return config_mod.functional_from_config(Model, config, custom_objects)
  end
  return Layer.from_config(cls, config)
end

training.install(Model, GETTERS)

return M
