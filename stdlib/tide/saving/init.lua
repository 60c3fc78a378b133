-- stdlib/tide/saving/init.lua — tide.saving (keras.saving): whole models and
-- weights files chosen by the path's ending, as Keras 3 does, and the hooks
-- that hand model:save, model:save_weights/load_weights and load_model down
-- to the models floor.
--   .keras       Keras 3's zip (config.json, metadata.json, model.weights.h5)
--   .weights.h5  Keras 3's HDF5 weights layout
--   otherwise    tide's own: a SavedModel folder (save) or safetensors (weights)
local binding = require "tide.binding"
local models = require "tide.models"
local model_mod = require "tide.models.model"
local sm_keras = require "tide.saved_model.keras"
local keras_weights = require "tide.saving.keras_weights"

local fmt = string.format
local M = {}

local function ends(path, suffix) return type(path) == "string" and path:sub(-#suffix):lower() == suffix end

-- The weights files Keras names: .weights.h5, a .keras file (whose weights
-- load_weights reads too) and .h5 (TF-Keras's legacy layout: refused by name).
local function claims_weights(path) return ends(path, ".h5") or ends(path, ".keras") end

local function keras_file() return require "tide.saving.keras_file" end

function M.save_weights(model, path)
  if ends(path, ".keras") then
    binding.error(fmt("save_weights: '%s' ends in .keras; save a whole model with model:save, or name the weights " ..
      "file *.weights.h5", path))
  end
  if not ends(path, ".weights.h5") then
    binding.error(fmt("save_weights: '%s': name Keras 3's weights file *.weights.h5 (a plain .h5 is TF-Keras's " ..
      "legacy layout, which tide does not write), or use another name for tide's safetensors file", path))
  end
  return keras_weights.save(model, path)
end

function M.load_weights(model, path)
  if ends(path, ".keras") then return keras_file().load_weights(model, path) end
  return keras_weights.load(model, path)
end

-- save_model(model, path, opts): a .keras file, or tide's SavedModel folder.
function M.save_model(model, path, opts)
  if ends(path, ".keras") then return keras_file().save(model, path, opts) end
  if ends(path, ".h5") then
    binding.error(fmt("save: '%s': the legacy TF-Keras .h5 model format is not written; use a .keras path, or a " ..
      "folder for a SavedModel", path))
  end
  return sm_keras.save(model, path, opts)
end

-- load_model(path, {custom_objects=, compile=true}).
function M.load_model(path, opts)
  if ends(path, ".keras") then return keras_file().load_model(path, opts) end
  if ends(path, ".h5") then
    binding.error(fmt("load_model: '%s': TF-Keras's legacy HDF5 model files are not read; save the model with Keras " ..
      "3 as a .keras file (model.save(\"m.keras\")), or load weights from a Keras 3 .weights.h5", path))
  end
  return sm_keras.load_model(path, opts)
end

-- keras.saving's object registry and (de)serialization (also in tide.utils, as keras.utils has them)
local registration = require "tide.layers.object_registration"
local serialization = require "tide.saving.serialization"
for _, k in ipairs { "CustomObjectScope", "register_keras_serializable", "get_registered_name", "get_registered_object",
  "get_custom_objects" } do M[k] = registration[k] end
M.custom_object_scope = registration.CustomObjectScope
M.serialize_keras_object = serialization.serialize_keras_object
M.deserialize_keras_object = serialization.deserialize_keras_object

model_mod.set_saver(M.save_model)
model_mod.set_weights_io { claims = claims_weights, save = M.save_weights, load = M.load_weights }
models.load_model = M.load_model

return M
