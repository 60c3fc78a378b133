-- stdlib/tide/layers/preprocessing/image_filter.lua — Keras 3's hue/saturation and filter layers: RandomHue,
-- RandomSaturation, RandomColorJitter, RandomSharpness, RandomGaussianBlur, RandomErasing (Keras's formulas).
-- B = batch, H = height, W = width, C = channels; transform_images takes [B, H, W, C] ([B, C, H, W]
-- channels_first); the call takes rank 3 or 4 or a {images=, labels=} table (image_base.lua).
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local nn_conv = require "tide.ops.nn_conv"
local random = require "tide.random"
local image = require "tide.image"
local options = require "tide.layers.options"
local util = require "tide.layers.preprocessing.image_util"
local base = require "tide.layers.preprocessing.image_base"
local image_random = require "tide.layers.preprocessing.image_random"

local Base = base.Base
local cast, copy = util.cast, base.copy
local add, sub, mul, div, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div, math_ops.where
local tvr = base.transform_value_range
local fmt = string.format

local M = {}

-- f(x) on channels-last images of a channels_first layer (and back).
local function channels_last(self, x, f)
  if self.data_format ~= "channels_first" then return f(x) end
  return shape_ops.transpose(f(shape_ops.transpose(x, { 0, 2, 3, 1 })), { 0, 3, 1, 2 })
end

-- The three channels of channels-last x as [B, H, W] tensors, and their stack back.
local function unstack3(x) return shape_ops.unstack(x, { axis = 3 }) end
local function stack3(a, b, c) return shape_ops.stack({ a, b, c }, 3) end

local function check_rgb(self, x)
  if tonumber(x.dims[3]) ~= 3 then
    binding.error(fmt("%s: expected RGB images (3 channels), got shape %s", require("tide.layers.layer").who(self),
      tostring(x.shape)))
  end
end

---------------------------------------------------------------------------
-- RandomHue, RandomSaturation, RandomColorJitter
---------------------------------------------------------------------------

-- RandomHue{factor, value_range={0, 255}, seed, data_format}: each image's hue turned by +-f/2 of a turn,
-- f drawn in factor (a number f: {0, f}; bounds in [0, 1]) and the sign by a fair coin; RGB in value_range.
local RandomHue = Base:extend("RandomHue")
M.RandomHue = RandomHue
function RandomHue:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  if o.factor == nil then binding.error("RandomHue: factor is required") end
  self.factor = base.factor("RandomHue", "factor", o.factor, 0, 1)
  self.value_range = base.value_range("RandomHue", o.value_range)
  self:_base_options("RandomHue", o)
end
function RandomHue:get_random_transformation(images)
  local invert = where(math_ops.greater(base.uniform(self, images, {}, 0, 1), 0.5), -1, 1)
  local f = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  return { factor = mul(mul(cast(invert, "float32"), f), 0.5) }
end
function RandomHue:transform_images(images, t)
  local dt = self.compute_dtype
  local x = tvr(cast(images, dt), self.value_range, { 0, 1 }, dt)
  return channels_last(self, x, function(y)
    check_rgb(self, y)
    local h, s, v = table.unpack(unstack3(image.rgb_to_hsv(y)))
    h = add(h, shape_ops.reshape(cast(t.factor, dt), { -1, 1, 1 }))
    h = where(math_ops.greater(h, 1), sub(h, 1), h)
    h = where(math_ops.less(h, 0), add(h, 1), h)
    y = math_ops.clip_by_value(image.hsv_to_rgb(stack3(h, s, v)), 0, 1)
    return tvr(y, { 0, 1 }, self.value_range, dt)
  end)
end
function RandomHue:get_config()
  local c = Base.get_config(self)
  c.factor, c.value_range, c.seed = copy(self.factor), copy(self.value_range), self.seed
  return c
end

-- RandomSaturation{factor, value_range={0, 255}, seed, data_format}: each image's HSV saturation times
-- f / (1 - f + 1e-7), f drawn in factor (Keras's base factor: a number f gives {-f, f}; bounds in
-- [-1, 1]), clipped to value_range (Keras clips the saturation there).
local RandomSaturation = Base:extend("RandomSaturation")
M.RandomSaturation = RandomSaturation
function RandomSaturation:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  if o.factor == nil then binding.error("RandomSaturation: factor is required") end
  self.factor = base.factor("RandomSaturation", "factor", o.factor, -1, 1)
  self.value_range = base.value_range("RandomSaturation", o.value_range, true)
  self:_base_options("RandomSaturation", o)
end
function RandomSaturation:get_random_transformation(images)
  local f = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  return { factor = div(f, add(sub(1, f), 1e-7)) }
end
function RandomSaturation:transform_images(images, t)
  local dt = self.compute_dtype
  return channels_last(self, cast(images, dt), function(y)
    check_rgb(self, y)
    local h, s, v = table.unpack(unstack3(image.rgb_to_hsv(y)))
    s = math_ops.clip_by_value(mul(s, shape_ops.reshape(cast(t.factor, dt), { -1, 1, 1 })), self.value_range[1],
      self.value_range[2])
    return image.hsv_to_rgb(stack3(h, s, v))
  end)
end
function RandomSaturation:get_config()
  local c = Base.get_config(self)
  c.factor, c.value_range, c.seed = copy(self.factor), copy(self.value_range), self.seed
  return c
end

-- RandomColorJitter{value_range={0, 255}, brightness_factor, contrast_factor, saturation_factor,
-- hue_factor, seed, data_format}: RandomBrightness, RandomContrast, RandomSaturation and RandomHue in
-- that order, each where its factor is given (each draws from the layer's seed stream).
local RandomColorJitter = Base:extend("RandomColorJitter")
M.RandomColorJitter = RandomColorJitter
local JITTER = {
  { "brightness_factor", image_random.RandomBrightness }, { "contrast_factor", image_random.RandomContrast },
  { "saturation_factor", RandomSaturation }, { "hue_factor", RandomHue },
}
function RandomColorJitter:init(...)
  local o = self:_kwargs({ "value_range", "brightness_factor", "contrast_factor", "saturation_factor", "hue_factor",
    "seed", "data_format" }, ...)
  self.value_range = base.value_range("RandomColorJitter", o.value_range)
  self:_base_options("RandomColorJitter", o)
  self._steps = {}
  for _, s in ipairs(JITTER) do
    local key, cls = s[1], s[2]
    self[key] = copy(o[key])
    if o[key] ~= nil then
      local ok, l = pcall(cls, { factor = o[key], value_range = self.value_range, seed = self.seed,
        data_format = self.data_format, dtype = self.dtype_policy })
      if not ok then binding.error(fmt("RandomColorJitter: %s: %s", key, tostring(l))) end
      self._steps[#self._steps + 1] = l
    end
  end
end
function RandomColorJitter:transform_images(images)
  local x = cast(images, self.compute_dtype)
  for _, l in ipairs(self._steps) do x = cast(l:call(x, { training = true }), self.compute_dtype) end
  return x
end
function RandomColorJitter:get_config()
  local c = Base.get_config(self)
  c.value_range, c.seed = copy(self.value_range), self.seed
  for _, s in ipairs(JITTER) do c[s[1]] = copy(self[s[1]]) end
  return c
end

---------------------------------------------------------------------------
-- RandomSharpness, RandomGaussianBlur
---------------------------------------------------------------------------

-- x (channels last) through a [kh, kw] kernel on every channel, zero-padded to its size ("SAME").
local function depthwise(x, kernel, kh, kw)
  local c = tonumber(x.dims[3])
  if c < 0 then binding.error("image filter: the number of channels must be known, got shape " .. tostring(x.shape)) end
  local k = shape_ops.tile(shape_ops.reshape(kernel, { kh, kw, 1, 1 }), { 1, 1, c, 1 })
  return nn_conv.depthwise_conv2d(x, k, { strides = 1, padding = "SAME" })
end

-- RandomSharpness{factor, value_range={0, 255}, seed, data_format}: each image blended with its 3x3
-- smoothing (Keras's [1 1 1; 1 5 1; 1 1 1] / 13) by 1 - 2f, f drawn in factor (a number f: {0, f};
-- bounds in [0, 1]): f = 0.5 keeps the image, more sharpens; clipped to value_range.
local RandomSharpness = Base:extend("RandomSharpness")
M.RandomSharpness = RandomSharpness
RandomSharpness.cast_untrained = true
function RandomSharpness:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  if o.factor == nil then binding.error("RandomSharpness: factor is required") end
  self.factor = base.factor("RandomSharpness", "factor", o.factor, 0, 1)
  self.value_range = base.value_range("RandomSharpness", o.value_range, true)
  self:_base_options("RandomSharpness", o)
end
function RandomSharpness:get_random_transformation(images)
  return { factor = base.uniform(self, images, {}, self.factor[1], self.factor[2]) }
end
function RandomSharpness:transform_images(images, t)
  local dt = self.compute_dtype
  return channels_last(self, cast(images, dt), function(x)
    local f = base.per_image(cast(mul(t.factor, 2), dt))
    local a, b = 1 / 13, 5 / 13
    local smooth = depthwise(x, convert.tensor({ a, a, a, a, b, a, a, a, a }, dt), 3, 3)
    local y = add(x, mul(sub(1, f), sub(smooth, x)))
    return math_ops.clip_by_value(y, self.value_range[1], self.value_range[2])
  end)
end
function RandomSharpness:get_config()
  local c = Base.get_config(self)
  c.factor, c.value_range, c.seed = copy(self.factor), copy(self.value_range), self.seed
  return c
end

-- An odd kernel size or a pair of them (Keras keeps the pair's order).
local function kernel_size(cls, v)
  local function odd(n) return options.is_int(n) and n > 0 and n % 2 == 1 end
  if type(v) == "table" then
    if #v ~= 2 or not odd(v[1]) or not odd(v[2]) then
      binding.error(fmt("%s: kernel_size must be an odd positive integer (or a list of two), got %s", cls,
        base.list_text(v)))
    end
    return { v[1], v[2] }
  end
  if not odd(v) then
    binding.error(fmt("%s: kernel_size must be an odd positive integer (or a list of two), got %s", cls, tostring(v)))
  end
  return { v, v }
end

-- keras.ops.image.gaussian_blur's kernel (TF backend): 1-d Gaussians of size[1] (sigma[1]) along x
-- and size[2] (sigma[2]) along y, their outer product [size[2], size[1]] read as [size[1], size[2]].
local function gaussian_kernel(size, sigma, dt)
  local function k1(n, s)
    local x = sub(create.range(0, n, 1, dt), (n - 1) / 2)
    local k = math_ops.exp(mul(-0.5, math_ops.square(div(x, s))))
    return div(k, reduce.reduce_sum(k))
  end
  local kx = k1(size[1], sigma:slice { { 0, 1 } })
  local ky = k1(size[2], sigma:slice { { 1, 2 } })
  return mul(shape_ops.reshape(ky, { -1, 1 }), shape_ops.reshape(kx, { 1, -1 }))
end
M.gaussian_kernel = gaussian_kernel

-- RandomGaussianBlur{factor=1, kernel_size=3, sigma=1, value_range={0, 255}, seed, data_format}: each
-- image blurred with a probability drawn in factor ({0, f} for a number), by a Gaussian of one sigma pair
-- (x, y) per call drawn in sigma ({0, s} for a number; Keras bounds it in [0, 1]), clipped to value_range.
local RandomGaussianBlur = Base:extend("RandomGaussianBlur")
M.RandomGaussianBlur = RandomGaussianBlur
RandomGaussianBlur.cast_untrained = true
function RandomGaussianBlur:init(...)
  local o = self:_kwargs({ "factor", "kernel_size", "sigma", "value_range", "data_format", "seed" }, ...)
  self.factor = base.factor("RandomGaussianBlur", "factor", o.factor == nil and 1 or o.factor, 0, 1)
  self.kernel_size = kernel_size("RandomGaussianBlur", o.kernel_size == nil and 3 or o.kernel_size)
  self.sigma = base.factor("RandomGaussianBlur", "sigma", o.sigma == nil and 1 or o.sigma, 0, 1)
  self.value_range = base.value_range("RandomGaussianBlur", o.value_range)
  self:_base_options("RandomGaussianBlur", o)
end
function RandomGaussianBlur:get_random_transformation(images)
  local p = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  local u = base.uniform(self, images, {}, 0, 1)
  local sigma = random.uniform({ 2 }, { minval = self.sigma[1], maxval = self.sigma[2], dtype = self.compute_dtype,
    seed = self.seed })
  return { should_apply_blur = math_ops.less(u, p), blur_factor = add(sigma, 1e-6) }
end
function RandomGaussianBlur:transform_images(images, t)
  local dt = self.compute_dtype
  local ks = self.kernel_size
  return channels_last(self, cast(images, dt), function(x)
    local kernel = gaussian_kernel(ks, cast(t.blur_factor, dt), dt)
    local blurred = depthwise(x, kernel, ks[1], ks[2])
    local y = where(base.per_image(t.should_apply_blur), blurred, x)
    return math_ops.clip_by_value(y, self.value_range[1], self.value_range[2])
  end)
end
function RandomGaussianBlur:get_config()
  local c = Base.get_config(self)
  c.factor, c.kernel_size, c.sigma = copy(self.factor), copy(self.kernel_size), copy(self.sigma)
  c.value_range, c.seed = copy(self.value_range), self.seed
  return c
end

---------------------------------------------------------------------------
-- RandomErasing
---------------------------------------------------------------------------

-- RandomErasing{factor=1, scale={0.02, 0.33}, fill_value=nil, value_range={0, 255}, seed, data_format}:
-- with a probability drawn in factor ({0, f} for a number), one rectangle of each image is replaced:
-- its sides are sqrt(s) of the image's (s drawn in scale, {0, s} for a number, per side) at a uniform
-- place; the fill is fill_value (a number, or one per channel) or, when nil, normal noise times
-- value_range[2]; clipped to value_range.
local RandomErasing = Base:extend("RandomErasing")
M.RandomErasing = RandomErasing
RandomErasing.cast_untrained = true
function RandomErasing:init(...)
  local o = self:_kwargs({ "factor", "scale", "fill_value", "value_range", "seed", "data_format" }, ...)
  self.factor = base.factor("RandomErasing", "factor", o.factor == nil and 1 or o.factor, 0, 1)
  self.scale = base.factor("RandomErasing", "scale", o.scale == nil and { 0.02, 0.33 } or o.scale, 0, 1)
  local fv = o.fill_value
  if fv ~= nil and type(fv) ~= "number" and not (type(fv) == "table" and #fv == 3 and type(fv[1]) == "number"
      and type(fv[2]) == "number" and type(fv[3]) == "number") then
    binding.error(fmt("RandomErasing: fill_value must be a number (or a list of three numbers), got %s",
      base.list_text(fv)))
  end
  self.fill_value = copy(fv)
  self.value_range = base.value_range("RandomErasing", o.value_range)
  self:_base_options("RandomErasing", o)
end
function RandomErasing:get_random_transformation(images)
  local dt = self.compute_dtype
  local x = channels_last(self, images, function(y) return y end)
  local h, w = util.known_hw({ data_format = "channels_last", name = self.name }, x)
  local mw = math_ops.sqrt(base.uniform(self, images, { 2 }, self.scale[1], self.scale[2], dt))
  local function bounds(len, ratio)
    local crop = mul(ratio, len)
    local start = mul(base.uniform(self, images, {}, 0, 1, dt), sub(len, crop))
    return base.per_image(start), base.per_image(add(start, crop))
  end
  local x0, x1 = bounds(w, shape_ops.reshape(mw:slice { {}, { 0, 1 } }, { -1 }))
  local y0, y1 = bounds(h, shape_ops.reshape(mw:slice { {}, { 1, 2 } }, { -1 }))
  local gy = shape_ops.reshape(create.range(0, h, 1, dt), { 1, h, 1, 1 })
  local gx = shape_ops.reshape(create.range(0, w, 1, dt), { 1, 1, w, 1 })
  local mask = math_ops.logical_and(math_ops.logical_and(math_ops.greater_equal(gx, x0), math_ops.less(gx, x1)),
    math_ops.logical_and(math_ops.greater_equal(gy, y0), math_ops.less(gy, y1)))     -- [B, H, W, 1]
  local p = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  local u = base.uniform(self, images, {}, 0, 1)
  local fill
  local vr = self.value_range
  if self.fill_value == nil then
    fill = mul(random.normal(base.shape_arg(x), { dtype = dt, seed = self.seed }), vr[2])
  else
    local fv = type(self.fill_value) == "number" and { self.fill_value } or self.fill_value
    fill = convert.tensor(fv, dt)
  end
  fill = math_ops.clip_by_value(fill, math.min(vr[1], vr[2]), math.max(vr[1], vr[2]))
  local back = function(m)
    if self.data_format ~= "channels_first" or m.ndim ~= 4 then return m end
    return shape_ops.transpose(m, { 0, 3, 1, 2 })
  end
  return { apply_erasing = math_ops.less(u, p), batch_masks = back(mask), fill_value = back(fill) }
end
function RandomErasing:transform_images(images, t)
  local x = cast(images, self.compute_dtype)
  local fill = t.fill_value
  if fill.ndim == 1 and self.data_format == "channels_first" then fill = shape_ops.reshape(fill, { -1, 1, 1 }) end
  local erased = where(t.batch_masks, cast(fill, x.dtype), x)
  return where(base.per_image(t.apply_erasing), erased, x)
end
function RandomErasing:get_config()
  local c = Base.get_config(self)
  c.factor, c.scale, c.fill_value = copy(self.factor), copy(self.scale), copy(self.fill_value)
  c.value_range, c.seed = copy(self.value_range), self.seed
  return c
end

return M
