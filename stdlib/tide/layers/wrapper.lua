-- stdlib/tide/layers/wrapper.lua — Keras's Wrapper base (a layer around one
-- layer: builds it, serializes it in its config) and TimeDistributed.
-- B = batch, T = time. (Bidirectional is in rnn.lua, SpectralNormalization in normalization.lua.)
local binding = require "tide.binding"
local shape_ops = require "tide.ops.shape"
local layer = require "tide.layers.layer"
local dims = require "tide.layers.dims"

local Layer, who = layer.Layer, layer.who
local None = require("tide.tensor_shape").None

local M = {}

---------------------------------------------------------------------------
-- Wrapper
---------------------------------------------------------------------------

-- Wrapper{layer}: subclasses keep the wrapped layer in self.layer (tracked:
-- its weights are the wrapper's) and define call.
local Wrapper = Layer:extend("Wrapper")
M.Wrapper = Wrapper
function Wrapper:init(...)
  local o = self:_kwargs({ "layer" }, ...)
  self:_set_layer(o.layer)
end
function Wrapper:_set_layer(l)
  if not layer.is_layer(l) then
    binding.error(string.format("%s: layer must be a layer instance (e.g. tide.layers.Dense{8}), got %s",
      getmetatable(self).__name, type(l)))
  end
  self.layer = l
end
-- Builds the wrapped layer for input_shape unless it is built.
function Wrapper:build(input_shape)
  if not rawget(self.layer, "built") then self.layer:build(input_shape) end
end
function Wrapper:get_config()
  local c = Layer.get_config(self)
  c.layer = layer.serialize(self.layer)
  return c
end
function Wrapper.from_config(cls, config, custom_objects)
  if type(config) ~= "table" then
    binding.error(string.format("%s.from_config: expects a config table, got %s", cls.__name, type(config)))
  end
  local copy = {}
  for k, v in pairs(config) do copy[k] = v end
  if type(copy.layer) == "table" and copy.layer.class_name then
    copy.layer = layer.deserialize(copy.layer, custom_objects)
  end
  return cls(copy)
end

---------------------------------------------------------------------------
-- TimeDistributed
---------------------------------------------------------------------------

-- TimeDistributed{layer}: [B, T, ...] -> the layer applied to each of the T
-- slices [B, ...], results stacked along dim 1. It runs the layer once on
-- [B * T, ...] (the same for every layer whose samples do not interact; a
-- BatchNormalization in training takes its statistics over all B * T
-- samples, where Keras 3's step-by-step loop takes them per step). A mask
-- [B, T, ...] reaches a layer that supports masks as [B * T, ...]; the
-- output carries the input's mask.
local TimeDistributed = Wrapper:extend("TimeDistributed")
M.TimeDistributed = TimeDistributed
TimeDistributed.supports_masking = true

local function check_rank(self, rank, shape_text)
  if rank == nil or rank < 3 then
    binding.error(string.format("%s: expects an input of rank >= 3, [batch, time, ...], got %s", who(self),
      shape_text))
  end
end

function TimeDistributed:build(input_shape)
  if type(input_shape) == "table" and type(input_shape[1]) == "table" and input_shape[1] ~= None then
    binding.error(string.format("%s: expects one tensor [batch, time, ...], got a list", who(self)))
  end
  check_rank(self, input_shape and #input_shape, input_shape and layer.shape_text(input_shape) or "an unknown rank")
  local child = { input_shape[1] }
  for i = 3, #input_shape do child[#child + 1] = input_shape[i] end
  Wrapper.build(self, child)
end

-- [B, T, rest...] -> [B * T, rest...] (the product kept when both are known).
local function merge_time(x)
  local d = dims.dims(x)
  local bt = (type(d[1]) == "number" and type(d[2]) == "number") and d[1] * d[2] or -1
  local target = { bt }
  for i = 3, #d do target[#target + 1] = d[i] end
  return shape_ops.reshape(x, target)
end

function TimeDistributed:call(x, opts)
  if not binding.istensor(x) then
    binding.error(string.format("%s: expects one tensor [batch, time, ...], got %s", who(self),
      type(x) == "table" and "a list" or type(x)))
  end
  check_rank(self, x.ndim, tostring(x.shape))
  local b, t = dims.dim(x, 0), dims.dim(x, 1)
  local inner_opts = { training = opts.training }
  local mask = opts.mask
  if mask ~= nil then
    if not binding.istensor(mask) or mask.ndim < 2 then
      binding.error(string.format("%s: the mask must be at least 2-D, [batch, time], got %s", who(self),
        binding.istensor(mask) and tostring(mask.shape) or type(mask)))
    end
    for i = 1, 2 do
      local md, xd = mask.shape[i], x.shape[i]
      if type(md) == "number" and type(xd) == "number" and md ~= xd then
        binding.error(string.format("%s: the mask's shape %s does not start with the input's batch and time " ..
          "dims (input shape %s)", who(self), tostring(mask.shape), tostring(x.shape)))
      end
    end
    if self.layer.supports_masking then inner_opts.mask = merge_time(mask) end
  end
  local function split_time(y)
    if not binding.istensor(y) then return y end
    local target = { b, t }
    for i = 1, y.ndim - 1 do target[#target + 1] = dims.dim(y, i) end
    return shape_ops.reshape(y, target)
  end
  local out = self.layer(merge_time(x), inner_opts)
  if type(out) == "table" then
    local list = {}
    for k, y in pairs(out) do list[k] = split_time(y) end
    return list
  end
  return split_time(out)
end

return M
