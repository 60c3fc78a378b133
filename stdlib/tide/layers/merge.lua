-- stdlib/tide/layers/merge.lua — Keras's merge layers: Add, Subtract,
-- Multiply, Average, Maximum, Minimum (elementwise, numpy broadcasting) and
-- Concatenate (along an axis). Each is called on a list of tensors {a, b, ...}.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local reduce_ops = require "tide.ops.reduce"
local dynamic_shape = require "tide.ops.dynamic_shape"
local layer = require "tide.layers.layer"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

-- The inputs as a Lua list of at least `min` tensors, or an error.
local function input_list(self, inputs, min)
  if type(inputs) ~= "table" or binding.istensor(inputs) or #inputs < min then
    binding.error(string.format("%s: a merge layer is called on a list of at least %d tensors, e.g. layer{a, b}; got %s",
      who(self), min, binding.istensor(inputs) and "one tensor" or
        (type(inputs) == "table" and (#inputs .. " tensor(s)") or type(inputs))))
  end
  for i = 1, #inputs do
    if not binding.istensor(inputs[i]) then
      binding.error(string.format("%s: input %d is not a tensor (%s)", who(self), i, type(inputs[i])))
    end
  end
  return inputs
end

-- Elementwise merges: check at build that the shapes broadcast (dims equal,
-- 1 or unknown, aligned at the end), as Keras's Merge.build.
-- Keras 3's Merge.compute_mask: the inputs' masks or-ed; none unless
-- every input has one.
local function merge_masks(_, inputs, masks)
  if masks == nil then return nil end
  local out
  for i = 1, #inputs do
    local m = masks[i]
    if m == nil then return nil end
    out = out and math_ops.logical_or(out, m) or m
  end
  return out
end

local function elementwise(name, min, max, combine)
  local cls = Layer:extend(name)
  cls.supports_masking = true
  cls.compute_mask = merge_masks
  function cls:init(...) self:_kwargs({}, ...) end
  function cls:build(shapes)
    if type(shapes) ~= "table" or type(shapes[1]) ~= "table" or #shapes < min then
      binding.error(string.format("%s: a merge layer is called on a list of at least %d tensors", who(self), min))
    end
    if max and #shapes > max then
      binding.error(string.format("%s: takes exactly %d inputs, got %d", who(self), max, #shapes))
    end
    local out = {}
    for _, s in ipairs(shapes) do
      local off = #s
      for i = 1, #s do
        local pos_from_end = off - i
        local cur = out[pos_from_end]
        local d = s[i]
        if cur == nil or cur == 1 or cur == None then out[pos_from_end] = d
        elseif d ~= 1 and d ~= None and d ~= cur then
          local parts = {}
          for k, sh in ipairs(shapes) do parts[k] = layer.shape_text(sh) end
          binding.error(string.format("%s: inputs cannot be merged: shapes %s do not broadcast", who(self),
            table.concat(parts, " and ")))
        end
      end
    end
  end
  function cls:call(inputs)
    input_list(self, inputs, min)
    if max and #inputs > max then
      binding.error(string.format("%s: takes exactly %d inputs, got %d", who(self), max, #inputs))
    end
    return combine(inputs)
  end
  M[name] = cls
  return cls
end

elementwise("Add", 1, nil, function(xs)
  local y = xs[1]
  for i = 2, #xs do y = y + xs[i] end
  return y
end)
elementwise("Subtract", 2, 2, function(xs) return xs[1] - xs[2] end)
elementwise("Multiply", 1, nil, function(xs)
  local y = xs[1]
  for i = 2, #xs do y = y * xs[i] end
  return y
end)
elementwise("Average", 1, nil, function(xs)
  local y = xs[1]
  for i = 2, #xs do y = y + xs[i] end
  return y / #xs
end)
elementwise("Maximum", 1, nil, function(xs)
  local y = xs[1]
  for i = 2, #xs do y = math_ops.maximum(y, xs[i]) end
  return y
end)
elementwise("Minimum", 1, nil, function(xs)
  local y = xs[1]
  for i = 2, #xs do y = math_ops.minimum(y, xs[i]) end
  return y
end)

-- Concatenate{axis=-1}: the inputs joined along axis; the other dims must match.
local Concatenate = Layer:extend("Concatenate")
M.Concatenate = Concatenate
Concatenate.supports_masking = true
-- Keras's: the inputs' masks (all true for an unmasked one, widened to the
-- input's rank) joined along axis, then any over the last axis.
function Concatenate:compute_mask(inputs, masks)
  if masks == nil then return nil end
  local parts = {}
  for i, x in ipairs(inputs) do
    local m = masks[i]
    if m == nil then
      m = math_ops.cast(create.ones_like(x), "bool")
    elseif m.ndim < x.ndim then
      m = shape_ops.broadcast_to(shape_ops.expand_dims(m, -1), dynamic_shape.shape(x))
    end
    parts[i] = m
  end
  return reduce_ops.reduce_any(shape_ops.concat(parts, self.axis), -1)
end
function Concatenate:init(...)
  local o = self:_kwargs({ "axis" }, ...)
  local axis = o.axis == nil and -1 or o.axis
  if type(axis) ~= "number" or axis ~= math.floor(axis) then
    binding.error("Concatenate: axis must be an integer, got " .. tostring(axis))
  end
  self.axis = axis
end
function Concatenate:build(shapes)
  if type(shapes) ~= "table" or type(shapes[1]) ~= "table" or #shapes < 1 then
    binding.error(string.format("%s: is called on a list of tensors, e.g. layer{a, b}", who(self)))
  end
  local rank = #shapes[1]
  local axis = self.axis < 0 and rank + self.axis or self.axis
  if axis < 0 or axis >= rank then
    binding.error(string.format("%s: axis %d is out of range for inputs of rank %d", who(self), self.axis, rank))
  end
  for k, s in ipairs(shapes) do
    local ok = #s == rank
    for i = 1, rank do
      if ok and i - 1 ~= axis and s[i] ~= None and shapes[1][i] ~= None and s[i] ~= shapes[1][i] then ok = false end
    end
    if not ok then
      binding.error(string.format("%s: inputs must match in every dim but the concatenation axis (%d): input 1 has " ..
        "shape %s, input %d %s", who(self), self.axis, layer.shape_text(shapes[1]), k, layer.shape_text(s)))
    end
  end
end
function Concatenate:call(inputs)
  input_list(self, inputs, 1)
  return shape_ops.concat(inputs, self.axis)
end
function Concatenate:get_config()
  local c = Layer.get_config(self)
  c.axis = self.axis
  return c
end

return M
