-- stdlib/tide/layers/conv_more.lua — Keras's Conv2DTranspose, DepthwiseConv2D
-- and SeparableConv2D (channels_last). Kernels as Keras: Conv2DTranspose
-- [kh, kw, filters, in]; DepthwiseConv2D [kh, kw, in, depth_multiplier];
-- SeparableConv2D depthwise [kh, kw, in, dm] then pointwise [1, 1, in*dm, filters].
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local nn_conv = require "tide.ops.nn_conv"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"
local conv = require "tide.layers.conv"

local Layer, who = layer.Layer, layer.who
local tuple = conv.tuple
local None = tensor_shape.None

local M = {}

local function bool_opt(cls, what, v)
  if v ~= nil and type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", cls, what, tostring(v)))
  end
  return v ~= false
end

-- The options every layer here shares: kernel_size, strides, padding,
-- dilation_rate, data_format, activation, use_bias, bias init/regularizer.
local function common(self, cls, o)
  if o.kernel_size == nil then binding.error(cls .. ": kernel_size is required") end
  self.kernel_size = tuple(cls, "kernel_size", o.kernel_size, 2)
  self.strides = tuple(cls, "strides", o.strides or 1, 2)
  self.dilation_rate = tuple(cls, "dilation_rate", o.dilation_rate or 1, 2)
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
  self.input_spec = { ndim = 4 }
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

---------------------------------------------------------------------------
-- Conv2DTranspose
---------------------------------------------------------------------------

local Conv2DTranspose = Layer:extend("Conv2DTranspose")
M.Conv2DTranspose = Conv2DTranspose

-- Conv2DTranspose{filters, kernel_size, strides=1, padding="valid",
-- output_padding=nil, dilation_rate=1, activation=nil, use_bias=true,
-- kernel_initializer="glorot_uniform", bias_initializer="zeros", *_regularizer}
function Conv2DTranspose:init(...)
  local cls = "Conv2DTranspose"
  local o = self:_kwargs({ "filters", "kernel_size", "strides", "padding", "output_padding", "data_format",
    "dilation_rate", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
    "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint" }, ...)
  if type(o.filters) ~= "number" or o.filters <= 0 or o.filters ~= math.floor(o.filters) then
    binding.error(string.format("%s: filters must be a positive integer, got %s", cls, tostring(o.filters)))
  end
  self.filters = o.filters
  common(self, cls, o)
  if o.output_padding ~= nil then
    local op = o.output_padding
    if type(op) == "number" then op = { op, op } end
    if type(op) ~= "table" or #op ~= 2 then
      binding.error(cls .. ": output_padding must be an integer or a list of 2 integers, got " .. tostring(o.output_padding))
    end
    for i = 1, 2 do
      if type(op[i]) ~= "number" or op[i] < 0 or op[i] ~= math.floor(op[i]) then
        binding.error(cls .. ": output_padding must hold non-negative integers, got " .. tostring(op[i]))
      end
      if op[i] >= self.strides[i] then
        binding.error(string.format("%s: output_padding must be strictly less than strides; at index %d "..
          "output_padding is %d but strides is %d", cls, i - 1, op[i], self.strides[i]))
      end
    end
    self.output_padding = { op[1], op[2] }
  end
  self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", cls .. ": kernel_initializer")
  self.kernel_regularizer = regularizers.get(o.kernel_regularizer, cls .. ": kernel_regularizer")
  self.kernel_constraint = constraints.get(o.kernel_constraint, cls .. ": kernel_constraint")
end

function Conv2DTranspose:build(input_shape)
  local c = channels(self, input_shape)
  local k = self.kernel_size
  self.kernel = self:add_weight { name = "kernel", shape = { k[1], k[2], self.filters, c },
    initializer = self.kernel_initializer, regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
  if self.use_bias then
    self.bias = self:add_weight { name = "bias", shape = { self.filters }, initializer = self.bias_initializer,
      regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
  self.input_spec = { ndim = 4, axes = { [-1] = c } }
end

-- Keras's output size of a transposed convolution along one dim.
local function deconv_length(n, k, s, d, padding, op)
  local ke = (k - 1) * d + 1
  if padding == "valid" then
    return (n - 1) * s + ke + (op or (math.max(ke, s) - ke))
  end
  if op == nil then return n * s end
  return (n - 1) * s + ke % 2 + op
end

function Conv2DTranspose:call(x)
  local shape = x.shape:as_list()
  local op = self.output_padding or {}
  local sizes = {}
  for i = 1, 2 do
    local n = shape[i + 1]
    if n == None then
      binding.error(string.format("%s: the height and width of the input must be known, got shape %s", who(self),
        tostring(x.shape)))
    end
    sizes[i] = deconv_length(n, self.kernel_size[i], self.strides[i], self.dilation_rate[i], self.padding, op[i])
  end
  local kernel = self.kernel:read_value()
  -- a batch known only when a traced function runs is read from x then
  local batch = shape[1] == None and dynamic_shape.shape(x)[0] or shape[1]
  local y = nn_conv.conv2d_transpose(x, kernel, { batch, sizes[1], sizes[2], self.filters },
    { strides = self.strides, padding = self.padding:upper(), dilations = self.dilation_rate })
  return finish(self, y)
end

function Conv2DTranspose:get_config()
  local c = common_config(self, Layer.get_config(self))
  c.filters, c.output_padding = self.filters, self.output_padding
  c.kernel_initializer = initializers.serialize(self.kernel_initializer)
  c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
  c.kernel_constraint = constraints.serialize(self.kernel_constraint)
  return c
end

---------------------------------------------------------------------------
-- DepthwiseConv2D and SeparableConv2D
---------------------------------------------------------------------------

local function depth_multiplier(cls, v)
  v = v or 1
  if type(v) ~= "number" or v <= 0 or v ~= math.floor(v) then
    binding.error(string.format("%s: depth_multiplier must be a positive integer, got %s", cls, tostring(v)))
  end
  return v
end

local function depthwise(self, x, kernel)
  return nn_conv.depthwise_conv2d(x, kernel, { strides = self.strides,
    padding = self.padding:upper(), dilations = self.dilation_rate })
end

local DepthwiseConv2D = Layer:extend("DepthwiseConv2D")
M.DepthwiseConv2D = DepthwiseConv2D

-- DepthwiseConv2D{kernel_size, strides=1, padding="valid", depth_multiplier=1,
-- dilation_rate=1, activation=nil, use_bias=true, depthwise_initializer=
-- "glorot_uniform", bias_initializer="zeros", depthwise_regularizer, bias_regularizer}:
-- output channel c*dm + m is channel c convolved with kernel[:, :, c, m].
function DepthwiseConv2D:init(...)
  local cls = "DepthwiseConv2D"
  local o = self:_kwargs({ "kernel_size", "strides", "padding", "depth_multiplier", "data_format", "dilation_rate",
    "activation", "use_bias", "depthwise_initializer", "bias_initializer", "depthwise_regularizer",
    "bias_regularizer", "activity_regularizer", "depthwise_constraint", "bias_constraint" }, ...)
  common(self, cls, o)
  self.depth_multiplier = depth_multiplier(cls, o.depth_multiplier)
  self.depthwise_initializer = initializers.get(o.depthwise_initializer or "glorot_uniform",
    cls .. ": depthwise_initializer")
  self.depthwise_regularizer = regularizers.get(o.depthwise_regularizer, cls .. ": depthwise_regularizer")
  self.depthwise_constraint = constraints.get(o.depthwise_constraint, cls .. ": depthwise_constraint")
end

function DepthwiseConv2D:build(input_shape)
  local c = channels(self, input_shape)
  local k = self.kernel_size
  self.kernel = self:add_weight { name = "kernel", shape = { k[1], k[2], c, self.depth_multiplier },
    initializer = self.depthwise_initializer, regularizer = self.depthwise_regularizer,
    constraint = self.depthwise_constraint }
  if self.use_bias then
    self.bias = self:add_weight { name = "bias", shape = { c * self.depth_multiplier },
      initializer = self.bias_initializer, regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
  self.input_spec = { ndim = 4, axes = { [-1] = c } }
end

function DepthwiseConv2D:call(x) return finish(self, depthwise(self, x, self.kernel)) end

function DepthwiseConv2D:get_config()
  local c = common_config(self, Layer.get_config(self))
  c.depth_multiplier = self.depth_multiplier
  c.depthwise_initializer = initializers.serialize(self.depthwise_initializer)
  c.depthwise_regularizer = regularizers.serialize(self.depthwise_regularizer)
  c.depthwise_constraint = constraints.serialize(self.depthwise_constraint)
  return c
end

local SeparableConv2D = Layer:extend("SeparableConv2D")
M.SeparableConv2D = SeparableConv2D

-- SeparableConv2D{filters, kernel_size, strides=1, padding="valid",
-- depth_multiplier=1, dilation_rate=1, activation=nil, use_bias=true,
-- depthwise_initializer, pointwise_initializer ("glorot_uniform"),
-- bias_initializer="zeros", depthwise/pointwise/bias_regularizer}: a
-- depthwise convolution, then a 1x1 convolution to `filters` channels.
function SeparableConv2D:init(...)
  local cls = "SeparableConv2D"
  local o = self:_kwargs({ "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
    "depth_multiplier", "activation", "use_bias", "depthwise_initializer", "pointwise_initializer",
    "bias_initializer", "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer", "activity_regularizer",
    "depthwise_constraint", "pointwise_constraint", "bias_constraint" }, ...)
  if type(o.filters) ~= "number" or o.filters <= 0 or o.filters ~= math.floor(o.filters) then
    binding.error(string.format("%s: filters must be a positive integer, got %s", cls, tostring(o.filters)))
  end
  self.filters = o.filters
  common(self, cls, o)
  self.depth_multiplier = depth_multiplier(cls, o.depth_multiplier)
  self.depthwise_initializer = initializers.get(o.depthwise_initializer or "glorot_uniform",
    cls .. ": depthwise_initializer")
  self.pointwise_initializer = initializers.get(o.pointwise_initializer or "glorot_uniform",
    cls .. ": pointwise_initializer")
  self.depthwise_regularizer = regularizers.get(o.depthwise_regularizer, cls .. ": depthwise_regularizer")
  self.depthwise_constraint = constraints.get(o.depthwise_constraint, cls .. ": depthwise_constraint")
  self.pointwise_regularizer = regularizers.get(o.pointwise_regularizer, cls .. ": pointwise_regularizer")
  self.pointwise_constraint = constraints.get(o.pointwise_constraint, cls .. ": pointwise_constraint")
end

function SeparableConv2D:build(input_shape)
  local c = channels(self, input_shape)
  local k, dm = self.kernel_size, self.depth_multiplier
  self.depthwise_kernel = self:add_weight { name = "depthwise_kernel", shape = { k[1], k[2], c, dm },
    initializer = self.depthwise_initializer, regularizer = self.depthwise_regularizer,
    constraint = self.depthwise_constraint }
  self.pointwise_kernel = self:add_weight { name = "pointwise_kernel", shape = { 1, 1, c * dm, self.filters },
    initializer = self.pointwise_initializer, regularizer = self.pointwise_regularizer,
    constraint = self.pointwise_constraint }
  if self.use_bias then
    self.bias = self:add_weight { name = "bias", shape = { self.filters }, initializer = self.bias_initializer,
      regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
  self.input_spec = { ndim = 4, axes = { [-1] = c } }
end

function SeparableConv2D:call(x)
  local y = nn_conv.conv2d(depthwise(self, x, self.depthwise_kernel), self.pointwise_kernel, { strides = 1, padding = "VALID" })
  return finish(self, y)
end

function SeparableConv2D:get_config()
  local c = common_config(self, Layer.get_config(self))
  c.filters, c.depth_multiplier = self.filters, self.depth_multiplier
  c.depthwise_initializer = initializers.serialize(self.depthwise_initializer)
  c.pointwise_initializer = initializers.serialize(self.pointwise_initializer)
  c.depthwise_regularizer = regularizers.serialize(self.depthwise_regularizer)
  c.depthwise_constraint = constraints.serialize(self.depthwise_constraint)
  c.pointwise_regularizer = regularizers.serialize(self.pointwise_regularizer)
  c.pointwise_constraint = constraints.serialize(self.pointwise_constraint)
  return c
end

return M
