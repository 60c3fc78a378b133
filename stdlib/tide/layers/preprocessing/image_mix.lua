-- stdlib/tide/layers/preprocessing/image_mix.lua — Keras 3's layers that mix images of a batch (CutMix, MixUp,
-- labels mixed as Keras: call them on {images=, labels=}), MaxNumBoundingBoxes, and the Beta/Dirichlet draws
-- they need (Marsaglia-Tsang gamma on tide.random's streams). B = batch, H, W = height, width, C = channels.
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local random = require "tide.random"
local options = require "tide.layers.options"
local util = require "tide.layers.preprocessing.image_util"
local base = require "tide.layers.preprocessing.image_base"

local Base = base.Base
local cast, copy = util.cast, base.copy
local add, sub, mul, div, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div, math_ops.where
local fmt = string.format

local M = {}

---------------------------------------------------------------------------
-- Gamma, Beta and Dirichlet draws
---------------------------------------------------------------------------

local TRIES = 12 -- Marsaglia-Tsang accepts >= 95% of tries for shape >= 1: all 12 fail with p < 1e-15

-- log of Gamma(alpha, 1) draws of `shape` (alpha a number or a tensor broadcasting to it), in dt:
-- Marsaglia and Tsang's method on shape alpha + 1 (vectorized over TRIES candidates, the first accepted
-- kept), then Gamma(alpha) = Gamma(alpha + 1) U^(1 / alpha), in logs so that small alphas do not underflow.
local function log_gamma(seed, shape, alpha, dt)
  local function draw(f, o)
    o.dtype, o.seed = dt, seed
    return f(shape, o)
  end
  local d, c
  if type(alpha) == "number" then
    d = alpha + 2 / 3
    c = 1 / math.sqrt(9 * d)
  else
    d = add(alpha, 2 / 3)
    c = div(1, math_ops.sqrt(mul(d, 9)))
  end
  local g = add(mul(draw(random.uniform, {}), 0), d)
  for _ = 1, TRIES do
    local x = draw(random.normal, {})
    local u = draw(random.uniform, {})
    local v = math_ops.pow(add(1, mul(c, x)), 3)
    local lv = math_ops.log(math_ops.maximum(v, 1e-30))
    local ok = math_ops.logical_and(math_ops.greater(v, 0),
      math_ops.less(math_ops.log(u), add(mul(mul(x, x), 0.5), mul(d, add(sub(1, v), lv)))))
    g = where(ok, mul(d, v), g)
  end
  local u = draw(random.uniform, { minval = 1e-30 })
  return add(math_ops.log(g), div(math_ops.log(u), alpha))
end

-- Beta(a, a) draws of `shape` (a number or a tensor): G1 / (G1 + G2) as sigmoid(log G1 - log G2).
local function beta(seed, shape, a, dt)
  return math_ops.sigmoid(sub(log_gamma(seed, shape, a, dt), log_gamma(seed, shape, a, dt)))
end
M.beta = beta

-- A Dirichlet(alpha, ..., alpha) draw of n weights: normalized Gamma draws.
function M.dirichlet(seed, n, alpha, dt)
  return require("tide.ops.nn").softmax(log_gamma(seed, { n }, alpha, dt))
end

---------------------------------------------------------------------------
-- CutMix, MixUp
---------------------------------------------------------------------------

-- labels mixed as Keras: w * labels + (1 - w) * labels[permutation], w per image.
local function mix_labels(self, labels, t)
  local y = cast(labels, self.compute_dtype)
  local w = shape_ops.reshape(cast(t.mix_weight, self.compute_dtype), { -1, 1 })
  if y.ndim == 1 then w = shape_ops.reshape(w, { -1 }) end
  return add(mul(w, y), mul(sub(1, w), shape_ops.gather(y, t.permutation_order, { axis = 0 })))
end

-- CutMix{factor=1, seed, data_format}: each image of a batch gets a rectangle of another image of the batch
-- (a random permutation): its sides are sqrt(1 - l) of the image's, l drawn from Beta(a, a) with a drawn per
-- call in factor ({0, f} for a number); labels are mixed by the area kept. A single image is kept.
local CutMix = Base:extend("CutMix")
M.CutMix = CutMix
CutMix.cast_untrained = true
function CutMix:init(...)
  local o = self:_kwargs({ "factor", "seed", "data_format" }, ...)
  self.factor = base.factor("CutMix", "factor", o.factor == nil and 1 or o.factor, 0, 1)
  self:_base_options("CutMix", o)
end
function CutMix:get_random_transformation(images)
  local dt = self.compute_dtype
  local hw = self.data_format == "channels_first" and { 2, 3 } or { 1, 2 }
  local h, w = tonumber(images.dims[hw[1]]), tonumber(images.dims[hw[2]])
  if h < 0 or w < 0 then
    binding.error(fmt("%s: the input's height and width must be known, got shape %s", require("tide.layers.layer").who(
      self), tostring(images.shape)))
  end
  local b = base.batch_size(images)
  local alpha = add(random.uniform({}, { minval = self.factor[1], maxval = self.factor[2], dtype = dt,
    seed = self.seed }), 1e-6)
  local lam = beta(self.seed, base.draw_shape(images, {}), alpha, dt)
  local ratio = math_ops.sqrt(sub(1, lam))
  local function bounds(len)
    local crop = mul(ratio, len)
    local start = mul(base.uniform(self, images, {}, 0, 1, dt), sub(len, crop))
    return base.per_image(start), base.per_image(add(start, crop))
  end
  local x0, x1 = bounds(w)
  local y0, y1 = bounds(h)
  local gshape = self.data_format == "channels_first" and { 1, 1, h, 1 } or { 1, h, 1, 1 }
  local gy = shape_ops.reshape(create.range(0, h, 1, dt), gshape)
  local gx = shape_ops.reshape(create.range(0, w, 1, dt), self.data_format == "channels_first" and { 1, 1, 1, w }
    or { 1, 1, w, 1 })
  local mask = math_ops.logical_and(math_ops.logical_and(math_ops.greater_equal(gx, x0), math_ops.less(gx, x1)),
    math_ops.logical_and(math_ops.greater_equal(gy, y0), math_ops.less(gy, y1)))
  local kept = sub(1, div(mul(sub(x1, x0), sub(y1, y0)), w * h))
  local perm = random.shuffle(create.range(0, b, 1, "int32"), { seed = self.seed })
  return { permutation_order = perm, batch_masks = mask, mix_weight = kept }
end
function CutMix:transform_images(images, t)
  local x = cast(images, self.compute_dtype)
  return where(t.batch_masks, shape_ops.gather(x, t.permutation_order, { axis = 0 }), x)
end
function CutMix:transform_labels(labels, t) return mix_labels(self, labels, t) end
function CutMix:get_config()
  local c = Base.get_config(self)
  c.factor, c.seed = copy(self.factor), self.seed
  return c
end

-- MixUp{alpha=0.2, seed, data_format}: each image (and its label) becomes w x + (1 - w) x[p] for a random
-- permutation p of the batch and w drawn per image from Beta(alpha, alpha).
local MixUp = Base:extend("MixUp")
M.MixUp = MixUp
function MixUp:init(...)
  local o = self:_kwargs({ "alpha", "data_format", "seed" }, ...)
  self.alpha = options.number("MixUp", "alpha", o.alpha, 0.2)
  if self.alpha <= 0 then binding.error(fmt("MixUp: alpha must be a positive number, got %s", tostring(o.alpha))) end
  self:_base_options("MixUp", o)
end
function MixUp:get_random_transformation(images)
  local b = base.batch_size(images)
  return { permutation_order = random.shuffle(create.range(0, b, 1, "int32"), { seed = self.seed }),
    mix_weight = beta(self.seed, base.draw_shape(images, {}), self.alpha, "float32") }
end
function MixUp:transform_images(images, t)
  local dt = self.compute_dtype
  local x = cast(images, dt)
  local w = base.per_image(cast(t.mix_weight, dt))
  return add(mul(w, x), mul(sub(1, w), shape_ops.gather(x, t.permutation_order, { axis = 0 })))
end
function MixUp:transform_labels(labels, t) return mix_labels(self, labels, t) end
function MixUp:get_config()
  local c = Base.get_config(self)
  c.alpha, c.seed = self.alpha, self.seed
  return c
end

---------------------------------------------------------------------------
-- MaxNumBoundingBoxes
---------------------------------------------------------------------------

-- MaxNumBoundingBoxes{max_number, fill_value=-1, bounding_box_format}: a {images=, bounding_boxes={boxes=
-- [B, N, 4], labels=[B, N]}} table's boxes and labels cut or padded (with fill_value) to max_number per
-- image; images pass unchanged. Active when not training too.
local MaxNumBoundingBoxes = Base:extend("MaxNumBoundingBoxes")
M.MaxNumBoundingBoxes = MaxNumBoundingBoxes
MaxNumBoundingBoxes.always_active = true
function MaxNumBoundingBoxes:init(...)
  local o = self:_kwargs({ "max_number", "fill_value", "bounding_box_format", "data_format" }, ...)
  self.max_number = options.positive_int("MaxNumBoundingBoxes", "max_number", o.max_number)
  self.fill_value = options.int("MaxNumBoundingBoxes", "fill_value", o.fill_value, -1)
  if o.bounding_box_format ~= nil and type(o.bounding_box_format) ~= "string" then
    binding.error(fmt("MaxNumBoundingBoxes: bounding_box_format must be a string, got %s",
      tostring(o.bounding_box_format)))
  end
  self.bounding_box_format = o.bounding_box_format
  self.data_format = options.data_format("MaxNumBoundingBoxes", o.data_format)
end
function MaxNumBoundingBoxes:transform_images(images) return images end
function MaxNumBoundingBoxes:transform_bounding_boxes(bb)
  local function fit(x, rank)
    if x.ndim ~= rank then
      binding.error(fmt("MaxNumBoundingBoxes: expected %s of rank %d, got shape %s", rank == 3 and "boxes [B, N, 4]"
        or "labels [B, N]", rank, tostring(x.shape)))
    end
    local n = tonumber(x.dims[1])
    local spec = { {}, { 0, math.min(n >= 0 and n or self.max_number, self.max_number) } }
    if rank == 3 then spec[3] = {} end
    if n >= 0 and n > self.max_number then return x:slice(spec) end
    local pads = { { 0, 0 }, { 0, self.max_number - math.max(n, 0) } }
    if rank == 3 then pads[3] = { 0, 0 } end
    if n < 0 then
      binding.error("MaxNumBoundingBoxes: the number of boxes must be known, got shape " .. tostring(x.shape))
    end
    return shape_ops.pad(x, pads, { constant_values = self.fill_value })
  end
  return { boxes = fit(bb.boxes, 3), labels = fit(bb.labels, 2) }
end
function MaxNumBoundingBoxes:get_config()
  local c = Base.get_config(self)
  c.max_number, c.fill_value = self.max_number, self.fill_value
  if self.bounding_box_format ~= nil then c.bounding_box_format = self.bounding_box_format end
  return c
end

return M
