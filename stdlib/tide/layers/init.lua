-- stdlib/tide/layers/init.lua — tide.layers: the Layer base, Input, and the
-- Keras layers, one file per family (the list below).
local layer = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"

local M = {
  Layer = layer.Layer,
  KerasTensor = keras_tensor.KerasTensor,
  is_layer = layer.is_layer,
  is_keras_tensor = keras_tensor.is,
  serialize = layer.serialize,     -- {class_name=, config=}, as Keras's
  deserialize = layer.deserialize, -- (spec, custom_objects): the layer again
  InputSpec = require("tide.layers.input_spec").InputSpec, -- what a layer's input_spec holds
}

-- Forget the automatic names handed out so far (dense, dense_1, ...), as
-- Keras's clear_session does for names.
M.clear_session = layer.reset_names

for _, family in ipairs {
  require "tide.layers.core",           -- Input, Dense, Activation, Identity, Flatten, Reshape, Permute, Lambda,
                                        -- Masking, Embedding
  require "tide.layers.activation",     -- ReLU, LeakyReLU, PReLU, ELU, Softmax
  require "tide.layers.regularization", -- Dropout, SpatialDropout1D/2D/3D, GaussianDropout, GaussianNoise,
                                        -- AlphaDropout, ActivityRegularization
  require "tide.layers.merge",          -- Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot,
                                        -- and the functions add, subtract, ..., concatenate, dot
  require "tide.layers.normalization",  -- BatchNormalization, LayerNormalization, GroupNormalization,
                                        -- UnitNormalization, RMSNormalization, SpectralNormalization
  require "tide.layers.conv",           -- Conv1D, Conv2D, Conv3D
  require "tide.layers.pooling",        -- Max/AveragePooling, AdaptiveAverage/MaxPooling, GlobalAverage/MaxPooling,
                                        -- each 1D/2D/3D
  require "tide.layers.reshaping",      -- ZeroPadding1D/2D/3D, Cropping1D/2D/3D, UpSampling1D/2D/3D, RepeatVector
  require "tide.layers.wrapper",        -- Wrapper, TimeDistributed
  require "tide.layers.conv_more",      -- DepthwiseConv1D/2D, SeparableConv1D/2D
  require "tide.layers.conv_transpose", -- Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
  require "tide.layers.rnn",            -- RNN, SimpleRNN, LSTM, GRU, their cells, Bidirectional
  require "tide.layers.rnn_stacked",    -- StackedRNNCells
  require "tide.layers.reversible_embedding", -- ReversibleEmbedding
  require "tide.layers.conv_lstm",      -- ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
  require "tide.layers.attention",      -- EinsumDense, MultiHeadAttention, GroupQueryAttention, Attention, AdditiveAttention
  require "tide.layers.preprocessing",  -- Rescaling, Resizing, CenterCrop, RandomFlip, RandomRotation, RandomZoom,
                                        -- RandomTranslation, RandomCrop, RandomContrast, RandomBrightness
} do
  for name, value in pairs(family) do M[name] = value end
end

-- Keras 3's TFSMLayer (a TF SavedModel as a layer; its reader is handed down by tide.saved_model.tf_restore)
M.TFSMLayer = require("tide.layers.tfsm").TFSMLayer

-- Keras 3's other names for the convolutions (the same classes: configs name them Conv1D, ...).
for alias, name in pairs { Convolution1D = "Conv1D", Convolution2D = "Conv2D", Convolution3D = "Conv3D",
  Convolution1DTranspose = "Conv1DTranspose", Convolution2DTranspose = "Conv2DTranspose",
  Convolution3DTranspose = "Conv3DTranspose", SeparableConvolution1D = "SeparableConv1D",
  SeparableConvolution2D = "SeparableConv2D" } do
  M[alias] = M[name]
end

return M
