-- stdlib/tide/layers/regularization.lua — Keras's regularization layers:
-- Dropout, SpatialDropout1D/2D/3D, GaussianDropout, GaussianNoise,
-- AlphaDropout (each active only in training, drawing from tide.random's
-- seeded streams, also inside traced functions) and ActivityRegularization.
-- B = batch, C = channels: [B, ...] -> [B, ...], masks passed on.
local binding = require "tide.binding"
local convert = require "tide.convert"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local nn = require "tide.ops.nn"
local random = require "tide.random"
local regularizers = require "tide.regularizers"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local dims = require "tide.layers.dims"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

-- A seed option: nil or an integer.
local function seed_option(cls, v)
  if v ~= nil and not options.is_int(v) then
    binding.error(string.format("%s: seed must be an integer, got %s", cls, tostring(v)))
  end
  return v
end

-- A rate option in [0, 1) (Keras takes 1 too, which would divide by zero).
local function rate_option(cls, v) return options.number(cls, "rate", v, nil, 0, 1, true) end

-- The shape of a draw: spec's dims (a number, or nil/tide.None for x's own),
-- as a list of numbers when all are known, else a shape tensor for when the
-- graph runs.
local function draw_shape(x, spec)
  local out, known = {}, true
  for i = 1, x.ndim do
    local d = spec[i]
    if d == nil or d == None then d = dims.dim(x, i - 1) end
    if type(d) ~= "number" then known = false end
    out[i] = d
  end
  if known then return out end
  local parts = {}
  for i, d in ipairs(out) do parts[i] = type(d) == "number" and convert.tensor(d, "int32") or d end
  return shape_ops.stack(parts)
end

-- The float dtype uniform numbers are drawn in for x (as tf.nn.dropout's).
local function uniform_dtype(x) return x.dtype == "float64" and "float64" or "float32" end

-- Inverted dropout of x whose keep mask has shape `noise` (broadcast).
local function dropout(x, rate, noise, seed)
  if noise == nil or not binding.istensor(noise) then
    return nn.dropout(x, rate, { noise_shape = noise, seed = seed })
  end
  local keep = math_ops.cast(math_ops.greater_equal(random.uniform(noise, { dtype = uniform_dtype(x), seed = seed }),
    rate), x.dtype)
  return x * (1 / (1 - rate)) * keep -- tf.nn.dropout's formula, as nn.dropout
end

---------------------------------------------------------------------------
-- Dropout and SpatialDropout1D/2D/3D
---------------------------------------------------------------------------

-- Dropout{rate, noise_shape=nil, seed=nil}: in training, zeroes each
-- element with probability rate and scales the rest by 1 / (1 - rate)
-- (Keras's inverted dropout); the identity otherwise (a direct call infers).
-- noise_shape may hold tide.None for the input's own dims.
local Dropout = Layer:extend("Dropout")
M.Dropout = Dropout
Dropout.supports_masking = true
function Dropout:init(...)
  local o = self:_kwargs({ "rate", "noise_shape", "seed" }, ...)
  self.rate = rate_option("Dropout", o.rate)
  if o.noise_shape ~= nil and type(o.noise_shape) ~= "table" then
    binding.error("Dropout: noise_shape must be a list of dims (tide.None for the input's), got " ..
      type(o.noise_shape))
  end
  self.noise_shape = o.noise_shape
  self.seed = seed_option("Dropout", o.seed)
end
function Dropout:call(x, opts)
  if not opts.training or self.rate == 0 then return x end
  local noise
  if self.noise_shape then
    if #self.noise_shape ~= x.ndim then
      binding.error(string.format("%s: noise_shape %s must have the input's rank (%d)", who(self),
        layer.shape_text(self.noise_shape), x.ndim))
    end
    noise = draw_shape(x, self.noise_shape)
  end
  return dropout(x, self.rate, noise, self.seed)
end
function Dropout:get_config()
  local c = Layer.get_config(self)
  c.rate, c.noise_shape, c.seed = self.rate, self.noise_shape, self.seed
  return c
end

-- SpatialDropoutND{rate, data_format, seed}: Dropout of whole channels: one
-- draw per (sample, channel), shared along the spatial dims.
local function spatial_class(rank)
  local name = "SpatialDropout" .. rank .. "D"
  local cls = Layer:extend(name)
  cls.supports_masking = true
  function cls:init(...)
    local keys = { "rate", "seed" }
    if rank > 1 then keys = { "rate", "data_format", "seed" } end
    local o = self:_kwargs(keys, ...)
    self.rate = rate_option(name, o.rate)
    self.seed = seed_option(name, o.seed)
    if rank > 1 then self.data_format = options.data_format(name, o.data_format) end
    self.input_spec = { ndim = rank + 2 }
  end
  function cls:call(x, opts)
    if not opts.training or self.rate == 0 then return x end
    local spec = {}
    local first = self.data_format == "channels_first"
    for i = 1, rank do spec[(first and i + 2) or (i + 1)] = 1 end
    return dropout(x, self.rate, draw_shape(x, spec), self.seed)
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    c.rate, c.seed = self.rate, self.seed
    if rank > 1 then c.data_format = self.data_format end
    return c
  end
  M[name] = cls
end
for rank = 1, 3 do spatial_class(rank) end

---------------------------------------------------------------------------
-- GaussianDropout, GaussianNoise, AlphaDropout
---------------------------------------------------------------------------

-- GaussianDropout{rate, seed}: in training, x * N(1, sqrt(rate / (1 - rate))).
local GaussianDropout = Layer:extend("GaussianDropout")
M.GaussianDropout = GaussianDropout
GaussianDropout.supports_masking = true
function GaussianDropout:init(...)
  local o = self:_kwargs({ "rate", "seed" }, ...)
  self.rate = rate_option("GaussianDropout", o.rate)
  self.seed = seed_option("GaussianDropout", o.seed)
end
function GaussianDropout:call(x, opts)
  if not opts.training or self.rate == 0 then return x end
  local stddev = math.sqrt(self.rate / (1 - self.rate))
  return x * random.normal(draw_shape(x, {}), { mean = 1, stddev = stddev, dtype = x.dtype, seed = self.seed })
end
function GaussianDropout:get_config()
  local c = Layer.get_config(self)
  c.rate, c.seed = self.rate, self.seed
  return c
end

-- GaussianNoise{stddev, seed}: in training, x + N(0, stddev) (stddev in [0, 1], as Keras).
local GaussianNoise = Layer:extend("GaussianNoise")
M.GaussianNoise = GaussianNoise
GaussianNoise.supports_masking = true
function GaussianNoise:init(...)
  local o = self:_kwargs({ "stddev", "seed" }, ...)
  self.stddev = options.number("GaussianNoise", "stddev", o.stddev, nil, 0, 1)
  self.seed = seed_option("GaussianNoise", o.seed)
end
function GaussianNoise:call(x, opts)
  if not opts.training or self.stddev == 0 then return x end
  return x + random.normal(draw_shape(x, {}), { stddev = self.stddev, dtype = x.dtype, seed = self.seed })
end
function GaussianNoise:get_config()
  local c = Layer.get_config(self)
  c.stddev, c.seed = self.stddev, self.seed
  return c
end

-- AlphaDropout{rate, noise_shape=nil, seed}: in training, dropped elements
-- are set to SELU's negative saturation and the result affinely corrected so
-- that mean and variance stay (for SELU networks): a * (x * keep +
-- alpha' * (1 - keep)) + b, alpha' = -1.6733 * 1.0507,
-- a = ((1 - rate) * (1 + rate * alpha'^2))^-0.5, b = -a * alpha' * rate.
local AlphaDropout = Layer:extend("AlphaDropout")
M.AlphaDropout = AlphaDropout
AlphaDropout.supports_masking = true
function AlphaDropout:init(...)
  local o = self:_kwargs({ "rate", "noise_shape", "seed" }, ...)
  self.rate = rate_option("AlphaDropout", o.rate)
  if o.noise_shape ~= nil and type(o.noise_shape) ~= "table" then
    binding.error("AlphaDropout: noise_shape must be a list of dims (tide.None for the input's), got " ..
      type(o.noise_shape))
  end
  self.noise_shape = o.noise_shape
  self.seed = seed_option("AlphaDropout", o.seed)
end
local SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
function AlphaDropout:call(x, opts)
  if not opts.training or self.rate == 0 then return x end
  local rate = self.rate
  local alpha_p = -SELU_ALPHA * SELU_SCALE
  local spec = self.noise_shape or {}
  if self.noise_shape and #spec ~= x.ndim then
    binding.error(string.format("%s: noise_shape %s must have the input's rank (%d)", who(self),
      layer.shape_text(spec), x.ndim))
  end
  local u = random.uniform(draw_shape(x, spec), { dtype = uniform_dtype(x), seed = self.seed })
  local keep = math_ops.cast(math_ops.greater_equal(u, rate), x.dtype)
  local a = ((1 - rate) * (1 + rate * alpha_p ^ 2)) ^ -0.5
  local b = -a * alpha_p * rate
  return (x * keep + (1 - keep) * alpha_p) * a + b
end
function AlphaDropout:get_config()
  local c = Layer.get_config(self)
  c.rate, c.noise_shape, c.seed = self.rate, self.noise_shape, self.seed
  return c
end

---------------------------------------------------------------------------
-- ActivityRegularization
---------------------------------------------------------------------------

-- ActivityRegularization{l1=0, l2=0}: the identity, adding l1 * sum|x| +
-- l2 * sum x^2 (over the batch size, as every activity loss) to its losses.
local ActivityRegularization = Layer:extend("ActivityRegularization")
M.ActivityRegularization = ActivityRegularization
ActivityRegularization.supports_masking = true
function ActivityRegularization:init(...)
  local o = self:_kwargs({ "l1", "l2" }, ...)
  self.l1 = options.number("ActivityRegularization", "l1", o.l1, 0, 0)
  self.l2 = options.number("ActivityRegularization", "l2", o.l2, 0, 0)
  rawset(self, "activity_regularizer", regularizers.L1L2 { l1 = self.l1, l2 = self.l2 })
end
function ActivityRegularization:call(x) return x end
function ActivityRegularization:get_config()
  local c = Layer.get_config(self)
  c.activity_regularizer = nil -- it is l1 and l2
  c.l1, c.l2 = self.l1, self.l2
  return c
end

return M
