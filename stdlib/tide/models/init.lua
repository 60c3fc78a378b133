-- stdlib/tide/models/init.lua — tide.models (Keras's keras.models): Model
-- (functional and subclassed), Sequential, and their training.
local model = require "tide.models.model"
local sequential = require "tide.models.sequential"

return {
  Model = model.Model,
  Sequential = sequential.Sequential,
  is_model = model.is_model,
}
