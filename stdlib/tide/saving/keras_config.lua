-- stdlib/tide/saving/keras_config.lua — Keras 3's config.json (of a .keras
-- file) to tide's model configs and back: the module/registered_name keys,
-- DTypePolicy objects, Keras's "__keras_tensor__" references with
-- keras_history, [name, node, index] input and output triples, "Functional"
-- for tide's functional Model, and Keras options tide's layers do not take.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local layer_mod = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"
local registration = require "tide.layers.object_registration"

local fmt = string.format
local None = tensor_shape.None
local M = {}

local REF = "__keras_tensor__"
local MODELS = { Sequential = true, Functional = true, Model = true }

-- Keras options tide's layers do not take, dropped when they hold Keras's
-- default (a null option never reaches here: the JSON reader leaves it
-- out); another value is an error naming it. ANY: dropped whatever it is.
local ANY = {}
local UNTAKEN = {
  InputLayer = { sparse = false, ragged = false, optional = false },
  BatchNormalization = { synchronized = false, renorm = false, renorm_momentum = ANY },
  LayerNormalization = { rms_scaling = false },
}

local function plain_table(x) return type(x) == "table" and getmetatable(x) == nil end

---------------------------------------------------------------------------
-- Keras -> tide
---------------------------------------------------------------------------

-- A nested Keras object in a layer's config ({module=, class_name=,
-- config=, registered_name=}) as tide's {class_name=, config=}; a dtype
-- policy as its name; anything else walked.
local function objects_in(v)
  if not plain_table(v) then return v end
  if type(v.class_name) == "string" and v.config ~= nil and (v.module ~= nil or v.registered_name ~= nil) then
    if v.class_name == "DTypePolicy" or v.class_name == "FloatDTypePolicy" then
      return plain_table(v.config) and v.config.name or v.config
    end
    return { class_name = v.class_name, config = objects_in(v.config) }
  end
  local out = {}
  for k, x in pairs(v) do out[k] = objects_in(x) end
  return out
end

-- Keras's reference {class_name = "__keras_tensor__", config = {keras_history
-- = {name, node, index}}} as tide's {"__keras_tensor__", name, node, index}.
local function refs_in(v)
  if not plain_table(v) then return v end
  if v.class_name == REF and plain_table(v.config) and plain_table(v.config.keras_history) then
    local h = v.config.keras_history
    return { REF, h[1], h[2], h[3] }
  end
  local out = {}
  for k, x in pairs(v) do out[k] = refs_in(x) end
  return out
end

-- input_layers/output_layers: one [name, node, index] triple or a list of them.
local function triples_in(v)
  if plain_table(v) and type(v[1]) == "string" and #v == 3 then return { REF, v[1], v[2], v[3] } end
  if plain_table(v) then
    local out = {}
    for k, x in pairs(v) do out[k] = triples_in(x) end
    if #out == 1 and out[1][1] == REF then return out[1] end -- Keras's one input, as Keras reads it
    return out
  end
  return v
end

-- Every layer class a model config names (in nested models and wrapped
-- layers too) that tide lacks, for the one error naming them all.
local function missing_classes(config, custom_objects)
  local seen, missing = {}, {}
  local function spec_seen(spec)
    if not plain_table(spec) or type(spec.class_name) ~= "string" then return end
    local name = spec.class_name
    if not seen[name] and not MODELS[name] and not layer_mod.registry[name] and
      not registration.lookup(name, spec.registered_name, custom_objects) then
      missing[#missing + 1] = name
    end
    seen[name] = true
    local c = spec.config
    if plain_table(c) then
      if plain_table(c.layers) then for _, l in ipairs(c.layers) do spec_seen(l) end end
      spec_seen(c.layer)
      spec_seen(c.backward_layer)
    end
  end
  for _, l in ipairs(plain_table(config) and plain_table(config.layers) and config.layers or {}) do spec_seen(l) end
  return missing
end

local layer_in

-- One layer's config Keras -> tide (its class name given).
local function layer_config_in(class_name, config, where)
  -- a nested model (a backbone under a new head): its layers keep their names and calls, which objects_in drops
  if MODELS[class_name] then return M.model_config_in(class_name, config, where) end
  local c = objects_in(config)
  local untaken = UNTAKEN[class_name]
  if untaken then
    for k, default in pairs(untaken) do
      if c[k] ~= nil then
        if default ~= ANY and c[k] ~= default then
          binding.error(fmt("%s: %s '%s' has %s = %s, which tide's %s does not support", where, class_name,
            tostring(c.name), k, tostring(c[k]), class_name))
        end
        c[k] = nil
      end
    end
  end
  if plain_table(c.layer) and type(c.layer.class_name) == "string" then c.layer = layer_in(c.layer, where) end
  return c
end

-- A layer spec Keras -> tide: {class_name=, config=} (and a functional
-- entry's name and inbound_nodes).
layer_in = function(spec, where)
  local cls = spec.class_name
  local out = { class_name = cls == "Functional" and "Model" or cls, config = layer_config_in(cls, spec.config, where) }
  if type(spec.registered_name) == "string" then out.registered_name = spec.registered_name end -- "package>Name"
  if spec.name ~= nil then out.name = spec.name end
  if spec.inbound_nodes ~= nil then
    local nodes = {}
    for i, node in ipairs(spec.inbound_nodes) do
      if not plain_table(node) or not plain_table(node.args) then
        binding.error(fmt("%s: layer '%s' has a call (inbound node %d) in a form tide does not read (Keras 3's " ..
          "{args=, kwargs=} only)", where, tostring(spec.name), i - 1))
      end
      -- tide's config keeps a call's tensors as one structure: several
      -- positional tensors (attention's query, value) become a list
      local args = #node.args == 1 and node.args[1] or node.args
      nodes[i] = { args = refs_in(args), kwargs = refs_in(node.kwargs or {}) }
    end
    out.inbound_nodes = nodes
  end
  return out
end

-- A Sequential's or functional model's config Keras -> tide.
function M.model_config_in(class_name, config, where)
  if not plain_table(config) or not plain_table(config.layers) then
    binding.error(fmt("%s: the %s config has no list of layers", where, class_name))
  end
  local out = { name = config.name, trainable = config.trainable, layers = {} }
  for i, spec in ipairs(config.layers) do
    if not plain_table(spec) or type(spec.class_name) ~= "string" then
      binding.error(fmt("%s: layers[%d] of the %s config is not a layer", where, i - 1, class_name))
    end
    out.layers[i] = layer_in(spec, where)
  end
  if class_name ~= "Sequential" then
    out.input_layers = triples_in(config.input_layers)
    out.output_layers = triples_in(config.output_layers)
  end
  return out
end

-- from_keras(spec, where, custom_objects): config.json's top object as
-- tide's {class_name=, config=} for layers.deserialize. Every layer class
-- tide lacks is named in one error.
function M.from_keras(spec, where, custom_objects)
  if not plain_table(spec) or type(spec.class_name) ~= "string" then
    binding.error(fmt("%s: config.json is not a Keras model config (no class_name)", where))
  end
  if not MODELS[spec.class_name] then
    binding.error(fmt("%s: the model is a '%s'; tide loads Keras's Sequential and functional models from .keras " ..
      "files (a subclassed model's code is not in the file: rebuild it in tide and load_weights)", where,
      spec.class_name))
  end
  local missing = missing_classes(spec.config, custom_objects)
  if #missing > 0 then
    binding.error(fmt("%s: the model uses layer classes tide does not have: %s (give your own as custom_objects " ..
      "= {Name = class})", where, table.concat(missing, ", ")))
  end
  local cls = spec.class_name == "Functional" and "Model" or spec.class_name
  return { class_name = cls, config = M.model_config_in(spec.class_name, spec.config, where) }
end

---------------------------------------------------------------------------
-- tide -> Keras
---------------------------------------------------------------------------

local OBJECT_MODULES = {
  initializer = "keras.initializers", regularizer = "keras.regularizers", constraint = "keras.constraints",
}

-- tide's nested {class_name=, config=} objects in a layer config as Keras
-- objects, their module taken from the option's name (kernel_initializer ->
-- keras.initializers).
local function objects_out(v, key)
  if not plain_table(v) then return v end
  if type(v.class_name) == "string" and plain_table(v.config) and v[1] == nil then
    local kind = type(key) == "string" and (key:match("_(initializer)$") or key:match("_(regularizer)$") or
      key:match("_(constraint)$") or key:match("^(initializer)$") or key:match("^(regularizer)$"))
    local out = { class_name = v.class_name, config = objects_out(v.config), registered_name = None }
    out.module = kind and OBJECT_MODULES[kind] or "keras.layers"
    if kind == nil and MODELS[v.class_name] then out.module = "keras" end
    return out
  end
  local out = {}
  for k, x in pairs(v) do out[k] = objects_out(x, k) end
  return out
end

-- The shapes and dtypes of the tensors references name ("layer:node:index"
-- -> {shape, dtype}): Keras's references carry them. Filled by to_keras from
-- the functional graphs of the model being saved.
local tensor_info = {}

local function ref_out(r)
  local info = tensor_info[fmt("%s:%d:%d", tostring(r[2]), r[3], r[4])]
  if info == nil then
    binding.error(fmt("save: the functional config names tensor %s:%d:%d, which no layer of the model makes",
      tostring(r[2]), r[3], r[4]))
  end
  return { class_name = REF, config = { shape = info[1], dtype = info[2], keras_history = { r[2], r[3], r[4] } } }
end

-- Note the tensors of model's functional graph, and of its nested models'.
local function note_tensors(model, seen)
  seen = seen or {}
  if seen[model] then return end
  seen[model] = true
  local g = rawget(model, "_graph")
  if g then
    for _, node in ipairs(g.nodes) do
      local outs = node.outputs and keras_tensor.leaves(node.outputs) or { node.layer.output }
      for i, kt in ipairs(outs) do
        local key = fmt("%s:%d:%d", node.layer.name, node.inputs == nil and 0 or (g.node_index[node] or 0), i - 1)
        tensor_info[key] = { kt.shape:as_list(), kt.dtype } -- unknown dims are tide.None: JSON null
      end
    end
  end
  for _, l in ipairs(rawget(model, "_graph") and model.layers or {}) do
    if rawget(l, "_graph") or rawget(l, "_layers") then note_tensors(l, seen) end
  end
end

local function is_ref(x) return plain_table(x) and x[1] == REF and #x == 4 end

local function refs_out(v)
  if is_ref(v) then return ref_out(v) end
  if not plain_table(v) then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = refs_out(x) end
  return out
end

local function triples_out(v)
  if is_ref(v) then return { v[2], v[3], v[4] } end
  local out = {}
  for k, x in pairs(v) do out[k] = triples_out(x) end
  return out
end

-- Layers Keras calls with their tensors as separate positional arguments
-- (tide's config lists them as one structure).
local POSITIONAL = { MultiHeadAttention = true, GroupedQueryAttention = true }

local layer_out

local function model_config_out(class_name, c)
  local out = { name = c.name, trainable = c.trainable, layers = {} }
  for i, spec in ipairs(c.layers) do out.layers[i] = layer_out(spec) end
  if class_name ~= "Sequential" then
    out.input_layers = triples_out(c.input_layers)
    out.output_layers = triples_out(c.output_layers)
  end
  return out
end

layer_out = function(spec)
  local cls = spec.class_name
  local out = { class_name = cls, registered_name = None }
  if cls == "Model" then
    out.class_name, out.module = "Functional", "keras.src.models.functional"
    out.config = model_config_out(cls, spec.config)
  elseif cls == "Sequential" then
    out.module = "keras"
    out.config = model_config_out(cls, spec.config)
  else
    out.module = "keras.layers"
    -- a class registered with register_keras_serializable: Keras's form for a custom class (no Python module)
    local cls_obj = layer_mod.registry[cls]
    if cls_obj and registration.is_registered(cls_obj) then
      out.module, out.registered_name = None, registration.get_registered_name(cls_obj)
    end
    out.config = objects_out(spec.config)
    if plain_table(spec.config.layer) and type(spec.config.layer.class_name) == "string" then
      out.config.layer = layer_out(spec.config.layer)
    end
  end
  if spec.name ~= nil then out.name = spec.name end
  if spec.inbound_nodes ~= nil then
    out.inbound_nodes = {}
    for i, node in ipairs(spec.inbound_nodes) do
      local args = refs_out(node.args)
      -- layers Keras calls with several positional tensors (query, value, key)
      if not (POSITIONAL[cls] and plain_table(node.args) and not is_ref(node.args)) then args = { args } end
      out.inbound_nodes[i] = { args = args, kwargs = refs_out(node.kwargs or {}) }
    end
  end
  return out
end

-- layer_to_keras(spec) / layer_from_keras(spec, where): one layer's {class_name=, config=} as Keras's
-- {module=, class_name=, config=, registered_name=} and back (serialize_keras_object's form).
function M.layer_to_keras(spec) return layer_out(spec) end
function M.layer_from_keras(spec, where) return layer_in(spec, where) end

-- to_keras(model): the model's config as Keras 3's config.json top object
-- (without compile_config), for a Sequential or functional model.
function M.to_keras(model, where)
  local spec = layer_mod.serialize(model)
  tensor_info = {}
  note_tensors(model)
  if spec.class_name ~= "Sequential" and not (spec.class_name == "Model" and plain_table(spec.config) and
    spec.config.input_layers ~= nil) then
    binding.error(fmt("%s: a .keras file holds a Sequential or functional model; %s is a subclassed model (save " ..
      "its weights with save_weights(\"*.weights.h5\") instead)", where, layer_mod.who(model)))
  end
  local out = layer_out(spec)
  tensor_info = {}
  return out
end

return M
