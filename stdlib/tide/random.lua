-- stdlib/tide/random.lua — tide.random: the global seed and the random ops
-- (uniform, normal, truncated_normal, shuffle, permutation) on Philox counters.
--
-- Seeds follow TF's rule. Without seed= an op draws the next counters of the
-- global stream (restarted by set_seed). With seed= it draws from a stream
-- keyed by (global seed, op seed) whose counter the engine keeps
-- (tide_random_reserve_op), shared by eager calls and traced graphs: repeated
-- draws give new numbers, and set_seed restarts every such stream. When the
-- global seed was never set, an op seed pairs with TF's default global seed
-- (87654321), so seeded ops repeat from run to run.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local create = require "tide.ops.create"
local math_ops = require "tide.ops.math"
local shape_arg = require("tide.ops.dynamic_shape").arg
local ffi, C = binding.ffi, binding.C

local M = {}

local UNIFORM, NORMAL, TRUNCATED, SHUFFLE =
  C.TIDE_OP_RANDOM_UNIFORM, C.TIDE_OP_RANDOM_NORMAL, C.TIDE_OP_TRUNCATED_NORMAL, C.TIDE_OP_RANDOM_SHUFFLE

-- An integer seed as uint64 (negative seeds wrap, as int64 bits).
local function seed_bits(op, seed)
  if seed == nil then binding.error(op .. ": seed is required") end
  args.int(op, "seed", seed) -- an integer int64 holds
  return ffi.cast("uint64_t", ffi.cast("int64_t", seed))
end

-- set_seed(seed) as tf.random.set_seed: restarts the global stream and every op-seed stream.
function M.set_seed(seed)
  C.tide_random_set_seed(seed_bits("set_seed", seed))
end

-- The global seed: the one set, or the one chosen at start (a number; a
-- uint64 cdata only for a seed a C host set beyond 2^53).
function M.get_seed()
  local s = C.tide_random_get_seed()
  if s < 2 ^ 53 then return tonumber(s) end
  return s
end

-- Mark attrs for a random op: the counters are reserved where the op runs
-- (eagerly now, or at each run of a traced graph), from op seed `seed`'s
-- stream or, without one, from the global stream. Tracing thus draws nothing,
-- and eager and traced draws of one op seed share its stream.
local function reserve(a, seed, what)
  if seed == nil then
    a.flags = bit.bor(a.flags, C.TIDE_ATTR_RNG_AT_RUN)
    return
  end
  a.rng_key = seed_bits(what, seed)
  a.flags = bit.bor(a.flags, C.TIDE_ATTR_OP_SEED)
end

-- For random ops run by other modules (tide.image's sampler): the same marking.
M.reserve_draws = reserve

-- Run creation op `op` of the given shape with two scalars.
-- The shape may be a traced shape tensor (tide.shape(x)): the op takes it as input.
local function draw(op, what, shape, dt_name, s0, s1, seed)
  local list, dyn = shape_arg(what, shape)
  local dt = dtype.code(dt_name or "float32", what)
  local a = dispatch.attrs()
  if list then dispatch.set_ints(a, list, what) end
  a.dtype = dt
  a.scalars[0], a.scalars[1] = s0, s1
  reserve(a, seed, what)
  return dispatch.run(op, a, dyn and { dyn } or {}, 1)
end

-- uniform(shape, minval=0, maxval=1, dtype="float32", seed=nil) as
-- tf.random.uniform: floats in [minval, maxval); integers in [minval, maxval),
-- where maxval must be given and exceed minval.
function M.uniform(shape, ...)
  local o = args.parse("uniform", { "minval", "maxval", "dtype", "seed" }, ...)
  local dt = dtype.code(o.dtype or "float32", "uniform")
  local lo = o.minval == nil and 0 or args.number("uniform", "minval", o.minval)
  local hi = o.maxval
  if hi == nil then
    if dtype.is_int[dt] then
      binding.error("uniform: maxval must be given for integer dtype " .. dtype.names[dt])
    end
    hi = 1
  end
  hi = args.number("uniform", "maxval", hi)
  return draw(UNIFORM, "uniform", shape, o.dtype, lo, hi, o.seed)
end

-- A normal sampler op(shape, mean=0, stddev=1, dtype="float32", seed=nil).
local function normal_sampler(name, op)
  return function(shape, ...)
    local o = args.parse(name, { "mean", "stddev", "dtype", "seed" }, ...)
    local mean = o.mean == nil and 0 or args.number(name, "mean", o.mean)
    local std = o.stddev == nil and 1 or args.number(name, "stddev", o.stddev)
    return draw(op, name, shape, o.dtype, mean, std, o.seed)
  end
end

-- normal(shape, mean=0, stddev=1, dtype="float32", seed=nil) as tf.random.normal.
M.normal = normal_sampler("normal", NORMAL)

-- truncated_normal(shape, mean=0, stddev=1, dtype="float32", seed=nil) as
-- tf.random.truncated_normal: values beyond 2 stddev from the mean are re-drawn.
M.truncated_normal = normal_sampler("truncated_normal", TRUNCATED)

-- A stateless op's seed: TF's shape [2] integer tensor, a Lua pair {a, b}
-- or an int32/int64 tensor of shape [2] (traced ones too).
local function seed_pair(op, seed)
  seed = convert.unvariable(seed)
  if type(seed) == "table" and not ffi.istype(binding.Tensor, seed) then
    if #seed ~= 2 then binding.error(op .. ": seed must be a pair of integers {a, b}, got " .. #seed .. " values") end
    return convert.tensor({ args.int(op, "seed[1]", seed[1]), args.int(op, "seed[2]", seed[2]) }, "int64", op)
  end
  if not ffi.istype(binding.Tensor, seed) then
    binding.error(op .. ": seed must be a pair of integers {a, b} or a shape [2] int32/int64 tensor, got " .. type(seed))
  end
  return seed
end
M.seed_pair = seed_pair

local STATELESS = C.TIDE_OP_STATELESS_RANDOM_UNIFORM

-- stateless_uniform(shape, seed, minval=0, maxval=nil, dtype="float32") as
-- tf.random.stateless_uniform: the same numbers as TF for the same seed
-- (TF's Philox key and counter from the seed pair, and its conversions);
-- floats in [minval, maxval) (maxval 1 by default), integers in [minval,
-- maxval), or every value of the dtype when both are nil.
function M.stateless_uniform(shape, seed, ...)
  local op = "stateless_uniform"
  local o = args.parse(op, { "minval", "maxval", "dtype" }, ...)
  local dt = dtype.code(o.dtype or "float32", op)
  local s = seed_pair(op, seed)
  local list, dyn = shape_arg(op, shape)
  local a = dispatch.attrs()
  if list then dispatch.set_ints(a, list, op) end
  a.dtype = dt
  local inputs = dyn and { s, dyn } or { s }
  if dtype.is_int[dt] then
    if (o.minval == nil) ~= (o.maxval == nil) then
      binding.error(op .. ": minval and maxval must both be given for " .. dtype.names[dt] .. ", or neither (every value)")
    end
    if o.minval == nil then a.n = 1
    else a.scalars[0], a.scalars[1] = args.number(op, "minval", o.minval), args.number(op, "maxval", o.maxval) end
    return dispatch.run(STATELESS, a, inputs)
  end
  local u = dispatch.run(STATELESS, a, inputs)
  local lo = o.minval == nil and 0 or o.minval
  local hi = o.maxval == nil and 1 or o.maxval
  if lo == 0 and hi == 1 then return u end
  local name = dtype.names[dt]
  local function as(v) -- a bound in the dtype, as TF converts it to a tensor of it
    if ffi.istype(binding.Tensor, v) then return math_ops.cast(v, name) end
    return convert.tensor(args.number(op, "bound", v), name, op)
  end
  local tlo, thi = as(lo), as(hi)
  return math_ops.add(math_ops.mul(u, math_ops.sub(thi, tlo)), tlo)
end

-- shuffle(value, seed=nil) as tf.random.shuffle: value's rows (dim 0) in a random order.
function M.shuffle(value, ...)
  local o = args.parse("shuffle", { "seed" }, ...)
  if value == nil then binding.error("shuffle: expects a tensor") end
  value = convert.arg(value, "shuffle")
  local a = dispatch.attrs()
  reserve(a, o.seed, "shuffle")
  return dispatch.run1(SHUFFLE, a, value)
end

-- permutation(x, seed=nil) as numpy's: a shuffled range(x) (int32) for a
-- number, or a shuffled copy of a tensor's rows.
function M.permutation(x, ...)
  local o = args.parse("permutation", { "seed" }, ...)
  if type(x) == "number" then
    args.int("permutation", "n", x)
    if x < 0 then binding.error("permutation: n must be >= 0, got " .. x) end
    x = create.range(x, { dtype = "int32" })
  elseif x == nil then
    binding.error("permutation: expects a count or a tensor")
  end
  return M.shuffle(x, { seed = o.seed })
end

return M
