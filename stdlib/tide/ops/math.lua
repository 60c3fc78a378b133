-- stdlib/tide/ops/math.lua — elementwise ops: arithmetic, comparisons and
-- logic with numpy broadcasting, unary math and activations, where, clip,
-- cast. Each is tide.<name>(...) and a method x:<name>(...).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

-- The plain ops (neg, exp, add, less, ...) come from the registry: tide.ops.plain.
require("tide.ops.plain").define("math", M)

-- gelu(x, {approximate=false}): the erf form, or the tanh approximation.
function M.gelu(x, ...)
  local o = args.parse("gelu", { "approximate" }, ...)
  x = convert.arg(x, "gelu")
  local a = dispatch.attrs()
  if args.bool("gelu", "approximate", o.approximate, false) then a.flags = C.TIDE_ATTR_APPROXIMATE end
  return dispatch.run1(C.TIDE_OP_GELU, a, x)
end

-- leaky_relu(x, alpha=0.2) as tf.nn.leaky_relu: integer inputs become
-- float32 first, as TF converts them.
function M.leaky_relu(x, ...)
  local o = args.parse("leaky_relu", { "alpha" }, ...)
  x = convert.arg(x, "leaky_relu")
  if dtype.is_int[tonumber(x.dt)] then x = M.cast(x, "float32") end
  local a = dispatch.attrs()
  a.scalars[0] = o.alpha == nil and 0.2 or args.number("leaky_relu", "alpha", o.alpha)
  return dispatch.run1(C.TIDE_OP_LEAKY_RELU, a, x)
end

-- cast(x, dtype): a new tensor of that dtype (x itself if it already is).
function M.cast(x, dt)
  x = convert.arg(x, "cast")
  local code = dtype.code(dt, "cast")
  if code == x.dt then return x end
  local a = dispatch.attrs()
  a.dtype = code
  return dispatch.run1(C.TIDE_OP_CAST, a, x)
end

-- Reject non-float inputs of the float-only compositions, naming the op.
local function check_float(op, x)
  if not dtype.is_float[tonumber(x.dt)] then
    binding.error(string.format("%s: x must be a float tensor (float32, float64, float16 or bfloat16), got %s " ..
      "(use :cast(\"float32\"))", op, dtype.names[tonumber(x.dt)]))
  end
end

-- rint(x): the nearest integer, halves to even (round's rule), for floats
-- only as tf.math.rint; no gradient.
function M.rint(x)
  x = convert.arg(x, "rint")
  check_float("rint", x)
  return M.round(x)
end

-- log_sigmoid(x) = -softplus(-x), as TF computes it: no overflow at either
-- end (log_sigmoid(-100) is -100, log_sigmoid(100) is -3.7e-44 in float64).
function M.log_sigmoid(x)
  x = convert.arg(x, "log_sigmoid")
  check_float("log_sigmoid", x)
  return M.neg(M.softplus(M.neg(x)))
end

local WHERE, CLIP = C.TIDE_OP_WHERE, C.TIDE_OP_CLIP

-- where(cond, x, y): x where cond is true, else y (all broadcast together).
-- where(cond), as tf.where(cond): the int64 [N, rank] coordinates of cond's
-- true (nonzero) elements, row-major; N is known when the op runs.
function M.where(cond, x, y)
  if cond == nil then binding.error("where: cond is nil; expected a tensor") end
  cond = convert.arg(cond, "where", 1)
  if x == nil and y == nil then return dispatch.run1(C.TIDE_OP_WHERE_INDICES, nil, cond) end
  if not istype(Tensor, x) then x = convert.coerce(x, y, "where", 2) end
  if not istype(Tensor, y) then y = convert.coerce(y, x, "where", 3) end
  return dispatch.run(WHERE, nil, { cond, x, y })
end

-- clip_by_value(t, lo, hi): values below lo become lo, above hi become hi.
function M.clip_by_value(t, lo, hi)
  t = convert.arg(t, "clip_by_value", 1)
  lo = convert.coerce(lo, t, "clip_by_value", 2)
  hi = convert.coerce(hi, t, "clip_by_value", 3)
  return dispatch.run(CLIP, nil, { t, lo, hi })
end

-- Short comparison names for methods: a:lt(b) reads like a < b.
M.lt, M.le, M.gt, M.ge, M.eq, M.ne = M.less, M.less_equal, M.greater, M.greater_equal, M.equal, M.not_equal
-- TF's other spellings.
M.subtract, M.multiply, M.divide, M.truediv, M.negative = M.sub, M.mul, M.div, M.div, M.neg
M.floormod, M.floor_divide = M.mod, M.floordiv
M.is_nan, M.is_finite, M.is_inf = M.isnan, M.isfinite, M.isinf
M.div_no_nan = M.divide_no_nan

return M
