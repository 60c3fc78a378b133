-- stdlib/tide/image/random.lua — tf.image's random augmentations: random_flip_*, random_crop,
-- random_brightness, contrast, hue, saturation and jpeg_quality (tide.random's Philox stream,
-- op seed `seed` as TF's), and their stateless_random_* forms, which draw TF's own numbers
-- from a seed pair (tide.random.stateless_uniform) and so give TF's results.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local dynamic_shape = require "tide.ops.dynamic_shape"
local random = require "tide.random"
local util = require "tide.image.util"
local geometry = require "tide.image.geometry"
local color = require "tide.image.color"
local codecs = require "tide.image.codecs"
local ffi, Tensor = binding.ffi, binding.Tensor
local istype = ffi.istype

local M = {}

local fail = util.fail

-- Draws of the stateful forms (op seed `seed`) and of the stateless ones (a seed pair).
local function stateful(seed)
  return function(shape, lo, hi, dt) return random.uniform(shape, { minval = lo, maxval = hi, dtype = dt, seed = seed }) end
end
local function stateless(seed)
  return function(shape, lo, hi, dt) return random.stateless_uniform(shape, seed, { minval = lo, maxval = hi, dtype = dt }) end
end

-- ---- flips ---------------------------------------------------------------------------

-- The batch size of x as a draw's shape {n} (a tensor while tracing an unknown batch).
local function batch_shape(x)
  if x.dims[0] >= 0 then return { tonumber(x.dims[0]) } end
  return dynamic_shape.shape(x):slice { { 0, 1 } }
end

-- TF's _random_flip: one draw for an image, flipped when it is below 1/2;
-- one per image of a batch, flipped when it rounds to 1 (above 1/2).
local function random_flip(name, flip, draw, x)
  x = util.image_arg(name, x)
  if x.ndim < 0 then fail(name, "the image's rank must be known while tracing") end
  local flipped = flip(x)
  if x.ndim == 3 then
    return math_ops.where(math_ops.less(draw({}, 0, 1), 0.5), flipped, x)
  end
  local u = draw(batch_shape(x), 0, 1)
  local flips = math_ops.equal(math_ops.round(u), 1)
  return math_ops.where(shape_ops.reshape(flips, { -1, 1, 1, 1 }), flipped, x)
end

-- random_flip_left_right(image, {seed=}) / random_flip_up_down as TF's.
function M.random_flip_left_right(image, ...)
  local o = args.parse("random_flip_left_right", { "seed" }, ...)
  return random_flip("random_flip_left_right", geometry.flip_left_right, stateful(o.seed), image)
end

function M.random_flip_up_down(image, ...)
  local o = args.parse("random_flip_up_down", { "seed" }, ...)
  return random_flip("random_flip_up_down", geometry.flip_up_down, stateful(o.seed), image)
end

-- stateless_random_flip_left_right(image, seed) / _up_down as TF's: seed a
-- pair {a, b} or a shape [2] integer tensor; TF's flips for the same seed.
function M.stateless_random_flip_left_right(image, seed)
  local op = "stateless_random_flip_left_right"
  return random_flip(op, geometry.flip_left_right, stateless(util.seed_pair(op, seed)), image)
end

function M.stateless_random_flip_up_down(image, seed)
  local op = "stateless_random_flip_up_down"
  return random_flip(op, geometry.flip_up_down, stateless(util.seed_pair(op, seed)), image)
end

-- ---- crops ---------------------------------------------------------------------------

-- A [size] window of value (any rank) at offsets drawn by `draw` (TF's rule:
-- a random int32 in [0, 2^31 - 1) modulo the number of valid offsets per dim).
local function random_crop(op, value, size, draw)
  local x = istype(Tensor, value) and value or convert.arg(value, op)
  if type(size) ~= "table" then fail(op, "size must be a list of %d numbers, got %s", x.ndim, type(size)) end
  if #size ~= x.ndim then fail(op, "size must have one entry per dim of value (%d), got %d", x.ndim, #size) end
  local limits = {}
  local dyn
  for d = 1, x.ndim do
    local s = args.int(op, "size", size[d])
    local n = tonumber(x.dims[d - 1])
    if s < 0 then fail(op, "size must not be negative, got %d", s) end
    if n >= 0 and n < s then
      fail(op, "value's shape %s is smaller than size {%s} in dim %d", tostring(x.shape), table.concat(size, ", "), d - 1)
    end
    if n < 0 then dyn = true end
    limits[d] = n >= 0 and n - s + 1 or -1
  end
  local offsets = draw({ x.ndim }, 0, 2147483647, "int32")
  local limit
  if dyn then -- shape - size + 1, computed when the graph runs
    limit = math_ops.add(math_ops.sub(dynamic_shape.shape(x), convert.tensor(size, "int32", op)), 1)
  else
    limit = convert.tensor(limits, "int32", op)
  end
  offsets = math_ops.mod(offsets, limit)
  local out = x
  for d = 1, x.ndim do
    local n = tonumber(x.dims[d - 1])
    if n ~= size[d] then
      local idx = math_ops.add(create.range(0, size[d], 1, "int32"), offsets[d - 1])
      out = shape_ops.gather(out, idx, { axis = d - 1 })
    end
  end
  return out
end

-- random_crop(value, size, {seed=}) as tf.image.random_crop: a [size] slice
-- of value (any rank) at offsets drawn uniformly.
function M.random_crop(value, size, ...)
  local o = args.parse("random_crop", { "seed" }, ...)
  return random_crop("random_crop", value, size, stateful(o.seed))
end

-- stateless_random_crop(value, size, seed) as TF's: TF's window for the same seed.
function M.stateless_random_crop(value, size, seed)
  local op = "stateless_random_crop"
  return random_crop(op, value, size, stateless(util.seed_pair(op, seed)))
end

-- ---- value adjustments -------------------------------------------------------------------

local function number(op, what, v) return args.number(op, what, v) end

-- The [lower, upper) range checks of random_contrast and random_saturation.
local function check_range(op, lower, upper)
  local lo, hi = number(op, "lower", lower), number(op, "upper", upper)
  if hi <= lo then fail(op, "upper must be > lower, got lower %s and upper %s", lo, hi) end
  if lo < 0 then fail(op, "lower must be non-negative, got %s", lo) end
  return lo, hi
end

local function check_delta(op, max_delta, most)
  local d = number(op, "max_delta", max_delta)
  if d < 0 then fail(op, "max_delta must be non-negative, got %s", d) end
  if most and d > most then fail(op, "max_delta must be <= %s, got %s", most, d) end
  return d
end

local function check_quality(op, min_q, max_q)
  local lo, hi = args.int(op, "min_jpeg_quality", min_q), args.int(op, "max_jpeg_quality", max_q)
  if lo < 0 or hi < 0 or lo > 100 or hi > 100 then
    fail(op, "jpeg encoding range must be between 0 and 100, got %d and %d", lo, hi)
  end
  if lo >= hi then fail(op, "min_jpeg_quality must be less than max_jpeg_quality, got %d and %d", lo, hi) end
  return lo, hi
end

-- Each augmentation: its draw, from its checked arguments, and its adjustment.
local AUGMENT = {
  brightness = function(op, draw, image, max_delta)
    local d = check_delta(op, max_delta)
    return color.adjust_brightness(image, draw({}, -d, d))
  end,
  contrast = function(op, draw, image, lower, upper)
    local lo, hi = check_range(op, lower, upper)
    return color.adjust_contrast(image, draw({}, lo, hi))
  end,
  hue = function(op, draw, image, max_delta)
    local d = check_delta(op, max_delta, 0.5)
    return color.adjust_hue(image, draw({}, -d, d))
  end,
  saturation = function(op, draw, image, lower, upper)
    local lo, hi = check_range(op, lower, upper)
    return color.adjust_saturation(image, draw({}, lo, hi))
  end,
  jpeg_quality = function(op, draw, image, min_q, max_q)
    local lo, hi = check_quality(op, min_q, max_q)
    return codecs.adjust_jpeg_quality(image, draw({}, lo, hi, "int32"))
  end,
}

-- random_brightness(image, max_delta, {seed=}), random_contrast(image,
-- lower, upper, {seed=}), random_hue(image, max_delta, {seed=}),
-- random_saturation(image, lower, upper, {seed=}), random_jpeg_quality(image,
-- min_jpeg_quality, max_jpeg_quality, {seed=}) as TF's: one draw per call;
-- and stateless_random_X(image, ..., seed) with TF's draw for the seed pair.
for name, augment in pairs(AUGMENT) do
  local op = "random_" .. name
  local nargs = (name == "brightness" or name == "hue") and 1 or 2
  M[op] = function(image, a, b, ...)
    local o
    if nargs == 1 then o = args.parse(op, { "seed" }, b, ...) else o = args.parse(op, { "seed" }, ...) end
    return augment(op, stateful(o.seed), image, a, b)
  end
  local sop = "stateless_random_" .. name
  M[sop] = function(image, a, b, c)
    local seed = nargs == 1 and b or c
    return augment(sop, stateless(util.seed_pair(sop, seed)), image, a, b)
  end
end

return M
