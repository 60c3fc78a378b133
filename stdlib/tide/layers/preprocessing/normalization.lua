-- stdlib/tide/layers/preprocessing/normalization.lua — Keras 3's Normalization preprocessing layer: (x - mean) /
-- max(sqrt(variance), eps) per kept axis (or its inverse), mean and variance given or learned by adapt.
-- B = batch, ... = the axes reduced by adapt; the kept axes (axis, -1 by default) must be known.
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local layer = require "tide.layers.layer"
local categorical = require "tide.layers.preprocessing.categorical"
local None = require("tide.tensor_shape").None

local Layer, who = layer.Layer, layer.who
local fmt = string.format
local EPSILON = 1e-7 -- Keras's backend.epsilon()

local M = {}

local Normalization = Layer:extend("Normalization")
M.Normalization = Normalization
Normalization.supports_masking = true

-- A Lua number or (nested) list as a Lua value of numbers, for the config; a tensor as its table.
local function plain(v)
  if v == nil or type(v) == "number" then return v end
  if binding.istensor(v) then return v:totable() end
  return v
end

-- Normalization{axis=-1, mean=, variance=, invert=false}: axis a number, a list, or false for none
-- (Keras's None: one mean and variance for everything).
function Normalization:init(...)
  local o = self:_kwargs({ "axis", "mean", "variance", "invert" }, ...)
  local axis = o.axis
  if axis == nil then axis = { -1 } elseif axis == false then axis = {} elseif type(axis) == "number" then
    axis = { axis } end
  if type(axis) ~= "table" then
    binding.error(fmt("%s: axis must be an integer, a list of integers or false (none), got %s", who(self),
      tostring(o.axis)))
  end
  for _, a in ipairs(axis) do
    if type(a) ~= "number" or a ~= math.floor(a) then
      binding.error(fmt("%s: axis must hold integers, got %s", who(self), tostring(a)))
    end
  end
  self.axis = axis
  if o.invert ~= nil and type(o.invert) ~= "boolean" then
    binding.error(fmt("%s: invert must be true or false, got %s", who(self), tostring(o.invert)))
  end
  self.invert = o.invert == true
  if (o.mean == nil) ~= (o.variance == nil) then
    binding.error(fmt("%s: give both mean and variance, or neither (got %s mean and %s variance)", who(self),
      o.mean == nil and "no" or "a", o.variance == nil and "no" or "a"))
  end
  self.input_mean, self.input_variance = plain(o.mean), plain(o.variance)
  if o.mean ~= nil then
    local m, v = convert.tensor(self.input_mean, "float32"), convert.tensor(self.input_variance, "float32")
    if m.shape ~= v.shape then
      binding.error(fmt("%s: mean and variance must have the same shape, got %s and %s", who(self), tostring(m.shape),
        tostring(v.shape)))
    end
    if m.shape.rank > #axis then
      binding.error(fmt("%s: mean has rank %d, more than the %d kept axes", who(self), m.shape.rank, #axis))
    end
  end
end

function Normalization:build(input_shape)
  local ndim = #input_shape
  local keep, is_kept = {}, {}
  for _, a in ipairs(self.axis) do
    if a < -ndim or a >= ndim then
      binding.error(fmt("%s: axis %d is out of range for inputs of rank %d", who(self), a, ndim))
    end
    local d = a < 0 and a + ndim or a
    keep[#keep + 1], is_kept[d] = d, true
  end
  table.sort(keep)
  local reduce, bshape, mv_shape = {}, {}, {}
  for d = 0, ndim - 1 do
    if is_kept[d] then
      local n = input_shape[d + 1]
      if n == None or n == nil then
        binding.error(fmt("%s: the kept axis %d must have a known size, got inputs of shape %s", who(self), d,
          layer.shape_text(input_shape)))
      end
      bshape[d + 1], mv_shape[#mv_shape + 1] = n, n
    else
      bshape[d + 1] = 1
      reduce[#reduce + 1] = d
    end
  end
  self._keep_axis, self._reduce_axis, self._broadcast_shape, self._mv_shape = keep, reduce, bshape, mv_shape
  self._build_input_shape = input_shape
  if self.input_mean == nil then
    self.adapt_mean = self:add_weight { name = "mean", shape = mv_shape, initializer = "zeros", trainable = false }
    self.adapt_variance = self:add_weight { name = "variance", shape = mv_shape, initializer = "ones",
      trainable = false }
    self.count = self:add_weight { name = "count", shape = {}, dtype = "int64", initializer = "zeros",
      trainable = false }
  else
    -- the given values lie along the last kept axes (a scalar: everywhere)
    local function placed(v)
      local t = convert.tensor(v, "float32")
      local expanded = {}
      for d = 1, ndim do expanded[d] = 1 end
      local ts = t.shape:as_list()
      for i = 1, #ts do expanded[keep[#keep - i + 1] + 1] = ts[#ts - i + 1] end
      return shape_ops.broadcast_to(shape_ops.reshape(t, expanded), bshape)
    end
    self._mean, self._variance = placed(self.input_mean), placed(self.input_variance)
  end
end

-- A dataset element's features: the element, or its first entry when it is a tuple ({x, y}).
local function features(e)
  if type(e) == "table" and not binding.istensor(e) and e[1] ~= nil then return e[1] end
  return e
end

-- adapt(data): mean and variance over the reduced axes of a tensor (or nested list), or of a tide.data
-- dataset's batches (unbatched rank-1 elements are batched by 128, as Keras), or of a list of batches,
-- the batches combined as Keras combines them.
function Normalization:adapt(data, opts)
  if self.input_mean ~= nil then
    binding.error(fmt("%s: adapt on a layer made with mean and variance", who(self)))
  end
  local is_dataset = type(data) == "table" and type(data.iter) == "function" and data.kind ~= nil
  local steps = type(opts) == "table" and opts.steps or nil
  local batches = {}
  if is_dataset then
    local first
    for e in data:iter() do first = convert.tensor(features(e)) break end
    if first == nil then binding.error(fmt("%s: adapt: the dataset is empty", who(self))) end
    if first.shape.rank == 1 then data = data:batch(128) end
    for e in data:iter() do
      if steps and #batches >= steps then break end
      batches[#batches + 1] = convert.tensor(features(e), "float32")
    end
  else
    categorical.each_batch(data, steps, function(b) batches[#batches + 1] = convert.tensor(b, "float32") end)
  end
  if #batches == 0 then binding.error(fmt("%s: adapt: the data is empty", who(self))) end
  local shape = batches[1].shape:as_list()
  if not self.built then
    self:build(shape)
    self.built = true
  end
  local total_mean, total_var
  if #batches == 1 and not is_dataset then
    total_mean = reduce_ops.reduce_mean(batches[1], self._reduce_axis)
    total_var = reduce_ops.reduce_variance(batches[1], self._reduce_axis)
  else
    local count = 0
    for _, b in ipairs(batches) do
      local bs = b.shape:as_list()
      for _, d in ipairs(self._keep_axis) do
        if bs[d + 1] ~= self._build_input_shape[d + 1] then
          binding.error(fmt("%s: adapt: a batch of shape %s does not match the layer's input shape %s", who(self),
            tostring(b.shape), layer.shape_text(self._build_input_shape)))
        end
      end
      local bm = reduce_ops.reduce_mean(b, self._reduce_axis)
      local bv = reduce_ops.reduce_variance(b, self._reduce_axis)
      local n = 1
      for _, d in ipairs(self._reduce_axis) do n = n * bs[d + 1] end
      count = count + n
      local bw = n / count
      local ew = 1 - bw
      if total_mean == nil then total_mean, total_var = bm * 0, bv * 0 end
      local new_mean = total_mean * ew + bm * bw
      total_var = (total_var + math_ops.square(total_mean - new_mean)) * ew + (bv + math_ops.square(bm - new_mean)) * bw
      total_mean = new_mean
    end
  end
  self.adapt_mean:assign(total_mean)
  self.adapt_variance:assign(total_var)
end

function Normalization:call(x)
  x = math_ops.cast(convert.tensor(x, "float32"), "float32")
  local mean, variance = self._mean, self._variance
  if mean == nil then
    mean = shape_ops.reshape(self.adapt_mean:read_value(), self._broadcast_shape)
    variance = shape_ops.reshape(self.adapt_variance:read_value(), self._broadcast_shape)
  end
  local scale = math_ops.maximum(math_ops.sqrt(variance), EPSILON)
  if self.invert then return mean + x * scale end
  return (x - mean) / scale
end

function Normalization:compute_output_shape(input_shape) return input_shape end

function Normalization:get_config()
  local c = Layer.get_config(self)
  c.axis, c.invert, c.mean, c.variance = self.axis, self.invert, self.input_mean, self.input_variance
  return c
end

return M
