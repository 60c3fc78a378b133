-- stdlib/tide/layers/normalization.lua — Keras 3's normalization layers:
-- BatchNormalization, LayerNormalization, GroupNormalization (epsilon 1e-3;
-- BatchNormalization's momentum 0.99), UnitNormalization, RMSNormalization
-- (epsilon 1e-6), and SpectralNormalization (a wrapper of a layer with a kernel).
-- B = batch, C = the normalized axis (channels for BatchNormalization).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local nn = require "tide.ops.nn"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local linalg = require "tide.ops.linalg"
local stop_gradient = require("tide.tape_recorder").stop_gradient
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"
local wrapper = require "tide.layers.wrapper"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

-- Keras's mixed precision: float16/bfloat16 inputs are normalized in float32
-- (their sums and variances overflow or lose too much), with the weights read
-- in float32 (made with autocast = false), and the result cast back.
local HALF = { float16 = true, bfloat16 = true }
local function upcast(x)
  if HALF[x.dtype] then return x:cast("float32") end
  return x
end
local function to_compute(self, y)
  local dt = self.compute_dtype
  if y.dtype ~= dt and HALF[dt] then return y:cast(dt) end
  return y
end

local M = {}

-- Option checks (layers/options.lua) naming the layer's class; axes checked against a rank.
local function cls(self) return getmetatable(self).__name end
local function number(self, what, v, default) return options.number(cls(self), what, v, default) end
local function boolean(self, what, v, default) return options.boolean(cls(self), what, v, default) end
local function resolve_axis(self, axis, rank) return options.resolve_axis(who(self), axis, rank) end

---------------------------------------------------------------------------
-- BatchNormalization
---------------------------------------------------------------------------

-- BatchNormalization{axis=-1, momentum=0.99, epsilon=1e-3, center=true,
-- scale=true, beta_initializer="zeros", gamma_initializer="ones",
-- moving_mean_initializer="zeros", moving_variance_initializer="ones",
-- beta_regularizer=nil, gamma_regularizer=nil}. Weights: gamma, beta
-- (trainable), moving_mean, moving_variance (not). Training (and trainable):
-- normalizes with the batch's mean and biased variance over every axis but
-- `axis`, and moves the moving statistics towards them:
--   moving = moving * momentum + batch * (1 - momentum)
-- (Keras 3 uses the biased batch variance here too). Otherwise it uses the
-- moving statistics.
local BatchNormalization = Layer:extend("BatchNormalization")
M.BatchNormalization = BatchNormalization
BatchNormalization.supports_masking = true
function BatchNormalization:init(...)
  local o = self:_kwargs({ "axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
    "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
    "beta_constraint", "gamma_constraint" }, ...)
  local axis = o.axis == nil and -1 or o.axis
  if type(axis) ~= "number" or axis ~= math.floor(axis) then
    binding.error("BatchNormalization: axis must be an integer, got " .. tostring(axis))
  end
  self.axis = axis
  self.momentum = number(self, "momentum", o.momentum, 0.99)
  self.epsilon = number(self, "epsilon", o.epsilon, 1e-3)
  self.center = boolean(self, "center", o.center, true)
  self.scale = boolean(self, "scale", o.scale, true)
  local n = "BatchNormalization: "
  self.beta_initializer = initializers.get(o.beta_initializer or "zeros", n .. "beta_initializer")
  self.gamma_initializer = initializers.get(o.gamma_initializer or "ones", n .. "gamma_initializer")
  self.moving_mean_initializer = initializers.get(o.moving_mean_initializer or "zeros", n .. "moving_mean_initializer")
  self.moving_variance_initializer = initializers.get(o.moving_variance_initializer or "ones",
    n .. "moving_variance_initializer")
  self.beta_regularizer = regularizers.get(o.beta_regularizer, n .. "beta_regularizer")
  self.beta_constraint = constraints.get(o.beta_constraint, n .. "beta_constraint")
  self.gamma_regularizer = regularizers.get(o.gamma_regularizer, n .. "gamma_regularizer")
  self.gamma_constraint = constraints.get(o.gamma_constraint, n .. "gamma_constraint")
end
function BatchNormalization:build(input_shape)
  local rank = input_shape and #input_shape
  if not rank then binding.error(who(self) .. ": the input's rank must be known to build") end
  local a = resolve_axis(self, self.axis, rank)
  local c = input_shape[a + 1]
  if c == None then
    binding.error(string.format("%s: axis %d of the input must be known to build, got shape %s", who(self), self.axis,
      layer.shape_text(input_shape)))
  end
  if self.scale then
    self.gamma = self:add_weight { name = "gamma", shape = { c }, initializer = self.gamma_initializer,
      regularizer = self.gamma_regularizer, constraint = self.gamma_constraint, autocast = false }
  end
  if self.center then
    self.beta = self:add_weight { name = "beta", shape = { c }, initializer = self.beta_initializer,
      regularizer = self.beta_regularizer, constraint = self.beta_constraint, autocast = false }
  end
  self.moving_mean = self:add_weight { name = "moving_mean", shape = { c }, initializer = self.moving_mean_initializer,
    trainable = false, autocast = false }
  self.moving_variance = self:add_weight { name = "moving_variance", shape = { c },
    initializer = self.moving_variance_initializer, trainable = false, autocast = false }
  self.input_spec = { ndim = rank, axes = { [self.axis] = c } }
end
function BatchNormalization:call(x, opts)
  x = upcast(x)
  if opts.training and self.trainable then
    local y, mean, variance = nn.batch_norm(x, { training = true, offset = self.beta, scale = self.gamma,
      epsilon = self.epsilon, axis = self.axis })
    local m = self.momentum
    self.moving_mean:assign(self.moving_mean * m + mean * (1 - m))
    self.moving_variance:assign(self.moving_variance * m + variance * (1 - m))
    return to_compute(self, y)
  end
  return to_compute(self, nn.batch_norm(x, { moving_mean = self.moving_mean, moving_variance = self.moving_variance,
    offset = self.beta, scale = self.gamma, epsilon = self.epsilon, axis = self.axis }))
end
function BatchNormalization:get_config()
  local c = Layer.get_config(self)
  c.axis, c.momentum, c.epsilon, c.center, c.scale = self.axis, self.momentum, self.epsilon, self.center, self.scale
  c.beta_initializer = initializers.serialize(self.beta_initializer)
  c.gamma_initializer = initializers.serialize(self.gamma_initializer)
  c.moving_mean_initializer = initializers.serialize(self.moving_mean_initializer)
  c.moving_variance_initializer = initializers.serialize(self.moving_variance_initializer)
  c.beta_regularizer = regularizers.serialize(self.beta_regularizer)
  c.beta_constraint = constraints.serialize(self.beta_constraint)
  c.gamma_regularizer = regularizers.serialize(self.gamma_regularizer)
  c.gamma_constraint = constraints.serialize(self.gamma_constraint)
  return c
end

---------------------------------------------------------------------------
-- LayerNormalization
---------------------------------------------------------------------------

-- LayerNormalization{axis=-1, epsilon=1e-3, center=true, scale=true,
-- beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=nil,
-- gamma_regularizer=nil}: each sample normalized over `axis` (a number or a
-- list), then * gamma + beta (shaped like those axes' dims). Weights: gamma, beta.
local LayerNormalization = Layer:extend("LayerNormalization")
M.LayerNormalization = LayerNormalization
LayerNormalization.supports_masking = true
function LayerNormalization:init(...)
  local o = self:_kwargs({ "axis", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
    "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint" }, ...)
  local axis = o.axis == nil and -1 or o.axis
  local list = type(axis) == "table" and axis or { axis }
  for _, a in ipairs(list) do
    if type(a) ~= "number" or a ~= math.floor(a) then
      binding.error("LayerNormalization: axis must be an integer or a list of integers, got " .. tostring(a))
    end
  end
  self.axis = axis
  self.epsilon = number(self, "epsilon", o.epsilon, 1e-3)
  self.center = boolean(self, "center", o.center, true)
  self.scale = boolean(self, "scale", o.scale, true)
  local n = "LayerNormalization: "
  self.beta_initializer = initializers.get(o.beta_initializer or "zeros", n .. "beta_initializer")
  self.gamma_initializer = initializers.get(o.gamma_initializer or "ones", n .. "gamma_initializer")
  self.beta_regularizer = regularizers.get(o.beta_regularizer, n .. "beta_regularizer")
  self.beta_constraint = constraints.get(o.beta_constraint, n .. "beta_constraint")
  self.gamma_regularizer = regularizers.get(o.gamma_regularizer, n .. "gamma_regularizer")
  self.gamma_constraint = constraints.get(o.gamma_constraint, n .. "gamma_constraint")
end
function LayerNormalization:build(input_shape)
  local rank = input_shape and #input_shape
  if not rank then binding.error(who(self) .. ": the input's rank must be known to build") end
  local axes = type(self.axis) == "table" and self.axis or { self.axis }
  local resolved = {}
  for i, a in ipairs(axes) do resolved[i] = resolve_axis(self, a, rank) end
  table.sort(resolved)
  local shape = {}
  for i, a in ipairs(resolved) do
    local d = input_shape[a + 1]
    if d == None then
      binding.error(string.format("%s: axis %d of the input must be known to build, got shape %s", who(self), a,
        layer.shape_text(input_shape)))
    end
    shape[i] = d
  end
  self._axes = resolved
  if self.scale then
    self.gamma = self:add_weight { name = "gamma", shape = shape, initializer = self.gamma_initializer,
      regularizer = self.gamma_regularizer, constraint = self.gamma_constraint, autocast = false }
  end
  if self.center then
    self.beta = self:add_weight { name = "beta", shape = shape, initializer = self.beta_initializer,
      regularizer = self.beta_regularizer, constraint = self.beta_constraint, autocast = false }
  end
end
function LayerNormalization:call(x)
  return to_compute(self, nn.layer_norm(upcast(x), { axis = self._axes, gamma = self.gamma, beta = self.beta,
    epsilon = self.epsilon }))
end
function LayerNormalization:get_config()
  local c = Layer.get_config(self)
  c.axis, c.epsilon, c.center, c.scale = self.axis, self.epsilon, self.center, self.scale
  c.beta_initializer = initializers.serialize(self.beta_initializer)
  c.gamma_initializer = initializers.serialize(self.gamma_initializer)
  c.beta_regularizer = regularizers.serialize(self.beta_regularizer)
  c.beta_constraint = constraints.serialize(self.beta_constraint)
  c.gamma_regularizer = regularizers.serialize(self.gamma_regularizer)
  c.gamma_constraint = constraints.serialize(self.gamma_constraint)
  return c
end

---------------------------------------------------------------------------
-- GroupNormalization
---------------------------------------------------------------------------

-- GroupNormalization{groups=32, axis=-1, epsilon=1e-3, center=true,
-- scale=true, beta_initializer="zeros", gamma_initializer="ones",
-- *_regularizer, *_constraint}: the channels (axis) split into `groups`
-- groups, each sample normalized over every other non-batch axis and the
-- channels of its group, then * gamma + beta (per channel). groups=-1 is one
-- group per channel (instance normalization); the channels must be a multiple of groups.
local GroupNormalization = Layer:extend("GroupNormalization")
M.GroupNormalization = GroupNormalization
GroupNormalization.supports_masking = true
function GroupNormalization:init(...)
  local o = self:_kwargs({ "groups", "axis", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
    "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint" }, ...)
  local groups = o.groups == nil and 32 or o.groups
  if not options.is_int(groups) or (groups <= 0 and groups ~= -1) then
    binding.error("GroupNormalization: groups must be a positive integer (or -1 for instance normalization), got " ..
      tostring(o.groups))
  end
  self.groups = groups
  self.axis = options.int("GroupNormalization", "axis", o.axis, -1)
  self.epsilon = number(self, "epsilon", o.epsilon, 1e-3)
  self.center = boolean(self, "center", o.center, true)
  self.scale = boolean(self, "scale", o.scale, true)
  local n = "GroupNormalization: "
  self.beta_initializer = initializers.get(o.beta_initializer or "zeros", n .. "beta_initializer")
  self.gamma_initializer = initializers.get(o.gamma_initializer or "ones", n .. "gamma_initializer")
  self.beta_regularizer = regularizers.get(o.beta_regularizer, n .. "beta_regularizer")
  self.gamma_regularizer = regularizers.get(o.gamma_regularizer, n .. "gamma_regularizer")
  self.beta_constraint = constraints.get(o.beta_constraint, n .. "beta_constraint")
  self.gamma_constraint = constraints.get(o.gamma_constraint, n .. "gamma_constraint")
end
function GroupNormalization:build(input_shape)
  local rank = input_shape and #input_shape
  if not rank then binding.error(who(self) .. ": the input's rank must be known to build") end
  local a = resolve_axis(self, self.axis, rank)
  if a == 0 then binding.error(who(self) .. ": axis must not be the batch axis 0") end
  local c = input_shape[a + 1]
  if c == None then
    binding.error(string.format("%s: axis %d of the input must be known to build, got shape %s", who(self), self.axis,
      layer.shape_text(input_shape)))
  end
  local groups = self.groups == -1 and c or self.groups
  if c < groups or c % groups ~= 0 then
    binding.error(string.format("%s: the channels (%d, axis %d) must be a multiple of groups (%d)", who(self), c,
      self.axis, groups))
  end
  self._axis, self._groups = a, groups
  self.input_spec = { ndim = rank, axes = { [self.axis] = c } }
  if self.scale then
    self.gamma = self:add_weight { name = "gamma", shape = { c }, initializer = self.gamma_initializer,
      regularizer = self.gamma_regularizer, constraint = self.gamma_constraint, autocast = false }
  end
  if self.center then
    self.beta = self:add_weight { name = "beta", shape = { c }, initializer = self.beta_initializer,
      regularizer = self.beta_regularizer, constraint = self.beta_constraint, autocast = false }
  end
end
function GroupNormalization:call(x)
  local xc = upcast(x)
  local d = dims.dims(xc)
  local a, g = self._axis, self._groups
  local per = d[a + 1] / g
  -- [B, ..., C, ...] -> [B, ..., G, C / G, ...]; statistics over all but the batch and group axes
  local grouped, bshape, axes = {}, {}, {}
  for i = 1, #d do
    if i == a + 1 then
      grouped[#grouped + 1], grouped[#grouped + 2] = g, per
      bshape[#bshape + 1], bshape[#bshape + 2] = g, per
    else
      grouped[#grouped + 1] = d[i]
      bshape[#bshape + 1] = 1
    end
  end
  for i = 1, #d do if i ~= a then axes[#axes + 1] = i end end -- reshaped axes 1.. except the groups axis a
  local r = shape_ops.reshape(xc, grouped)
  local mean, variance = nn.moments(r, { axes = axes, keepdims = true })
  local inv = math_ops.rsqrt(variance + self.epsilon)
  if self.gamma then inv = inv * shape_ops.reshape(math_ops.cast(self.gamma, xc.dtype), bshape) end
  local res = -mean * inv
  if self.beta then res = res + shape_ops.reshape(math_ops.cast(self.beta, xc.dtype), bshape) end
  return to_compute(self, shape_ops.reshape(r * inv + res, d))
end
function GroupNormalization:get_config()
  local c = Layer.get_config(self)
  c.groups, c.axis, c.epsilon, c.center, c.scale = self.groups, self.axis, self.epsilon, self.center, self.scale
  c.beta_initializer = initializers.serialize(self.beta_initializer)
  c.gamma_initializer = initializers.serialize(self.gamma_initializer)
  c.beta_regularizer = regularizers.serialize(self.beta_regularizer)
  c.gamma_regularizer = regularizers.serialize(self.gamma_regularizer)
  c.beta_constraint = constraints.serialize(self.beta_constraint)
  c.gamma_constraint = constraints.serialize(self.gamma_constraint)
  return c
end

---------------------------------------------------------------------------
-- UnitNormalization, RMSNormalization
---------------------------------------------------------------------------

-- Each axis of a list resolved against rank and sorted (0-based).
local function resolve_axes(self, axis, rank)
  local list = type(axis) == "table" and axis or { axis }
  local out = {}
  for i, a in ipairs(list) do out[i] = resolve_axis(self, a, rank) end
  table.sort(out)
  return out
end

-- UnitNormalization{axis=-1} (an axis or a list): each sample scaled to
-- unit l2 norm over axis: x * min(rsqrt(sum x^2), 1e12) (Keras's epsilon 1e-12).
local UnitNormalization = Layer:extend("UnitNormalization")
M.UnitNormalization = UnitNormalization
UnitNormalization.supports_masking = true
function UnitNormalization:init(...)
  local o = self:_kwargs({ "axis" }, ...)
  self.axis = options.axes("UnitNormalization", "axis", o.axis, -1)
end
function UnitNormalization:call(x)
  local xc = upcast(x)
  local axes = resolve_axes(self, self.axis, xc.ndim)
  local inv = math_ops.rsqrt(reduce_ops.reduce_sum(math_ops.square(xc), axes, true))
  return to_compute(self, xc * math_ops.minimum(inv, 1e12))
end
function UnitNormalization:get_config()
  local c = Layer.get_config(self)
  c.axis = self.axis
  return c
end

-- RMSNormalization{axis=-1, epsilon=1e-6}: x * rsqrt(mean(x^2 over axis) +
-- epsilon) * scale, the weight scale (ones) shaped like the axis dims.
local RMSNormalization = Layer:extend("RMSNormalization")
M.RMSNormalization = RMSNormalization
function RMSNormalization:init(...)
  local o = self:_kwargs({ "axis", "epsilon" }, ...)
  self.axis = options.axes("RMSNormalization", "axis", o.axis, -1)
  self.epsilon = number(self, "epsilon", o.epsilon, 1e-6)
end
function RMSNormalization:build(input_shape)
  local rank = input_shape and #input_shape
  if not rank then binding.error(who(self) .. ": the input's rank must be known to build") end
  local axes = resolve_axes(self, self.axis, rank)
  local shape, bshape = {}, {}
  for i = 1, rank do bshape[i] = 1 end
  for i, a in ipairs(axes) do
    local d = input_shape[a + 1]
    if d == None then
      binding.error(string.format("%s: axis %d of the input must be known to build, got shape %s", who(self), a,
        layer.shape_text(input_shape)))
    end
    shape[i], bshape[a + 1] = d, d
  end
  self._axes, self._bshape = axes, bshape
  self.scale = self:add_weight { name = "scale", shape = shape, initializer = "ones" }
end
function RMSNormalization:call(x)
  local xc = upcast(x)
  local rrms = math_ops.rsqrt(reduce_ops.reduce_mean(math_ops.square(xc), self._axes, true) + self.epsilon)
  local y = xc * rrms * shape_ops.reshape(math_ops.cast(self.scale, xc.dtype), self._bshape)
  if y.dtype ~= x.dtype then y = y:cast(x.dtype) end
  return y
end
function RMSNormalization:get_config()
  local c = Layer.get_config(self)
  c.axis, c.epsilon = self.axis, self.epsilon
  return c
end

---------------------------------------------------------------------------
-- SpectralNormalization
---------------------------------------------------------------------------

-- SpectralNormalization{layer, power_iterations=1}: wraps a layer with a
-- kernel (or embeddings); in training, each call first estimates the
-- kernel's largest singular value sigma by power iteration from the kept
-- vector vector_u [1, out] (a non-trainable weight) and assigns kernel /
-- sigma to the kernel (Keras 3's; a kernel of zeros is left as it is).
-- Weights: the kernel, vector_u, then the layer's others (Keras's order).
local SpectralNormalization = wrapper.Wrapper:extend("SpectralNormalization")
M.SpectralNormalization = SpectralNormalization
function SpectralNormalization:init(...)
  local o = self:_kwargs({ "layer", "power_iterations" }, ...)
  self:_set_layer(o.layer)
  self.power_iterations = options.positive_int("SpectralNormalization", "power_iterations",
    o.power_iterations == nil and 1 or o.power_iterations)
end
function SpectralNormalization:build(input_shape)
  wrapper.Wrapper.build(self, input_shape)
  local inner = self.layer
  local kernel = rawget(inner, "kernel") or rawget(inner, "embeddings")
  if kernel == nil then
    binding.error(string.format("%s: the wrapped layer %s has no kernel nor embeddings to normalize", who(self),
      who(inner)))
  end
  self.kernel = kernel -- (first in weights, as Keras's)
  local kshape = kernel.shape:as_list()
  self.vector_u = self:add_weight { name = "vector_u", shape = { 1, kshape[#kshape] },
    initializer = initializers.TruncatedNormal { stddev = 0.02 }, trainable = false, dtype = kernel.dtype }
  local last = input_shape and input_shape[#input_shape]
  self.input_spec = { min_ndim = 1, axes = last ~= None and last and { [-1] = last } or nil }
end
-- Keras's normalize(x, axis=None): x * min(rsqrt(sum x^2), 1 / 1e-7).
local function normalize_all(x)
  return x * math_ops.minimum(math_ops.rsqrt(reduce_ops.reduce_sum(math_ops.square(x))), 1e7)
end
-- (new vector_u, normalized kernel) by power_iterations steps; gradients stop at u and v.
function SpectralNormalization:normalized_weights()
  local kernel = self.kernel:read_value()
  local kshape = kernel.shape:as_list()
  local w = shape_ops.reshape(kernel, { -1, kshape[#kshape] })
  local u, v = self.vector_u:read_value(), nil
  for _ = 1, self.power_iterations do
    v = normalize_all(linalg.matmul(u, w, { transpose_b = true }))
    u = normalize_all(linalg.matmul(v, w))
  end
  u, v = stop_gradient(u), stop_gradient(v)
  local sigma = linalg.matmul(linalg.matmul(v, w), u, { transpose_b = true }) -- [1, 1]
  return u, shape_ops.reshape(kernel / shape_ops.reshape(sigma, {}), kshape)
end
function SpectralNormalization:call(x, opts)
  if opts.training then
    local kernel = self.kernel:read_value()
    local u, k = self:normalized_weights()
    local zero = reduce_ops.reduce_all(math_ops.equal(kernel, 0)) -- Keras's cond: leave a zero kernel be
    self.vector_u:assign(math_ops.where(zero, self.vector_u:read_value(), u))
    self.kernel:assign(math_ops.where(zero, kernel, k))
  end
  local y = self.layer(x)
  if binding.istensor(y) and y.dtype ~= x.dtype then y = y:cast(x.dtype) end
  return y
end
function SpectralNormalization:get_config()
  local c = wrapper.Wrapper.get_config(self)
  c.power_iterations = self.power_iterations
  return c
end

return M
