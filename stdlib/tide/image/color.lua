-- stdlib/tide/image/color.lua — tf.image's colour ops: adjust_brightness, contrast,
-- gamma, hue and saturation, RGB <-> HSV, YUV, YIQ and grayscale, per_image_standardization.
-- Compositions of elementwise ops that follow TF's kernels' formulas (adjust_hue_op.cc,
-- adjust_saturation_op.cc, colorspace_op.h), so they trace and differentiate.
-- Colour images have 3 channels in their last dim; any leading dims.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local linalg = require "tide.ops.linalg"
local convert = require "tide.convert"
local dynamic_shape = require "tide.ops.dynamic_shape"
local create = require "tide.ops.create"
local tensor = require "tide.tensor"
local util = require "tide.image.util"
local conv = require "tide.image.convert"

local M = {}

local ffi = binding.ffi
local fail = util.fail
local add, sub, mul, div = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div
local where, less, greater, equal = math_ops.where, math_ops.less, math_ops.greater, math_ops.equal
local F32, F16 = util.F32, util.F16

-- An RGB argument: a tensor of rank >= 1 whose last dim is 3 (when known).
local function rgb_arg(op, v, what, min_rank)
  local x = util.tensor_arg(op, v, what or "images")
  if x.ndim >= 0 and x.ndim < (min_rank or 1) then
    fail(op, "%s must have at least %d dims, got shape %s", what or "images", min_rank or 1, tostring(x.shape))
  end
  util.check_channels(op, x, { 3 }, what or "images")
  return x
end

-- A float argument of the colour-space conversions (TF's kernels take floats only).
local function float_rgb(op, v)
  local x = rgb_arg(op, v)
  if not dtype.is_float[tonumber(x.dt)] then
    fail(op, "images must be a float tensor, got %s (convert it with tide.image.convert_image_dtype)",
      dtype.names[tonumber(x.dt)])
  end
  return x
end

-- The three channels of x, each with the channel dim kept (shape [..., 1]).
local function channels(x)
  if x.ndim < 0 then fail("image ops", "the images' rank must be known while tracing") end
  local out = {}
  for k = 1, 3 do
    local spec = {}
    for d = 1, x.ndim - 1 do spec[d] = {} end
    spec[x.ndim] = { k - 1, k }
    out[k] = tensor.slice(x, spec)
  end
  return out[1], out[2], out[3]
end

-- x's shape as a Lua list when every dim is known, else as a tensor (traced).
local function shape_of(x)
  local list = {}
  for d = 0, x.ndim - 1 do
    if x.dims[d] < 0 then return dynamic_shape.shape(x) end
    list[d + 1] = tonumber(x.dims[d])
  end
  return list
end

local function stack3(a, b, c) return shape_ops.concat({ a, b, c }, -1) end

-- ---- value adjustments -----------------------------------------------------------

-- adjust_brightness(image, delta) as TF's: delta added in float ([0, 1] for
-- integer images, converted there and back with saturation). delta may be a tensor.
function M.adjust_brightness(image, delta)
  local x = util.tensor_arg("adjust_brightness", image, "image")
  local f, back = conv._to_float(x)
  local d = util.scalar("adjust_brightness", "delta", delta, tonumber(f.dt))
  return back(add(f, d), true)
end

-- adjust_contrast(images, contrast_factor) as TF's AdjustContrastv2: each
-- channel of each image moved away from its mean over height and width:
-- mean + factor * (x - mean), in float, converted back with saturation.
function M.adjust_contrast(images, contrast_factor)
  local x = util.tensor_arg("adjust_contrast", images, "images")
  if x.ndim >= 0 and x.ndim < 3 then
    fail("adjust_contrast", "images must have at least 3 dims [..., height, width, channels], got shape %s",
      tostring(x.shape))
  end
  local f, back = conv._to_float(x)
  local factor = util.scalar("adjust_contrast", "contrast_factor", contrast_factor, F32)
  local work = f.dt == F16 and math_ops.cast(f, "float32") or f -- TF computes half images in float
  local mean = reduce.reduce_mean(work, { -3, -2 }, true)
  local y = add(mean, mul(factor, sub(work, mean)))
  if work ~= f then y = math_ops.cast(y, "float16") end
  return back(y, true)
end

-- adjust_gamma(image, gamma=1, gain=1) as TF's: gain * image ^ gamma in
-- float ([0, 1] for integer images), converted back with saturation.
function M.adjust_gamma(image, gamma, gain)
  local x = util.tensor_arg("adjust_gamma", image, "image")
  local f, back = conv._to_float(x)
  local g = gamma == nil and 1 or util.scalar("adjust_gamma", "gamma", gamma, tonumber(f.dt))
  if type(g) == "number" and g < 0 then fail("adjust_gamma", "gamma should be a non-negative real number, got %s", g) end
  local k = gain == nil and 1 or util.scalar("adjust_gamma", "gain", gain, tonumber(f.dt))
  return back(mul(k, math_ops.pow(f, g)), true)
end

-- The hue sextant helpers of TF's adjust_hue_op.cc: the largest, middle and
-- smallest channel and the hue's sextant (0..5) from the channels' order
-- (ties count on either side, as TF's comparisons fall).
local function hv_range(r, g, b)
  local rg, c1, c2, c3, c4 = less(r, g), less(b, r), greater(b, g), less(b, g), greater(b, r)
  local vmax = where(rg, where(c2, b, g), where(c4, b, r))
  local vmin = where(rg, where(c1, b, r), where(c3, b, g))
  local vmid = where(rg, where(c1, r, where(c2, g, b)), where(c3, g, where(c4, r, b)))
  local cat = where(rg, where(c1, 1, where(c2, 3, 2)), where(c3, 0, where(c4, 4, 5)))
  return vmax, vmid, vmin, math_ops.cast(cat, dtype.names[tonumber(r.dt)])
end

-- Pick, per element, list[k + 1] where the (float) sextant is k.
local function by_sextant(cat, list)
  local out = list[6]
  for k = 5, 1, -1 do out = where(equal(cat, k - 1), list[k], out) end
  return out
end

-- cat odd?
local function odd(cat) return equal(math_ops.mod(cat, 2), 1) end

-- adjust_hue(image, delta) as TF's AdjustHue kernel: the hue (in sextants,
-- [0, 6)) turned by delta * 6 and wrapped, the largest and smallest channels kept.
function M.adjust_hue(image, delta)
  local x = rgb_arg("adjust_hue", image, "image", 3)
  if type(delta) == "number" and (delta < -1 or delta > 1) then
    fail("adjust_hue", "delta must be in the interval [-1, 1], got %s", delta)
  end
  local f, back = conv._to_float(x)
  local work = f.dt == F16 and math_ops.cast(f, "float32") or f
  local d = util.scalar("adjust_hue", "delta", delta, F32)
  local r, g, b = channels(work)
  local vmax, vmid, vmin, cat = hv_range(r, g, b)
  local span = sub(vmax, vmin)
  local flat = equal(span, 0)
  local ratio = div(sub(vmid, vmin), where(flat, 1, span)) -- a safe divisor: no NaN in the gradient either
  local h = where(flat, 0, add(cat, where(odd(cat), sub(1, ratio), ratio)))
  if type(d) == "number" then -- delta * 6 in float32, as the kernel's float arithmetic
    h = add(h, 6 * tonumber(ffi.cast("float", d)))
  else
    h = add(h, mul(d, 6))
  end
  h = where(less(h, 0), add(h, 6), h)
  h = where(math_ops.greater_equal(h, 6), sub(h, 6), h)
  local hc = math_ops.floor(h)
  local t = sub(h, hc)
  t = where(odd(hc), sub(1, t), t)
  local mid = add(vmin, mul(t, span))
  local y = stack3(by_sextant(hc, { vmax, mid, vmin, vmin, mid, vmax }),
    by_sextant(hc, { mid, vmax, vmax, mid, vmin, vmin }),
    by_sextant(hc, { vmin, vmin, mid, vmax, vmax, mid }))
  if work ~= f then y = math_ops.cast(y, "float16") end
  return back(y, false)
end

-- adjust_saturation(image, saturation_factor) as TF's AdjustSaturation
-- kernel: to HSV (its own formulas), saturation scaled and clipped to [0, 1], back to RGB.
function M.adjust_saturation(image, saturation_factor)
  local x = rgb_arg("adjust_saturation", image, "image", 3)
  local f, back = conv._to_float(x)
  local work = f.dt == F16 and math_ops.cast(f, "float32") or f
  local scale = util.scalar("adjust_saturation", "saturation_factor", saturation_factor, F32)
  local r, g, b = channels(work)
  local v = math_ops.maximum(r, math_ops.maximum(g, b))
  local span = sub(v, math_ops.minimum(r, math_ops.minimum(g, b)))
  local s = where(greater(v, 0), div(span, where(greater(v, 0), v, 1)), 0)
  local norm = div(1, mul(6, where(greater(span, 0), span, 1)))
  local h = where(equal(r, v), mul(norm, sub(g, b)),
    where(equal(g, v), add(mul(norm, sub(b, r)), 2 / 6), add(mul(norm, sub(r, g)), 4 / 6)))
  h = where(math_ops.less_equal(span, 0), 0, h)
  h = where(less(h, 0), add(h, 1), h)
  s = math_ops.clip_by_value(mul(s, scale), 0, 1)
  -- hsv_to_rgb of the kernel: chroma c, the second-largest component xx per sextant
  local c = mul(s, v)
  local m = sub(v, c)
  local dh = mul(h, 6)
  local cat = math_ops.floor(dh)
  local fm = sub(dh, mul(2, math_ops.floor(mul(dh, 0.5))))
  local xx = mul(c, sub(1, math_ops.abs(sub(fm, 1))))
  local zero = create.zeros_like(c)
  local function pick(list) -- a sextant of 6 (h = 1) gives 0 in each channel, as the kernel's default
    return where(math_ops.greater_equal(cat, 6), 0, by_sextant(cat, list))
  end
  local y = stack3(add(pick { c, xx, zero, zero, xx, c }, m), add(pick { xx, c, c, xx, zero, zero }, m),
    add(pick { zero, zero, xx, c, c, xx }, m))
  if work ~= f then y = math_ops.cast(y, "float16") end
  return back(y, false)
end

-- per_image_standardization(image) as TF's: each image (the last three dims)
-- less its mean, over max(stddev, 1 / sqrt(pixels)); float32 out.
function M.per_image_standardization(image)
  local x = util.image_arg("per_image_standardization", image)
  x = math_ops.cast(x, "float32")
  local axes = { -1, -2, -3 }
  local n = 1
  for d = x.ndim - 3, x.ndim - 1 do
    local v = tonumber(x.dims[d])
    if v < 0 then n = nil break end
    n = n * v
  end
  local mean = reduce.reduce_mean(x, axes, true)
  local std = reduce.reduce_std(x, axes, true)
  local min_std
  if n then min_std = 1 / math.sqrt(n)
  else
    local pixels = reduce.reduce_prod(dynamic_shape.shape(x):slice { { -3, nil } })
    min_std = math_ops.rsqrt(math_ops.cast(pixels, "float32"))
  end
  return div(sub(x, mean), math_ops.maximum(std, min_std))
end

-- ---- colour spaces ---------------------------------------------------------------

-- rgb_to_hsv(images) as TF's RGBToHSV: hue in [0, 1) (0 where the channels
-- are equal), saturation (max - min) / max (0 for black), value max.
function M.rgb_to_hsv(images)
  local x = float_rgb("rgb_to_hsv", images)
  local r, g, b = channels(x)
  local v = math_ops.maximum(math_ops.maximum(r, g), b)
  local span = sub(v, math_ops.minimum(math_ops.minimum(r, g), b))
  local s = where(greater(v, 0), div(span, where(greater(v, 0), v, 1)), 0)
  local norm = mul(math_ops.reciprocal(where(greater(span, 0), span, 1)), 1 / 6)
  local h = where(equal(r, v), mul(norm, sub(g, b)),
    where(equal(g, v), add(mul(norm, sub(b, r)), 2 / 6), add(mul(norm, sub(r, g)), 4 / 6)))
  h = where(greater(span, 0), h, 0)
  h = where(less(h, 0), add(h, 1), h)
  return stack3(h, s, v)
end

-- hsv_to_rgb(images) as TF's HSVToRGB.
function M.hsv_to_rgb(images)
  local x = float_rgb("hsv_to_rgb", images)
  local h, s, v = channels(x)
  local dh = mul(h, 6)
  local function ramp(t) return math_ops.clip_by_value(t, 0, 1) end
  local dr = ramp(sub(math_ops.abs(sub(dh, 3)), 1))
  local dg = ramp(add(math_ops.neg(math_ops.abs(sub(dh, 2))), 2))
  local db = ramp(add(math_ops.neg(math_ops.abs(sub(dh, 4))), 2))
  local one_s = add(math_ops.neg(s), 1)
  return stack3(mul(add(one_s, mul(s, dr)), v), mul(add(one_s, mul(s, dg)), v), mul(add(one_s, mul(s, db)), v))
end

-- TF's 3x3 kernels (image_ops_impl.py): out[..., j] = sum_i in[..., i] * K[i][j].
local KERNELS = {
  rgb_to_yiq = { { 0.299, 0.59590059, 0.2115 }, { 0.587, -0.27455667, -0.52273617 }, { 0.114, -0.32134392, 0.31119955 } },
  yiq_to_rgb = { { 1, 1, 1 }, { 0.95598634, -0.27201283, -1.10674021 }, { 0.6208248, -0.64720424, 1.70423049 } },
  rgb_to_yuv = { { 0.299, -0.14714119, 0.61497538 }, { 0.587, -0.28886916, -0.51496512 }, { 0.114, 0.43601035, -0.10001026 } },
  yuv_to_rgb = { { 1, 1, 1 }, { 0, -0.394642334, 2.03206185 }, { 1.13988303, -0.58062185, 0 } },
}

for name, k in pairs(KERNELS) do
  -- name(images) as TF's: a linear map of the last dim (tensordot with the kernel).
  M[name] = function(images)
    local x = float_rgb(name, images)
    local kernel = convert.tensor(k, dtype.names[tonumber(x.dt)], name)
    local flat = shape_ops.reshape(x, { -1, 3 })
    local y = linalg.matmul(flat, kernel)
    return shape_ops.reshape(y, shape_of(x))
  end
end

-- rgb_to_grayscale(images) as TF's: the weighted sum 0.2989 R + 0.587 G +
-- 0.114 B in float32, converted back to the images' dtype (no saturation).
function M.rgb_to_grayscale(images)
  local x = rgb_arg("rgb_to_grayscale", images)
  local f = conv.convert_image_dtype(x, "float32")
  local r, g, b = channels(f)
  local gray = add(add(mul(r, 0.2989), mul(g, 0.587)), mul(b, 0.114))
  return conv.convert_image_dtype(gray, dtype.names[tonumber(x.dt)])
end

-- grayscale_to_rgb(images) as TF's: the one channel repeated three times.
function M.grayscale_to_rgb(images)
  local x = util.tensor_arg("grayscale_to_rgb", images, "images")
  if x.ndim >= 0 and x.ndim < 2 then
    fail("grayscale_to_rgb", "images must have at least 2 dims, got shape %s", tostring(x.shape))
  end
  util.check_channels("grayscale_to_rgb", x, { 1 }, "images")
  return shape_ops.concat({ x, x, x }, -1)
end

return M
