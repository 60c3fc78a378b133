-- stdlib/tide/layers/preprocessing/image.lua — Keras 3's deterministic image preprocessing layers:
-- Rescaling, Resizing (with Keras's aspect-ratio crop and pad) and CenterCrop. Images are [H, W, C] or
-- [B, H, W, C] (channels_first: [C, H, W] / [B, C, H, W]); compositions of registry ops, so they trace.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local math_ops = require "tide.ops.math"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local util = require "tide.layers.preprocessing.image_util"

local Layer = layer.Layer
local fmt = string.format
local cast, check_rank, known_hw = util.cast, util.check_rank, util.known_hw
local hw_axes, to_last = util.hw_axes, util.to_last

local M = {}

---------------------------------------------------------------------------
-- Rescaling, Resizing, CenterCrop
---------------------------------------------------------------------------

-- Rescaling{scale, offset=0}: cast(x, compute dtype) * scale + offset (scale and
-- offset numbers, or lists broadcast against the last dims).
local Rescaling = Layer:extend("Rescaling")
M.Rescaling = Rescaling
Rescaling.supports_masking = true
function Rescaling:init(...)
  local o = self:_kwargs({ "scale", "offset" }, ...)
  local function value(what, v, default)
    if v == nil then v = default end
    if type(v) == "number" then return v end
    if type(v) == "table" and #v > 0 then
      for _, e in ipairs(v) do if type(e) ~= "number" then v = nil break end end
      if v then return v end
    end
    binding.error(fmt("Rescaling: %s must be a number or a list of numbers, got %s", what, tostring(v)))
  end
  self.scale = value("scale", o.scale)
  self.offset = value("offset", o.offset, 0)
end
function Rescaling:call(x)
  local dt = self.compute_dtype
  local function t(v) return type(v) == "number" and math_ops.cast(v, dt) or convert.tensor(v, dt) end
  return math_ops.add(math_ops.mul(cast(x, dt), t(self.scale)), t(self.offset))
end
function Rescaling:get_config()
  local c = Layer.get_config(self)
  c.scale, c.offset = self.scale, self.offset
  return c
end

-- Resizing{height, width, interpolation="bilinear", crop_to_aspect_ratio=false,
-- pad_to_aspect_ratio=false, fill_mode="constant", fill_value=0, antialias=false,
-- data_format}: tide.image.resize (TF's half-pixel centres) after Keras's aspect-ratio
-- crop or pad; integer images come back rounded (half to even) and saturated in their dtype.
local Resizing = Layer:extend("Resizing")
M.Resizing = Resizing
function Resizing:init(...)
  local o = self:_kwargs({ "height", "width", "interpolation", "crop_to_aspect_ratio", "pad_to_aspect_ratio",
    "fill_mode", "fill_value", "antialias", "data_format" }, ...)
  self.height = options.positive_int("Resizing", "height", o.height)
  self.width = options.positive_int("Resizing", "width", o.width)
  self.interpolation = o.interpolation or "bilinear"
  local known = { bilinear = true, nearest = true, lanczos3 = true, lanczos5 = true, bicubic = true, area = true }
  if not known[self.interpolation] then
    binding.error(fmt("Resizing: interpolation must be one of bilinear, nearest, lanczos3, lanczos5, bicubic, area, " ..
      "got %s", tostring(self.interpolation)))
  end
  if self.interpolation ~= "bilinear" and self.interpolation ~= "nearest" then
    binding.error(fmt("Resizing: interpolation %q is not supported yet (tide.image.resize has bilinear and nearest)",
      self.interpolation))
  end
  self.crop_to_aspect_ratio = options.boolean("Resizing", "crop_to_aspect_ratio", o.crop_to_aspect_ratio, false)
  self.pad_to_aspect_ratio = options.boolean("Resizing", "pad_to_aspect_ratio", o.pad_to_aspect_ratio, false)
  if self.crop_to_aspect_ratio and self.pad_to_aspect_ratio then
    binding.error("Resizing: only one of pad_to_aspect_ratio and crop_to_aspect_ratio can be true")
  end
  self.fill_mode = o.fill_mode or "constant"
  if self.fill_mode ~= "constant" then
    binding.error(fmt("Resizing: fill_mode must be \"constant\" (the only one Keras supports), got %s",
      tostring(self.fill_mode)))
  end
  self.fill_value = options.number("Resizing", "fill_value", o.fill_value, 0)
  self.antialias = options.boolean("Resizing", "antialias", o.antialias, false)
  if self.antialias then binding.error("Resizing: antialias=true is not supported yet (TF's scale_and_translate)") end
  self.data_format = options.data_format("Resizing", o.data_format)
end
function Resizing:call(x)
  check_rank(self, x)
  local last, back = to_last(self, x)
  local y = util.keras_resize(self, last, self.height, self.width, self.interpolation, self.crop_to_aspect_ratio,
    self.pad_to_aspect_ratio, self.fill_value)
  if y.dtype ~= x.dtype then
    if dtype.is_int[dtype.codes[x.dtype]] then
      local info = x.dtype == "uint8" and { 0, 255 } or x.dtype == "int8" and { -128, 127 }
        or x.dtype == "int32" and { -2147483648, 2147483647 } or nil
      y = math_ops.round(y)
      if info then y = math_ops.clip_by_value(y, info[1], info[2]) end
    end
    y = math_ops.cast(y, x.dtype)
  end
  return back(y)
end
function Resizing:get_config()
  local c = Layer.get_config(self)
  c.height, c.width, c.interpolation = self.height, self.width, self.interpolation
  c.crop_to_aspect_ratio, c.pad_to_aspect_ratio = self.crop_to_aspect_ratio, self.pad_to_aspect_ratio
  c.fill_mode, c.fill_value, c.antialias, c.data_format = self.fill_mode, self.fill_value, self.antialias,
    self.data_format
  return c
end

-- CenterCrop{height, width, data_format}: the central height x width window
-- (the odd pixel left above and to the left kept out, as Keras's floor); an image smaller
-- in either dim is cropped to the target's aspect ratio and resized (Keras's smart_resize).
local CenterCrop = Layer:extend("CenterCrop")
M.CenterCrop = CenterCrop
function CenterCrop:init(...)
  local o = self:_kwargs({ "height", "width", "data_format" }, ...)
  self.height = options.positive_int("CenterCrop", "height", o.height)
  self.width = options.positive_int("CenterCrop", "width", o.width)
  self.data_format = options.data_format("CenterCrop", o.data_format)
end
function CenterCrop:call(x)
  check_rank(self, x)
  x = cast(x, self.compute_dtype)
  local h, w = known_hw(self, x)
  local dh, dw = h - self.height, w - self.width
  if dh >= 0 and dw >= 0 then
    local ha, wa = hw_axes(self, x)
    local spec = {}
    for i = 1, x.ndim do spec[i] = {} end
    spec[ha + 1] = { math.floor(dh / 2), math.floor(dh / 2) + self.height }
    spec[wa + 1] = { math.floor(dw / 2), math.floor(dw / 2) + self.width }
    return x:slice(spec)
  end
  local last, back = to_last(self, x)
  return back(cast(util.keras_resize(self, last, self.height, self.width, "bilinear", true), x.dtype))
end
function CenterCrop:get_config()
  local c = Layer.get_config(self)
  c.height, c.width, c.data_format = self.height, self.width, self.data_format
  return c
end

return M
