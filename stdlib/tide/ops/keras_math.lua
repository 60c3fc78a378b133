-- stdlib/tide/ops/keras_math.lua — tide.ops' numpy math (keras.ops.numpy): elementwise functions tide spells
-- otherwise or lacks (arccos, cbrt, fmod, gcd, sinc, nan_to_num, isclose, ...), bitwise names, rounding.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local create_ops = require "tide.ops.create"
local more = require "tide.ops.math_more"
local bitwise = require "tide.ops.bitwise"
local u = require "tide.ops.keras_util"

local M = {}
local m = math_ops
local fmt = string.format
local LN2 = math.log(2)

-- Float functions of one argument: integer inputs become float32, as keras.ops.
local FLOAT_UNARY = { arccos = "acos", arccosh = "acosh", arcsin = "asin", arcsinh = "asinh", arctan = "atan",
  arctanh = "atanh", cosh = "cosh", sinh = "sinh", erfinv = "erfinv", i0 = "bessel_i0" }
for k, name in pairs(FLOAT_UNARY) do
  local f = math_ops[name] or more[name]
  M[k] = function(x) return f(u.float_of(u.arg(k, x))) end
end

-- bitwise names (keras.ops.bitwise_*, and numpy's left_shift/right_shift)
M.bitwise_and, M.bitwise_or, M.bitwise_xor = bitwise.bitwise_and, bitwise.bitwise_or, bitwise.bitwise_xor
M.bitwise_invert, M.bitwise_not = bitwise.invert, bitwise.invert
M.bitwise_left_shift, M.left_shift = bitwise.left_shift, bitwise.left_shift
M.bitwise_right_shift, M.right_shift = bitwise.right_shift, bitwise.right_shift

-- real tensors only (tide has no complex dtype): real and conj are x, imag zeros, angle pi where x < 0
M.real, M.imag, M.conj, M.conjugate = more.real, more.imag, more.conj, more.conj
function M.angle(x) return more.angle(u.float_of(u.arg("angle", x))) end
function M.isreal(x) return create_ops.ones_like(u.arg("isreal", x), "bool") end

-- cbrt(x): the real cube root, sign kept.
function M.cbrt(x)
  x = u.float_of(u.arg("cbrt", x))
  return m.mul(m.sign(x), m.pow(m.abs(x), 1 / 3))
end

function M.fabs(x) return m.abs(u.float_of(u.arg("fabs", x))) end

-- fmod(x1, x2): C's fmod, the remainder with the dividend's sign (tf.truncatemod).
function M.fmod(a, b) return m.truncatemod(a, b) end

-- heaviside(x1, x2): 0 below zero, 1 above, x2 at zero.
function M.heaviside(a, b)
  a = u.float_of(u.arg("heaviside", a))
  if type(b) ~= "number" then b = m.cast(u.arg("heaviside", b, "x2"), a.dtype) end
  local zero, one = create_ops.zeros_like(a), create_ops.ones_like(a)
  return m.where(m.less(a, 0), zero, m.where(m.greater(a, 0), one, m.add(zero, b)))
end

-- ldexp(x1, x2): x1 * 2^x2 (x2 integers).
function M.ldexp(a, b)
  a = u.float_of(u.arg("ldexp", a))
  b = u.arg("ldexp", b, "x2")
  if u.is_float(b) then binding.error("ldexp: x2 must be an integer tensor, got " .. b.dtype) end
  return m.mul(a, m.pow(2, m.cast(b, a.dtype)))
end

-- gcd(x1, x2), lcm(x1, x2) of integers: Euclid's steps, a fixed count that covers the dtype (a pair of
-- Fibonacci numbers needs the most), so the composition traces without a loop.
local function check_ints(op, a, b)
  a, b = u.arg(op, a, "x1"), u.arg(op, b, "x2")
  if u.is_float(a) or u.is_float(b) or a.dtype == "bool" then
    binding.error(fmt("%s: x1 and x2 must be integer tensors, got %s and %s", op, a.dtype, b.dtype))
  end
  return a, b
end
function M.gcd(a, b)
  a, b = check_ints("gcd", a, b)
  a, b = m.abs(a), m.abs(b)
  local steps = (a.dtype == "int64" or b.dtype == "int64") and 93 or (a.dtype:match("8$") and 12 or 47)
  for _ = 1, steps do
    local nz = m.not_equal(b, 0)
    local safe = m.where(nz, b, create_ops.ones_like(b))
    a, b = m.where(nz, b, a), m.where(nz, m.floormod(a, safe), b)
  end
  return a
end
function M.lcm(a, b)
  a, b = check_ints("lcm", a, b)
  local g = M.gcd(a, b)
  local zero = m.equal(g, 0)
  return m.where(zero, create_ops.zeros_like(g), m.abs(m.mul(m.floor_divide(a, m.where(zero,
    create_ops.ones_like(g), g)), b)))
end

-- signbit(x): true where the sign bit is set (-0.0 included).
function M.signbit(x)
  x = u.arg("signbit", x)
  if not u.is_float(x) then return m.less(x, 0) end
  return m.logical_or(m.less(x, 0), m.logical_and(m.equal(x, 0), m.less(m.reciprocal(x), 0)))
end

-- sinc(x) = sin(pi x) / (pi x), 1 at 0 (the 0s are replaced before dividing, so gradients stay finite).
function M.sinc(x)
  x = u.float_of(u.arg("sinc", x))
  local zero = m.equal(x, 0)
  local px = m.mul(m.where(zero, create_ops.ones_like(x), x), math.pi)
  return m.where(zero, create_ops.ones_like(x), m.div(m.sin(px), px))
end

-- logaddexp2(x1, x2) = log2(2^x1 + 2^x2)
function M.logaddexp2(a, b)
  a, b = u.float_of(u.arg("logaddexp2", a)), u.arg("logaddexp2", b, "x2")
  b = m.cast(b, a.dtype)
  local mx = m.maximum(a, b)
  return m.add(mx, m.div(m.log1p(m.exp(m.mul(m.neg(m.abs(m.sub(a, b))), LN2))), LN2))
end

M.nextafter = math_ops.nextafter or more.nextafter

-- The largest finite value of a float dtype (nan_to_num's default for +inf).
local FLOAT_MAX = { float16 = 65504, bfloat16 = 3.3895313892515355e38, float32 = 3.4028234663852886e38,
  float64 = 1.7976931348623157e308 }

-- nan_to_num(x, nan=0.0, posinf=None, neginf=None): NaN and the infinities replaced (by the dtype's
-- extremes where none is given); integer tensors pass through.
function M.nan_to_num(x, ...)
  local o = args.parse("nan_to_num", { "nan", "posinf", "neginf" }, ...)
  x = u.arg("nan_to_num", x)
  if not u.is_float(x) then return x end
  local big = FLOAT_MAX[x.dtype]
  local zero = create_ops.zeros_like(x)
  local r = m.where(m.is_nan(x), m.add(zero, o.nan == nil and 0 or o.nan), x)
  r = m.where(m.equal(r, math.huge), m.add(zero, o.posinf == nil and big or o.posinf), r)
  return m.where(m.equal(r, -math.huge), m.add(zero, o.neginf == nil and -big or o.neginf), r)
end

-- isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False): |x1 - x2| <= atol + rtol |x2|, infinities equal
-- only to themselves.
function M.isclose(a, b, ...)
  local o = args.parse("isclose", { "rtol", "atol", "equal_nan" }, ...)
  a = u.arg("isclose", a, "x1")
  b = convert.coerce(b, a, "isclose", 2)
  if not u.is_float(a) then return m.equal(a, b) end
  local rtol, atol = o.rtol == nil and 1e-5 or o.rtol, o.atol == nil and 1e-8 or o.atol
  local close = m.less_equal(m.abs(m.sub(a, b)), m.add(m.mul(m.abs(b), rtol), atol))
  local r = m.logical_or(m.equal(a, b), m.logical_and(close, m.logical_and(m.is_finite(a), m.is_finite(b))))
  if o.equal_nan then r = m.logical_or(r, m.logical_and(m.is_nan(a), m.is_nan(b))) end
  return r
end
function M.allclose(a, b, ...) return reduce_ops.reduce_all(M.isclose(a, b, ...)) end

function M.isposinf(x)
  x = u.arg("isposinf", x)
  if not u.is_float(x) then return create_ops.zeros_like(x, "bool") end
  return m.equal(x, math.huge)
end
function M.isneginf(x)
  x = u.arg("isneginf", x)
  if not u.is_float(x) then return create_ops.zeros_like(x, "bool") end
  return m.equal(x, -math.huge)
end

-- fmax/fmin(x1, x2): maximum/minimum that ignore a NaN beside a number (NaN only where both are).
local function nan_ignoring(op, f)
  return function(a, b)
    a = u.arg(op, a, "x1")
    b = convert.coerce(b, a, op, 2)
    if not u.is_float(a) then return f(a, b) end
    return m.where(m.is_nan(a), b, m.where(m.is_nan(b), a, f(a, b)))
  end
end
M.fmax = nan_ignoring("fmax", m.maximum)
M.fmin = nan_ignoring("fmin", m.minimum)

-- copy(x): a new tensor with x's values.
function M.copy(x) return m.add(u.arg("copy", x), 0) end

-- round(x, decimals=0): half to even, as numpy; decimals < 0 rounds integers to tens, hundreds ...
function M.round(x, ...)
  local o = args.parse("round", { "decimals" }, ...)
  x = u.arg("round", x)
  local d = o.decimals == nil and 0 or args.int("round", "decimals", o.decimals)
  if d == 0 then return u.is_float(x) and m.round(x) or x end
  if not u.is_float(x) then
    if d > 0 then return x end
    local f = m.cast(x, "float64")
    local s = 10 ^ (-d)
    return m.cast(m.mul(m.round(m.div(f, s)), s), x.dtype)
  end
  local s = 10 ^ d
  return m.div(m.round(m.mul(x, s)), s)
end

return M
