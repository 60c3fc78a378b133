-- stdlib/tide/models/init.lua — tide.models (Keras's keras.models): Model
-- (functional and subclassed), Sequential, their training, and models
-- rebuilt from configs.
local binding = require "tide.binding"
local layer = require "tide.layers.layer"
local model = require "tide.models.model"
local sequential = require "tide.models.sequential"

local M = {
  Model = model.Model,
  Sequential = sequential.Sequential,
  is_model = model.is_model,
}

-- Keras's model_from_config({class_name=, config=}, {custom_objects=}): a
-- model (or layer) with the architecture the config describes, fresh weights.
function M.model_from_config(spec, opts)
  if type(spec) ~= "table" or type(spec.class_name) ~= "string" then
    binding.error("models.model_from_config: expects {class_name = ..., config = {...}} (tide.layers.serialize " ..
      "of a model), got " .. (type(spec) == "table" and "a table without class_name" or type(spec)))
  end
  return layer.deserialize(spec, opts and opts.custom_objects)
end

-- Keras's clone_model(model): the same architecture, new weights (a
-- functional or Sequential model; a subclass needs its own get_config).
function M.clone_model(m, opts)
  if not model.is_model(m) then
    binding.error("models.clone_model: expects a model, got " .. type(m))
  end
  return layer.deserialize(layer.serialize(m), opts and opts.custom_objects)
end

return M
