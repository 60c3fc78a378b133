-- stdlib/tide/layers/preprocessing/image_policy.lua — Keras 3's augmentation policies: RandAugment (num_ops
-- layers drawn per call from eleven) and AugMix (chains of drawn layers mixed by Dirichlet and Beta weights).
-- Eagerly only the drawn layers run; while tracing (tide.trace, tide.data maps) every candidate runs and the
-- drawn one is selected, so the graph holds the choice. Images [B, H, W, C] ([B, C, H, W] channels_first).
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local tensor = require "tide.tensor"
local random = require "tide.random"
local options = require "tide.layers.options"
local util = require "tide.layers.preprocessing.image_util"
local base = require "tide.layers.preprocessing.image_base"
local image_random = require "tide.layers.preprocessing.image_random"
local color = require "tide.layers.preprocessing.image_color"
local filter = require "tide.layers.preprocessing.image_filter"
local warp = require "tide.layers.preprocessing.image_warp"
local mix = require "tide.layers.preprocessing.image_mix"

local Base = base.Base
local cast, copy = util.cast, base.copy
local add, sub, mul, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.where
local fmt = string.format

local M = {}

-- Keras's candidate layers, in its order (RandAugment's _AUGMENT_LAYERS; AugMix's AUGMENT_LAYERS_ALL differ
-- in order, AUGMENT_LAYERS is their first seven).
local RAND_AUGMENT = { "random_shear", "random_translation", "random_rotation", "random_brightness",
  "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization", "solarization",
  "auto_contrast", "equalization" }
local AUG_MIX_ALL = { "random_shear", "random_translation", "random_rotation", "random_posterization", "solarization",
  "auto_contrast", "equalization", "random_brightness", "random_color_degeneration", "random_contrast",
  "random_sharpness" }

-- The candidate layers Keras builds from factor f = {lo, hi}, value_range and interpolation (each with the
-- policy's seed and data format), as a table by Keras's attribute names.
local function candidates(self, names)
  local f, vr, o = self.factor, self.value_range, { seed = self.seed, data_format = self.data_format,
    dtype = self.dtype_policy }
  local function with(t)
    for k, v in pairs(o) do t[k] = v end
    return t
  end
  local make = {
    random_shear = function() return warp.RandomShear(with { x_factor = f, y_factor = f,
      interpolation = self.interpolation }) end,
    random_translation = function() return image_random.RandomTranslation(with { height_factor = f,
      width_factor = f, interpolation = self.interpolation }) end,
    random_rotation = function() return image_random.RandomRotation(with { factor = f,
      interpolation = self.interpolation }) end,
    random_brightness = function() return image_random.RandomBrightness(with { factor = f, value_range = vr }) end,
    random_color_degeneration = function() return color.RandomColorDegeneration(with { factor = f,
      value_range = vr }) end,
    random_contrast = function() return image_random.RandomContrast(with { factor = f, value_range = vr }) end,
    random_sharpness = function() return filter.RandomSharpness(with { factor = f, value_range = vr }) end,
    random_posterization = function() return color.RandomPosterization(with { factor = math.max(1,
      math.floor(8 * f[2])), value_range = vr }) end,
    solarization = function() return color.Solarization(with { addition_factor = f, threshold_factor = f,
      value_range = vr }) end,
    auto_contrast = function() return color.AutoContrast { value_range = vr, data_format = self.data_format,
      dtype = self.dtype_policy } end,
    equalization = function() return color.Equalization { value_range = vr, data_format = self.data_format,
      dtype = self.dtype_policy } end,
  }
  local out = {}
  for i, name in ipairs(names) do
    local ok, l = pcall(make[name])
    if not ok then binding.error(fmt("%s: %s", require("tide.layers.layer").who(self), tostring(l))) end
    out[i] = l
  end
  return out
end

-- One candidate on a batch: draw and transform (Keras's get_random_transformation + transform_images).
local function apply(l, x)
  if l.transform_images then return l:transform_images(x, l:get_random_transformation(x, true), true) end
  return l:call(x, { training = true })
end

-- x through candidate number k (0-based int32 0-d tensor) of `layers`, k == #layers meaning none: only that
-- one eagerly, every one selected by k while tracing.
local function choose(layers, k, x, dt)
  if not tensor.is_symbolic(k) and not tensor.is_symbolic(x) then
    local i = k:item() + 1
    if layers[i] == nil then return x end
    return cast(apply(layers[i], x), dt)
  end
  local y = x
  for i, l in ipairs(layers) do y = where(math_ops.equal(k, i - 1), cast(apply(l, x), dt), y) end
  return y
end

local function policy_options(self, cls, o, default_factor)
  self.value_range = base.value_range(cls, o.value_range)
  self.factor = base.factor(cls, "factor", o.factor == nil and default_factor or o.factor, 0, 1)
  self.interpolation = util.check_choice(cls, "interpolation", o.interpolation, util.INTERPOLATIONS, "bilinear")
  self:_base_options(cls, o)
end

-- RandAugment{value_range={0, 255}, num_ops=2, factor=0.5, interpolation="bilinear", seed, data_format}:
-- num_ops times, one of Keras's eleven layers (shear, translation, rotation, brightness, colour degeneration,
-- contrast, sharpness, posterization, solarization, auto contrast, equalization), drawn per call, is applied
-- to the batch with strength factor ({0, f} for a number).
local RandAugment = Base:extend("RandAugment")
M.RandAugment = RandAugment
RandAugment.cast_untrained = true
function RandAugment:init(...)
  local o = self:_kwargs({ "value_range", "num_ops", "factor", "interpolation", "seed", "data_format" }, ...)
  policy_options(self, "RandAugment", o, 0.5)
  self.num_ops = options.positive_int("RandAugment", "num_ops", o.num_ops == nil and 2 or o.num_ops)
  self._layers = candidates(self, RAND_AUGMENT)
end
function RandAugment:get_random_transformation()
  local k = random.uniform({ self.num_ops }, { minval = 0, maxval = #RAND_AUGMENT, dtype = "int32", seed = self.seed })
  return { layer_idxes = k }
end
function RandAugment:transform_images(images, t)
  local dt = self.compute_dtype
  local x = cast(images, dt)
  for i = 0, self.num_ops - 1 do x = choose(self._layers, t.layer_idxes[i], x, dt) end
  return x
end
function RandAugment:get_config()
  local c = Base.get_config(self)
  c.value_range, c.num_ops, c.factor = copy(self.value_range), self.num_ops, copy(self.factor)
  c.interpolation, c.seed = self.interpolation, self.seed
  return c
end

-- AugMix{value_range={0, 255}, num_chains=3, chain_depth=3, factor=0.3, alpha=1, all_ops=true,
-- interpolation="bilinear", seed, data_format}: num_chains chains of chain_depth steps, each step one of the
-- candidate layers or none (drawn per call, uniformly); the chains' results are mixed by Dirichlet(alpha)
-- weights and the mix blended with the image by a Beta(alpha, alpha) draw, clipped to value_range.
-- all_ops=false keeps the seven layers that do not change colour statistics (Keras's AUGMENT_LAYERS).
local AugMix = Base:extend("AugMix")
M.AugMix = AugMix
AugMix.cast_untrained = true
function AugMix:init(...)
  local o = self:_kwargs({ "value_range", "num_chains", "chain_depth", "factor", "alpha", "all_ops", "interpolation",
    "seed", "data_format" }, ...)
  policy_options(self, "AugMix", o, 0.3)
  self.num_chains = options.positive_int("AugMix", "num_chains", o.num_chains == nil and 3 or o.num_chains)
  self.chain_depth = options.positive_int("AugMix", "chain_depth", o.chain_depth == nil and 3 or o.chain_depth)
  self.alpha = options.number("AugMix", "alpha", o.alpha, 1)
  if self.alpha <= 0 then binding.error(fmt("AugMix: alpha must be a positive number, got %s", tostring(o.alpha))) end
  self.all_ops = options.boolean("AugMix", "all_ops", o.all_ops, true)
  local names = {}
  for i = 1, self.all_ops and #AUG_MIX_ALL or 7 do names[i] = AUG_MIX_ALL[i] end
  self._layers = candidates(self, names)
end
function AugMix:get_random_transformation()
  local n = #self._layers
  return {
    chain_mixing_weights = mix.dirichlet(self.seed, self.num_chains, self.alpha, "float32"),
    weight_sample = mix.beta(self.seed, {}, self.alpha, "float32"),
    layer_idxes = random.uniform({ self.num_chains, self.chain_depth }, { minval = 0, maxval = n + 1, dtype = "int32",
      seed = self.seed }),
  }
end
function AugMix:transform_images(images, t)
  local dt = self.compute_dtype
  local x = cast(images, dt)
  local w = cast(t.chain_mixing_weights, dt)
  local aug
  for c = 0, self.num_chains - 1 do
    local y = x
    for d = 0, self.chain_depth - 1 do y = choose(self._layers, t.layer_idxes[c][d], y, dt) end
    local term = mul(y, w[c])
    aug = aug and add(aug, term) or term
  end
  local ws = cast(t.weight_sample, dt)
  local y = add(mul(ws, x), mul(sub(1, ws), aug))
  return math_ops.clip_by_value(y, self.value_range[1], self.value_range[2])
end
function AugMix:get_config()
  local c = Base.get_config(self)
  c.value_range, c.num_chains, c.chain_depth = copy(self.value_range), self.num_chains, self.chain_depth
  c.factor, c.alpha, c.all_ops, c.interpolation, c.seed = copy(self.factor), self.alpha, self.all_ops,
    self.interpolation, self.seed
  return c
end

return M
