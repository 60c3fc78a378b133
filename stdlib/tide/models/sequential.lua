-- stdlib/tide/models/sequential.lua — tide.Sequential: a plain stack of
-- layers, each called on the previous one's output (Keras 3's Sequential).
--
--   local model = tide.Sequential{
--     tide.Input{shape = {784}},           -- or input_shape = {784} on the first layer
--     tide.layers.Dense{256, activation = "relu"},
--     tide.layers.Dense{10},
--   }
-- With a known input shape the model is built at once (weights made,
-- summary() shows output shapes); otherwise at its first call.
local binding = require "tide.binding"
local class = require "tide.class"
local tensor_shape = require "tide.tensor_shape"
local layer_mod = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"
local core = require "tide.layers.core"
local model_mod = require "tide.models.model"

local Model = model_mod.Model
local None = tensor_shape.None

local M = {}

local config_mod = require "tide.models.config"

local Sequential = Model:extend("Sequential")
M.Sequential = Sequential

-- Sequential{layer, layer, ..., name=} or Sequential{layers = {...}}.
function Sequential:init(opts)
  self._layers = {} -- tracked: the model owns its layers' weights
  rawset(self, "_output_shapes", {})
  if opts == nil then return end
  if type(opts) ~= "table" then
    binding.error("Sequential: expects a list of layers (Sequential{Dense{..}, ...}), got " .. type(opts))
  end
  local list = opts.layers or opts
  for k in pairs(opts) do
    if not (type(k) == "number" or k == "layers") then
      binding.error(string.format("Sequential: unknown option '%s' (expected a list of layers, layers=, name=, " ..
        "trainable=)", tostring(k)))
    end
  end
  for i = 1, #list do self:add(list[i], false) end
  self:_maybe_rebuild()
end

local build

-- The input's batch shape, when known: from an Input, an InputLayer,
-- input_shape= on the first layer, or a first layer that is a model with
-- one known input (a functional model, or a Sequential that knows its own:
-- Keras's _maybe_rebuild reads such a layer's input_shape).
local function known_input_shape(self)
  local s = rawget(self, "_input_batch_shape")
  if s then return s end
  local first = rawget(self, "_layers")[1]
  local arg = first and rawget(first, "_input_shape_arg")
  if arg then
    local dims = { None }
    for i, d in ipairs(arg) do dims[i + 1] = d end
    return dims
  end
  if first and model_mod.is_model(first) then
    local ins = rawget(first, "inputs")
    if ins then return #ins == 1 and ins[1].shape:as_list() or nil end
    if class.is_instance(first, Sequential) then return known_input_shape(first) end
  end
end

-- Build now when the input shape is known (Keras's _maybe_rebuild); a
-- batch size given to the Input (tide.Input{shape=, batch_size=}) is kept,
-- as a stateful RNN needs it.
function Sequential:_maybe_rebuild()
  local shape = known_input_shape(self)
  if shape and #rawget(self, "_layers") > 0 then
    rawset(self, "built", false)
    build(self, shape, true)
  end
end

-- add(layer): append a layer (or set the input with tide.Input{shape=}).
function Sequential:add(layer, rebuild)
  if keras_tensor.is(layer) then
    local node = layer.node
    if not (node and node.inputs == nil) or #rawget(self, "_layers") > 0 then
      binding.error("Sequential: a KerasTensor may only come first, from tide.Input{shape=}; add layers after it")
    end
    rawset(self, "_input_batch_shape", layer.shape:as_list())
    rawset(self, "_input_dtype", layer.dtype)
    rawset(self, "_input_name", node.layer and node.layer.name)
  elseif class.is_instance(layer, core.InputLayer) then
    if #rawget(self, "_layers") > 0 then
      binding.error("Sequential: an InputLayer may only come first")
    end
    rawset(self, "_input_batch_shape", layer.batch_shape)
    rawset(self, "_input_dtype", layer.dtype)
    rawset(self, "_input_name", layer.name)
  elseif layer_mod.is_layer(layer) then
    local list = self._layers
    for _, l in ipairs(list) do
      if l.name == layer.name then
        binding.error(string.format("Sequential: all layers must have unique names; '%s' is already in the model",
          layer.name))
      end
    end
    list[#list + 1] = layer
  else
    binding.error(string.format("Sequential: add expects a layer (e.g. tide.layers.Dense{64}) or tide.Input, " ..
      "got %s", type(layer)))
  end
  if rebuild ~= false then self:_maybe_rebuild() end
end

-- pop(): remove the last layer.
function Sequential:pop()
  local list = self._layers
  if #list == 0 then binding.error("Sequential: pop on a model with no layers") end
  local l = table.remove(list)
  rawget(self, "_output_shapes")[l] = nil
  rawset(self, "built", false)
  self:_maybe_rebuild()
  return l
end

-- Run the layers over a symbolic input of input_shape (batch first), which
-- builds them and records their output shapes; the batch dim is None
-- (any batch size) unless keep_batch.
build = function(self, input_shape, keep_batch)
  if rawget(self, "built") then return end
  if type(input_shape) ~= "table" then
    binding.error("Sequential:build: input_shape must be a list of dims with the batch first, e.g. {tide.None, 784}")
  end
  local dims = {}
  for i, d in ipairs(input_shape) do dims[i] = d end
  if #dims > 0 and input_shape[1] ~= None and not keep_batch then dims[1] = None end -- any batch size
  local list = rawget(self, "_layers")
  if #list == 0 then
    binding.error("Sequential: the model has no layers; add some before building or calling it")
  end
  local x = core.Input { batch_shape = dims }
  local shapes = {}
  for _, l in ipairs(list) do
    x = l(x)
    shapes[l] = x
  end
  rawset(self, "_output_shapes", shapes)
  rawset(self, "_input_batch_shape", rawget(self, "_input_batch_shape") or dims)
  rawset(self, "built", true)
end

-- build(input_shape): build the layers for inputs of that shape (batch
-- first; any batch size).
function Sequential:build(input_shape) return build(self, input_shape, false) end

function Sequential:_maybe_build(inputs)
  if rawget(self, "built") then return end
  local shapes = layer_mod.shapes_of(inputs)
  if type(shapes) ~= "table" or (type(shapes[1]) == "table" and shapes[1] ~= None) then
    binding.error("Sequential: takes one input tensor; use tide.Model{inputs=, outputs=} for several")
  end
  self:build(shapes)
end

function Sequential:call(inputs, opts)
  local x = inputs
  for _, l in ipairs(rawget(self, "_layers")) do x = l(x) end
  return x
end

-- The KerasTensor a layer produced when the model was built (for summary).
function Sequential:_layer_output(l) return rawget(self, "_output_shapes")[l] end

-- Keras's get_config: the input (when known) and every layer's config.
function Sequential:get_config() return config_mod.sequential_config(self) end

-- Sequential:from_config(config, custom_objects): the same layers, fresh weights.
function Sequential.from_config(cls, config, custom_objects)
  return config_mod.sequential_from_config(cls, config, custom_objects)
end

return M
