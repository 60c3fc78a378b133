-- stdlib/tide/layers/keras_tensor.lua — KerasTensor: a symbolic value of a
-- model being defined (shape with None, dtype, and the call that made it).
--
-- tide.layers.Input{shape = {28, 28}} gives one (its shape (None, 28, 28)).
-- Calling a layer on KerasTensors builds the layer for their shapes,
-- computes its output shapes and dtypes by tracing its call once over
-- TensorSpecs (nothing runs), and returns KerasTensors whose `node` names
-- the layer, its inputs and call options: the graph a functional model walks.
--   kt.shape   a tide.Shape (tide.None where unknown, the batch dim first)
--   kt.dtype   the dtype name
--   kt.name    a name (Input's, or the layer's)
--   kt.node    { layer = the layer called, inputs = the KerasTensor structure
--               it was given (nil for Input), opts = its call options,
--               outputs = what the call returned }
--   kt.index   the position of kt in node.outputs when the call returned a
--              list (nil for a single output)
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"
local tensor_shape = require "tide.tensor_shape"
local tracing = require "tide.tracing.function"
local spec = require "tide.tracing.spec"
local retracing = require "tide.tracing.retracing"
local nest = require "tide.nest"

local None = tensor_shape.None

local M = {}

local KerasTensor = class("KerasTensor")
M.KerasTensor = KerasTensor

-- KerasTensor(shape, dtype, name, node, index): shape a list of dims with tide.None.
function KerasTensor:__init(shape, dt, name, node, index)
  local dims = {}
  for i = 1, #shape do dims[i] = shape[i] end
  self.shape = setmetatable(dims, tensor_shape.Shape)
  self.dtype = dtype.names[dtype.code(dt or "float32", "KerasTensor")]
  self.ndim = #dims
  self.name = name
  self.node = node
  self.index = index
end

KerasTensor.__tostring = function(kt)
  return string.format("<KerasTensor shape=%s, dtype=%s, name=%s>", tostring(kt.shape), kt.dtype, tostring(kt.name))
end

local function is(x) return class.is_instance(x, KerasTensor) end
M.is = is

-- True when the structure x holds a KerasTensor.
function M.any(x)
  if is(x) then return true end
  if type(x) ~= "table" or getmetatable(x) ~= nil then return false end
  for _, v in pairs(x) do
    if M.any(v) then return true end
  end
  return false
end

-- The leaves (KerasTensors) of a structure, in tide.nest's order (other
-- leaves are skipped): the order of a model's inputs and outputs, and of
-- the tensor_index of a node's outputs in a model's config.
local function leaves(x)
  local out = {}
  for _, v in ipairs(nest.flatten(x)) do
    if is(v) then out[#out + 1] = v end
  end
  return out
end
M.leaves = leaves

-- keras.utils.get_source_inputs(t): the Input KerasTensors t is computed from, each once, in the order the calls
-- reach them (Keras's walk over each node's tensors, call options included); t itself for an Input; a value that
-- is not a KerasTensor is returned as it is, as Keras does.
function M.get_source_inputs(t)
  if not is(t) then return t end
  local node = t.node
  if node == nil or node.inputs == nil then return { t } end
  local out, seen = {}, {}
  for _, x in ipairs(leaves { node.inputs, node.opts }) do
    for _, s in ipairs(M.get_source_inputs(x)) do
      if not seen[s] then seen[s] = true; out[#out + 1] = s end
    end
  end
  return out
end

-- The structure x with its KerasTensors replaced, in leaves' order, by values[1...].
local function replace(x, values)
  local i = 0
  return nest.map_structure(function(v)
    if not is(v) then return v end
    i = i + 1
    return values[i]
  end, x)
end

-- layer(inputs) where inputs holds KerasTensors: build the layer for their
-- shapes, trace its call over specs of them (training as opts says, else
-- nil) and return KerasTensors of the results' shapes and dtypes.
function M.symbolic_call(layer, inputs, opts)
  layer:_maybe_build(inputs)
  local ins = leaves(inputs)
  local sig = {}
  for i, kt in ipairs(ins) do sig[i] = spec.TensorSpec(kt.shape:as_list(), kt.dtype) end
  local call_opts = {}
  for k, v in pairs(opts) do call_opts[k] = v end
  local fn = function(...)
    local structure = layer:_convert_input(replace(inputs, { ... })) -- cast as a real call would
    return layer:_scoped_call(structure, call_opts)
  end
  -- one trace per layer call while a model is defined: not a retracing problem
  local cfg = retracing.settings
  local was = cfg.enabled
  cfg.enabled = false
  local ok, cf = pcall(function()
    return tracing.trace(fn, { input_signature = sig, name = layer.name }):get_concrete_function()
  end)
  cfg.enabled = was
  layer:_clear_losses() -- losses added while tracing belong to no run
  if not ok then error(cf, 0) end
  local result = cf.structured_outputs[1]
  local node = { layer = layer, inputs = inputs, opts = opts }
  local function to_keras(t, index)
    if binding.istensor(t) then
      local s = t.shape
      local dims = s.rank and s:as_list() or nil
      if dims == nil then
        binding.error(string.format("%s: its output has an unknown rank; a model needs known ranks", layer.name))
      end
      return KerasTensor(dims, t.dtype, layer.name, node, index)
    elseif type(t) == "table" then
      local out = {}
      for k, v in pairs(t) do out[k] = to_keras(v, k) end
      return out
    end
    return t
  end
  local outputs = to_keras(result, nil)
  node.outputs = outputs
  return outputs
end

M.None = None
return M
