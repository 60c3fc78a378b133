-- stdlib/tide/models/config.lua — models as configs (Keras 3's get_config /
-- from_config, model_from_config, clone_model): plain data (strings,
-- numbers, booleans, tide.None and tables of them) that rebuild the same
-- architecture, with fresh weights, in a process that never saw the code
-- that made it (as long as its layer classes are defined there).
--
-- A functional model's config, as Keras's functional_config:
--   { name =, trainable =, layers = { { class_name =, name =, config =,
--       inbound_nodes = { { args = <inputs, each {"__keras_tensor__", layer
--       name, node index, tensor index}>, kwargs = <call options> }, ... } },
--       ... },
--     input_layers = <the inputs structure of such references>,
--     output_layers = <the outputs structure> }
-- A Sequential's: { name =, trainable =, layers = { <InputLayer when the
-- input is known>, <each layer serialized> } }.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local layer_mod = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"
local core = require "tide.layers.core"
local graph = require "tide.models.graph"

local is_kt = keras_tensor.is
local None = tensor_shape.None
local M = {}

local REF = "__keras_tensor__"

-- True when x is a reference to a KerasTensor in a config.
local function is_ref(x) return type(x) == "table" and x[1] == REF and #x == 4 end

-- Map the KerasTensor leaves of a structure (a KerasTensor, or tables of
-- them) with f; other values are kept.
local map_kts = graph.map_structure

-- Map the references of a config structure with f.
local function map_refs(x, f)
  if is_ref(x) then return f(x) end
  if type(x) == "table" and getmetatable(x) == nil then
    local out = {}
    for k, v in pairs(x) do out[k] = map_refs(v, f) end
    return out
  end
  return x
end

-- Where a KerasTensor comes from: its node's layer, the node's index among
-- that layer's nodes in this graph, and its place among the node's outputs.
local function reference(g, kt)
  local node = kt.node
  local index = 0
  for i, o in ipairs(keras_tensor.leaves(node.outputs or kt)) do
    if o == kt then index = i - 1 end
  end
  if node.inputs == nil then index = 0 end -- an Input's output
  return { REF, node.layer.name, g.node_index[node] or 0, index }
end

-- True when v is plain config data (what a SavedModel's JSON can hold).
local function plain(v, seen)
  local t = type(v)
  if t == "string" or t == "number" or t == "boolean" or v == nil or v == None then return true end
  if t ~= "table" or getmetatable(v) ~= nil then return false end
  seen = seen or {}
  if seen[v] then return false end
  seen[v] = true
  for k, x in pairs(v) do
    if (type(k) ~= "string" and type(k) ~= "number") or not plain(x, seen) then return false end
  end
  seen[v] = nil
  return true
end
M.is_plain = plain

-- The path to the first value of a config that is not plain data, or nil.
local function first_unplain(v, path)
  if plain(v) then return nil end
  if type(v) ~= "table" or getmetatable(v) ~= nil then return path end
  for k, x in pairs(v) do
    local p = first_unplain(x, path .. "." .. tostring(k))
    if p then return p end
  end
  return path
end

-- A layer's serialized form, checked to be plain data.
local function serialize_layer(l, where)
  local s = layer_mod.serialize(l)
  local bad = first_unplain(s.config, "config")
  if bad then
    binding.error(string.format("%s: the config of %s holds a value a config cannot carry (a function or an " ..
      "object) at %s; give the layer a get_config that returns plain data", where, layer_mod.who(l), bad))
  end
  return s
end

local function class_is_input(l) return getmetatable(l) == core.InputLayer end

---------------------------------------------------------------------------
-- Functional models
---------------------------------------------------------------------------

function M.functional_config(model)
  local g = rawget(model, "_graph")
  local layers, by_layer = {}, {}
  for _, l in ipairs(g.operations) do
    local s = serialize_layer(l, "Model:get_config")
    local entry = { class_name = s.class_name, name = l.name, config = s.config, inbound_nodes = {} }
    layers[#layers + 1] = entry
    by_layer[l] = entry
  end
  for _, node in ipairs(g.nodes) do
    if node.inputs ~= nil then
      local entry = by_layer[node.layer]
      local kwargs = {}
      for k, v in pairs(node.opts or {}) do kwargs[k] = v end
      local args = map_kts(node.inputs, function(kt) return reference(g, kt) end)
      local bad = first_unplain(kwargs, "kwargs")
      if bad then
        binding.error(string.format("Model:get_config: layer '%s' was called with an option that a config " ..
          "cannot carry (at %s)", node.layer.name, bad))
      end
      entry.inbound_nodes[#entry.inbound_nodes + 1] = { args = args, kwargs = kwargs }
    end
  end
  return {
    name = rawget(model, "name"),
    trainable = rawget(model, "_trainable"),
    layers = layers,
    input_layers = map_kts(rawget(model, "_inputs_struct"), function(kt) return reference(g, kt) end),
    output_layers = map_kts(rawget(model, "_outputs_struct"), function(kt) return reference(g, kt) end),
  }
end

-- Rebuild a functional model: every layer from its config, then its calls
-- replayed in an order where each call's inputs exist.
function M.functional_from_config(Model, config, custom_objects)
  if type(config) ~= "table" or type(config.layers) ~= "table" then
    binding.error("Model.from_config: expects a functional model's config (with layers=), got " .. type(config))
  end
  local created, produced, pending = {}, {}, {}
  for i, entry in ipairs(config.layers) do
    if type(entry) ~= "table" or type(entry.name) ~= "string" then
      binding.error(string.format("Model.from_config: layers[%d] has no name", i))
    end
    local l = layer_mod.deserialize({ class_name = entry.class_name, config = entry.config }, custom_objects)
    created[entry.name] = l
    produced[entry.name] = {}
    if class_is_input(l) then
      produced[entry.name][0] = l.output
    else
      for j, call in ipairs(entry.inbound_nodes or {}) do pending[#pending + 1] = { entry.name, j - 1, call } end
    end
  end
  local function lookup(ref)
    local outs = produced[ref[2]] and produced[ref[2]][ref[3]]
    if outs == nil then return nil end
    if is_kt(outs) then return outs end
    return keras_tensor.leaves(outs)[ref[4] + 1]
  end
  local function ready(call)
    local ok = true
    map_refs(call.args, function(ref) if lookup(ref) == nil then ok = false end end)
    return ok
  end
  while #pending > 0 do
    local progress, rest = false, {}
    for _, p in ipairs(pending) do
      local name, index, call = p[1], p[2], p[3]
      -- a layer's calls in their order: node k only after node k - 1
      if ready(call) and (index == 0 or produced[name][index - 1] ~= nil) then
        local args = map_refs(call.args, lookup)
        local kwargs = call.kwargs and next(call.kwargs) ~= nil and call.kwargs or nil
        produced[name][index] = created[name](args, kwargs)
        progress = true
      else
        rest[#rest + 1] = p
      end
    end
    if not progress then
      binding.error(string.format("Model.from_config: the calls of layer '%s' need tensors no layer makes (a " ..
        "broken config)", rest[1][1]))
    end
    pending = rest
  end
  local function resolve(ref)
    local kt = lookup(ref)
    if kt == nil then
      binding.error(string.format("Model.from_config: no tensor %s:%d:%d", tostring(ref[2]), ref[3], ref[4]))
    end
    return kt
  end
  return Model {
    inputs = map_refs(config.input_layers, resolve),
    outputs = map_refs(config.output_layers, resolve),
    name = config.name,
    trainable = config.trainable,
  }
end

---------------------------------------------------------------------------
-- Sequential
---------------------------------------------------------------------------

function M.sequential_config(model)
  local layers = {}
  local shape = rawget(model, "_input_batch_shape")
  if shape then
    layers[1] = { class_name = "InputLayer", config = { batch_shape = shape,
      dtype = rawget(model, "_input_dtype") or "float32", name = rawget(model, "_input_name") } }
  end
  for _, l in ipairs(rawget(model, "_layers")) do layers[#layers + 1] = serialize_layer(l, "Sequential:get_config") end
  return { name = rawget(model, "name"), trainable = rawget(model, "_trainable"), layers = layers }
end

function M.sequential_from_config(Sequential, config, custom_objects)
  if type(config) ~= "table" or type(config.layers) ~= "table" then
    binding.error("Sequential.from_config: expects a Sequential's config (with layers=), got " .. type(config))
  end
  local model = Sequential { name = config.name, trainable = config.trainable }
  for _, spec in ipairs(config.layers) do
    local l = layer_mod.deserialize(spec, custom_objects)
    if class_is_input(l) then model:add(l.output) else model:add(l) end
  end
  return model
end

return M
