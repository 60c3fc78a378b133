-- stdlib/tide/layers/preprocessing/image_clahe.lua — Keras 3's ContrastLimitedAdaptiveHistogramEqualization:
-- per-tile clipped histograms equalize each pixel, blended bilinearly between the four nearest tiles.
-- B = batch, H, W = height, width, C = channels, gh x gw tiles of th x tw pixels (Keras's formulas, float32).
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local segment = require "tide.ops.segment"
local options = require "tide.layers.options"
local layer = require "tide.layers.layer"
local base = require "tide.layers.preprocessing.image_base"

local Base = base.Base
local copy = base.copy
local add, sub, mul, div, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div, math_ops.where
local fmt = string.format

local M = {}

-- x [B, H, W, C] (float32, 0..255) equalized by Keras's _clahe.
local function clahe(self, x)
  local b = base.batch_size(x)
  local h, w, c = tonumber(x.dims[1]), tonumber(x.dims[2]), tonumber(x.dims[3])
  if h < 0 or w < 0 or c < 0 then
    binding.error(fmt("%s: the input's height, width and channels must be known, got shape %s", layer.who(self),
      tostring(x.shape)))
  end
  local gh, gw = self.tile_grid_size[1], self.tile_grid_size[2]
  local th, tw = math.floor((h + gh - 1) / gh), math.floor((w + gw - 1) / gw)
  local hp, wp = th * gh, tw * gw
  local padded = x
  if hp ~= h or wp ~= w then
    padded = shape_ops.pad(x, { { 0, 0 }, { 0, hp - h }, { 0, wp - w }, { 0, 0 } }, { mode = "SYMMETRIC" })
  end
  -- each tile's histogram of its int32 values (clipped to 0..255), [B, gh, gw, C, 256], by segment sums
  local tiled = shape_ops.transpose(shape_ops.reshape(padded, { b, gh, th, gw, tw, c }), { 0, 1, 3, 5, 2, 4 })
  local v = math_ops.clip_by_value(math_ops.cast(tiled, "int32"), 0, 255)          -- [B, gh, gw, C, th, tw]
  local tile_id = shape_ops.reshape(create.range(0, gh * gw * c, 1, "int32"), { 1, gh, gw, c, 1, 1 })
  local bid = shape_ops.reshape(create.range(0, b, 1, "int32"), { -1, 1, 1, 1, 1, 1 })
  local ids = add(mul(add(mul(bid, gh * gw * c), tile_id), 256), v)
  local nseg = type(b) == "number" and b * gh * gw * c * 256 or mul(b, gh * gw * c * 256)
  local hist = segment.unsorted_segment_sum(math_ops.cast(create.ones_like(v), "float32"), ids, nseg)
  hist = shape_ops.reshape(hist, { b, gh, gw, c, 256 })
  local area = th * tw
  if self.clip_limit > 0 then
    local limit = tonumber(binding.ffi.cast("float", self.clip_limit * area / 256))
    local clipped = math_ops.clip_by_value(hist, 0, limit)
    local excess = reduce.reduce_sum(sub(hist, clipped), { -1 }, { keepdims = true })
    hist = add(clipped, div(excess, 256))
  end
  local cdf = reduce.cumsum(hist, -1)
  local cdf_min = reduce.reduce_min(cdf, { -1 }, { keepdims = true })
  local den = sub(area, cdf_min)
  den = where(math_ops.equal(den, 0), create.ones_like(den), den)
  local norm = math_ops.clip_by_value(div(mul(sub(cdf, cdf_min), 255), den), 0, 255)
  -- the tiles' lookup tables with their edges repeated: [B, gh + 2, gw + 2, C, 256]
  norm = shape_ops.concat({ norm:slice { {}, { 0, 1 } }, norm, norm:slice { {}, { gh - 1, gh } } }, 1)
  norm = shape_ops.concat({ norm:slice { {}, {}, { 0, 1 } }, norm, norm:slice { {}, {}, { gw - 1, gw } } }, 2)
  local function grid(n, t, g)
    local pos = add(div(sub(create.range(0, n, 1, "float32"), t / 2), t), 1)
    local lo = math_ops.floor(pos)
    local wgt = sub(pos, lo)
    local i0 = math_ops.cast(math_ops.clip_by_value(lo, 0, g + 1), "int32")
    local i1 = math_ops.cast(math_ops.clip_by_value(add(lo, 1), 0, g + 1), "int32")
    return i0, i1, wgt
  end
  local y0, y1, wy = grid(hp, th, gh)
  local x0, x1, wx = grid(wp, tw, gw)
  local sc, sx = 256, 256 * c
  local sy = sx * (gw + 2)
  local sb = sy * (gh + 2)
  local flat = shape_ops.reshape(norm, { -1 })
  local pixels = math_ops.cast(math_ops.clip_by_value(padded, 0, 255), "int32")
  local bidx = mul(shape_ops.reshape(create.range(0, b, 1, "int32"), { -1, 1, 1, 1 }), sb)
  local cidx = mul(shape_ops.reshape(create.range(0, c, 1, "int32"), { 1, 1, 1, c }), sc)
  local basei = add(add(bidx, cidx), pixels)
  local function col(t) return shape_ops.reshape(t, { 1, -1, 1, 1 }) end
  local function row(t) return shape_ops.reshape(t, { 1, 1, -1, 1 }) end
  local function at(yi, xi) return shape_ops.gather(flat, add(add(basei, mul(col(yi), sy)), mul(row(xi), sx))) end
  local wye, wxe = col(wy), row(wx)
  local top = add(mul(at(y0, x0), sub(1, wxe)), mul(at(y0, x1), wxe))
  local bot = add(mul(at(y1, x0), sub(1, wxe)), mul(at(y1, x1), wxe))
  local out = add(mul(top, sub(1, wye)), mul(bot, wye))
  if hp ~= h or wp ~= w then out = out:slice { {}, { 0, h }, { 0, w } } end
  return out
end

-- ContrastLimitedAdaptiveHistogramEqualization{value_range={0, 255}, clip_limit=4, tile_grid_size={8, 8},
-- data_format}: Keras's CLAHE: each channel's histogram per tile, clipped at clip_limit times the mean bin
-- (the excess spread evenly), equalizes the pixel, bilinearly between the four nearest tiles; images are
-- padded symmetrically to whole tiles. Active when not training too; the result has the input's dtype.
local CLAHE = Base:extend("ContrastLimitedAdaptiveHistogramEqualization")
M.ContrastLimitedAdaptiveHistogramEqualization = CLAHE
CLAHE.always_active = true
function CLAHE:init(...)
  local cls = "ContrastLimitedAdaptiveHistogramEqualization"
  local o = self:_kwargs({ "value_range", "clip_limit", "tile_grid_size", "data_format" }, ...)
  self.value_range = base.value_range(cls, o.value_range)
  self.clip_limit = options.number(cls, "clip_limit", o.clip_limit, 4)
  local g = o.tile_grid_size == nil and { 8, 8 } or o.tile_grid_size
  if type(g) ~= "table" or #g ~= 2 or not options.is_int(g[1]) or not options.is_int(g[2]) or g[1] < 1 or g[2] < 1 then
    binding.error(fmt("%s: tile_grid_size must be a list of two positive integers, got %s", cls, base.list_text(g)))
  end
  self.tile_grid_size = { g[1], g[2] }
  self.data_format = options.data_format(cls, o.data_format)
end
function CLAHE:transform_images(images)
  local x = images
  if self.data_format == "channels_first" then x = shape_ops.transpose(x, { 0, 2, 3, 1 }) end
  x = base.transform_value_range(math_ops.cast(x, "float32"), self.value_range, { 0, 255 }, "float32")
  local y = base.transform_value_range(clahe(self, x), { 0, 255 }, self.value_range, "float32")
  if y.dtype ~= images.dtype then y = math_ops.cast(y, images.dtype) end
  if self.data_format == "channels_first" then y = shape_ops.transpose(y, { 0, 3, 1, 2 }) end
  return y
end
function CLAHE:get_config()
  local c = Base.get_config(self)
  c.value_range, c.clip_limit, c.tile_grid_size = copy(self.value_range), self.clip_limit, copy(self.tile_grid_size)
  return c
end

return M
