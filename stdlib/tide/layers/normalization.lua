-- stdlib/tide/layers/normalization.lua — Keras 3's BatchNormalization and
-- LayerNormalization (epsilon 1e-3; BatchNormalization's momentum 0.99).
-- B = batch, C = the normalized axis (channels for BatchNormalization).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local nn = require "tide.ops.nn"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local layer = require "tide.layers.layer"

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

local function number(self, what, v, default)
  if v == nil then return default end
  if type(v) ~= "number" or v ~= v then
    binding.error(string.format("%s: %s must be a number, got %s", getmetatable(self).__name, what, tostring(v)))
  end
  return v
end

local function boolean(self, what, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", getmetatable(self).__name, what, tostring(v)))
  end
  return v
end

-- A 0-based axis of a rank-`rank` input (negative counts from the end), checked.
local function resolve_axis(self, axis, rank)
  local a = axis < 0 and rank + axis or axis
  if a < 0 or a >= rank then
    binding.error(string.format("%s: axis %d is out of range for an input of rank %d", who(self), axis, rank))
  end
  return a
end

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

return M
