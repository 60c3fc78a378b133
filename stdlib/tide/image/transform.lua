-- stdlib/tide/image/transform.lua — samplers at computed positions: affine_transform (keras.ops.image's, i.e.
-- TF's ImageProjectiveTransformV3, under Keras's RandomRotation/Zoom/Translation) and extract_glimpse.
-- A composition of elementwise ops and gathers (so it traces, runs in dataset maps and differentiates).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local recorder = require "tide.tape_recorder"
local reduce = require "tide.ops.reduce"
local random = require "tide.random"
local dynamic_shape = require "tide.ops.dynamic_shape"
local util = require "tide.image.util"

local M = {}

local fail = util.fail
local add, sub, mul, div, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div, math_ops.where
local floor, lt, gt, ge = math_ops.floor, math_ops.less, math_ops.greater, math_ops.greater_equal
local land = math_ops.logical_and

local INTERPOLATIONS = { nearest = true, bilinear = true }
local FILL_MODES = { constant = true, nearest = true, wrap = true, reflect = true }

local function clamp(c, len) return math_ops.clip_by_value(c, 0, len - 1) end

-- TF's MapCoordinate for each fill mode (image_ops.h, after scipy's ndimage), on float32
-- coordinates c along an axis of len pixels. TF truncates quotients toward zero; the
-- quotients here are never negative, so floor is that truncation.
local MAP = {}
function MAP.constant(c) return c end
function MAP.nearest(c, len) return clamp(c, len) end
function MAP.reflect(c, len) -- [abcd] -> [dcba|abcd|dcba]
  if len <= 1 then return mul(c, 0) end
  local sz2 = 2 * len
  local n = add(mul(floor(div(math_ops.neg(c), sz2)), sz2), c)     -- c < 0: sz2 * trunc(-c / sz2) + c
  n = where(lt(n, -len), add(n, sz2), sub(-1, n))
  local p = sub(c, mul(floor(div(c, sz2)), sz2))                   -- c > len - 1: c - sz2 * trunc(c / sz2)
  p = where(ge(p, len), sub(sz2 - 1, p), p)
  return clamp(where(lt(c, 0), n, where(gt(c, len - 1), p, c)), len)
end
function MAP.wrap(c, len) -- [abcd] -> [abcd|abcd|abcd], with TF's own period arithmetic
  if len <= 1 then return mul(c, 0) end
  local sz = len - 1
  local n = add(c, mul(add(floor(div(math_ops.neg(c), sz)), 1), len))
  local p = sub(c, mul(floor(div(c, sz)), len))
  return clamp(where(lt(c, 0), n, where(gt(c, len - 1), p, c)), len)
end

-- The rows (flat y * W + x, int32) of pixel coordinates yi, xi (float, maybe outside),
-- and whether each lies inside the image.
local function rows_of(yi, xi, h, w)
  local inside = land(land(ge(yi, 0), lt(yi, h)), land(ge(xi, 0), lt(xi, w)))
  -- (a NaN coordinate, of a NaN transform, is outside: its row is 0, never a cast of NaN)
  local zero = mul(yi, 0)
  local r = add(mul(math_ops.cast(where(inside, yi, zero), "int32"), w),
    math_ops.cast(where(inside, xi, zero), "int32"))
  return r, inside
end

-- affine_transform(images, transform, {interpolation="bilinear", fill_mode="constant",
-- fill_value=0, data_format="channels_last"}) as keras.ops.image.affine_transform (TF's
-- ImageProjectiveTransformV3): output pixel (x, y) reads the input at
-- ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, for the transform
-- [a0, a1, a2, b0, b1, b2, c0, c1] ([8] for all images, [batch, 8] one per image); points
-- outside are mapped by fill_mode ("reflect", "wrap", "nearest"), or ("constant") their taps
-- outside the image read fill_value (a point within a pixel of the edge blends both, as TF).
-- Coordinates in float32 as TF's kernel; values in the image's float dtype
-- (float64 stays float64, where TF computes in float32). Height, width and channels must be
-- known while tracing (the batch may be None). Differentiable in the images (the sampler's
-- exact adjoint, where TF's gradient re-samples by the inverse transform); none in the transform.
function M.affine_transform(images, transform, ...)
  local op = "affine_transform"
  local o = args.parse(op, { "interpolation", "fill_mode", "fill_value", "data_format" }, ...)
  local interpolation = o.interpolation or "bilinear"
  if not INTERPOLATIONS[interpolation] then
    fail(op, "interpolation must be \"nearest\" or \"bilinear\", got %s", tostring(interpolation))
  end
  local mode = o.fill_mode or "constant"
  if not FILL_MODES[mode] then
    fail(op, "fill_mode must be \"constant\", \"nearest\", \"wrap\" or \"reflect\", got %s", tostring(mode))
  end
  local fill = o.fill_value == nil and 0 or args.number(op, "fill_value", o.fill_value)
  local format = o.data_format or "channels_last"
  if format ~= "channels_last" and format ~= "channels_first" then
    fail(op, "data_format must be \"channels_last\" or \"channels_first\", got %s", tostring(format))
  end
  local x = util.image_arg(op, images, "images")
  if x.ndim < 0 then fail(op, "the images' rank must be known while tracing") end
  if not dtype.is_float[tonumber(x.dt)] then
    fail(op, "images must be a float tensor, got %s", dtype.names[tonumber(x.dt)])
  end
  local t = util.tensor_arg(op, transform, "transform")
  if t.ndim ~= 1 and t.ndim ~= 2 then
    fail(op, "transform must be [8] or [batch, 8], got shape %s", tostring(t.shape))
  end
  if tonumber(t.dims[t.ndim - 1]) >= 0 and tonumber(t.dims[t.ndim - 1]) ~= 8 then
    fail(op, "transform must have 8 values in its last dim, got shape %s", tostring(t.shape))
  end
  local single = x.ndim == 3
  if single then x = shape_ops.expand_dims(x, 0) end
  if format == "channels_first" then x = shape_ops.transpose(x, { 0, 2, 3, 1 }) end
  local h, w, c = tonumber(x.dims[1]), tonumber(x.dims[2]), tonumber(x.dims[3])
  if h < 0 or w < 0 or c < 0 then
    fail(op, "the images' height, width and channels must be known while tracing, got shape %s", tostring(x.shape))
  end
  if t.ndim == 1 then t = shape_ops.expand_dims(t, 0) end
  local shared = tonumber(t.dims[0]) == 1
  local b = tonumber(x.dims[0])
  if not shared and b >= 0 and tonumber(t.dims[0]) >= 0 and tonumber(t.dims[0]) ~= b then
    fail(op, "transform %s must have one row or one per image (%d)", tostring(t.shape), b)
  end
  t = recorder.stop_gradient(math_ops.cast(t, "float32"))
  local col = shape_ops.split(shape_ops.reshape(t, { -1, 8, 1 }), 8, { axis = 1 }) -- each [B', 1, 1]
  local xs = shape_ops.reshape(create.range(0, w, 1, "float32"), { 1, 1, w })
  local ys = shape_ops.reshape(create.range(0, h, 1, "float32"), { 1, h, 1 })
  local k = add(add(mul(col[7], xs), mul(col[8], ys)), 1)
  local in_x = div(add(add(mul(col[1], xs), mul(col[2], ys)), col[3]), k)
  local in_y = div(add(add(mul(col[4], xs), mul(col[5], ys)), col[6]), k)
  local px, py = MAP[mode](in_x, w), MAP[mode](in_y, h)
  -- "constant" leaves points outside: their taps outside read fill_value (so edges blend, as TF
  -- 2.21's kernel does); an infinite projection reads fill_value
  local infinite = math_ops.equal(k, 0)
  local vt = dtype.names[tonumber(x.dt)]
  local flat = shape_ops.reshape(x, { -1, h * w, c })
  local function read(yi, xi) -- [B', H, W] pixel coordinates -> values [B, H*W, C] and inside [B', H*W, 1]
    local r, inside = rows_of(yi, xi, h, w)
    local v
    if shared then
      v = shape_ops.gather(flat, shape_ops.reshape(r, { h * w }), { axis = 1 })
    else
      v = shape_ops.gather(flat, shape_ops.reshape(r, { -1, h * w }), { axis = 1, batch_dims = 1 })
    end
    return v, shape_ops.reshape(inside, { -1, h * w, 1 })
  end
  local function with_fill(v, inside) return where(inside, v, math_ops.cast(fill, vt)) end
  local out
  if interpolation == "nearest" then
    -- std::round (halves away from zero), exact in float64
    local function round(v)
      v = math_ops.cast(v, "float64")
      return where(lt(v, 0), math_ops.neg(floor(add(math_ops.neg(v), 0.5))), floor(add(v, 0.5)))
    end
    local ry, rx = round(py), round(px)
    out = with_fill(read(ry, rx))
  else
    local yf, xf = floor(py), floor(px)
    local yc, xc = add(yf, 1), add(xf, 1)
    local function wgt(v) return shape_ops.reshape(math_ops.cast(v, vt), { -1, h * w, 1 }) end
    local wxc, wxf = wgt(sub(xc, px)), wgt(sub(px, xf))
    local wyc, wyf = wgt(sub(yc, py)), wgt(sub(py, yf))
    local top = add(mul(wxc, with_fill(read(yf, xf))), mul(wxf, with_fill(read(yf, xc))))
    local bottom = add(mul(wxc, with_fill(read(yc, xf))), mul(wxf, with_fill(read(yc, xc))))
    out = add(mul(wyc, top), mul(wyf, bottom))
  end
  out = where(shape_ops.reshape(infinite, { -1, h * w, 1 }), math_ops.cast(fill, vt), out)
  out = shape_ops.reshape(out, { -1, h, w, c })
  if format == "channels_first" then out = shape_ops.transpose(out, { 0, 3, 1, 2 }) end
  if single then out = shape_ops.squeeze(out, { 0 }) end
  return out
end

-- ---- extract_glimpse -------------------------------------------------------------------------

local NOISES = { uniform = true, gaussian = true, zero = true }

-- extract_glimpse(input, size, offsets, {centered=true, normalized=true, noise="uniform"}) as TF2's
-- tf.image.extract_glimpse (ExtractGlimpseV2): for image i a size {gh, gw} window whose corner is
-- offsets[i] = (y, x) made pixels as TF's kernel does (normalized: times the image's size; centered:
-- halved, moved by half the image and back by half the window; pixel offsets centered: moved by half
-- the image), truncated toward zero. Pixels of the window outside the image are noise: "zero", or
-- drawn from tide's stream as TF draws them ("uniform": in [min, max] of the image; "gaussian": each
-- channel's mean and deviation, clipped to its range). Float images [B, H, W, C] (H, W, C known while
-- tracing); differentiable in the input (TF registers no gradient).
function M.extract_glimpse(input, size, offsets, ...)
  local op = "extract_glimpse"
  local o = args.parse(op, { "centered", "normalized", "noise" }, ...)
  local x = util.image_arg(op, input, "input", 4)
  if x.ndim < 0 then fail(op, "the input's rank must be known while tracing") end
  if not dtype.is_float[tonumber(x.dt)] then fail(op, "input must be a float tensor, got %s", dtype.names[tonumber(x.dt)]) end
  local h, w, c = tonumber(x.dims[1]), tonumber(x.dims[2]), tonumber(x.dims[3])
  if h < 0 or w < 0 or c < 0 then
    fail(op, "the input's height, width and channels must be known while tracing, got shape %s", tostring(x.shape))
  end
  if h == 0 or w == 0 then fail(op, "input must have a positive height and width, got shape %s", tostring(x.shape)) end
  if type(size) ~= "table" or #size ~= 2 then fail(op, "size must be {glimpse_height, glimpse_width}") end
  local gh, gw = util.count(op, "glimpse_height", size[1], true), util.count(op, "glimpse_width", size[2], true)
  local off = util.tensor_arg(op, offsets, "offsets")
  if off.ndim >= 0 and (off.ndim ~= 2 or (off.dims[1] >= 0 and off.dims[1] ~= 2)) then
    fail(op, "offsets must be [batch, 2], got shape %s", tostring(off.shape))
  end
  if off.ndim == 2 and x.dims[0] >= 0 and off.dims[0] >= 0 and off.dims[0] ~= x.dims[0] then
    fail(op, "offsets %s must have one row per image of input %s", tostring(off.shape), tostring(x.shape))
  end
  local centered = o.centered == nil or o.centered
  local normalized = o.normalized == nil or o.normalized
  local noise = o.noise or "uniform"
  if not NOISES[noise] then fail(op, "noise must be \"uniform\", \"gaussian\" or \"zero\", got %s", tostring(noise)) end
  local parts = shape_ops.split(recorder.stop_gradient(math_ops.cast(off, "float32")), 2, { axis = 1 })
  local function corner(v, len, glen) -- [B, 1] float32, TF's order of float operations
    if normalized then
      v = mul(v, len)
      if centered then v = sub(add(div(v, 2), len / 2), glen / 2) end
    elseif centered then
      v = add(v, len / 2)
    end
    return math_ops.cast(where(math_ops.is_nan(v), mul(v, 0), v), "int32") -- truncation toward zero, as (Index) x
  end
  local oy, ox = corner(parts[1], h, gh), corner(parts[2], w, gw)
  local ys = add(oy, shape_ops.reshape(create.range(0, gh, 1, "int32"), { 1, gh }))   -- [B, gh]
  local xs = add(ox, shape_ops.reshape(create.range(0, gw, 1, "int32"), { 1, gw }))   -- [B, gw]
  local yin = land(ge(ys, 0), lt(ys, h))
  local xin = land(ge(xs, 0), lt(xs, w))
  local yc = math_ops.clip_by_value(ys, 0, h - 1)
  local xc = math_ops.clip_by_value(xs, 0, w - 1)
  local idx = add(mul(shape_ops.expand_dims(yc, 2), w), shape_ops.expand_dims(xc, 1))  -- [B, gh, gw]
  local flat = shape_ops.reshape(x, { -1, h * w, c })
  local g = shape_ops.gather(flat, shape_ops.reshape(idx, { -1, gh * gw }), { axis = 1, batch_dims = 1 })
  g = shape_ops.reshape(g, { -1, gh, gw, c })
  local inside = shape_ops.expand_dims(land(shape_ops.expand_dims(yin, 2), shape_ops.expand_dims(xin, 1)), 3)
  local vt = dtype.names[tonumber(x.dt)]
  local fill
  if noise == "zero" then
    fill = math_ops.cast(0, vt)
  else
    local shape = tonumber(x.dims[0]) >= 0 and { tonumber(x.dims[0]), gh, gw, c } or dynamic_shape.shape(g)
    if noise == "uniform" then
      local lo = reduce.reduce_min(x, { 1, 2, 3 }, { keepdims = true })
      local range = math_ops.cast(sub(reduce.reduce_max(x, { 1, 2, 3 }, { keepdims = true }), lo), "float32")
      fill = add(lo, math_ops.cast(mul(random.uniform(shape), range), vt))
    else
      local xf = math_ops.cast(x, "float32")
      local mean = reduce.reduce_mean(xf, { 1, 2 }, { keepdims = true })
      local sigma = math_ops.sqrt(reduce.reduce_mean(math_ops.square(sub(xf, mean)), { 1, 2 }, { keepdims = true }))
      local lo = reduce.reduce_min(x, { 1, 2 }, { keepdims = true })
      local hi = reduce.reduce_max(x, { 1, 2 }, { keepdims = true })
      fill = add(math_ops.cast(mean, vt), math_ops.cast(mul(random.normal(shape), sigma), vt))
      fill = math_ops.maximum(math_ops.minimum(fill, hi), lo)
    end
  end
  return where(inside, g, fill)
end

return M
