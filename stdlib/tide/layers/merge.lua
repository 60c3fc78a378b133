-- stdlib/tide/layers/merge.lua — Keras's merge layers: Add, Subtract,
-- Multiply, Average, Maximum, Minimum (elementwise, numpy broadcasting),
-- Concatenate (along an axis) and Dot (batchwise dot products), each called
-- on a list of tensors {a, b, ...}, and their functions (add, ..., dot).
-- B = batch: inputs [B, ...] (broadcast against each other for the elementwise ones).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local reduce_ops = require "tide.ops.reduce"
local dynamic_shape = require "tide.ops.dynamic_shape"
local linalg = require "tide.ops.linalg"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"

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

---------------------------------------------------------------------------
-- Dot
---------------------------------------------------------------------------

-- Keras's normalize(x, axis) (order 2): x * min(rsqrt(sum x^2), 1 / 1e-7).
local function l2_normalize(x, axis)
  local inv = math_ops.rsqrt(reduce_ops.reduce_sum(math_ops.square(x), axis, true))
  return x * math_ops.minimum(inv, 1e7)
end

-- Keras's batch_dot(x, y, {a0, a1}) (0-based axes, not the batch's): for each
-- sample, x's axis a0 contracted with y's axis a1; the result's dims are x's
-- other ones, then y's (a rank-2 result for two rank-2 inputs: [B, 1]).
local function batch_dot(x, y, a0, a1)
  local xn, yn = x.ndim, y.ndim
  local ox, oy = xn, yn
  if xn == 2 then x = shape_ops.expand_dims(x, 1); a0 = a0 + 1; xn = 3 end
  if yn == 2 then y = shape_ops.expand_dims(y, 2); yn = 3 end
  if a0 ~= xn - 1 then -- the contracted axis of x last
    local perm = {}
    for i = 0, xn - 1 do if i ~= a0 then perm[#perm + 1] = i end end
    perm[#perm + 1] = a0
    x = shape_ops.transpose(x, perm)
  end
  if a1 ~= 1 then -- the contracted axis of y second
    local perm = { 0, a1 }
    for i = 1, yn - 1 do if i ~= a1 then perm[#perm + 1] = i end end
    y = shape_ops.transpose(y, perm)
  end
  local xd, yd = dims.dims(x), dims.dims(y)
  if xn > 3 then x = shape_ops.reshape(x, { xd[1], -1, xd[xn] }) end
  if yn > 3 then y = shape_ops.reshape(y, { yd[1], yd[2], -1 }) end
  local r = linalg.matmul(x, y)
  if xn > 3 or yn > 3 then
    local out = { dims.dim(r, 0) }
    if xn > 3 then for i = 2, xn - 1 do out[#out + 1] = xd[i] end else out[#out + 1] = dims.dim(r, 1) end
    if yn > 3 then for i = 3, yn do out[#out + 1] = yd[i] end else out[#out + 1] = dims.dim(r, 2) end
    r = shape_ops.reshape(r, out)
  end
  if ox == 2 then return shape_ops.squeeze(r, { 1 }) end
  if oy == 2 then return shape_ops.squeeze(r, { -1 }) end
  return r
end

-- Dot{axes, normalize=false}: for two inputs [B, ...], the dot product of
-- each sample's x along axes[1] with its y along axes[2] (one integer for
-- both); normalize l2-normalizes both along those axes first (the cosine
-- proximity). Its output carries no mask.
local Dot = Layer:extend("Dot")
M.Dot = Dot
Dot.supports_masking = true
function Dot:init(...)
  local o = self:_kwargs({ "axes", "normalize" }, ...)
  local axes = o.axes
  local ok = options.is_int(axes) or (type(axes) == "table" and #axes == 2 and options.is_int(axes[1]) and
    options.is_int(axes[2]))
  if not ok then
    binding.error("Dot: axes must be an integer or a list of two integers (the axis of each input), got " ..
      (type(axes) == "table" and "a list of another form" or tostring(axes)))
  end
  self.axes = type(axes) == "table" and { axes[1], axes[2] } or axes
  self.normalize = options.boolean("Dot", "normalize", o.normalize, false)
end
function Dot:compute_mask() return nil end
-- The two axes (0-based, non-negative) for inputs of ranks n1 and n2.
local function dot_axes(self, n1, n2)
  local a = type(self.axes) == "table" and self.axes or { self.axes, self.axes }
  local out = {}
  for i, n in ipairs { n1, n2 } do
    local ax = a[i] < 0 and a[i] + n or a[i]
    if ax < 0 or ax >= n then
      binding.error(string.format("%s: axes %d is out of range for input %d of rank %d", who(self), a[i], i, n))
    end
    if ax == 0 then
      binding.error(string.format("%s: cannot take the dot product over the batch axis 0 (axes %s)", who(self),
        tostring(a[i])))
    end
    out[i] = ax
  end
  return out[1], out[2]
end
function Dot:build(shapes)
  if type(shapes) ~= "table" or type(shapes[1]) ~= "table" or #shapes ~= 2 then
    binding.error(string.format("%s: is called on a list of 2 tensors, e.g. layer{a, b}", who(self)))
  end
  local s1, s2 = shapes[1], shapes[2]
  if #s1 < 2 or #s2 < 2 then
    binding.error(string.format("%s: inputs must have rank >= 2 (a batch of samples), got shapes %s and %s",
      who(self), layer.shape_text(s1), layer.shape_text(s2)))
  end
  local a0, a1 = dot_axes(self, #s1, #s2)
  local d1, d2 = s1[a0 + 1], s2[a1 + 1]
  if d1 ~= None and d2 ~= None and d1 ~= d2 then
    binding.error(string.format("%s: incompatible input shapes: axis %d of %s (%d) differs from axis %d of %s (%d)",
      who(self), a0, layer.shape_text(s1), d1, a1, layer.shape_text(s2), d2))
  end
end
function Dot:call(inputs)
  input_list(self, inputs, 2)
  if #inputs ~= 2 then binding.error(string.format("%s: takes exactly 2 inputs, got %d", who(self), #inputs)) end
  local x, y = inputs[1], inputs[2]
  local a0, a1 = dot_axes(self, x.ndim, y.ndim)
  if self.normalize then x, y = l2_normalize(x, a0), l2_normalize(y, a1) end
  return batch_dot(x, y, a0, a1)
end
function Dot:get_config()
  local c = Layer.get_config(self)
  c.axes, c.normalize = self.axes, self.normalize
  return c
end

---------------------------------------------------------------------------
-- The functions: keras.layers.add(inputs), ..., dot(inputs, axes)
---------------------------------------------------------------------------

-- fn(inputs, opts): a new layer of cls made with opts (a table of its
-- options and the layer's name, ...; or its first option alone: concatenate's
-- axis, dot's axes), called on inputs.
local function merge_function(cls, first_option, default)
  return function(inputs, opts)
    local o = {}
    if type(opts) == "table" then for k, v in pairs(opts) do o[k] = v end
    elseif opts ~= nil then o[first_option or 1] = opts end
    if first_option and o[first_option] == nil and o[1] == nil then o[first_option] = default end
    return cls(o)(inputs)
  end
end
M.add = merge_function(M.Add)
M.subtract = merge_function(M.Subtract)
M.multiply = merge_function(M.Multiply)
M.average = merge_function(M.Average)
M.maximum = merge_function(M.Maximum)
M.minimum = merge_function(M.Minimum)
M.concatenate = merge_function(Concatenate, "axis", -1)
M.dot = merge_function(Dot, "axes", -1)

return M
