-- stdlib/tide/layers/conv_transpose.lua — Keras's Conv1DTranspose, Conv2DTranspose and
-- Conv3DTranspose (channels_last; kernels as Keras: [k..., filters, in]), on
-- tide.nn's conv1d_transpose, conv2d_transpose and conv3d_transpose.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local nn_conv = require "tide.ops.nn_conv"
local nn_conv_nd = require "tide.ops.nn_conv_nd"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local layer = require "tide.layers.layer"
local base = require "tide.layers.conv_base"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

-- Keras's output size of a transposed convolution along one dim.
local function deconv_length(n, k, s, d, padding, op)
  local ke = (k - 1) * d + 1
  if padding == "valid" then
    return (n - 1) * s + ke + (op or (math.max(ke, s) - ke))
  end
  if op == nil then return n * s end
  return (n - 1) * s + ke % 2 + op
end

-- Conv2DTranspose{filters, kernel_size, strides=1, padding="valid",
-- output_padding=nil, dilation_rate=1, activation=nil, use_bias=true,
-- kernel_initializer="glorot_uniform", bias_initializer="zeros", *_regularizer};
-- Conv1DTranspose and Conv3DTranspose the same over [B, W, C] and [B, D, H, W, C].
local function transpose_class(cls, rank)
  local T = Layer:extend(cls)
  M[cls] = T
  function T:init(...)
    -- (Keras 3's order: Conv3DTranspose alone has data_format before output_padding)
    local names = { "filters", "kernel_size", "strides", "padding", "output_padding", "data_format",
      "dilation_rate", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
      "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint" }
    if rank == 3 then names[5], names[6] = names[6], names[5] end
    local o = self:_kwargs(names, ...)
    if type(o.filters) ~= "number" or o.filters <= 0 or o.filters ~= math.floor(o.filters) then
      binding.error(string.format("%s: filters must be a positive integer, got %s", cls, tostring(o.filters)))
    end
    self.filters = o.filters
    base.common(self, cls, o, rank)
    if o.output_padding ~= nil then
      local op = o.output_padding
      if type(op) == "number" then
        local t = {}
        for i = 1, rank do t[i] = op end
        op = t
      end
      if type(op) ~= "table" or #op ~= rank then
        binding.error(string.format("%s: output_padding must be an integer or a list of %d integers, got %s", cls,
          rank, tostring(o.output_padding)))
      end
      for i = 1, rank do
        if type(op[i]) ~= "number" or op[i] < 0 or op[i] ~= math.floor(op[i]) then
          binding.error(cls .. ": output_padding must hold non-negative integers, got " .. tostring(op[i]))
        end
        if op[i] >= self.strides[i] then
          binding.error(string.format("%s: output_padding must be strictly less than strides; at index %d " ..
            "output_padding is %d but strides is %d", cls, i - 1, op[i], self.strides[i]))
        end
      end
      self.output_padding = { unpack(op, 1, rank) }
    end
    self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", cls .. ": kernel_initializer")
    self.kernel_regularizer = regularizers.get(o.kernel_regularizer, cls .. ": kernel_regularizer")
    self.kernel_constraint = constraints.get(o.kernel_constraint, cls .. ": kernel_constraint")
  end

  function T:build(input_shape)
    local c = base.channels(self, input_shape)
    local kshape = { unpack(self.kernel_size) }
    kshape[rank + 1], kshape[rank + 2] = self.filters, c
    self.kernel = self:add_weight { name = "kernel", shape = kshape, initializer = self.kernel_initializer,
      regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
    if self.use_bias then
      self.bias = self:add_weight { name = "bias", shape = { self.filters }, initializer = self.bias_initializer,
        regularizer = self.bias_regularizer, constraint = self.bias_constraint }
    end
    self.input_spec = { ndim = rank + 2, axes = { [-1] = c } }
  end

  function T:call(x)
    local shape = x.shape:as_list()
    local op = self.output_padding or {}
    local out = {}
    for i = 1, rank do
      local n = shape[i + 1]
      if n == None then
        binding.error(string.format("%s: the %s of the input must be known, got shape %s", who(self),
          rank == 1 and "width" or rank == 2 and "height and width" or "depth, height and width", tostring(x.shape)))
      end
      out[i + 1] = deconv_length(n, self.kernel_size[i], self.strides[i], self.dilation_rate[i], self.padding, op[i])
    end
    -- a batch known only when a traced function runs is read from x then
    out[1] = shape[1] == None and dynamic_shape.shape(x)[0] or shape[1]
    out[rank + 2] = self.filters
    local kernel = self.kernel:read_value()
    local o = { strides = self.strides, padding = self.padding:upper(), dilations = self.dilation_rate }
    local y
    if rank == 1 then
      y = nn_conv_nd.conv1d_transpose(x, kernel, out, o)
    elseif rank == 2 then
      y = nn_conv.conv2d_transpose(x, kernel, out, o)
    else
      y = nn_conv_nd.conv3d_transpose(x, kernel, out, o)
    end
    return base.finish(self, y)
  end

  function T:get_config()
    local c = base.common_config(self, Layer.get_config(self))
    c.filters, c.output_padding = self.filters, self.output_padding
    c.kernel_initializer = initializers.serialize(self.kernel_initializer)
    c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
    c.kernel_constraint = constraints.serialize(self.kernel_constraint)
    return c
  end
end
transpose_class("Conv2DTranspose", 2)
transpose_class("Conv1DTranspose", 1)
transpose_class("Conv3DTranspose", 3)

return M
