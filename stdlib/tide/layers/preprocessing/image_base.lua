-- stdlib/tide/layers/preprocessing/image_base.lua — Keras 3's BaseImagePreprocessingLayer for tide's
-- newer augmentation layers: the call (tensor or {images=, labels=, ...} table, batched or not), its options.
-- B = batch, H = height, W = width, C = channels. A subclass gives get_random_transformation(images, training)
-- (a table of drawn tensors, or nil) and transform_images(images, t, training) on a batch [B, H, W, C] (or
-- [B, C, H, W]); transform_labels(labels, t, training) where labels change (CutMix, MixUp). As Keras, the
-- drawn parameters and the transform are apart, so a transform is checked against Keras given the draws.
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local random = require "tide.random"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"
local util = require "tide.layers.preprocessing.image_util"

local Layer = layer.Layer
local Tensor = binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format
local who = layer.who

local M = {}

local function list_text(v)
  if type(v) ~= "table" then return tostring(v) end
  local parts = {}
  for i, e in ipairs(v) do parts[i] = tostring(e) end
  return "{" .. table.concat(parts, ", ") .. "}"
end
M.list_text = list_text

---------------------------------------------------------------------------
-- Options (Keras's checks; messages name the class and the option)
---------------------------------------------------------------------------

-- value_range: a list of two numbers; sorted where Keras sorts it (its _set_value_range).
function M.value_range(cls, v, sort)
  if v == nil then v = { 0, 255 } end
  if type(v) ~= "table" or #v ~= 2 or type(v[1]) ~= "number" or type(v[2]) ~= "number" or v[1] ~= v[1]
    or v[2] ~= v[2] then
    binding.error(fmt("%s: value_range must be a list of two numbers, got %s", cls, list_text(v)))
  end
  if sort then return { math.min(v[1], v[2]), math.max(v[1], v[2]) } end
  if v[1] == v[2] then binding.error(fmt("%s: value_range must hold two different numbers, got %s", cls, list_text(v))) end
  return { v[1], v[2] }
end

-- Keras's _set_factor (and _set_factor_by_name) in [lo, hi]: a number f gives {max(-|f|, lo), |f|}; a
-- pair, sorted, must reach into [lo, hi].
function M.factor(cls, what, f, lo, hi)
  local msg = fmt("%s: %s must be a number (or a list of two numbers) in the range [%s, %s], got %s", cls, what,
    tostring(lo), tostring(hi), list_text(f))
  if type(f) == "table" then
    if #f ~= 2 or type(f[1]) ~= "number" or type(f[2]) ~= "number" or f[1] ~= f[1] or f[2] ~= f[2] then
      binding.error(msg)
    end
    if f[1] > hi or f[2] < lo then binding.error(msg) end
    return { math.min(f[1], f[2]), math.max(f[1], f[2]) }
  end
  if type(f) ~= "number" or f ~= f or f < lo or f > hi then binding.error(msg) end
  f = math.abs(f)
  return { math.max(-f, lo), f }
end

-- A probability-like factor whose number form means {0, f} and whose every bound is in [0, 1]
-- (Solarization's addition_factor and threshold_factor).
function M.unit_factor(cls, what, f)
  local msg = fmt("%s: %s must be a number (or a list of two numbers) in the range [0, 1], got %s", cls, what,
    list_text(f))
  local function ok(v) return type(v) == "number" and v >= 0 and v <= 1 end
  if type(f) == "table" then
    if #f ~= 2 or not ok(f[1]) or not ok(f[2]) then binding.error(msg) end
    return { math.min(f[1], f[2]), math.max(f[1], f[2]) }
  end
  if not ok(f) then binding.error(msg) end
  return { 0, f }
end

function M.copy(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for i, e in ipairs(v) do out[i] = e end
  return out
end

---------------------------------------------------------------------------
-- Shared arithmetic
---------------------------------------------------------------------------

-- Keras's _transform_value_range: images mapped from `from` to `to` in dt (unchanged when equal).
function M.transform_value_range(images, from, to, dt)
  if from[1] == to[1] and from[2] == to[2] then return images end
  images = util.cast(images, dt)
  local y = math_ops.div(math_ops.sub(images, from[1]), from[2] - from[1])
  return math_ops.add(math_ops.mul(y, to[2] - to[1]), to[1])
end

-- The number of images of a batch x: a number, or a 0-d int32 tensor when unknown.
function M.batch_size(x) return dims.dim(x, 0) end

-- The channel axis (0-based) of a batch in self's data format.
function M.channel_axis(self) return self.data_format == "channels_first" and 1 or 3 end

-- A shape for tide.random: a list of numbers, or a shape tensor where a dim (a 0-d tensor) is unknown.
local function shape_list(shape)
  for _, d in ipairs(shape) do
    if type(d) ~= "number" then
      local parts = {}
      for i, e in ipairs(shape) do parts[i] = type(e) == "number" and convert.tensor(e, "int32") or e end
      return shape_ops.stack(parts)
    end
  end
  return shape
end

-- x's shape as a draw shape (known dims, or a shape tensor while tracing with unknown ones).
function M.shape_arg(x) return shape_list(dims.dims(x)) end

-- The draw shape {B, ...rest} of a batch x (a shape tensor where B is unknown).
function M.draw_shape(x, rest)
  local shape = { M.batch_size(x) }
  for _, d in ipairs(rest or {}) do shape[#shape + 1] = d end
  return shape_list(shape)
end

-- A uniform draw in [lo, hi) of {B, ...rest} (B a number or a 0-d tensor), from self's seed stream.
function M.uniform(self, x, rest, lo, hi, dt)
  return random.uniform(M.draw_shape(x, rest), { minval = lo, maxval = hi, dtype = dt or "float32", seed = self.seed })
end

-- A per-image value v [B] (or [B, 1, 1, 1]) shaped [B, 1, 1, 1] to broadcast over a batch.
function M.per_image(v) return shape_ops.reshape(v, { -1, 1, 1, 1 }) end

-- Keras's rgb_to_grayscale (TF backend): 0.2989 R + 0.587 G + 0.114 B along the channel axis, kept as
-- one channel; one channel is returned as it is; other counts are an error.
function M.grayscale(self, x)
  local axis = M.channel_axis(self)
  local c = tonumber(x.dims[axis])
  if c == 1 then return x end
  if c ~= 3 then
    binding.error(fmt("%s: expected images with 3 (RGB) or 1 (grayscale) channels, got shape %s", who(self),
      tostring(x.shape)))
  end
  local w = shape_ops.reshape(convert.tensor({ 0.2989, 0.587, 0.114 }, x.dtype), axis == 3 and { 3 } or { 3, 1, 1 })
  return reduce.reduce_sum(math_ops.mul(x, w), { axis }, { keepdims = true })
end

---------------------------------------------------------------------------
-- The base layer
---------------------------------------------------------------------------

local Base = Layer:extend("BaseImagePreprocessingLayer")
M.Base = Base

-- Set by subclasses: always_active (the transform runs when not training too: AutoContrast);
-- cast_untrained (images come back in the compute dtype when not training, as these Keras layers do).
Base.always_active = false
Base.cast_untrained = false

function Base:get_random_transformation() return nil end
function Base:transform_labels(labels) return labels end

-- One batch through the layer: draw, then transform (images cast as Keras casts them when idle).
local function run_batch(self, x, training)
  if training or self.always_active then
    local t = self:get_random_transformation(x, training)
    return self:transform_images(x, t, training), t
  end
  if self.cast_untrained then return util.cast(x, self.compute_dtype) end
  return x
end

local function check_images(self, x)
  if not istype(Tensor, x) then
    binding.error(fmt("%s: images must be a tensor, got %s", who(self), type(x)))
  end
  util.check_rank(self, x)
end

-- call(images or {images=, labels=, segmentation_masks=}, {training=true}) as Keras's: a single image
-- [H, W, C] is run as a batch of one; a table's labels go through transform_labels, its other entries
-- unchanged (bounding boxes are refused: tide's layers have no bounding_box_format yet).
function Base:call(data, opts)
  local training = util.training_of(opts)
  if istype(Tensor, data) then
    check_images(self, data)
    if data.ndim == 4 then return (run_batch(self, data, training)) end
    return shape_ops.squeeze((run_batch(self, shape_ops.expand_dims(data, 0), training)), { 0 })
  end
  if type(data) ~= "table" or data.images == nil then
    binding.error(fmt("%s: expected images (a tensor) or a table {images = ..., labels = ...}, got %s", who(self),
      type(data)))
  end
  if data.bounding_boxes ~= nil and self.transform_bounding_boxes == nil then
    binding.error(fmt("%s: bounding_boxes are not supported (tide's image layers take no bounding_box_format)",
      who(self)))
  end
  if self.geometric and data.segmentation_masks ~= nil then
    binding.error(fmt("%s: segmentation_masks are not supported by this geometric layer yet", who(self)))
  end
  local images = data.images
  check_images(self, images)
  local single = images.ndim == 3
  local out = {}
  for k, v in pairs(data) do out[k] = v end
  local y, t = run_batch(self, single and shape_ops.expand_dims(images, 0) or images, training)
  out.images = single and shape_ops.squeeze(y, { 0 }) or y
  if data.bounding_boxes ~= nil then
    local bb = data.bounding_boxes
    if type(bb) ~= "table" or not istype(Tensor, bb.boxes) or not istype(Tensor, bb.labels) then
      binding.error(fmt("%s: bounding_boxes must be a table {boxes = [B, N, 4], labels = [B, N]} of tensors",
        who(self)))
    end
    local boxes, labels = bb.boxes, bb.labels
    if single then boxes, labels = shape_ops.expand_dims(boxes, 0), shape_ops.expand_dims(labels, 0) end
    local r = self:transform_bounding_boxes({ boxes = boxes, labels = labels }, t, training)
    if single then r.boxes, r.labels = shape_ops.squeeze(r.boxes, { 0 }), shape_ops.squeeze(r.labels, { 0 }) end
    out.bounding_boxes = r
  end
  if data.labels ~= nil and (training or self.always_active) then
    local labels = data.labels
    if not istype(Tensor, labels) then labels = convert.tensor(labels, self.compute_dtype) end
    if single then labels = shape_ops.expand_dims(labels, 0) end
    labels = self:transform_labels(labels, t, training)
    out.labels = single and shape_ops.squeeze(labels, { 0 }) or labels
  end
  return out
end

-- Keras's base config: data_format (every subclass takes it).
function Base:get_config()
  local c = Layer.get_config(self)
  c.data_format = self.data_format
  return c
end

-- The options every subclass takes: data_format and seed (checked).
function Base:_base_options(cls, o)
  self.data_format = options.data_format(cls, o.data_format)
  self.seed = util.seed_option(cls, o.seed)
end

return M
