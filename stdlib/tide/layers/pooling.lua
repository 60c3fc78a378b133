-- stdlib/tide/layers/pooling.lua — Keras's 2-D pooling and resizing layers:
-- MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, GlobalMaxPooling2D,
-- ZeroPadding2D, UpSampling2D (channels_last: [B, H, W, C]).
local binding = require "tide.binding"
local shape_ops = require "tide.ops.shape"
local nn_conv = require "tide.ops.nn_conv"
local tensor_shape = require "tide.tensor_shape"
local layer = require "tide.layers.layer"
local tuple = require("tide.layers.conv").tuple

local Layer = layer.Layer
local None = tensor_shape.None

local M = {}

local function channels_last(name, df)
  df = df or "channels_last"
  if df ~= "channels_last" then
    binding.error(string.format("%s: only data_format=\"channels_last\" is supported (tide is NHWC), got %s", name,
      tostring(df)))
  end
  return df
end

-- MaxPooling2D / AveragePooling2D{pool_size=2, strides=pool_size, padding="valid"}.
local function pool_class(name, op)
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "pool_size", "strides", "padding", "data_format" }, ...)
    self.pool_size = tuple(name, "pool_size", o.pool_size or 2, 2)
    self.strides = tuple(name, "strides", o.strides or self.pool_size, 2)
    local padding = (o.padding or "valid"):lower()
    if padding ~= "valid" and padding ~= "same" then
      binding.error(string.format("%s: padding must be \"valid\" or \"same\", got %s", name, tostring(o.padding)))
    end
    self.padding = padding
    self.data_format = channels_last(name, o.data_format)
    self.input_spec = { ndim = 4 }
  end
  function cls:call(x)
    return op(x, self.pool_size, { strides = self.strides, padding = self.padding:upper() })
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.pool_size, c.strides, c.padding, c.data_format = self.pool_size, self.strides, self.padding, self.data_format
    return c
  end
  M[name] = cls
end
pool_class("MaxPooling2D", nn_conv.max_pool2d)
pool_class("AveragePooling2D", nn_conv.avg_pool2d)
M.MaxPool2D, M.AveragePool2D = M.MaxPooling2D, M.AveragePooling2D

-- GlobalAveragePooling2D / GlobalMaxPooling2D{keepdims=false}: [B, H, W, C] -> [B, C].
local function global_class(name, op)
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "data_format", "keepdims" }, ...)
    self.data_format = channels_last(name, o.data_format)
    self.keepdims = o.keepdims == true
    self.input_spec = { ndim = 4 }
  end
  function cls:call(x) return op(x, { keepdims = self.keepdims }) end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.data_format, c.keepdims = self.data_format, self.keepdims
    return c
  end
  M[name] = cls
end
global_class("GlobalAveragePooling2D", nn_conv.global_avg_pool2d)
global_class("GlobalMaxPooling2D", nn_conv.global_max_pool2d)
M.GlobalAvgPool2D, M.GlobalMaxPool2D = M.GlobalAveragePooling2D, M.GlobalMaxPooling2D

-- ZeroPadding2D{padding=1}: an int (all sides), {h, w} (symmetric), or
-- {{top, bottom}, {left, right}}.
local ZeroPadding2D = Layer:extend("ZeroPadding2D")
M.ZeroPadding2D = ZeroPadding2D
function ZeroPadding2D:init(...)
  local o = self:_kwargs({ "padding", "data_format" }, ...)
  local p = o.padding == nil and 1 or o.padding
  local pads
  if type(p) == "number" then pads = { { p, p }, { p, p } }
  elseif type(p) == "table" and #p == 2 and type(p[1]) == "number" then pads = { { p[1], p[1] }, { p[2], p[2] } }
  elseif type(p) == "table" and #p == 2 and type(p[1]) == "table" then pads = { { p[1][1], p[1][2] }, { p[2][1], p[2][2] } }
  end
  local ok = pads ~= nil
  for _, pair in ipairs(pads or {}) do
    for _, v in ipairs(pair) do
      if type(v) ~= "number" or v < 0 or v ~= math.floor(v) then ok = false end
    end
  end
  if not ok then
    binding.error("ZeroPadding2D: padding must be an integer, {h, w} or {{top, bottom}, {left, right}} of " ..
      "non-negative integers, got " .. tostring(p))
  end
  self.padding = pads
  self.data_format = channels_last("ZeroPadding2D", o.data_format)
  self.input_spec = { ndim = 4 }
end
function ZeroPadding2D:call(x)
  return shape_ops.pad(x, { { 0, 0 }, self.padding[1], self.padding[2], { 0, 0 } })
end
function ZeroPadding2D:get_config()
  local c = Layer.get_config(self)
  c.padding, c.data_format = self.padding, self.data_format
  return c
end

-- UpSampling2D{size=2, interpolation="nearest"}: each row repeated size[1]
-- times and each column size[2] times.
local UpSampling2D = Layer:extend("UpSampling2D")
M.UpSampling2D = UpSampling2D
function UpSampling2D:init(...)
  local o = self:_kwargs({ "size", "data_format", "interpolation" }, ...)
  self.size = tuple("UpSampling2D", "size", o.size or 2, 2)
  local interp = o.interpolation or "nearest"
  if interp ~= "nearest" then
    binding.error("UpSampling2D: only interpolation=\"nearest\" is supported, got " .. tostring(interp))
  end
  self.interpolation = interp
  self.data_format = channels_last("UpSampling2D", o.data_format)
  self.input_spec = { ndim = 4 }
end
-- Repeat x's `axis` (0-based) `times` times, each element in place.
local function repeat_axis(x, axis, times)
  if times == 1 then return x end
  local y = shape_ops.expand_dims(x, axis + 1)
  local multiples = { 1, 1, 1, 1, 1 }
  multiples[axis + 2] = times
  y = shape_ops.tile(y, multiples)
  local shape = x.shape
  local target = {}
  for i = 1, 4 do target[i] = shape[i] == None and -1 or shape[i] end
  if target[axis + 1] ~= -1 then target[axis + 1] = target[axis + 1] * times end
  local unknown = 0
  for i = 1, 4 do if target[i] == -1 then unknown = unknown + 1 end end
  if unknown > 1 then
    binding.error(string.format("%s: UpSampling2D needs the input's dims known except the batch, got shape %s",
      "UpSampling2D", tostring(shape)))
  end
  return shape_ops.reshape(y, target)
end
function UpSampling2D:call(x)
  return repeat_axis(repeat_axis(x, 1, self.size[1]), 2, self.size[2])
end
function UpSampling2D:get_config()
  local c = Layer.get_config(self)
  c.size, c.data_format, c.interpolation = self.size, self.data_format, self.interpolation
  return c
end

return M
