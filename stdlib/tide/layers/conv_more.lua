-- stdlib/tide/layers/conv_more.lua — Keras's DepthwiseConv1D/2D and SeparableConv1D/2D
-- (channels_last). Kernels as
-- Keras: DepthwiseConv2D [kh, kw, in, depth_multiplier] (1D: [k, in, dm]);
-- SeparableConv2D depthwise [kh, kw, in, dm] then pointwise [1, 1, in*dm, filters].
-- A 1-D layer runs the 2-D op over a unit height (exact).
local binding = require "tide.binding"
local shape_ops = require "tide.ops.shape"
local nn_conv = require "tide.ops.nn_conv"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local layer = require "tide.layers.layer"
local base = require "tide.layers.conv_base"

local Layer = layer.Layer

local M = {}

local common, common_config, channels, finish = base.common, base.common_config, base.channels, base.finish

---------------------------------------------------------------------------
-- DepthwiseConv1D/2D and SeparableConv1D/2D
---------------------------------------------------------------------------

local function depth_multiplier(cls, v)
  v = v or 1
  if type(v) ~= "number" or v <= 0 or v ~= math.floor(v) then
    binding.error(string.format("%s: depth_multiplier must be a positive integer, got %s", cls, tostring(v)))
  end
  return v
end

-- A kernel's shape: the kernel size, then `rest`.
local function kernel_shape(self, ...)
  local out = { unpack(self.kernel_size) }
  for _, d in ipairs { ... } do out[#out + 1] = d end
  return out
end

-- The depthwise convolution of x (rank 1: as 2-D over a unit height, the kernel [1, k, in, dm]).
local function depthwise(self, x, kernel, rank)
  if rank == 2 then
    return nn_conv.depthwise_conv2d(x, kernel, { strides = self.strides, padding = self.padding:upper(),
      dilations = self.dilation_rate })
  end
  local y = nn_conv.depthwise_conv2d(shape_ops.expand_dims(x, 1), shape_ops.expand_dims(kernel, 0),
    { strides = { 1, self.strides[1] }, padding = self.padding:upper(), dilations = { 1, self.dilation_rate[1] } })
  return shape_ops.squeeze(y, { 1 })
end

-- DepthwiseConv2D{kernel_size, strides=1, padding="valid", depth_multiplier=1,
-- dilation_rate=1, activation=nil, use_bias=true, depthwise_initializer=
-- "glorot_uniform", bias_initializer="zeros", depthwise_regularizer, bias_regularizer}:
-- output channel c*dm + m is channel c convolved with kernel[:, :, c, m].
-- DepthwiseConv1D: the same over [B, W, C], the kernel [k, in, dm].
local function depthwise_class(cls, rank)
  local D = Layer:extend(cls)
  M[cls] = D
  function D:init(...)
    local o = self:_kwargs({ "kernel_size", "strides", "padding", "depth_multiplier", "data_format", "dilation_rate",
      "activation", "use_bias", "depthwise_initializer", "bias_initializer", "depthwise_regularizer",
      "bias_regularizer", "activity_regularizer", "depthwise_constraint", "bias_constraint" }, ...)
    common(self, cls, o, rank)
    self.depth_multiplier = depth_multiplier(cls, o.depth_multiplier)
    self.depthwise_initializer = initializers.get(o.depthwise_initializer or "glorot_uniform",
      cls .. ": depthwise_initializer")
    self.depthwise_regularizer = regularizers.get(o.depthwise_regularizer, cls .. ": depthwise_regularizer")
    self.depthwise_constraint = constraints.get(o.depthwise_constraint, cls .. ": depthwise_constraint")
  end
  function D:build(input_shape)
    local c = channels(self, input_shape)
    self.kernel = self:add_weight { name = "kernel", shape = kernel_shape(self, c, self.depth_multiplier),
      initializer = self.depthwise_initializer, regularizer = self.depthwise_regularizer,
      constraint = self.depthwise_constraint }
    if self.use_bias then
      self.bias = self:add_weight { name = "bias", shape = { c * self.depth_multiplier },
        initializer = self.bias_initializer, regularizer = self.bias_regularizer, constraint = self.bias_constraint }
    end
    self.input_spec = { ndim = rank + 2, axes = { [-1] = c } }
  end
  function D:call(x) return finish(self, depthwise(self, x, self.kernel:read_value(), rank)) end
  function D:get_config()
    local c = common_config(self, Layer.get_config(self))
    c.depth_multiplier = self.depth_multiplier
    c.depthwise_initializer = initializers.serialize(self.depthwise_initializer)
    c.depthwise_regularizer = regularizers.serialize(self.depthwise_regularizer)
    c.depthwise_constraint = constraints.serialize(self.depthwise_constraint)
    return c
  end
end
depthwise_class("DepthwiseConv2D", 2)
depthwise_class("DepthwiseConv1D", 1)

-- SeparableConv2D{filters, kernel_size, strides=1, padding="valid",
-- depth_multiplier=1, dilation_rate=1, activation=nil, use_bias=true,
-- depthwise_initializer, pointwise_initializer ("glorot_uniform"),
-- bias_initializer="zeros", depthwise/pointwise/bias_regularizer}: a
-- depthwise convolution, then a 1x1 convolution to `filters` channels.
-- SeparableConv1D: the same over [B, W, C] (pointwise kernel [1, in*dm, filters]).
local function separable_class(cls, rank)
  local S = Layer:extend(cls)
  M[cls] = S
  function S:init(...)
    local o = self:_kwargs({ "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
      "depth_multiplier", "activation", "use_bias", "depthwise_initializer", "pointwise_initializer",
      "bias_initializer", "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
      "activity_regularizer", "depthwise_constraint", "pointwise_constraint", "bias_constraint" }, ...)
    if type(o.filters) ~= "number" or o.filters <= 0 or o.filters ~= math.floor(o.filters) then
      binding.error(string.format("%s: filters must be a positive integer, got %s", cls, tostring(o.filters)))
    end
    self.filters = o.filters
    common(self, cls, o, rank)
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
  function S:build(input_shape)
    local c = channels(self, input_shape)
    local dm = self.depth_multiplier
    self.depthwise_kernel = self:add_weight { name = "depthwise_kernel", shape = kernel_shape(self, c, dm),
      initializer = self.depthwise_initializer, regularizer = self.depthwise_regularizer,
      constraint = self.depthwise_constraint }
    local pshape = {}
    for i = 1, rank do pshape[i] = 1 end
    pshape[rank + 1], pshape[rank + 2] = c * dm, self.filters
    self.pointwise_kernel = self:add_weight { name = "pointwise_kernel", shape = pshape,
      initializer = self.pointwise_initializer, regularizer = self.pointwise_regularizer,
      constraint = self.pointwise_constraint }
    if self.use_bias then
      self.bias = self:add_weight { name = "bias", shape = { self.filters }, initializer = self.bias_initializer,
        regularizer = self.bias_regularizer, constraint = self.bias_constraint }
    end
    self.input_spec = { ndim = rank + 2, axes = { [-1] = c } }
  end
  function S:call(x)
    local d = depthwise(self, x, self.depthwise_kernel:read_value(), rank)
    local p = self.pointwise_kernel:read_value()
    local y = rank == 2 and nn_conv.conv2d(d, p, { strides = 1, padding = "VALID" }) or
      nn_conv.conv1d(d, p, { stride = 1, padding = "VALID" })
    return finish(self, y)
  end
  function S:get_config()
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
end
separable_class("SeparableConv2D", 2)
separable_class("SeparableConv1D", 1)

return M
