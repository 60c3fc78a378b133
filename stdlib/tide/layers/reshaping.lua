-- stdlib/tide/layers/reshaping.lua — Keras's spatial reshaping layers:
-- ZeroPadding1D/2D/3D, Cropping1D/2D/3D, UpSampling1D/2D/3D (nearest) and
-- RepeatVector. B = batch, C = channels, d1.. = spatial dims: [B, d1.., dk, C]
-- (channels_last, the default) or [B, C, d1.., dk] (channels_first); 1D: [B, T, C].
-- (Flatten, Reshape and Permute are in core.lua.)
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local shape_ops = require "tide.ops.shape"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

-- The 0-based axis of spatial dim i (1-based) of a rank-`rank` layer's input.
local function spatial_axis(self, i)
  return self.data_format == "channels_first" and i + 1 or i
end

-- The per-axis pairs as Keras's config holds them: {a, b} for one axis,
-- {{a, b}, ...} for more.
local function pairs_config(pairs)
  if #pairs == 1 then return { pairs[1][1], pairs[1][2] } end
  local out = {}
  for i, p in ipairs(pairs) do out[i] = { p[1], p[2] } end
  return out
end

local EXAMPLES = {
  "{before, after}",
  "{h, w} or {{top, bottom}, {left, right}}",
  "{d1, d2, d3} or {{d1_before, d1_after}, {d2_before, d2_after}, {d3_before, d3_after}}",
}

-- Keras's names and defaults for the 1D layers, whose configs hold no data_format.
local function data_format_of(cls, rank, v)
  if rank == 1 and cls:find("^Cropping") then
    if v ~= nil then binding.error(cls .. ": takes no data_format (its input is [batch, steps, channels])") end
    return "channels_last"
  end
  return options.data_format(cls, v)
end

---------------------------------------------------------------------------
-- ZeroPadding1D/2D/3D and Cropping1D/2D/3D
---------------------------------------------------------------------------

local PAD_DEFAULT = { 1, 1, 1 }
local CROP_DEFAULT = { { 1, 1 }, { { 0, 0 }, { 0, 0 } }, 1 }

-- ZeroPaddingND{padding, data_format}: zeros added before and after each spatial dim.
local function padding_class(rank)
  local name = "ZeroPadding" .. rank .. "D"
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "padding", "data_format" }, ...)
    local p = o.padding
    if p == nil then p = PAD_DEFAULT[rank] end
    self._pairs = options.pairs(name, "padding", p, rank, EXAMPLES[rank])
    self.padding = pairs_config(self._pairs)
    self.data_format = options.data_format(name, o.data_format)
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x)
    local pads = {}
    for i = 1, rank + 2 do pads[i] = { 0, 0 } end
    for i = 1, rank do pads[spatial_axis(self, i) + 1] = self._pairs[i] end
    return shape_ops.pad(x, pads)
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.padding, c.data_format = self.padding, self.data_format
    return c
  end
  M[name] = cls
end
for rank = 1, 3 do padding_class(rank) end

-- CroppingND{cropping, data_format}: that many elements dropped at the start
-- and end of each spatial dim (what remains must not be empty).
local function cropping_class(rank)
  local name = "Cropping" .. rank .. "D"
  local cls = Layer:extend(name)
  function cls:init(...)
    local o = self:_kwargs({ "cropping", "data_format" }, ...)
    local c = o.cropping
    if c == nil then c = CROP_DEFAULT[rank] end
    self._pairs = options.pairs(name, "cropping", c, rank, EXAMPLES[rank])
    self.cropping = pairs_config(self._pairs)
    self.data_format = data_format_of(name, rank, o.data_format)
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x)
    local spec = {}
    for i = 1, rank + 2 do spec[i] = {} end
    local shape = x.shape
    for i = 1, rank do
      local a = spatial_axis(self, i)
      local before, after = self._pairs[i][1], self._pairs[i][2]
      local d = shape[a + 1]
      if d ~= None and before + after >= d then
        binding.error(string.format("%s: cropping %s must leave some of the input's dim %d (size %d), got input " ..
          "shape %s", who(self), layer.shape_text(self._pairs[i]), a, d, tostring(shape)))
      end
      spec[a + 1] = { before, after > 0 and -after or nil }
    end
    return x:slice(spec)
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.cropping = self.cropping
    if rank > 1 then c.data_format = self.data_format end
    return c
  end
  M[name] = cls
end
for rank = 1, 3 do cropping_class(rank) end

---------------------------------------------------------------------------
-- UpSampling1D/2D/3D
---------------------------------------------------------------------------

-- UpSampling1D{size=2}: each step repeated size times. UpSampling2D{size=2,
-- data_format, interpolation="nearest"}, UpSampling3D{size=2, data_format}:
-- each element repeated size[i] times along spatial dim i.
local function upsampling_class(rank)
  local name = "UpSampling" .. rank .. "D"
  local cls = Layer:extend(name)
  function cls:init(...)
    local keys = { "size", "data_format" }
    if rank == 2 then keys[3] = "interpolation" end
    local o = self:_kwargs(keys, ...)
    local size = o.size == nil and 2 or o.size
    if rank == 1 then
      self.size = options.positive_int(name, "size", size)
      if o.data_format ~= nil then binding.error(name .. ": takes no data_format (its input is [batch, steps, channels])") end
      self.data_format = "channels_last"
    else
      self.size = options.tuple(name, "size", size, rank)
      self.data_format = options.data_format(name, o.data_format)
    end
    if rank == 2 then
      local interp = o.interpolation or "nearest"
      if interp ~= "nearest" then
        binding.error(name .. ": only interpolation=\"nearest\" is supported, got " .. tostring(interp))
      end
      self.interpolation = interp
    end
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x)
    local sizes = rank == 1 and { self.size } or self.size
    for i = 1, rank do x = dims.repeat_axis(x, spatial_axis(self, i), sizes[i]) end
    return x
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.size = self.size
    if rank > 1 then c.data_format = self.data_format end
    if rank == 2 then c.interpolation = self.interpolation end
    return c
  end
  M[name] = cls
end
for rank = 1, 3 do upsampling_class(rank) end

---------------------------------------------------------------------------
-- RepeatVector
---------------------------------------------------------------------------

-- RepeatVector{n}: [B, F] -> [B, n, F], the input repeated n times.
local RepeatVector = Layer:extend("RepeatVector")
M.RepeatVector = RepeatVector
function RepeatVector:init(...)
  local o = self:_kwargs({ "n" }, ...)
  self.n = options.positive_int("RepeatVector", "n", o.n)
  self.input_spec = { ndim = 2 }
end
function RepeatVector:call(x)
  return shape_ops.tile(shape_ops.expand_dims(x, 1), { 1, self.n, 1 })
end
function RepeatVector:get_config()
  local c = Layer.get_config(self)
  c.n = self.n
  return c
end

return M
