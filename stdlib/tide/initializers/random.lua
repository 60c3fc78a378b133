-- stdlib/tide/initializers/random.lua — Keras 3's random initializers:
-- RandomNormal/Uniform, TruncatedNormal, VarianceScaling and its named
-- forms (Glorot, He, LeCun), Orthogonal.
--
-- Seeds: an initializer with seed=k draws from tide.random's stream for op
-- seed k, so a run after tide.random.set_seed(s) (or with no global seed at
-- all) gives the same weights every time; without a seed it draws from the
-- global stream. Keras 3 differs in one point: there one seeded initializer
-- object gives the same values at each call, here the next values of its
-- stream (two layers sharing one seeded initializer get different weights).
local binding = require "tide.binding"
local random = require "tide.random"
local tensor = require "tide.tensor"
local convert = require "tide.convert"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local base = require "tide.initializers.base"

local define, kwargs, seed_arg, float_dtype = base.define, base.kwargs, base.seed, base.float_dtype

local M = {}

local function number(name, what, v, default)
  if v == nil then return default end
  if type(v) ~= "number" then
    binding.error(string.format("%s: %s must be a number, got %s", name, what, type(v)))
  end
  return v
end

-- RandomNormal{mean=0, stddev=0.05, seed=nil}
local RandomNormal = define("RandomNormal")
M.RandomNormal = RandomNormal
function RandomNormal:__init(...)
  local o = kwargs("RandomNormal", { "mean", "stddev", "seed" }, ...)
  self.mean = number("RandomNormal", "mean", o.mean, 0.0)
  self.stddev = number("RandomNormal", "stddev", o.stddev, 0.05)
  self.seed = seed_arg("RandomNormal", o.seed)
end
function RandomNormal:generate(shape, dt)
  return random.normal(shape, { mean = self.mean, stddev = self.stddev, dtype = float_dtype("RandomNormal", dt),
                                seed = self.seed })
end
function RandomNormal:get_config() return { mean = self.mean, stddev = self.stddev, seed = self.seed } end

-- TruncatedNormal{mean=0, stddev=0.05, seed=nil}: values beyond 2 stddev redrawn.
local TruncatedNormal = define("TruncatedNormal")
M.TruncatedNormal = TruncatedNormal
function TruncatedNormal:__init(...)
  local o = kwargs("TruncatedNormal", { "mean", "stddev", "seed" }, ...)
  self.mean = number("TruncatedNormal", "mean", o.mean, 0.0)
  self.stddev = number("TruncatedNormal", "stddev", o.stddev, 0.05)
  self.seed = seed_arg("TruncatedNormal", o.seed)
end
function TruncatedNormal:generate(shape, dt)
  return random.truncated_normal(shape, { mean = self.mean, stddev = self.stddev,
    dtype = float_dtype("TruncatedNormal", dt), seed = self.seed })
end
TruncatedNormal.get_config = RandomNormal.get_config

-- RandomUniform{minval=-0.05, maxval=0.05, seed=nil}
local RandomUniform = define("RandomUniform")
M.RandomUniform = RandomUniform
function RandomUniform:__init(...)
  local o = kwargs("RandomUniform", { "minval", "maxval", "seed" }, ...)
  self.minval = number("RandomUniform", "minval", o.minval, -0.05)
  self.maxval = number("RandomUniform", "maxval", o.maxval, 0.05)
  self.seed = seed_arg("RandomUniform", o.seed)
end
function RandomUniform:generate(shape, dt)
  return random.uniform(shape, { minval = self.minval, maxval = self.maxval, dtype = dt, seed = self.seed })
end
function RandomUniform:get_config() return { minval = self.minval, maxval = self.maxval, seed = self.seed } end

local MODES = { fan_in = true, fan_out = true, fan_avg = true }
local DISTRIBUTIONS = { uniform = true, truncated_normal = true, untruncated_normal = true }

-- VarianceScaling{scale=1, mode="fan_in", distribution="truncated_normal",
-- seed=nil}: stddev (or limit) from scale / fan, Keras's rule; "normal"
-- means "truncated_normal", as in Keras.
local VarianceScaling = define("VarianceScaling")
M.VarianceScaling = VarianceScaling
function VarianceScaling:__init(...)
  local name = getmetatable(self).__name
  local o = kwargs(name, { "scale", "mode", "distribution", "seed" }, ...)
  self:_setup(name, o.scale or 1.0, o.mode or "fan_in", o.distribution or "truncated_normal", o.seed)
end
function VarianceScaling:_setup(name, scale, mode, distribution, seed)
  scale = number(name, "scale", scale)
  if scale <= 0 then binding.error(string.format("%s: scale must be positive, got %s", name, scale)) end
  if not MODES[mode] then
    binding.error(string.format("%s: mode must be \"fan_in\", \"fan_out\" or \"fan_avg\", got %s", name, tostring(mode)))
  end
  if distribution == "normal" then distribution = "truncated_normal" end
  if not DISTRIBUTIONS[distribution] then
    binding.error(string.format("%s: distribution must be \"uniform\", \"truncated_normal\" or \"untruncated_normal\", " ..
      "got %s", name, tostring(distribution)))
  end
  self.scale, self.mode, self.distribution = scale, mode, distribution
  self.seed = seed_arg(name, seed)
end
function VarianceScaling:generate(shape, dt)
  local name = getmetatable(self).__name
  float_dtype(name, dt)
  local fan_in, fan_out = base.compute_fans(shape)
  local scale = self.scale
  if self.mode == "fan_in" then scale = scale / math.max(1, fan_in)
  elseif self.mode == "fan_out" then scale = scale / math.max(1, fan_out)
  else scale = scale / math.max(1, (fan_in + fan_out) / 2) end
  if self.distribution == "truncated_normal" then
    -- the stddev of a unit normal truncated at 2: scaled up so the result has variance `scale`
    return random.truncated_normal(shape, { stddev = math.sqrt(scale) / 0.87962566103423978, dtype = dt,
                                            seed = self.seed })
  elseif self.distribution == "untruncated_normal" then
    return random.normal(shape, { stddev = math.sqrt(scale), dtype = dt, seed = self.seed })
  end
  local limit = math.sqrt(3 * scale)
  return random.uniform(shape, { minval = -limit, maxval = limit, dtype = dt, seed = self.seed })
end
function VarianceScaling:get_config()
  return { scale = self.scale, mode = self.mode, distribution = self.distribution, seed = self.seed }
end

-- The named variance-scaling initializers take only a seed.
local function named(name, scale, mode, distribution)
  local cls = define(name, VarianceScaling)
  function cls:__init(...)
    local o = kwargs(name, { "seed" }, ...)
    self:_setup(name, scale, mode, distribution, o.seed)
  end
  function cls:get_config() return { seed = self.seed } end
  M[name] = cls
end
named("GlorotUniform", 1.0, "fan_avg", "uniform")
named("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
named("HeNormal", 2.0, "fan_in", "truncated_normal")
named("HeUniform", 2.0, "fan_in", "uniform")
named("LecunNormal", 1.0, "fan_in", "truncated_normal")
named("LecunUniform", 1.0, "fan_in", "uniform")

-- Householder QR of the m x n matrix a (rows of Lua numbers, m >= n), in
-- float64 on the host: returns the n orthonormal columns of Q (as rows of
-- an m x n list) and R's diagonal. An initializer runs once, eagerly, so a
-- host computation is simplest (tide has no QR op).
local function qr(a, m, n)
  local vs, diag = {}, {}
  for k = 1, n do
    local norm = 0
    for i = k, m do norm = norm + a[i][k] * a[i][k] end
    norm = math.sqrt(norm)
    local alpha = a[k][k] > 0 and -norm or norm
    local v = {}
    for i = k, m do v[i] = a[i][k] end
    v[k] = v[k] - alpha
    local vnorm = 0
    for i = k, m do vnorm = vnorm + v[i] * v[i] end
    if vnorm > 0 then
      vnorm = math.sqrt(vnorm)
      for i = k, m do v[i] = v[i] / vnorm end
      for j = k, n do -- a = (I - 2 v v^T) a on rows k.., columns k..
        local dot = 0
        for i = k, m do dot = dot + v[i] * a[i][j] end
        dot = 2 * dot
        for i = k, m do a[i][j] = a[i][j] - dot * v[i] end
      end
    end
    vs[k] = v
    diag[k] = a[k][k]
  end
  -- Q's first n columns: H1 ... Hn applied to the first n columns of I.
  local q = {}
  for i = 1, m do
    local row = {}
    for j = 1, n do row[j] = i == j and 1 or 0 end
    q[i] = row
  end
  for k = n, 1, -1 do
    local v = vs[k]
    for j = 1, n do
      local dot = 0
      for i = k, m do dot = dot + v[i] * q[i][j] end
      dot = 2 * dot
      if dot ~= 0 then
        for i = k, m do q[i][j] = q[i][j] - dot * v[i] end
      end
    end
  end
  return q, diag
end
M._qr = qr

-- Orthogonal{gain=1, seed=nil}: Keras's construction. The shape is seen as
-- a (prod(shape[:-1]), shape[-1]) matrix; Q of the QR of a normal matrix,
-- with columns signed by R's diagonal (so Q is uniformly distributed), is
-- transposed when there are fewer rows than columns, then scaled by gain.
local Orthogonal = define("Orthogonal")
M.Orthogonal = Orthogonal
function Orthogonal:__init(...)
  local o = kwargs("Orthogonal", { "gain", "seed" }, ...)
  self.gain = number("Orthogonal", "gain", o.gain, 1.0)
  self.seed = seed_arg("Orthogonal", o.seed)
end
function Orthogonal:generate(shape, dt)
  float_dtype("Orthogonal", dt)
  if #shape < 2 then
    binding.error(string.format("Orthogonal: the tensor to initialize must be at least two-dimensional, got shape {%s}",
      table.concat(shape, ", ")))
  end
  local rows = 1
  for i = 1, #shape - 1 do rows = rows * shape[i] end
  local cols = shape[#shape]
  local m, n = math.max(rows, cols), math.min(rows, cols)
  if n == 0 then return create.zeros(shape, dt) end
  local a = tensor.totable(random.normal({ m, n }, { dtype = "float64", seed = self.seed }))
  local q, diag = qr(a, m, n)
  for j = 1, n do
    if diag[j] < 0 then
      for i = 1, m do q[i][j] = -q[i][j] end
    end
  end
  local flat = {}
  if rows < cols then -- the transpose: rows x cols = n x m
    for j = 1, n do for i = 1, m do flat[#flat + 1] = self.gain * q[i][j] end end
  else
    for i = 1, m do for j = 1, n do flat[#flat + 1] = self.gain * q[i][j] end end
  end
  return shape_ops.reshape(convert.tensor(flat, dt, "Orthogonal"), shape)
end
function Orthogonal:get_config() return { gain = self.gain, seed = self.seed } end

return M
