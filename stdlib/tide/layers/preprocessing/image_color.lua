-- stdlib/tide/layers/preprocessing/image_color.lua — Keras 3's pixel-value layers: AutoContrast, Equalization,
-- Solarization, RandomInvert, RandomPosterization, RandomGrayscale, RandomColorDegeneration (Keras's formulas).
-- B = batch, H = height, W = width, C = channels; images [B, H, W, C] (channels_first [B, C, H, W]) inside
-- transform_images, any of rank 3 or 4 (or a {images=, labels=} table) through the call (image_base.lua).
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local segment = require "tide.ops.segment"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"
local util = require "tide.layers.preprocessing.image_util"
local base = require "tide.layers.preprocessing.image_base"

local Base = base.Base
local cast, copy = util.cast, base.copy
local add, sub, mul, div, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div, math_ops.where
local tvr = base.transform_value_range

local M = {}

local FULL = { 0, 255 }

---------------------------------------------------------------------------
-- AutoContrast, Equalization
---------------------------------------------------------------------------

-- AutoContrast{value_range={0, 255}}: each image stretched so that its min and max (over axes 1 and 2 of
-- the batch, Keras's axes whatever the data format) reach the range; a flat image (NaN) is kept. Active when
-- not training too; the result is in the compute dtype.
local AutoContrast = Base:extend("AutoContrast")
M.AutoContrast = AutoContrast
AutoContrast.always_active = true
function AutoContrast:init(...)
  local o = self:_kwargs({ "value_range", "data_format" }, ...)
  self.value_range = base.value_range("AutoContrast", o.value_range, true)
  self.data_format = options.data_format("AutoContrast", o.data_format)
end
function AutoContrast:transform_images(images)
  local dt = self.compute_dtype
  local x = cast(tvr(images, self.value_range, FULL, dt), dt)
  local low = reduce.reduce_min(x, { 1, 2 }, { keepdims = true })
  local high = reduce.reduce_max(x, { 1, 2 }, { keepdims = true })
  local scale = div(convert.tensor(255, dt), sub(high, low))
  local offset = mul(math_ops.neg(low), scale)
  local y = math_ops.clip_by_value(add(mul(x, scale), offset), 0, 255)
  y = tvr(y, FULL, self.value_range, dt)
  return where(math_ops.is_nan(y), cast(images, dt), y)
end
function AutoContrast:get_config()
  local c = Base.get_config(self)
  c.value_range = copy(self.value_range)
  return c
end

-- Equalization{value_range={0, 255}, bins=256, data_format}: histogram equalization of each channel, the
-- histogram taken over the whole batch (as Keras's, which flattens the batch); a channel with one
-- occupied bin is kept. Active only when training (Keras's rule), in the compute dtype.
local Equalization = Base:extend("Equalization")
M.Equalization = Equalization
function Equalization:init(...)
  local o = self:_kwargs({ "value_range", "bins", "data_format" }, ...)
  self.value_range = base.value_range("Equalization", o.value_range, true)
  self.bins = options.positive_int("Equalization", "bins", o.bins == nil and 256 or o.bins)
  self.data_format = options.data_format("Equalization", o.data_format)
end
function Equalization:transform_images(images)
  local dt, bins, vr = self.compute_dtype, self.bins, self.value_range
  local x = cast(images, dt)
  if self.data_format == "channels_first" then x = shape_ops.transpose(x, { 0, 2, 3, 1 }) end
  local c = tonumber(x.dims[3])
  if c < 0 then
    require("tide.binding").error(layer.who(self) .. ": the number of channels must be known, got shape " ..
      tostring(images.shape))
  end
  local full = vr[1] == 0 and vr[2] == 255
  if not full then -- Keras's _scale_values into [0, 255]
    local scale = 255 / (vr[2] - vr[1])
    x = add(mul(x, scale), 0 - vr[1] * scale)
  end
  local flat = shape_ops.reshape(x, { -1, c })                             -- [N, C]
  local offsets = mul(create.range(0, c, 1, "int32"), bins)               -- [C]
  -- the histogram of each channel: bins of (v - 0) * (bins - 1) / 255, truncated and clipped
  local hidx = math_ops.cast(div(mul(flat, bins - 1), 255), "int32")
  hidx = add(math_ops.clip_by_value(hidx, 0, bins - 1), offsets)
  local ones = create.ones_like(hidx)
  local hist = shape_ops.reshape(segment.unsorted_segment_sum(shape_ops.reshape(ones, { -1 }),
    shape_ops.reshape(hidx, { -1 }), c * bins), { c, bins })            -- [C, bins]
  local nonzero = reduce.count_nonzero(hist, { 1 })                       -- [C]
  local cdf = math_ops.cast(reduce.cumsum(hist, 1), "float64")
  local big = convert.tensor(math.huge, "float64")
  local cdf_min = reduce.reduce_min(where(math_ops.greater(cdf, 0), cdf, big), { 1 }, { keepdims = true })
  local den = sub(cdf:slice { {}, { bins - 1, bins } }, cdf_min)
  den = where(math_ops.equal(den, 0), create.ones_like(den), den)
  local lut = math_ops.clip_by_value(math_ops.round(div(mul(sub(cdf, cdf_min), 255), den)), 0, 255)
  -- each pixel's entry: (v / 255) * (bins - 1), clipped, truncated
  local pidx = math_ops.cast(math_ops.clip_by_value(mul(div(flat, 255), bins - 1), 0, bins - 1), "int32")
  local eq = shape_ops.gather(shape_ops.reshape(lut, { -1 }), add(pidx, offsets))    -- [N, C] float64
  local y = where(math_ops.less_equal(nonzero, 1), math_ops.cast(flat, "float64"), eq)
  if not full then
    local scale = (vr[2] - vr[1]) / 255
    y = add(mul(y, scale), vr[1])
  end
  y = shape_ops.reshape(math_ops.cast(y, dt), dims.dims(x))
  if self.data_format == "channels_first" then y = shape_ops.transpose(y, { 0, 3, 1, 2 }) end
  return y
end
function Equalization:get_config()
  local c = Base.get_config(self)
  c.bins, c.value_range = self.bins, copy(self.value_range)
  return c
end

---------------------------------------------------------------------------
-- Solarization, RandomInvert, RandomPosterization
---------------------------------------------------------------------------

-- Solarization{addition_factor=0, threshold_factor=0, value_range={0, 255}, seed}: per image, a draw of
-- addition in [a0, a1 * 255) is added (in the 0..255 scale, clipped) and the pixels at or above a draw
-- threshold in [t0, t1 * 255) become 255 - v (Keras scales only the upper bound). Factors: a number f
-- means {0, f}; bounds in [0, 1].
local Solarization = Base:extend("Solarization")
M.Solarization = Solarization
Solarization.cast_untrained = true
function Solarization:init(...)
  local o = self:_kwargs({ "addition_factor", "threshold_factor", "value_range", "seed", "data_format" }, ...)
  self.addition_factor = base.unit_factor("Solarization", "addition_factor", o.addition_factor or 0)
  self.threshold_factor = base.unit_factor("Solarization", "threshold_factor", o.threshold_factor or 0)
  self.value_range = base.value_range("Solarization", o.value_range, true)
  self:_base_options("Solarization", o)
end
function Solarization:get_random_transformation(images)
  local dt, a, t = self.compute_dtype, self.addition_factor, self.threshold_factor
  return { additions = base.uniform(self, images, { 1, 1, 1 }, a[1], a[2] * 255, dt),
    thresholds = base.uniform(self, images, { 1, 1, 1 }, t[1], t[2] * 255, dt) }
end
function Solarization:transform_images(images, t)
  local dt = self.compute_dtype
  local x = tvr(cast(images, dt), self.value_range, FULL, dt)
  local y = math_ops.clip_by_value(add(x, cast(t.additions, dt)), 0, 255)
  y = where(math_ops.less(y, cast(t.thresholds, dt)), y, sub(255, y))
  return tvr(y, FULL, self.value_range, dt)
end
function Solarization:get_config()
  local c = Base.get_config(self)
  c.value_range, c.seed = copy(self.value_range), self.seed
  c.addition_factor, c.threshold_factor = copy(self.addition_factor), copy(self.threshold_factor)
  return c
end

-- RandomInvert{factor=1, value_range={0, 255}, seed, data_format}: each image becomes value_range[2] - x
-- with a probability drawn in factor ({0, f} for a number; bounds in [0, 1]).
local RandomInvert = Base:extend("RandomInvert")
M.RandomInvert = RandomInvert
function RandomInvert:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  self.factor = base.factor("RandomInvert", "factor", o.factor == nil and 1 or o.factor, 0, 1)
  self.value_range = base.value_range("RandomInvert", o.value_range)
  self:_base_options("RandomInvert", o)
end
function RandomInvert:get_random_transformation(images)
  local p = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  local u = base.uniform(self, images, {}, 0, 1)
  return { apply_inversion = math_ops.less(u, p) }
end
function RandomInvert:transform_images(images, t)
  local x = cast(images, self.compute_dtype)
  return where(base.per_image(t.apply_inversion), sub(self.value_range[2], x), x)
end
function RandomInvert:get_config()
  local c = Base.get_config(self)
  c.factor, c.value_range, c.seed = copy(self.factor), copy(self.value_range), self.seed
  return c
end

-- RandomPosterization{factor, value_range={0, 255}, seed, data_format}: each image's 0..255 values keep
-- their top `bits` bits, bits drawn as Keras's randint in [f0, f1) (f0 when both are equal); factor in
-- [1, 8] (a number f: {1, f}).
local RandomPosterization = Base:extend("RandomPosterization")
M.RandomPosterization = RandomPosterization
function RandomPosterization:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  if o.factor == nil then require("tide.binding").error("RandomPosterization: factor is required") end
  self.factor = base.factor("RandomPosterization", "factor", o.factor, 1, 8)
  self.value_range = base.value_range("RandomPosterization", o.value_range, true)
  self:_base_options("RandomPosterization", o)
end
function RandomPosterization:get_random_transformation(images)
  local f = self.factor
  local bits
  if f[1] ~= f[2] then
    bits = math_ops.floor(base.uniform(self, images, {}, math.floor(f[1]), math.floor(f[2])))
  else
    bits = add(mul(base.uniform(self, images, {}, 0, 1), 0), f[1])
  end
  return { shift_factor = math_ops.cast(sub(8, bits), "uint8") }
end
function RandomPosterization:transform_images(images, t)
  local dt = self.compute_dtype
  local x = tvr(images, self.value_range, FULL, dt)
  -- the uint8 value's top bits: (v >> s) << s as floor(v / 2^s) * 2^s
  local v = math_ops.cast(math_ops.cast(x, "uint8"), dt)
  local p = math_ops.pow(2, math_ops.cast(base.per_image(t.shift_factor), dt))
  return tvr(mul(math_ops.floor(div(v, p)), p), FULL, self.value_range, dt)
end
function RandomPosterization:get_config()
  local c = Base.get_config(self)
  c.factor, c.value_range, c.seed = copy(self.factor), copy(self.value_range), self.seed
  return c
end

---------------------------------------------------------------------------
-- RandomGrayscale, RandomColorDegeneration
---------------------------------------------------------------------------

-- RandomGrayscale{factor=0.5, seed, data_format}: each image turned to grayscale (its three channels all
-- 0.2989 R + 0.587 G + 0.114 B) with probability factor, a number in [0, 1].
local RandomGrayscale = Base:extend("RandomGrayscale")
M.RandomGrayscale = RandomGrayscale
function RandomGrayscale:init(...)
  local o = self:_kwargs({ "factor", "seed", "data_format" }, ...)
  self.factor = options.number("RandomGrayscale", "factor", o.factor, 0.5, 0, 1)
  self:_base_options("RandomGrayscale", o)
end
function RandomGrayscale:get_random_transformation(images)
  return { apply = math_ops.less(base.uniform(self, images, {}, 0, 1), self.factor) }
end
function RandomGrayscale:transform_images(images, t)
  local gray = base.grayscale(self, math_ops.cast(images, self.compute_dtype))
  if gray.dtype ~= images.dtype then gray = math_ops.cast(gray, images.dtype) end
  return where(base.per_image(t.apply), gray, images)
end
function RandomGrayscale:get_config()
  local c = Base.get_config(self)
  c.factor = self.factor
  return c
end

-- RandomColorDegeneration{factor, value_range={0, 255}, seed, data_format}: each image moved toward its
-- grayscale by a draw in factor (Keras's base factor: a number f gives {-f, f}; bounds in [-1, 1]),
-- clipped to value_range.
local RandomColorDegeneration = Base:extend("RandomColorDegeneration")
M.RandomColorDegeneration = RandomColorDegeneration
function RandomColorDegeneration:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  if o.factor == nil then require("tide.binding").error("RandomColorDegeneration: factor is required") end
  self.factor = base.factor("RandomColorDegeneration", "factor", o.factor, -1, 1)
  self.value_range = base.value_range("RandomColorDegeneration", o.value_range, true)
  self:_base_options("RandomColorDegeneration", o)
end
function RandomColorDegeneration:get_random_transformation(images)
  return { factor = base.uniform(self, images, { 1, 1, 1 }, self.factor[1], self.factor[2]) }
end
function RandomColorDegeneration:transform_images(images, t)
  local dt = self.compute_dtype
  local x = cast(images, dt)
  local y = add(x, mul(cast(base.per_image(t.factor), dt), sub(base.grayscale(self, x), x)))
  return math_ops.clip_by_value(y, self.value_range[1], self.value_range[2])
end
function RandomColorDegeneration:get_config()
  local c = Base.get_config(self)
  c.factor, c.value_range, c.seed = copy(self.factor), copy(self.value_range), self.seed
  return c
end

return M
