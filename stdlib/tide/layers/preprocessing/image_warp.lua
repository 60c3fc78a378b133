-- stdlib/tide/layers/preprocessing/image_warp.lua — Keras 3's warping augmentation layers: RandomShear,
-- RandomPerspective (both through tide.image.affine_transform's projective sampler) and RandomElasticTransform
-- (a blurred random displacement field sampled as keras.ops.image.map_coordinates). B = batch, H = height,
-- W = width, C = channels: transform_images takes [B, H, W, C] ([B, C, H, W] channels_first).
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local reduce = require "tide.ops.reduce"
local nn_conv = require "tide.ops.nn_conv"
local index = require "tide.ops.index"
local linalg = require "tide.ops.linalg_decomp"
local random = require "tide.random"
local image = require "tide.image"
local options = require "tide.layers.options"
local util = require "tide.layers.preprocessing.image_util"
local base = require "tide.layers.preprocessing.image_base"

local Base = base.Base
local cast, copy = util.cast, base.copy
local add, sub, mul, div, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div, math_ops.where
local fmt = string.format

local M = {}

-- Keras's geometric layers cast images to the compute dtype also when not training.
local function geometric(cls)
  cls.cast_untrained = true
  cls.geometric = true
  return cls
end

local function channels_last(self, x, f)
  if self.data_format ~= "channels_first" then return f(x) end
  return shape_ops.transpose(f(shape_ops.transpose(x, { 0, 2, 3, 1 })), { 0, 3, 1, 2 })
end

---------------------------------------------------------------------------
-- RandomShear
---------------------------------------------------------------------------

-- A shear factor: a number f in [0, 1] gives {-f, f} (Keras's _set_factor_with_name); a pair is taken
-- sorted with bounds in [-1, 1] (Keras wants [0, 1] there, so its own config, {-f, f}, fails to load).
local function shear_factor(what, f)
  local msg = fmt("RandomShear: %s must be a number in [0, 1] (or a list of two numbers in [-1, 1]), got %s", what,
    base.list_text(f))
  local function ok(v, lo) return type(v) == "number" and v >= lo and v <= 1 end
  if type(f) == "table" then
    if #f ~= 2 or not ok(f[1], -1) or not ok(f[2], -1) then binding.error(msg) end
    return { math.min(f[1], f[2]), math.max(f[1], f[2]) }
  end
  if not ok(f, 0) then binding.error(msg) end
  return { -f, f }
end

-- RandomShear{x_factor=0, y_factor=0, interpolation="bilinear", fill_mode="reflect", fill_value=0, seed,
-- data_format}: each image sheared about its top-left corner, x by a draw in x_factor and y by a draw in
-- y_factor, both negated on a fair coin (Keras's transform [1, sx, 0, sy, 1, 0, 0, 0]).
local RandomShear = geometric(Base:extend("RandomShear"))
M.RandomShear = RandomShear
function RandomShear:init(...)
  local o = self:_kwargs({ "x_factor", "y_factor", "interpolation", "fill_mode", "fill_value", "data_format", "seed" },
    ...)
  self.x_factor = shear_factor("x_factor", o.x_factor or 0)
  self.y_factor = shear_factor("y_factor", o.y_factor or 0)
  self.fill_mode = util.check_choice("RandomShear", "fill_mode", o.fill_mode, util.FILL_MODES, "reflect")
  self.interpolation = util.check_choice("RandomShear", "interpolation", o.interpolation, util.INTERPOLATIONS,
    "bilinear")
  self.fill_value = options.number("RandomShear", "fill_value", o.fill_value, 0)
  self:_base_options("RandomShear", o)
end
function RandomShear:get_random_transformation(images)
  local dt = self.compute_dtype
  local invert = where(math_ops.greater(base.uniform(self, images, { 1 }, 0, 1, dt), 0.5), -1, 1)
  local sy = base.uniform(self, images, { 1 }, self.y_factor[1], self.y_factor[2], dt)
  local sx = base.uniform(self, images, { 1 }, self.x_factor[1], self.x_factor[2], dt)
  return { shear_factor = mul(shape_ops.concat({ sx, sy }, 1), cast(invert, dt)) }
end
function RandomShear:transform_images(images, t)
  local x = cast(images, self.compute_dtype)
  local s = math_ops.cast(t.shear_factor, "float32")
  local sx, sy = s:slice { {}, { 0, 1 } }, s:slice { {}, { 1, 2 } }
  local zero, one = mul(sx, 0), add(mul(sx, 0), 1)
  local m = shape_ops.concat({ one, sx, zero, sy, one, zero, zero, zero }, 1)
  return image.affine_transform(x, m, { interpolation = self.interpolation, fill_mode = self.fill_mode,
    fill_value = self.fill_value, data_format = self.data_format })
end
function RandomShear:get_config()
  local c = Base.get_config(self)
  c.x_factor, c.y_factor, c.fill_mode = copy(self.x_factor), copy(self.y_factor), self.fill_mode
  c.interpolation, c.seed, c.fill_value = self.interpolation, self.seed, self.fill_value
  return c
end

---------------------------------------------------------------------------
-- RandomPerspective
---------------------------------------------------------------------------

-- keras.ops.image's compute_homography_matrix: the [B, 8] projective transform mapping output points
-- `end_points` [B, 4, 2] to input points `start_points`, by solving the 8 x 8 system per image.
local function homography(start_points, end_points)
  local s = shape_ops.unstack(shape_ops.reshape(start_points, { -1, 8 }), { axis = 1 })
  local e = shape_ops.unstack(shape_ops.reshape(end_points, { -1, 8 }), { axis = 1 })
  local zero = mul(e[1], 0)
  local one = add(zero, 1)
  local rows = {}
  for i = 0, 3 do
    local ex, ey, sx, sy = e[2 * i + 1], e[2 * i + 2], s[2 * i + 1], s[2 * i + 2]
    rows[#rows + 1] = shape_ops.stack({ ex, ey, one, zero, zero, zero, mul(math_ops.neg(sx), ex),
      mul(math_ops.neg(sx), ey) }, 1)
    rows[#rows + 1] = shape_ops.stack({ zero, zero, zero, ex, ey, one, mul(math_ops.neg(sy), ex),
      mul(math_ops.neg(sy), ey) }, 1)
  end
  local a = shape_ops.stack(rows, 1)                                   -- [B, 8, 8]
  local b = shape_ops.reshape(shape_ops.reshape(start_points, { -1, 8 }), { -1, 8, 1 })
  return shape_ops.reshape(linalg.solve(a, b), { -1, 8 })
end
M.homography = homography

-- RandomPerspective{factor=1, scale=1, interpolation="bilinear", fill_value=0, seed, data_format}: with a
-- probability drawn in factor ({0, f} for a number), each image's corners move by up to scale / 2 of
-- their coordinates (Keras's rule: the top-left corner stays) and the image follows the homography;
-- the pixels brought in from outside are fill_value.
local RandomPerspective = geometric(Base:extend("RandomPerspective"))
M.RandomPerspective = RandomPerspective
function RandomPerspective:init(...)
  local o = self:_kwargs({ "factor", "scale", "interpolation", "fill_value", "seed", "data_format" }, ...)
  self.factor = base.factor("RandomPerspective", "factor", o.factor == nil and 1 or o.factor, 0, 1)
  self.scale = options.number("RandomPerspective", "scale", o.scale, 1, 0, 1)
  self.interpolation = util.check_choice("RandomPerspective", "interpolation", o.interpolation, util.INTERPOLATIONS,
    "bilinear")
  self.fill_value = options.number("RandomPerspective", "fill_value", o.fill_value, 0)
  self:_base_options("RandomPerspective", o)
end
function RandomPerspective:get_random_transformation(images)
  local dt = self.compute_dtype
  local x = channels_last(self, images, function(y) return y end)
  local h, w = util.known_hw({ data_format = "channels_last", name = self.name }, x)
  local p = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  local u = base.uniform(self, images, {}, 0, 1)
  local pf = base.uniform(self, images, { 4, 2 }, -0.5 * self.scale, 0.5 * self.scale, dt)
  local corners = convert.tensor({ { { 0, 0 }, { w - 1, 0 }, { 0, h - 1 }, { w - 1, h - 1 } } }, dt)
  local start = add(mul(pf, 0), corners)                                 -- [B, 4, 2]
  return { apply_perspective = math_ops.less(u, p), start_points = start, end_points = add(start, mul(start, pf)) }
end
function RandomPerspective:transform_images(images, t)
  local x = cast(images, self.compute_dtype)
  local m = homography(math_ops.cast(t.start_points, "float32"), math_ops.cast(t.end_points, "float32"))
  local y = image.affine_transform(x, m, { interpolation = self.interpolation, fill_mode = "constant",
    fill_value = self.fill_value, data_format = self.data_format })
  return where(base.per_image(t.apply_perspective), y, x)
end
function RandomPerspective:get_config()
  local c = Base.get_config(self)
  c.factor, c.scale, c.interpolation = copy(self.factor), self.scale, self.interpolation
  c.fill_value, c.seed = self.fill_value, self.seed
  return c
end

---------------------------------------------------------------------------
-- RandomElasticTransform
---------------------------------------------------------------------------

-- keras.ops.image.map_coordinates' index rule for one axis of size n: (safe index, valid or nil).
local function fold(i, n, mode)
  if mode == "constant" then
    local valid = math_ops.logical_and(math_ops.greater_equal(i, 0), math_ops.less(i, n))
    return math_ops.clip_by_value(i, 0, n - 1), valid
  elseif mode == "nearest" then
    return math_ops.clip_by_value(i, 0, n - 1)
  elseif mode == "wrap" then
    return math_ops.floormod(i, n)
  end
  local m = math_ops.floormod(math_ops.abs(i), 2 * n)                   -- mirror / reflect
  local under = math_ops.less(m, n)
  local c = where(under, m, sub(2 * n, m))
  if mode == "reflect" then return where(under, c, sub(c, 1)) end
  return math_ops.minimum(c, n - 1) -- (Keras's mirror maps n to itself, outside the image: TF raises)
end

-- x [B, H, W, C] sampled at rows yy and columns xx ([B, H, W], float) as map_coordinates of order 0
-- (nearest, half to even) or 1 (bilinear), per image and channel, with its fill modes.
local function sample(x, yy, xx, order, mode, fill)
  local h, w = tonumber(x.dims[1]), tonumber(x.dims[2])
  local function nodes(c)
    if order == 0 then return { { math_ops.cast(math_ops.round(c), "int32"), nil } } end
    local lo = math_ops.floor(c)
    local wu = sub(c, lo)
    local i = math_ops.cast(lo, "int32")
    return { { i, sub(1, wu) }, { add(i, 1), wu } }
  end
  local b = base.batch_size(x)
  local bidx = add(mul(math_ops.cast(yy, "int32"), 0), shape_ops.reshape(create.range(0, b, 1, "int32"), { -1, 1, 1 }))
  local out
  for _, ny in ipairs(nodes(yy)) do
    for _, nx in ipairs(nodes(xx)) do
      local iy, vy = fold(ny[1], h, mode)
      local ix, vx = fold(nx[1], w, mode)
      local g = index.gather_nd(x, shape_ops.stack({ bidx, iy, ix }, 3))   -- [B, H, W, C]
      if mode == "constant" then
        g = where(shape_ops.expand_dims(math_ops.logical_and(vy, vx), 3), g, convert.tensor(fill, x.dtype))
      end
      local wgt = ny[2] and nx[2] and mul(ny[2], nx[2]) or ny[2] or nx[2]
      local term = wgt and mul(shape_ops.expand_dims(cast(wgt, x.dtype), 3), g) or g
      out = out and add(out, term) or term
    end
  end
  return out
end

local ELASTIC_FILL = { "constant", "nearest", "wrap", "mirror", "reflect" }

-- RandomElasticTransform{factor=1, scale=1, interpolation="bilinear", fill_mode="reflect", fill_value=0,
-- value_range={0, 255}, seed, data_format}: with a probability drawn in factor ({0, f} for a number),
-- each image is resampled at its pixel grid moved by alpha times a random normal field blurred by a
-- Gaussian of sigma, where for a distortion d drawn per call in scale ({0, s} for a number) alpha =
-- 0.1 d max(H, W) and sigma = 0.05 d min(H, W) (kernel 6 floor(sigma) | 1, as Keras); clipped to
-- value_range. tide draws the x and y fields apart (Keras's TF backend draws one field for both).
local RandomElasticTransform = geometric(Base:extend("RandomElasticTransform"))
M.RandomElasticTransform = RandomElasticTransform
function RandomElasticTransform:init(...)
  local o = self:_kwargs({ "factor", "scale", "interpolation", "fill_mode", "fill_value", "value_range", "seed",
    "data_format" }, ...)
  local cls = "RandomElasticTransform"
  self.factor = base.factor(cls, "factor", o.factor == nil and 1 or o.factor, 0, 1)
  self.scale = base.factor(cls, "scale", o.scale == nil and 1 or o.scale, 0, 1)
  self.interpolation = util.check_choice(cls, "interpolation", o.interpolation, util.INTERPOLATIONS, "bilinear")
  self.fill_mode = util.check_choice(cls, "fill_mode", o.fill_mode, ELASTIC_FILL, "reflect")
  self.fill_value = options.number(cls, "fill_value", o.fill_value, 0)
  self.value_range = base.value_range(cls, o.value_range)
  self:_base_options(cls, o)
end
function RandomElasticTransform:get_random_transformation(images)
  if self.scale[2] == 0 or self.factor[2] == 0 then return nil end
  local dt = self.compute_dtype
  local x = channels_last(self, images, function(y) return y end)
  local h, w = util.known_hw({ data_format = "channels_last", name = self.name }, x)
  local p = base.uniform(self, images, {}, self.factor[1], self.factor[2])
  local u = base.uniform(self, images, {}, 0, 1)
  local d = random.uniform({}, { minval = self.scale[1], maxval = self.scale[2], dtype = dt, seed = self.seed })
  local shape = base.draw_shape(images, { h, w })
  local dx = random.normal(shape, { dtype = dt, seed = self.seed })
  local dy = random.normal(shape, { dtype = dt, seed = self.seed })
  return { apply_transform = math_ops.less(u, p), distortion_factor = d, dx = dx, dy = dy }
end

-- The displacement fields blurred: the kernel of the largest sigma the scale allows, its taps beyond
-- this draw's 6 floor(sigma) | 1 zeroed (the same sums as Keras's smaller kernel, with static shapes).
local function blur_field(f, sigma, smax, dt)
  local k = bit.bor(6 * math.floor(smax), 1)
  local half = (k - 1) / 2
  local reach = mul(math_ops.floor(sigma), 3)                           -- (6 floor(sigma) | 1 - 1) / 2
  local pos = sub(create.range(0, k, 1, dt), half)
  local g = math_ops.exp(mul(-0.5, math_ops.square(div(pos, sigma))))
  g = where(math_ops.less_equal(math_ops.abs(pos), reach), g, mul(g, 0))
  g = div(g, reduce.reduce_sum(g))
  local kernel = mul(shape_ops.reshape(g, { -1, 1 }), shape_ops.reshape(g, { 1, -1 }))
  local y = nn_conv.depthwise_conv2d(shape_ops.expand_dims(f, 3), shape_ops.reshape(kernel, { k, k, 1, 1 }),
    { strides = 1, padding = "SAME" })
  return shape_ops.squeeze(y, { 3 })
end
M.blur_field = blur_field

function RandomElasticTransform:transform_images(images, t)
  local dt = self.compute_dtype
  local x = cast(images, dt)
  if t == nil then return x end
  return channels_last(self, x, function(y)
    local h, w = tonumber(y.dims[1]), tonumber(y.dims[2])
    local d = cast(t.distortion_factor, dt)
    local alpha = mul(d, math.max(h, w) * 0.1)
    local sigma = mul(d, math.min(h, w) * 0.05)
    local smax = math.min(h, w) * 0.05 * self.scale[2]
    local dx = blur_field(cast(t.dx, dt), sigma, smax, dt)
    local dy = blur_field(cast(t.dy, dt), sigma, smax, dt)
    local gx = shape_ops.reshape(create.range(0, w, 1, dt), { 1, 1, w })
    local gy = shape_ops.reshape(create.range(0, h, 1, dt), { 1, h, 1 })
    local out = sample(y, add(gy, mul(alpha, dy)), add(gx, mul(alpha, dx)),
      self.interpolation == "nearest" and 0 or 1, self.fill_mode, self.fill_value)
    out = where(base.per_image(t.apply_transform), out, y)
    return math_ops.clip_by_value(out, math.min(self.value_range[1], self.value_range[2]),
      math.max(self.value_range[1], self.value_range[2]))
  end)
end
M.map_coordinates = sample
function RandomElasticTransform:get_config()
  local c = Base.get_config(self)
  c.factor, c.scale, c.interpolation, c.fill_mode = copy(self.factor), copy(self.scale), self.interpolation,
    self.fill_mode
  c.fill_value, c.value_range, c.seed = self.fill_value, copy(self.value_range), self.seed
  return c
end

return M
