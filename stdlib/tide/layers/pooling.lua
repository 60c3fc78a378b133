-- stdlib/tide/layers/pooling.lua — Keras's pooling layers, each 1D/2D/3D:
-- Max/AveragePooling, AdaptiveAverage/MaxPooling, GlobalAverage/MaxPooling
-- (keepdims; GlobalAveragePooling1D averages only the unmasked steps). B = batch, C =
-- channels: channels_last [B, d1.., dk, C] or channels_first [B, C, d1.., dk].
-- The pooling op is 2-D (NHWC): 1D pools run it over [B, steps, 1, C]; 3D
-- pools run it over (H, W) and then over D, which is exact because a box
-- window's max (or mean: SAME's count of the window's elements inside the
-- volume is the product of each axis's) is the max (mean) of maxes (means).
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce_ops = require "tide.ops.reduce"
local nn_conv = require "tide.ops.nn_conv"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"

local Layer, who = layer.Layer, layer.who

local M = {}

---------------------------------------------------------------------------
-- Max/AveragePooling1D/2D/3D
---------------------------------------------------------------------------

-- pool(x [B, H, W, C], {kh, kw}, {sh, sw}, "VALID"|"SAME"): the 2-D op.
local function pool2d(op, x, k, s, padding)
  return op(x, k, { strides = s, padding = padding })
end

-- A pool over a channels_last input of rank + 2 dims.
local function pool_nd(op, x, rank, k, s, padding)
  if rank == 2 then return pool2d(op, x, k, s, padding) end
  if rank == 1 then
    local y = pool2d(op, shape_ops.expand_dims(x, 2), { k[1], 1 }, { s[1], 1 }, padding)
    return shape_ops.squeeze(y, { 2 })
  end
  -- 3D: [B, D, H, W, C] -> [B*D, H, W, C], pooled over (H, W) -> [B, D, H'*W', C], pooled over D
  local d = dims.dims(x)
  local b, depth, c = d[1], d[2], d[5]
  local y = pool2d(op, shape_ops.reshape(x, { -1, d[3], d[4], c }), { k[2], k[3] }, { s[2], s[3] }, padding)
  local h2, w2 = dims.dim(y, 1), dims.dim(y, 2)
  y = pool2d(op, shape_ops.reshape(y, { b, depth, h2 * w2, c }), { k[1], 1 }, { s[1], 1 }, padding)
  return shape_ops.reshape(y, { b, dims.dim(y, 1), h2, w2, c })
end

-- MaxPoolingND / AveragePoolingND{pool_size=2, strides=pool_size, padding="valid", data_format}.
local function pool_class(name, rank, op)
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "pool_size", "strides", "padding", "data_format" }, ...)
    self.pool_size = options.tuple(name, "pool_size", o.pool_size or 2, rank)
    self.strides = options.tuple(name, "strides", o.strides or self.pool_size, rank)
    local padding = type(o.padding) == "string" and o.padding:lower() or o.padding or "valid"
    if padding ~= "valid" and padding ~= "same" then
      binding.error(string.format("%s: padding must be \"valid\" or \"same\", got %s", name, tostring(o.padding)))
    end
    self.padding = padding
    self.data_format = options.data_format(name, o.data_format)
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x)
    local first = self.data_format == "channels_first"
    if first then x = dims.to_channels_last(x) end
    local y = pool_nd(op, x, rank, self.pool_size, self.strides, self.padding:upper())
    if first then y = dims.to_channels_first(y) end
    return y
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.pool_size, c.strides, c.padding, c.data_format = self.pool_size, self.strides, self.padding, self.data_format
    return c
  end
  M[name] = cls
  return cls
end
for rank = 1, 3 do
  local max = pool_class("MaxPooling" .. rank .. "D", rank, nn_conv.max_pool2d)
  local avg = pool_class("AveragePooling" .. rank .. "D", rank, nn_conv.avg_pool2d)
  M["MaxPool" .. rank .. "D"], M["AvgPool" .. rank .. "D"] = max, avg
end
M.AveragePool2D = M.AveragePooling2D -- (tide's earlier alias)

---------------------------------------------------------------------------
-- Global pooling
---------------------------------------------------------------------------

-- The spatial axes (0-based) of a rank-`rank` pool's input.
local function spatial_axes(data_format, rank)
  local axes = {}
  for i = 1, rank do axes[i] = data_format == "channels_first" and i + 1 or i end
  return axes
end

-- GlobalAveragePoolingND / GlobalMaxPoolingND{data_format, keepdims=false}:
-- [B, d1.., dk, C] -> [B, C] (keepdims: [B, 1.., 1, C]).
local function global_class(name, rank, reduce, masked)
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "data_format", "keepdims" }, ...)
    self.data_format = options.data_format(name, o.data_format)
    self.keepdims = options.boolean(name, "keepdims", o.keepdims, false)
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x, opts)
    local axes = spatial_axes(self.data_format, rank)
    local mask = masked and opts and opts.mask
    if mask then -- Keras 3: the mean over the unmasked steps only
      if not binding.istensor(mask) or mask.ndim ~= 2 then
        binding.error(string.format("%s: the mask must be [batch, steps], got %s", who(self),
          binding.istensor(mask) and tostring(mask.shape) or type(mask)))
      end
      local m = shape_ops.expand_dims(math_ops.cast(mask, "bool"), self.data_format == "channels_first" and 1 or 2)
      local kept = math_ops.where(m, x, 0)
      local count = reduce_ops.reduce_sum(math_ops.cast(m, x.dtype), axes, self.keepdims)
      return reduce_ops.reduce_sum(kept, axes, self.keepdims) / count
    end
    return reduce(x, axes, self.keepdims)
  end
  if masked then
    cls.supports_masking = true
    function cls:compute_mask() return nil end -- the steps are gone
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.data_format, c.keepdims = self.data_format, self.keepdims
    return c
  end
  M[name] = cls
  return cls
end
for rank = 1, 3 do
  local avg = global_class("GlobalAveragePooling" .. rank .. "D", rank, reduce_ops.reduce_mean, rank == 1)
  local max = global_class("GlobalMaxPooling" .. rank .. "D", rank, reduce_ops.reduce_max, false)
  M["GlobalAvgPool" .. rank .. "D"], M["GlobalMaxPool" .. rank .. "D"] = avg, max
end

---------------------------------------------------------------------------
-- Adaptive pooling
---------------------------------------------------------------------------

-- x pooled along `axis` (0-based) of known size n into `out` windows, window
-- i being [floor(i * n / out), ceil((i + 1) * n / out)) (PyTorch's and Keras 3's).
local function adaptive_axis(x, axis, n, out, reduce)
  if n == out then return x end
  local parts = {}
  for i = 0, out - 1 do
    local first, stop = math.floor(i * n / out), math.ceil((i + 1) * n / out)
    local spec = {}
    for k = 1, x.ndim do spec[k] = {} end
    spec[axis + 1] = { first, stop }
    parts[i + 1] = reduce(x:slice(spec), axis, true)
  end
  return #parts == 1 and parts[1] or shape_ops.concat(parts, axis)
end

-- AdaptiveAveragePoolingND / AdaptiveMaxPoolingND{output_size, data_format}:
-- each spatial dim (which must be known) pooled into output_size windows of
-- nearly equal size that cover it (a mean or max over each; a box window's
-- is the mean or max along one axis after another).
local function adaptive_class(name, rank, reduce)
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "output_size", "data_format" }, ...)
    if o.output_size == nil then binding.error(name .. ": output_size is required") end
    self.output_size = options.tuple(name, "output_size", o.output_size, rank)
    self.data_format = options.data_format(name, o.data_format)
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x)
    local shape = x.shape
    for i = 1, rank do
      local a = self.data_format == "channels_first" and i + 1 or i
      local n = shape[a + 1]
      if type(n) ~= "number" then
        binding.error(string.format("%s: the input's spatial dims must be known (as Keras's), got shape %s",
          who(self), tostring(shape)))
      end
      x = adaptive_axis(x, a, n, self.output_size[i], reduce)
    end
    return x
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.output_size, c.data_format = self.output_size, self.data_format
    return c
  end
  M[name] = cls
end
for rank = 1, 3 do
  adaptive_class("AdaptiveAveragePooling" .. rank .. "D", rank, reduce_ops.reduce_mean)
  adaptive_class("AdaptiveMaxPooling" .. rank .. "D", rank, reduce_ops.reduce_max)
end

return M
