-- stdlib/tide/layers/conv_base.lua — what the convolution layers beyond Conv1D/2D/3D
-- share (not a family: layers/init.lua lists none of it): their common options
-- (kernel_size, strides, padding, dilation_rate, data_format, activation, bias), config, channels, bias and activation.
local binding = require "tide.binding"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"
local conv = require "tide.layers.conv"

local who = layer.who
local tuple = conv.tuple

local M = {}

local function bool_opt(cls, what, v)
  if v ~= nil and type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", cls, what, tostring(v)))
  end
  return v ~= false
end

-- The options every layer here shares: kernel_size, strides, padding,
-- dilation_rate, data_format, activation, use_bias, bias init/regularizer.
-- `rank` spatial dims.
local function common(self, cls, o, rank)
  if o.kernel_size == nil then binding.error(cls .. ": kernel_size is required") end
  self.kernel_size = tuple(cls, "kernel_size", o.kernel_size, rank)
  self.strides = tuple(cls, "strides", o.strides or 1, rank)
  self.dilation_rate = tuple(cls, "dilation_rate", o.dilation_rate or 1, rank)
  local padding = type(o.padding) == "string" and o.padding:lower() or o.padding or "valid"
  if padding ~= "valid" and padding ~= "same" then
    binding.error(string.format("%s: padding must be \"valid\" or \"same\", got %s", cls, tostring(o.padding)))
  end
  self.padding = padding
  local df = o.data_format or "channels_last"
  if df ~= "channels_last" then
    binding.error(string.format("%s: only data_format=\"channels_last\" is supported (tide is NHWC), got %s", cls,
      tostring(df)))
  end
  self.data_format = df
  self.activation = activations.get(o.activation, cls .. ": activation")
  self.use_bias = bool_opt(cls, "use_bias", o.use_bias)
  self.bias_initializer = initializers.get(o.bias_initializer or "zeros", cls .. ": bias_initializer")
  self.bias_regularizer = regularizers.get(o.bias_regularizer, cls .. ": bias_regularizer")
  self.bias_constraint = constraints.get(o.bias_constraint, cls .. ": bias_constraint")
  self.input_spec = { ndim = rank + 2 }
end

local function common_config(self, c)
  c.kernel_size, c.strides, c.padding, c.data_format = self.kernel_size, self.strides, self.padding, self.data_format
  c.dilation_rate, c.use_bias = self.dilation_rate, self.use_bias
  c.activation = activations.serialize(self.activation)
  c.bias_initializer = initializers.serialize(self.bias_initializer)
  c.bias_regularizer = regularizers.serialize(self.bias_regularizer)
  c.bias_constraint = constraints.serialize(self.bias_constraint)
  return c
end

local function channels(self, input_shape)
  local c = input_shape and input_shape[#input_shape]
  if type(c) ~= "number" then
    binding.error(string.format("%s: the channel dim (last) of the input must be known, got shape %s", who(self),
      input_shape and layer.shape_text(input_shape) or "of unknown rank"))
  end
  return c
end

local function finish(self, y)
  if self.bias then y = y + self.bias end
  return self.activation(y)
end

M.common, M.common_config, M.channels, M.finish = common, common_config, channels, finish

return M
