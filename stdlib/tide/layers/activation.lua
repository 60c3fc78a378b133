-- stdlib/tide/layers/activation.lua — Keras 3's activation layers: ReLU,
-- LeakyReLU, PReLU (a learned slope), ELU and Softmax (with a mask).
-- B = batch: [B, ...] -> [B, ...], masks passed on (Softmax also uses them).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local nn = require "tide.ops.nn"
local activations = require "tide.activations"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

-- A non-negative number option (nil gives default; nil_ok lets it stay nil).
local function non_negative(cls, what, v, default, nil_ok)
  if v == nil then
    if nil_ok then return nil end
    v = default
  end
  if type(v) ~= "number" or v ~= v or v < 0 then
    binding.error(string.format("%s: %s must be a non-negative number%s, got %s", cls, what,
      nil_ok and " (or nil)" or "", tostring(v)))
  end
  return v
end

---------------------------------------------------------------------------
-- ReLU, LeakyReLU, ELU
---------------------------------------------------------------------------

-- ReLU{max_value=nil, negative_slope=0, threshold=0} (MobileNet's ReLU{6}):
-- x above threshold, capped at max_value; negative_slope * (x - threshold) below it.
local ReLU = Layer:extend("ReLU")
M.ReLU = ReLU
ReLU.supports_masking = true
function ReLU:init(...)
  local o = self:_kwargs({ "max_value", "negative_slope", "threshold" }, ...)
  self.max_value = non_negative("ReLU", "max_value", o.max_value, nil, true)
  self.negative_slope = non_negative("ReLU", "negative_slope", o.negative_slope, 0)
  self.threshold = non_negative("ReLU", "threshold", o.threshold, 0)
end
function ReLU:call(x)
  if self.max_value == nil and self.negative_slope == 0 and self.threshold == 0 then return math_ops.relu(x) end
  return activations.relu(x, { max_value = self.max_value, negative_slope = self.negative_slope,
    threshold = self.threshold })
end
function ReLU:get_config()
  local c = Layer.get_config(self)
  c.max_value, c.negative_slope, c.threshold = self.max_value, self.negative_slope, self.threshold
  return c
end

-- LeakyReLU{negative_slope=0.3} (Keras 3's layer default; the function's is
-- 0.2). Keras 2's name for it, alpha, is taken too.
local LeakyReLU = Layer:extend("LeakyReLU")
M.LeakyReLU = LeakyReLU
LeakyReLU.supports_masking = true
function LeakyReLU:init(...)
  local o = self:_kwargs({ "negative_slope", "alpha" }, ...)
  local slope = o.negative_slope
  if slope == nil then slope = o.alpha end
  self.negative_slope = non_negative("LeakyReLU", "negative_slope", slope, 0.3)
end
function LeakyReLU:call(x) return math_ops.leaky_relu(x, { alpha = self.negative_slope }) end
function LeakyReLU:get_config()
  local c = Layer.get_config(self)
  c.negative_slope = self.negative_slope
  return c
end

-- ELU{alpha=1}: x for x > 0, alpha * (exp(x) - 1) otherwise.
local ELU = Layer:extend("ELU")
M.ELU = ELU
ELU.supports_masking = true
function ELU:init(...)
  local o = self:_kwargs({ "alpha" }, ...)
  self.alpha = options.number("ELU", "alpha", o.alpha, 1.0)
end
function ELU:call(x) return activations.elu(x, { alpha = self.alpha }) end
-- (Keras 3's ELU leaves alpha out of its config, so it comes back as 1; tide keeps it.)
function ELU:get_config()
  local c = Layer.get_config(self)
  c.alpha = self.alpha
  return c
end

---------------------------------------------------------------------------
-- PReLU
---------------------------------------------------------------------------

-- PReLU{alpha_initializer="zeros", alpha_regularizer=nil,
-- alpha_constraint=nil, shared_axes=nil}: relu(x) - alpha * relu(-x), alpha
-- a weight of the input's shape without the batch, size 1 along shared_axes
-- (1-based over the dims after the batch, as Keras: {1, 2} shares one slope
-- per channel of an image).
local PReLU = Layer:extend("PReLU")
M.PReLU = PReLU
PReLU.supports_masking = true
function PReLU:init(...)
  local o = self:_kwargs({ "alpha_initializer", "alpha_regularizer", "alpha_constraint", "shared_axes" }, ...)
  self.alpha_initializer = initializers.get(o.alpha_initializer or "zeros", "PReLU: alpha_initializer")
  self.alpha_regularizer = regularizers.get(o.alpha_regularizer, "PReLU: alpha_regularizer")
  self.alpha_constraint = constraints.get(o.alpha_constraint, "PReLU: alpha_constraint")
  local shared = o.shared_axes
  if shared ~= nil then
    if type(shared) == "number" then shared = { shared } end
    if type(shared) ~= "table" then
      binding.error("PReLU: shared_axes must be an integer or a list of integers (1-based, after the batch), got " ..
        tostring(o.shared_axes))
    end
    local copy = {}
    for i, a in ipairs(shared) do
      if not options.is_int(a) or a < 1 then
        binding.error(string.format("PReLU: shared_axes must hold axes >= 1 (the batch axis 0 cannot be shared), " ..
          "got %s", tostring(a)))
      end
      copy[i] = a
    end
    shared = copy
  end
  self.shared_axes = shared
end
function PReLU:build(input_shape)
  local rank = input_shape and #input_shape
  if not rank or rank < 2 then
    binding.error(string.format("%s: expects an input of rank >= 2 (a batch of samples), got %s", who(self),
      input_shape and layer.shape_text(input_shape) or "an unknown rank"))
  end
  local shape = {}
  for i = 2, rank do shape[i - 1] = input_shape[i] end
  local shared = {}
  for _, a in ipairs(self.shared_axes or {}) do
    if a >= rank then
      binding.error(string.format("%s: shared_axes %d is out of range for an input of rank %d", who(self), a, rank))
    end
    shape[a] = 1
    shared[a] = true
  end
  local axes = {}
  for i, d in ipairs(shape) do
    if d == None then
      binding.error(string.format("%s: the input's dim %d must be known to build alpha (or shared), got shape %s",
        who(self), i, layer.shape_text(input_shape)))
    end
    if not shared[i] then axes[i] = d end
  end
  self.alpha = self:add_weight { name = "alpha", shape = shape, initializer = self.alpha_initializer,
    regularizer = self.alpha_regularizer, constraint = self.alpha_constraint }
  self.input_spec = { ndim = rank, axes = axes }
end
function PReLU:call(x)
  return math_ops.relu(x) - self.alpha * math_ops.relu(-x)
end
function PReLU:get_config()
  local c = Layer.get_config(self)
  c.alpha_initializer = initializers.serialize(self.alpha_initializer)
  c.alpha_regularizer = regularizers.serialize(self.alpha_regularizer)
  c.alpha_constraint = constraints.serialize(self.alpha_constraint)
  c.shared_axes = self.shared_axes
  return c
end

---------------------------------------------------------------------------
-- Softmax
---------------------------------------------------------------------------

-- Softmax{axis=-1} (an axis or a list of them): exp(x) / sum(exp(x)) over
-- axis. A mask (the input's, or {mask = m} in the call; bool, or floats read
-- as m > 0.5), broadcastable to x, leaves its false positions out of the sum
-- and gives them 0 (Keras 3: they are set to -1e9, -3e4 in float16, first).
local Softmax = Layer:extend("Softmax")
M.Softmax = Softmax
Softmax.supports_masking = true
function Softmax:init(...)
  local o = self:_kwargs({ "axis" }, ...)
  self.axis = options.axes("Softmax", "axis", o.axis, -1)
end
-- The mask as bool, checked against x's shape as numpy broadcasting (aligned at the end).
local function softmax_mask(self, x, mask)
  if not binding.istensor(mask) then
    binding.error(string.format("%s: mask must be a tensor, got %s", who(self), type(mask)))
  end
  local mshape, xshape = mask.shape, x.shape
  if mask.ndim >= 0 and x.ndim >= 0 then
    local ok = mask.ndim <= x.ndim
    for i = 0, math.min(mask.ndim, x.ndim) - 1 do
      local m, d = mshape[mask.ndim - i], xshape[x.ndim - i]
      if m ~= None and d ~= None and m ~= 1 and m ~= d then ok = false end
    end
    if not ok then
      binding.error(string.format("%s: the mask must be broadcastable to the input: each of its dims 1 or the " ..
        "input's (aligned at the end), got mask shape %s for input shape %s", who(self), tostring(mshape),
        tostring(xshape)))
    end
  end
  if mask.dtype ~= "bool" then -- Keras's mask > cast(0.5, mask.dtype): > 0 for an integer mask
    mask = math_ops.greater(mask, mask.dtype:find("float") and 0.5 or 0)
  end
  return mask
end
-- Softmax.masked(x, mask, axis): the layer's computation, which the attention
-- layers share: with a bool mask (broadcastable to x), masked entries are set
-- to -1e9 (-3e4 in float16) first and to 0 after; axis a number or a list.
function Softmax.masked(x, mask, axis)
  if mask ~= nil then x = math_ops.where(mask, x, x.dtype == "float16" and -30000.0 or -1e9) end
  local y
  if type(axis) == "table" and #axis > 1 then
    y = math_ops.exp(x - reduce_ops.reduce_logsumexp(x, axis, true))
  else
    y = nn.softmax(x, { axis = type(axis) == "table" and axis[1] or axis })
  end
  if mask ~= nil then y = math_ops.where(mask, y, 0) end
  return y
end
function Softmax:call(x, opts)
  if x.ndim == 0 then binding.error(who(self) .. ": the input must have at least 1 dimension, got a scalar") end
  local mask = opts and opts.mask
  if mask ~= nil then mask = softmax_mask(self, x, mask) end
  return Softmax.masked(x, mask, self.axis)
end
function Softmax:get_config()
  local c = Layer.get_config(self)
  c.axis = self.axis
  return c
end

return M
