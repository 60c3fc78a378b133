-- stdlib/tide/layers/preprocessing/image_random.lua — Keras 3's random image augmentation layers:
-- RandomFlip, RandomRotation, RandomZoom, RandomTranslation, RandomCrop, RandomContrast, RandomBrightness.
-- Each draws Keras's numbers (per image, or per batch for RandomCrop) from tide.random's seeded streams
-- and transforms as Keras's TF backend does (tide.image.affine_transform for the geometric ones). Active
-- when training, which a direct call defaults to (Keras's call(data, training=True)); fit passes true,
-- predict and evaluate false.
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local random = require "tide.random"
local image = require "tide.image"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"
local util = require "tide.layers.preprocessing.image_util"

local Layer = layer.Layer
local fmt = string.format
local cast, check_rank, known_hw = util.cast, util.check_rank, util.known_hw
local hw_axes, to_last = util.hw_axes, util.to_last
local add, sub, mul = math_ops.add, math_ops.sub, math_ops.mul

local M = {}

-- A uniform draw in [lo, hi) of the given shape (a list or a shape tensor), float32 unless dt.
local function uniform(self, shape, lo, hi, dt)
  return random.uniform(shape, { minval = lo, maxval = hi, dtype = dt or "float32", seed = self.seed })
end

-- The config keys every random layer shares.
local function base_config(self, c)
  c.seed, c.data_format = self.seed, self.data_format
  return c
end

---------------------------------------------------------------------------
-- RandomFlip
---------------------------------------------------------------------------

-- RandomFlip{mode="horizontal_and_vertical", seed, data_format}: each image flipped with
-- probability 1/2 (Keras: u <= 0.5); "horizontal_and_vertical" flips both ways on the same draw.
local RandomFlip = Layer:extend("RandomFlip")
M.RandomFlip = RandomFlip
local FLIP_MODES = { "horizontal", "vertical", "horizontal_and_vertical" }
function RandomFlip:init(...)
  local o = self:_kwargs({ "mode", "seed", "data_format" }, ...)
  self.mode = util.check_choice("RandomFlip", "mode", o.mode, FLIP_MODES, "horizontal_and_vertical")
  self.seed = util.seed_option("RandomFlip", o.seed)
  self.data_format = options.data_format("RandomFlip", o.data_format)
end
function RandomFlip:call(x, opts)
  check_rank(self, x)
  x = cast(x, self.compute_dtype)
  if not util.training_of(opts) then return x end
  local flips = math_ops.less_equal(uniform(self, util.per_image(x, x.ndim), 0, 1), 0.5)
  local ha, wa = hw_axes(self, x)
  if self.mode ~= "vertical" then x = math_ops.where(flips, shape_ops.reverse(x, { wa }), x) end
  if self.mode ~= "horizontal" then x = math_ops.where(flips, shape_ops.reverse(x, { ha }), x) end
  return x
end
function RandomFlip:get_config()
  local c = base_config(self, Layer.get_config(self))
  c.mode = self.mode
  return c
end

---------------------------------------------------------------------------
-- The affine ones: RandomRotation, RandomZoom, RandomTranslation
---------------------------------------------------------------------------

-- Options shared by the three: fill_mode, interpolation, seed, fill_value, data_format.
local function affine_options(self, cls, o)
  self.fill_mode = util.check_choice(cls, "fill_mode", o.fill_mode, util.FILL_MODES, "reflect")
  self.interpolation = util.check_choice(cls, "interpolation", o.interpolation, util.INTERPOLATIONS, "bilinear")
  self.seed = util.seed_option(cls, o.seed)
  self.fill_value = options.number(cls, "fill_value", o.fill_value, 0)
  self.data_format = options.data_format(cls, o.data_format)
end

local function affine_config(self, c)
  c.fill_mode, c.interpolation, c.fill_value = self.fill_mode, self.interpolation, self.fill_value
  return base_config(self, c)
end

-- x (float, rank 3 or 4) through transforms [B, 8] (B = 1 for a single image).
local function apply(self, x, transforms)
  return image.affine_transform(x, transforms, { interpolation = self.interpolation, fill_mode = self.fill_mode,
    fill_value = self.fill_value, data_format = self.data_format })
end

-- The image count of x: a number or a 0-d tensor (1 for a single image).
local function batch_of(x) return x.ndim == 4 and dims.dim(x, 0) or 1 end

-- A [B, k] draw shape as a list or a shape tensor.
local function rows(x, k)
  local b = batch_of(x)
  if type(b) == "number" then return { b, k } end
  return shape_ops.stack({ b, convert.tensor(k, "int32") })
end

-- RandomRotation{factor, fill_mode="reflect", interpolation="bilinear", seed, fill_value=0,
-- data_format}: each image turned about its centre by an angle drawn in factor * 360 degrees
-- (factor a number f: [-f, f]; a pair: [lo, hi]; counter-clockwise for positive), by
-- Keras's affine matrix in float32.
local RandomRotation = Layer:extend("RandomRotation")
M.RandomRotation = RandomRotation
function RandomRotation:init(...)
  local o = self:_kwargs({ "factor", "fill_mode", "interpolation", "seed", "fill_value", "data_format" }, ...)
  self.factor = util.base_factor("RandomRotation", o.factor, -1, 1)
  affine_options(self, "RandomRotation", o)
end
function RandomRotation:call(x, opts)
  check_rank(self, x)
  x = cast(x, self.compute_dtype)
  if not util.training_of(opts) then return x end
  local h, w = known_hw(self, x)
  local b = batch_of(x)
  local angle = uniform(self, type(b) == "number" and { b } or shape_ops.reshape(b, { 1 }),
    self.factor[1] * 360, self.factor[2] * 360)
  angle = mul(angle, math_ops.cast(math.pi / 180, "float32"))
  local cx, cy = util.f32(0.5 * (w - 1)), util.f32(0.5 * (h - 1))
  local cos, sin = math_ops.cos(angle), math_ops.sin(angle)
  -- Keras's _compute_affine_matrix with scale 1, no shear or translation, in its order of operations
  local a0, a1 = cos, math_ops.neg(sin)
  local a2 = sub(sub(cx, mul(a0, cx)), mul(a1, cy))
  local b0, b1 = sin, cos
  local b2 = sub(sub(cy, mul(b0, cx)), mul(b1, cy))
  local zero = mul(angle, 0)
  local m = shape_ops.stack({ a0, a1, a2, b0, b1, b2, zero, zero }, 1)
  return apply(self, x, m)
end
function RandomRotation:get_config()
  local c = affine_config(self, Layer.get_config(self))
  c.factor = { self.factor[1], self.factor[2] }
  return c
end

-- RandomZoom{height_factor, width_factor=nil, fill_mode="reflect", interpolation="bilinear",
-- seed, fill_value=0, data_format}: each image scaled about its centre by 1 + a draw in
-- height_factor (vertically) and width_factor (horizontally; the height's draw when nil).
-- Positive factors zoom out, negative in; each bound in (-1, 1].
local RandomZoom = Layer:extend("RandomZoom")
M.RandomZoom = RandomZoom
function RandomZoom:init(...)
  local o = self:_kwargs({ "height_factor", "width_factor", "fill_mode", "interpolation", "seed", "fill_value",
    "data_format" }, ...)
  self.height_factor = o.height_factor
  self.height_lower, self.height_upper = util.pair_factor("RandomZoom", "height_factor", o.height_factor, true)
  self.width_factor = o.width_factor
  if o.width_factor ~= nil then
    self.width_lower, self.width_upper = util.pair_factor("RandomZoom", "width_factor", o.width_factor, true)
  end
  affine_options(self, "RandomZoom", o)
end
function RandomZoom:call(x, opts)
  check_rank(self, x)
  x = cast(x, self.compute_dtype)
  if not util.training_of(opts) then return x end
  local h, w = known_hw(self, x)
  local shape = rows(x, 1)
  local hz = uniform(self, shape, 1 + self.height_lower, 1 + self.height_upper)
  local wz = hz
  if self.width_factor ~= nil then wz = uniform(self, shape, 1 + self.width_lower, 1 + self.width_upper) end
  local zero = mul(hz, 0)
  local xo = mul(util.f32((w - 1) / 2), sub(1, wz))
  local yo = mul(util.f32((h - 1) / 2), sub(1, hz))
  return apply(self, x, shape_ops.concat({ wz, zero, xo, zero, hz, yo, zero, zero }, 1))
end
function RandomZoom:get_config()
  local c = affine_config(self, Layer.get_config(self))
  c.height_factor, c.width_factor = self.height_factor, self.width_factor
  return c
end

-- RandomTranslation{height_factor, width_factor, fill_mode="reflect", interpolation="bilinear",
-- seed, fill_value=0, data_format}: each image shifted by a draw in height_factor * height
-- (down for positive) and width_factor * width (right for positive); each bound in [-1, 1].
local RandomTranslation = Layer:extend("RandomTranslation")
M.RandomTranslation = RandomTranslation
function RandomTranslation:init(...)
  local o = self:_kwargs({ "height_factor", "width_factor", "fill_mode", "interpolation", "seed", "fill_value",
    "data_format" }, ...)
  self.height_factor, self.width_factor = o.height_factor, o.width_factor
  self.height_lower, self.height_upper = util.pair_factor("RandomTranslation", "height_factor", o.height_factor)
  self.width_lower, self.width_upper = util.pair_factor("RandomTranslation", "width_factor", o.width_factor)
  affine_options(self, "RandomTranslation", o)
end
function RandomTranslation:call(x, opts)
  check_rank(self, x)
  x = cast(x, self.compute_dtype)
  if not util.training_of(opts) then return x end
  local h, w = known_hw(self, x)
  local shape = rows(x, 1)
  local ht = mul(uniform(self, shape, self.height_lower, self.height_upper), h)
  local wt = mul(uniform(self, shape, self.width_lower, self.width_upper), w)
  local zero, one = mul(ht, 0), add(mul(ht, 0), 1)
  return apply(self, x, shape_ops.concat({ one, zero, math_ops.neg(wt), zero, one, math_ops.neg(ht), zero, zero }, 1))
end
function RandomTranslation:get_config()
  local c = affine_config(self, Layer.get_config(self))
  c.height_factor, c.width_factor = self.height_factor, self.width_factor
  return c
end

---------------------------------------------------------------------------
-- RandomCrop
---------------------------------------------------------------------------

-- RandomCrop{height, width, seed, data_format}: in training, one height x width window at a
-- random offset for the whole batch (Keras's one draw per call); an image not larger in both dims
-- gets Keras's fixed window (from its aspect-ratio crop's corner), resized to the target where it
-- falls short. The identity otherwise (Keras's too). Height and width must be known.
local RandomCrop = Layer:extend("RandomCrop")
M.RandomCrop = RandomCrop
function RandomCrop:init(...)
  local o = self:_kwargs({ "height", "width", "seed", "data_format" }, ...)
  self.height = options.positive_int("RandomCrop", "height", o.height)
  self.width = options.positive_int("RandomCrop", "width", o.width)
  self.seed = util.seed_option("RandomCrop", o.seed)
  self.data_format = options.data_format("RandomCrop", o.data_format)
end
function RandomCrop:call(x, opts)
  check_rank(self, x)
  if not util.training_of(opts) then return x end
  x = cast(x, self.compute_dtype)
  local h, w = known_hw(self, x)
  local ha, wa = hw_axes(self, x)
  local th, tw = self.height, self.width
  if h > th and w > tw then
    local h0 = math_ops.cast(uniform(self, {}, 0, h - th + 1), "int32")
    local w0 = math_ops.cast(uniform(self, {}, 0, w - tw + 1), "int32")
    x = shape_ops.gather(x, add(create.range(0, th, 1, "int32"), h0), { axis = ha })
    return shape_ops.gather(x, add(create.range(0, tw, 1, "int32"), w0), { axis = wa })
  end
  local f32 = util.f32
  local ch = math.max(math.min(h, math.floor(f32(w * th) / tw)), 1)
  local cw = math.max(math.min(w, math.floor(f32(h * tw) / th)), 1)
  local h0, w0 = math.floor((h - ch) / 2), math.floor((w - cw) / 2)
  local spec = {}
  for i = 1, x.ndim do spec[i] = {} end
  spec[ha + 1] = { h0, math.min(h, h0 + th) }
  spec[wa + 1] = { w0, math.min(w, w0 + tw) }
  x = x:slice(spec)
  if math.min(h, h0 + th) - h0 == th and math.min(w, w0 + tw) - w0 == tw then return x end
  local last, back = to_last(self, x)
  return back(cast(image.resize(last, { th, tw }), x.dtype))
end
function RandomCrop:get_config()
  local c = base_config(self, Layer.get_config(self))
  c.height, c.width = self.height, self.width
  return c
end

---------------------------------------------------------------------------
-- RandomContrast, RandomBrightness
---------------------------------------------------------------------------

-- value_range: a list of two numbers (RandomBrightness keeps it sorted, as Keras).
local function value_range(cls, v, sort)
  v = v == nil and { 0, 255 } or v
  if type(v) ~= "table" or #v ~= 2 or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
    binding.error(fmt("%s: value_range must be a list of two numbers, got %s", cls, tostring(v)))
  end
  if sort then return { math.min(v[1], v[2]), math.max(v[1], v[2]) } end
  return { v[1], v[2] }
end

-- RandomContrast{factor, value_range={0, 255}, seed}: each image's pixels moved from their
-- per-channel mean by a contrast drawn in [1 - lower, 1 + upper] (Keras's factor: a number f
-- gives lower 0 and upper f, a pair {lower, upper} in [0, 1]), clipped to value_range.
local RandomContrast = Layer:extend("RandomContrast")
M.RandomContrast = RandomContrast
function RandomContrast:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  self.factor = util.base_factor("RandomContrast", o.factor, 0, 1)
  self.value_range = value_range("RandomContrast", o.value_range)
  self.seed = util.seed_option("RandomContrast", o.seed)
  self.data_format = options.data_format("RandomContrast", o.data_format)
end
function RandomContrast:call(x, opts)
  check_rank(self, x)
  if not util.training_of(opts) then return x end
  x = cast(x, self.compute_dtype)
  local f = uniform(self, util.per_image(x, x.ndim), 1 - self.factor[1], 1 + self.factor[2], self.compute_dtype)
  local ha, wa = hw_axes(self, x)
  local mean = reduce.reduce_mean(reduce.reduce_mean(x, { ha }, { keepdims = true }), { wa }, { keepdims = true })
  local y = add(mul(sub(x, mean), f), mean)
  return math_ops.clip_by_value(y, self.value_range[1], self.value_range[2])
end
function RandomContrast:get_config()
  local c = base_config(self, Layer.get_config(self))
  c.factor, c.value_range = { self.factor[1], self.factor[2] }, { self.value_range[1], self.value_range[2] }
  return c
end

-- RandomBrightness{factor, value_range={0, 255}, seed}: each image shifted by a draw in
-- factor (a number f: [-f, f]; a pair in [-1, 1]) times the range's width, clipped to it.
local RandomBrightness = Layer:extend("RandomBrightness")
M.RandomBrightness = RandomBrightness
function RandomBrightness:init(...)
  local o = self:_kwargs({ "factor", "value_range", "seed", "data_format" }, ...)
  self.factor = util.base_factor("RandomBrightness", o.factor, -1, 1)
  self.value_range = value_range("RandomBrightness", o.value_range, true)
  self.seed = util.seed_option("RandomBrightness", o.seed)
  self.data_format = options.data_format("RandomBrightness", o.data_format)
end
function RandomBrightness:call(x, opts)
  check_rank(self, x)
  if not util.training_of(opts) then return x end
  local vr = self.value_range
  local delta = mul(uniform(self, util.per_image(x, x.ndim), self.factor[1], self.factor[2]), vr[2] - vr[1])
  return math_ops.clip_by_value(add(x, math_ops.cast(delta, x.dtype)), vr[1], vr[2])
end
function RandomBrightness:get_config()
  local c = base_config(self, Layer.get_config(self))
  c.factor, c.value_range = { self.factor[1], self.factor[2] }, { self.value_range[1], self.value_range[2] }
  return c
end

return M
