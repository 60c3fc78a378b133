-- stdlib/tide/ops/activations.lua — Keras 3's activation ops (keras.ops and keras.activations): the kernels
-- with a parameter (celu, hard_shrink, soft_shrink, squareplus) and the compositions (threshold, glu, sparsemax).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local C = binding.C

local M = {}
local fmt = string.format

local function float_arg(op, x)
  x = convert.arg(x, op)
  if not dtype.is_float[tonumber(x.dt)] then
    binding.error(fmt("%s: x must be a float tensor (float32, float64, float16 or bfloat16), got %s " ..
      "(use :cast(\"float32\"))", op, dtype.names[tonumber(x.dt)]))
  end
  return x
end

-- One kernel of one scalar parameter (attrs.scalars[0]), named `param` with default `default`.
local function with_scalar(op, code, param, default, check)
  return function(x, ...)
    local o = args.parse(op, { param }, ...)
    x = float_arg(op, x)
    local v = o[param] == nil and default or args.number(op, param, o[param])
    if check then check(v) end
    local a = dispatch.attrs()
    a.scalars[0] = v
    return dispatch.run1(code, a, x)
  end
end

-- celu(x, alpha=1): x above 0, alpha * expm1(x / alpha) below (alpha must not be 0).
M.celu = with_scalar("celu", C.TIDE_OP_CELU, "alpha", 1.0, function(v)
  if v == 0 then binding.error("celu: alpha must not be 0") end
end)
-- hard_shrink(x, threshold=0.5): x where |x| > threshold, else 0.
M.hard_shrink = with_scalar("hard_shrink", C.TIDE_OP_HARD_SHRINK, "threshold", 0.5)
-- soft_shrink(x, threshold=0.5): x moved threshold towards 0, 0 within [-threshold, threshold].
M.soft_shrink = with_scalar("soft_shrink", C.TIDE_OP_SOFT_SHRINK, "threshold", 0.5)
-- squareplus(x, b=4): (x + sqrt(x^2 + b)) / 2 (b >= 0).
M.squareplus = with_scalar("squareplus", C.TIDE_OP_SQUAREPLUS, "b", 4, function(v)
  if v < 0 then binding.error(fmt("squareplus: b must be >= 0, got %s", tostring(v))) end
end)

-- threshold(x, threshold, default_value): x where x > threshold, else default_value (Keras 3's ops.threshold).
function M.threshold(x, ...)
  local o = args.parse("threshold", { "threshold", "default_value" }, ...)
  x = convert.arg(x, "threshold")
  if o.threshold == nil or o.default_value == nil then
    binding.error("threshold: threshold and default_value are required (threshold(x, threshold, default_value))")
  end
  local t = args.number("threshold", "threshold", o.threshold)
  local d = args.number("threshold", "default_value", o.default_value)
  return m.where(m.greater(x, t), x, m.cast(convert.tensor(d, x.dtype, "threshold"), x.dtype))
end

-- The axis `axis` (negative from the end) of x as a 0-based index, or an error naming the op.
local function norm_axis(op, x, axis)
  local r = x.shape.rank
  if r == nil then binding.error(fmt("%s: x has an unknown rank while tracing; give a known rank", op)) end
  if r == 0 then binding.error(fmt("%s: x must have at least 1 dimension, got a scalar", op)) end
  if axis < -r or axis >= r then
    binding.error(fmt("%s: axis %d is out of range for x of rank %d", op, axis, r))
  end
  return axis < 0 and axis + r or axis
end

-- glu(x, axis=-1): the first half of x along axis times the sigmoid of the second half (the size must be even).
function M.glu(x, ...)
  local o = args.parse("glu", { "axis" }, ...)
  x = float_arg("glu", x)
  local axis = norm_axis("glu", x, o.axis == nil and -1 or args.int("glu", "axis", o.axis))
  local n = x.shape[axis + 1]
  if type(n) == "number" and n % 2 ~= 0 then
    binding.error(fmt("glu: the size of axis %d must be even, got x of shape %s", axis, tostring(x.shape)))
  end
  local a, b = unpack(shape.split(x, 2, axis))
  return m.mul(a, m.sigmoid(b))
end

-- sparsemax(x, axis=-1): the Euclidean projection of x onto the probability simplex along axis (Martins &
-- Astudillo 2016): max(x - tau, 0), tau = (sum of the k largest - 1) / k over the support of size k. The
-- support (a bool mask) carries no gradient, so the tape differentiates tau through the entries inside it.
function M.sparsemax(x, ...)
  local o = args.parse("sparsemax", { "axis" }, ...)
  x = float_arg("sparsemax", x)
  local axis = norm_axis("sparsemax", x, o.axis == nil and -1 or args.int("sparsemax", "axis", o.axis))
  local sorted = reduce.sort(x, axis, "DESCENDING")
  local cums = reduce.cumsum(sorted, axis)
  -- 1-based ranks along axis, from a cumulative sum of ones (the size may be known only when it runs)
  local ranks = reduce.cumsum(create.ones_like(sorted), axis)
  local in_support = m.greater(m.add(m.mul(ranks, sorted), 1), cums)
  local k = reduce.reduce_sum(m.cast(in_support, x.dtype), axis, true)
  -- the k-th largest value; x's entries at or above it are the support (ties are all in or all out)
  local kth = reduce.reduce_min(m.where(in_support, sorted, math.huge), axis, true)
  local support = m.greater_equal(x, kth)
  local tau = m.div(m.sub(reduce.reduce_sum(m.where(support, x, 0), axis, true), 1), k)
  return m.maximum(m.sub(x, tau), 0)
end


return M
