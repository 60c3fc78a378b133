-- stdlib/tide/layers/conv.lua — Keras's convolution layers Conv1D, Conv2D and Conv3D
-- (channels_last; kernels as Keras: [k..., in / groups, filters], Conv2D HWIO).
-- B = batch, H/W = spatial dims, C = channels: [B, H, W, C] -> [B, H', W', filters].
local binding = require "tide.binding"
local shape_ops = require "tide.ops.shape"
local nn_conv = require "tide.ops.nn_conv"
local nn_conv_nd = require "tide.ops.nn_conv_nd"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"

local Layer, who = layer.Layer, layer.who

local M = {}

-- A tuple of `rank` positive integers from a number or a list (Keras's standardize_tuple).
local function tuple(cls, what, v, rank)
  if type(v) == "number" then
    local out = {}
    for i = 1, rank do out[i] = v end
    v = out
  end
  if type(v) ~= "table" or #v ~= rank then
    binding.error(string.format("%s: %s must be an integer or a list of %d integers, got %s", cls, what, rank,
      tostring(v)))
  end
  for _, d in ipairs(v) do
    if type(d) ~= "number" or d ~= math.floor(d) or d <= 0 then
      binding.error(string.format("%s: %s must hold positive integers, got %s", cls, what, tostring(d)))
    end
  end
  return { unpack(v) }
end
M.tuple = tuple

-- The shared part of Conv1D, Conv2D and Conv3D (Keras's BaseConv).
local function conv_class(name, rank)
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups",
      "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
      "activity_regularizer", "kernel_constraint", "bias_constraint" }, ...)
    if type(o.filters) ~= "number" or o.filters <= 0 or o.filters ~= math.floor(o.filters) then
      binding.error(string.format("%s: filters must be a positive integer, got %s", name, tostring(o.filters)))
    end
    self.filters = o.filters
    if o.kernel_size == nil then binding.error(name .. ": kernel_size is required") end
    self.kernel_size = tuple(name, "kernel_size", o.kernel_size, rank)
    self.strides = tuple(name, "strides", o.strides or 1, rank)
    self.dilation_rate = tuple(name, "dilation_rate", o.dilation_rate or 1, rank)
    local padding = (o.padding or "valid"):lower()
    if not (padding == "valid" or padding == "same" or (padding == "causal" and rank == 1)) then
      binding.error(string.format("%s: padding must be \"valid\" or \"same\"%s, got %s", name,
        rank == 1 and " or \"causal\"" or "", tostring(o.padding)))
    end
    self.padding = padding
    local df = o.data_format or "channels_last"
    if df ~= "channels_last" then
      binding.error(string.format("%s: only data_format=\"channels_last\" is supported (tide is NHWC), got %s", name,
        tostring(df)))
    end
    self.data_format = df
    local groups = o.groups == nil and 1 or o.groups
    if type(groups) ~= "number" or groups <= 0 or groups ~= math.floor(groups) then
      binding.error(string.format("%s: groups must be a positive integer, got %s", name, tostring(o.groups)))
    end
    if self.filters % groups ~= 0 then
      binding.error(string.format("%s: the number of filters must be evenly divisible by the number of groups; " ..
        "got groups=%d, filters=%d", name, groups, self.filters))
    end
    self.groups = groups
    local strided, dilated = false, false
    for i = 1, rank do
      if self.strides[i] > 1 then strided = true end
      if self.dilation_rate[i] > 1 then dilated = true end
    end
    if strided and dilated then
      binding.error(string.format("%s: strides > 1 together with dilation_rate > 1 is not supported (as Keras)", name))
    end
    self.activation = activations.get(o.activation, name .. ": activation")
    if o.use_bias ~= nil and type(o.use_bias) ~= "boolean" then
      binding.error(string.format("%s: use_bias must be true or false, got %s", name, tostring(o.use_bias)))
    end
    self.use_bias = o.use_bias ~= false
    self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", name .. ": kernel_initializer")
    self.bias_initializer = initializers.get(o.bias_initializer or "zeros", name .. ": bias_initializer")
    self.kernel_regularizer = regularizers.get(o.kernel_regularizer, name .. ": kernel_regularizer")
    self.kernel_constraint = constraints.get(o.kernel_constraint, name .. ": kernel_constraint")
    self.bias_regularizer = regularizers.get(o.bias_regularizer, name .. ": bias_regularizer")
    self.bias_constraint = constraints.get(o.bias_constraint, name .. ": bias_constraint")
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:build(input_shape)
    local c = input_shape and input_shape[#input_shape]
    if type(c) ~= "number" then
      binding.error(string.format("%s: the channel dim (last) of the input must be known, got shape %s", who(self),
        input_shape and layer.shape_text(input_shape) or "of unknown rank"))
    end
    if c % self.groups ~= 0 then
      binding.error(string.format("%s: the number of input channels must be evenly divisible by the number of " ..
        "groups; got groups=%d, but the input has %d channels (shape %s)", who(self), self.groups, c,
        layer.shape_text(input_shape)))
    end
    local kshape = {}
    for i = 1, rank do kshape[i] = self.kernel_size[i] end
    kshape[rank + 1], kshape[rank + 2] = c / self.groups, self.filters
    self.kernel = self:add_weight { name = "kernel", shape = kshape, initializer = self.kernel_initializer,
      regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
    if self.use_bias then
      self.bias = self:add_weight { name = "bias", shape = { self.filters }, initializer = self.bias_initializer,
        regularizer = self.bias_regularizer, constraint = self.bias_constraint }
    end
    self.input_spec = { ndim = rank + 2, axes = { [-1] = c } }
  end
  -- one convolution of x by kernel (one group's channels)
  local function convolve(self, x, kernel, padding)
    if rank == 2 then
      return nn_conv.conv2d(x, kernel, { strides = self.strides, padding = padding, dilations = self.dilation_rate })
    elseif rank == 3 then
      return nn_conv_nd.conv3d(x, kernel, { strides = self.strides, padding = padding, dilations = self.dilation_rate })
    end
    return nn_conv.conv1d(x, kernel, { stride = self.strides[1], padding = padding, dilations = self.dilation_rate[1] })
  end
  function cls:call(x)
    local padding = self.padding:upper()
    if self.padding == "causal" then -- pad the start of the time axis: output t sees inputs <= t
      local left = self.dilation_rate[1] * (self.kernel_size[1] - 1)
      x = shape_ops.pad(x, { { 0, 0 }, { left, 0 }, { 0, 0 } })
      padding = "VALID"
    end
    local kernel = self.kernel:read_value()
    local y
    if self.groups == 1 then
      y = convolve(self, x, kernel, padding)
    else -- group g: input channels g*cin .. and filters g*fout .. (Keras's feature_group_count)
      local xs = shape_ops.split(x, self.groups, rank + 1)
      local ks = shape_ops.split(kernel, self.groups, rank + 1)
      local ys = {}
      for g = 1, self.groups do ys[g] = convolve(self, xs[g], ks[g], padding) end
      y = shape_ops.concat(ys, rank + 1)
    end
    if self.bias then y = y + self.bias end
    return self.activation(y)
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.filters, c.kernel_size, c.strides, c.padding = self.filters, self.kernel_size, self.strides, self.padding
    c.data_format, c.dilation_rate, c.groups = self.data_format, self.dilation_rate, self.groups
    c.activation, c.use_bias = activations.serialize(self.activation), self.use_bias
    c.kernel_initializer = initializers.serialize(self.kernel_initializer)
    c.bias_initializer = initializers.serialize(self.bias_initializer)
    c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
    c.kernel_constraint = constraints.serialize(self.kernel_constraint)
    c.bias_regularizer = regularizers.serialize(self.bias_regularizer)
    c.bias_constraint = constraints.serialize(self.bias_constraint)
    return c
  end
  M[name] = cls
  return cls
end

-- Conv2D{filters, kernel_size, strides=1, padding="valid", dilation_rate=1,
-- activation=nil, use_bias=true, kernel_initializer="glorot_uniform",
-- bias_initializer="zeros", kernel_regularizer=nil, bias_regularizer=nil}
conv_class("Conv2D", 2)
-- Conv1D{...}: the same over [B, W, C], with padding "causal" too.
conv_class("Conv1D", 1)
-- Conv3D{...}: the same over [B, D, H, W, C] (tide.nn.conv3d; the depth must be known).
conv_class("Conv3D", 3)

return M
