-- stdlib/tide/layers/preprocessing/image_util.lua — what the image preprocessing layers share: Keras's
-- argument checks (factors, fill modes), image axes, per-image draw shapes, Keras's resize (aspect crop/pad).
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local image = require "tide.image"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"
local layer = require "tide.layers.layer"
local ffi = binding.ffi

local who = layer.who
local fmt = string.format

local M = {}

-- float32 rounding of a Lua number (Keras computes these sizes in float32).
function M.f32(v) return tonumber(ffi.cast("float", v)) end

-- The image argument of a call: rank 3 or 4 (known), as Keras's _is_batched.
function M.check_rank(self, x)
  if x.ndim ~= 3 and x.ndim ~= 4 then
    binding.error(fmt("%s: expected an image of rank 3 (single image) or 4 (batch of images), got shape %s",
      who(self), tostring(x.shape)))
  end
end

-- The height and width axes (0-based) of x in data_format.
function M.hw_axes(self, x)
  if self.data_format == "channels_first" then return x.ndim - 2, x.ndim - 1 end
  return x.ndim - 3, x.ndim - 2
end

-- x's height and width, which must be known (also while tracing).
function M.known_hw(self, x)
  local ha, wa = M.hw_axes(self, x)
  local h, w = tonumber(x.dims[ha]), tonumber(x.dims[wa])
  if h < 0 or w < 0 then
    binding.error(fmt("%s: the input's height and width must be known, got shape %s", who(self), tostring(x.shape)))
  end
  return h, w
end

-- Channels-last view of x and the function giving a result back in data_format.
function M.to_last(self, x)
  if self.data_format ~= "channels_first" then return x, function(y) return y end end
  if x.ndim == 4 then
    return shape_ops.transpose(x, { 0, 2, 3, 1 }), function(y) return shape_ops.transpose(y, { 0, 3, 1, 2 }) end
  end
  return shape_ops.transpose(x, { 1, 2, 0 }), function(y) return shape_ops.transpose(y, { 2, 0, 1 }) end
end

-- The shape of one draw per image: {B, 1, ..., 1} of x's rank (B maybe a 0-d tensor),
-- or {1, ..., 1} for a single image; as a list, or a shape tensor when B is unknown.
function M.per_image(x, rank)
  local out = {}
  for i = 1, rank do out[i] = 1 end
  if x.ndim == 4 then out[1] = dims.dim(x, 0) end
  if type(out[1]) == "number" then return out end
  local parts = {}
  for i, d in ipairs(out) do parts[i] = type(d) == "number" and convert.tensor(d, "int32") or d end
  return shape_ops.stack(parts)
end

-- The random layers' training flag: the call's (or the enclosing call's), else true (Keras's default).
function M.training_of(opts)
  if opts.training == nil then return true end
  return opts.training
end

function M.seed_option(cls, v)
  if v ~= nil and not options.is_int(v) then
    binding.error(fmt("%s: seed must be an integer, got %s", cls, tostring(v)))
  end
  return v
end

-- Keras's BaseImagePreprocessingLayer._set_factor: a number f in [lo, hi] gives
-- {max(-|f|, lo), |f|}; a pair, sorted, must reach into [lo, hi].
function M.base_factor(cls, f, lo, hi)
  local msg = fmt("%s: factor must be a number (or a list of two numbers) in the range [%s, %s], got %s", cls,
    tostring(lo), tostring(hi), type(f) == "table" and ("{" .. table.concat(f, ", ") .. "}") or tostring(f))
  if type(f) == "table" then
    if #f ~= 2 or type(f[1]) ~= "number" or type(f[2]) ~= "number" then binding.error(msg) end
    if f[1] > hi or f[2] < lo then binding.error(msg) end
    return { math.min(f[1], f[2]), math.max(f[1], f[2]) }
  end
  if type(f) ~= "number" or f ~= f or f < lo or f > hi then binding.error(msg) end
  f = math.abs(f)
  return { math.max(-f, lo), f }
end

-- RandomZoom's and RandomTranslation's factors: each bound in (-1, 1] (zoom) or [-1, 1].
function M.pair_factor(cls, what, f, open_lo)
  local function check(v)
    if type(v) ~= "number" or v ~= v or v > 1 or v < -1 or (open_lo and v == -1) then
      binding.error(fmt("%s: %s must be a number (or a list of two numbers) in the range %s1.0, 1.0], got %s", cls,
        what, open_lo and "(-" or "[-", type(f) == "table" and ("{" .. table.concat(f, ", ") .. "}") or tostring(f)))
    end
  end
  if type(f) == "table" then
    if #f ~= 2 then check(nil) end
    check(f[1]); check(f[2])
    return math.min(f[1], f[2]), math.max(f[1], f[2])
  end
  check(f)
  return -math.abs(f), math.abs(f)
end

function M.check_choice(cls, what, v, choices, default)
  v = v == nil and default or v
  for _, c in ipairs(choices) do if v == c then return v end end
  binding.error(fmt("%s: unknown %s %s; expected one of %s", cls, what, tostring(v), table.concat(choices, ", ")))
end
M.FILL_MODES = { "reflect", "wrap", "constant", "nearest" }
M.INTERPOLATIONS = { "nearest", "bilinear" }

function M.cast(x, dt) return x.dtype == dt and x or math_ops.cast(x, dt) end

-- x resized to h x w as keras.ops.image.resize (channels last), with Keras's
-- crop_to_aspect_ratio / pad_to_aspect_ratio (float32 arithmetic and offsets as its TF backend).
function M.keras_resize(self, x, h, w, interpolation, crop, pad, fill_value)
  local ha, wa = x.ndim - 3, x.ndim - 2
  if crop or pad then
    local ih, iw = M.known_hw({ data_format = "channels_last", name = self.name }, x)
    if crop then
      local ch = math.max(math.min(ih, math.floor(M.f32(M.f32(iw * h) / w))), 1)
      local cw = math.max(math.min(iw, math.floor(M.f32(M.f32(ih * w) / h))), 1)
      local h0, w0 = math.floor(M.f32(ih - ch) / 2), math.floor(M.f32(iw - cw) / 2)
      local spec = {}
      for i = 1, x.ndim do spec[i] = {} end
      spec[ha + 1], spec[wa + 1] = { h0, h0 + ch }, { w0, w0 + cw }
      x = x:slice(spec)
    else
      local ph = math.max(ih, math.floor(M.f32(M.f32(iw * h) / w)))
      local pw = math.max(iw, math.floor(M.f32(M.f32(ih * w) / h)))
      local h0, w0 = math.floor(M.f32(ph - ih) / 2), math.floor(M.f32(pw - iw) / 2)
      -- Keras pads h0 rows above and below (so an odd difference loses a row), then w0 columns each side
      local pads = {}
      for i = 1, x.ndim do pads[i] = { 0, 0 } end
      pads[ha + 1], pads[wa + 1] = { h0, h0 }, { w0, w0 }
      x = shape_ops.pad(x, pads, { constant_values = fill_value or 0 })
    end
  end
  return image.resize(x, { h, w }, { method = interpolation })
end

return M
