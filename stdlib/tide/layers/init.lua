-- stdlib/tide/layers/init.lua — tide.layers: the Layer base, Input, and the
-- Keras layers, one file per family (core, merge, normalization, conv, pooling).
local layer = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"

local M = {
  Layer = layer.Layer,
  KerasTensor = keras_tensor.KerasTensor,
  is_layer = layer.is_layer,
  is_keras_tensor = keras_tensor.is,
  serialize = layer.serialize,     -- {class_name=, config=}, as Keras's
  deserialize = layer.deserialize, -- (spec, custom_objects): the layer again
}

-- Forget the automatic names handed out so far (dense, dense_1, ...), as
-- Keras's clear_session does for names.
M.clear_session = layer.reset_names

for _, family in ipairs {
  require "tide.layers.core",           -- Input, Dense, Activation, Dropout, Flatten, Reshape, Permute, Lambda, Masking,
                                        -- Embedding
  require "tide.layers.merge",          -- Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate
  require "tide.layers.normalization",  -- BatchNormalization, LayerNormalization
  require "tide.layers.conv",           -- Conv1D, Conv2D
  require "tide.layers.pooling",        -- Max/AveragePooling2D, Global*Pooling2D, ZeroPadding2D, UpSampling2D
  require "tide.layers.conv_more",      -- Conv2DTranspose, DepthwiseConv2D, SeparableConv2D
  require "tide.layers.rnn",            -- RNN, SimpleRNN, LSTM, GRU, their cells, Bidirectional
  require "tide.layers.attention",      -- EinsumDense, MultiHeadAttention, GroupQueryAttention, Attention, AdditiveAttention
} do
  for name, value in pairs(family) do M[name] = value end
end

return M
