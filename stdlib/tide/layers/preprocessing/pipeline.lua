-- stdlib/tide/layers/preprocessing/pipeline.lua — Keras 3's Pipeline: layers applied in turn, each given the
-- previous one's mask, with training on unless told (augmentations apply; it is meant for tide.data maps).
local binding = require "tide.binding"
local layer = require "tide.layers.layer"
local keras_mask = require "tide.keras_mask"

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

local Pipeline = Layer:extend("Pipeline")
M.Pipeline = Pipeline

-- Pipeline{{layer, layer, ...}, name=} or Pipeline({layer, ...}).
function Pipeline:init(opts)
  local list = opts
  if type(opts) == "table" and not layer.is_layer(opts[1]) and type(opts[1]) == "table" then list = opts[1] end
  if type(list) ~= "table" or #list == 0 then
    binding.error(fmt("%s: expects a non-empty list of layers, e.g. Pipeline{{layer_a, layer_b}}", who(self)))
  end
  local layers = {}
  for i, l in ipairs(list) do
    if not layer.is_layer(l) then
      binding.error(fmt("%s: entry %d of the list is not a layer (got %s)", who(self), i, type(l)))
    end
    layers[i] = l
  end
  for k in pairs(opts) do
    if k ~= 1 and not (list == opts and type(k) == "number") then
      binding.error(fmt("%s: unknown option '%s' (Pipeline takes the list of layers and name)", who(self),
        tostring(k)))
    end
  end
  self.layers = layers
end

-- Each layer in turn; training is true unless given (Keras's default for Pipeline).
function Pipeline:call(x, opts)
  opts = opts or {}
  local training = opts.training
  if training == nil then training = true end
  local mask = opts.mask
  for _, l in ipairs(self.layers) do
    x = l(x, { training = training, mask = mask })
    mask = keras_mask.get(x)
  end
  return x
end

function Pipeline:get_config()
  local c = Layer.get_config(self)
  local specs = {}
  for i, l in ipairs(self.layers) do specs[i] = layer.serialize(l) end
  c.layers = specs
  return c
end

function Pipeline.from_config(cls, config, custom_objects)
  if type(config) ~= "table" or type(config.layers) ~= "table" then
    binding.error("Pipeline.from_config: the config must hold layers, a list of serialized layers")
  end
  local layers = {}
  for i, spec in ipairs(config.layers) do layers[i] = layer.deserialize(spec, custom_objects) end
  return cls { layers, name = config.name }
end

return M
