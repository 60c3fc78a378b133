-- stdlib/tide/grad/math.lua — gradients of the elementwise ops (TF's
-- formulas: math_grad.py and nn_grad.py), summed back over broadcast dims.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local m = require "tide.ops.math"
local create = require "tide.ops.create"
local dtype = require "tide.dtype"
local tensor = require "tide.tensor"
local C = require("tide.binding").C
local unbroadcast = util.unbroadcast

local reg = grad.register

-- Unary: y = f(x); the gradient is dy * f'(x).
local function unary(name, fn)
  reg(name, function(node, dys) return fn(node.inputs[1], node.outputs[1], dys[1], node) end)
end

unary("neg", function(_, _, dy) return m.neg(dy) end)
unary("abs", function(x, _, dy) return m.mul(dy, m.sign(x)) end)
unary("sign", function(x) return create.zeros_like(x) end)
unary("square", function(x, _, dy) return m.mul(dy, m.mul(x, 2)) end)
unary("relu", function(_, y, dy) return m.where(m.greater(y, 0), dy, 0) end)
unary("exp", function(_, y, dy) return m.mul(dy, y) end)
unary("expm1", function(_, y, dy) return m.mul(dy, m.add(y, 1)) end)
unary("log", function(x, _, dy) return m.div(dy, x) end)
unary("log1p", function(x, _, dy) return m.div(dy, m.add(x, 1)) end)
unary("sqrt", function(_, y, dy) return m.div(m.mul(dy, 0.5), y) end)
unary("rsqrt", function(_, y, dy) return m.mul(m.mul(dy, -0.5), m.mul(y, m.square(y))) end)
unary("reciprocal", function(_, y, dy) return m.neg(m.mul(dy, m.square(y))) end)
unary("sin", function(x, _, dy) return m.mul(dy, m.cos(x)) end)
unary("cos", function(x, _, dy) return m.neg(m.mul(dy, m.sin(x))) end)
unary("tanh", function(_, y, dy) return m.mul(dy, m.sub(1, m.square(y))) end)
unary("sigmoid", function(_, y, dy) return m.mul(dy, m.mul(y, m.sub(1, y))) end)
-- elu/selu test the output as TF's EluGrad/SeluGrad do (y < 0): at x = 0
-- the gradient is the linear side's.
unary("elu", function(_, y, dy) return m.where(m.less(y, 0), m.mul(dy, m.add(y, 1)), dy) end)

local SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
unary("selu", function(_, y, dy)
  return m.where(m.less(y, 0), m.mul(dy, m.add(y, SELU_SCALE * SELU_ALPHA)), m.mul(dy, SELU_SCALE))
end)

unary("leaky_relu", function(x, _, dy, node)
  return m.where(m.greater(x, 0), dy, m.mul(dy, node.attrs.scalars[0]))
end)
unary("softplus", function(x, _, dy) return m.mul(dy, m.sigmoid(x)) end)
unary("erf", function(x, _, dy)
  return m.mul(dy, m.mul(m.exp(m.neg(m.square(x))), 2 / math.sqrt(math.pi)))
end)
unary("erfc", function(x, _, dy)
  return m.mul(dy, m.mul(m.exp(m.neg(m.square(x))), -2 / math.sqrt(math.pi)))
end)
-- tan: dy * sec(x)^2, as TF's _TanGrad.
unary("tan", function(x, _, dy) return m.mul(dy, m.square(m.reciprocal(m.cos(x)))) end)

local INV_SQRT_2PI, SQRT1_2, SQRT_2_OVER_PI = 1 / math.sqrt(2 * math.pi), math.sqrt(0.5), math.sqrt(2 / math.pi)
-- gelu in the forms the kernel computes, so the negative tail keeps its
-- digits (1 + erf and 1 + tanh round to 0 there).
unary("gelu", function(x, _, dy, node)
  if bit.band(node.attrs.flags, C.TIDE_ATTR_APPROXIMATE) ~= 0 then
    -- y = x s, s = sigmoid(2u), u = c(x + 0.044715x^3): dy (s + 2 x s (1 - s) u')
    local x2 = m.square(x)
    local z = m.mul(m.add(x, m.mul(m.mul(x2, x), 0.044715)), 2 * SQRT_2_OVER_PI)
    local s, rest = m.sigmoid(z), m.sigmoid(m.neg(z)) -- 1 - s, without cancelling
    local dz = m.mul(m.add(m.mul(x2, 3 * 0.044715), 1), 2 * SQRT_2_OVER_PI)
    return m.mul(dy, m.add(s, m.mul(m.mul(m.mul(x, s), rest), dz)))
  end
  -- y = x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: dy * (Phi(x) + x * phi(x))
  local cdf = m.mul(m.erfc(m.mul(x, -SQRT1_2)), 0.5)
  local pdf = m.mul(m.exp(m.mul(m.square(x), -0.5)), INV_SQRT_2PI)
  return m.mul(dy, m.add(cdf, m.mul(x, pdf)))
end)

-- Trigonometric inverses and hyperbolics (TF's math_grad.py).
local function one_minus_sq(x) return m.sub(1, m.square(x)) end
unary("asin", function(x, _, dy) return m.mul(dy, m.rsqrt(one_minus_sq(x))) end)
unary("acos", function(x, _, dy) return m.neg(m.mul(dy, m.rsqrt(one_minus_sq(x)))) end)
unary("atan", function(x, _, dy) return m.div(dy, m.add(m.square(x), 1)) end)
unary("sinh", function(x, _, dy) return m.mul(dy, m.cosh(x)) end)
unary("cosh", function(x, _, dy) return m.mul(dy, m.sinh(x)) end)
unary("asinh", function(_, y, dy) return m.div(dy, m.cosh(y)) end)
unary("acosh", function(_, y, dy) return m.div(dy, m.sinh(y)) end)
unary("atanh", function(x, _, dy) return m.div(dy, one_minus_sq(x)) end)
unary("softsign", function(x, _, dy) return m.div(dy, m.square(m.add(m.abs(x), 1))) end)
-- relu6: TF's Relu6Grad passes dy where 0 < x < 6 (none at the kinks).
unary("relu6", function(x, _, dy) return m.where(m.logical_and(m.greater(x, 0), m.less(x, 6)), dy, 0) end)

-- Keras 3's activation kernels without a parameter (issue 26); at their kinks the gradient is the one
-- Keras's compositions give. (celu and the others with a parameter: grad/activations.lua.)
unary("sparse_plus", function(x, _, dy)
  return m.where(m.less_equal(x, -1), 0, m.where(m.less(x, 1), m.mul(dy, m.mul(m.add(x, 1), 0.5)), dy))
end)
unary("sparse_sigmoid", function(x, _, dy)
  return m.where(m.logical_and(m.greater(x, -1), m.less(x, 1)), m.mul(dy, 0.5), 0)
end)
-- hard_tanh: clip_by_value's gradient (dy inside [-1, 1], ends included)
unary("hard_tanh", function(x, _, dy) return m.where(m.greater(m.abs(x), 1), 0, dy) end)
unary("tanh_shrink", function(x, _, dy) return m.mul(dy, m.square(m.tanh(x))) end)

-- Special functions: derivatives in closed form, as TF's math_grad.py.
unary("lgamma", function(x, _, dy) return m.mul(dy, m.digamma(x)) end)
unary("digamma", function(x, _, dy) return m.mul(dy, m.polygamma(create.ones_like(x), x)) end)
-- erfinv: sqrt(pi)/2 exp(y^2); ndtri: sqrt(2 pi) exp(y^2 / 2).
unary("erfinv", function(_, y, dy) return m.mul(dy, m.mul(m.exp(m.square(y)), math.sqrt(math.pi) / 2)) end)
unary("ndtri", function(_, y, dy) return m.mul(dy, m.mul(m.exp(m.mul(m.square(y), 0.5)), math.sqrt(2 * math.pi))) end)
unary("bessel_i0", function(x, _, dy) return m.mul(dy, m.bessel_i1(x)) end)
unary("bessel_i0e", function(x, y, dy) return m.mul(dy, m.sub(m.bessel_i1e(x), m.mul(m.sign(x), y))) end)
-- i1'(x) = i0(x) - i1(x) / x, which is 1/2 at x = 0 (TF's safe-x form).
local function safe(x) local zero = m.equal(x, 0) return zero, m.where(zero, 1, x) end
unary("bessel_i1", function(x, y, dy)
  local zero, sx = safe(x)
  return m.mul(dy, m.where(zero, 0.5, m.sub(m.bessel_i0(sx), m.div(y, sx))))
end)
unary("bessel_i1e", function(x, y, dy)
  local zero, sx = safe(x)
  return m.mul(dy, m.where(zero, 0.5, m.sub(m.bessel_i0e(sx), m.mul(y, m.add(m.sign(sx), m.reciprocal(sx))))))
end)

-- cast: back to the input's dtype when both are floats; none otherwise.
reg("cast", function(node, dys)
  local x = node.inputs[1]
  if not dtype.is_float[x.dt] or not dtype.is_float[dys[1].dt] then return nil end
  return m.cast(dys[1], dtype.names[x.dt])
end)

-- Binary: fn(a, b, dy, y, na, nb) gives da where na and db where nb (the
-- inputs the tape needs: y * 0.5 computes no gradient for the 0.5); each is
-- summed back to its input's shape.
local function binary(name, fn)
  reg(name, function(node, dys, needs)
    local a, b = node.inputs[1], node.inputs[2]
    local na, nb = util.needs(needs, a), util.needs(needs, b)
    local da, db = fn(a, b, dys[1], node.outputs[1], na, nb)
    -- (da or db nil: TF has no gradient for that input, zeta's x and polygamma's n)
    return na and da and unbroadcast(da, a) or nil, nb and db and unbroadcast(db, b) or nil
  end)
end

binary("add", function(_, _, dy) return dy, dy end)
binary("sub", function(_, _, dy, _, _, nb) return dy, nb and m.neg(dy) end)
binary("mul", function(a, b, dy, _, na, nb) return na and m.mul(dy, b), nb and m.mul(dy, a) end)
binary("div", function(a, b, dy, _, na, nb)
  return na and m.div(dy, b), nb and m.neg(m.div(m.mul(dy, a), m.square(b)))
end)
binary("mod", function(a, b, dy, _, _, nb) return dy, nb and m.neg(m.mul(dy, m.floordiv(a, b))) end)
-- An exponent known now (one eager element: x ^ 2, x ^ 0.5): its value.
local function constant_exponent(b)
  if b.nelem ~= 1 or tensor.is_symbolic(b) then return nil end
  return tensor.item(b)
end

-- pow: dy * b * a^(b - 1), but for the exponents where a cheaper form gives
-- the same values: 2 -> 2a (pow(a, 1) is a), 1 -> dy (pow(a, 0) is 1, NaN
-- included), 0.5 -> 0.5 / y as sqrt's gradient (y = pow(a, 0.5): +inf at
-- a = 0 and -0, as pow(a, -0.5) gives). Each stays differentiable.
local function pow_da(a, b, dy, y)
  local e = constant_exponent(b)
  if e == 2 then return m.mul(dy, m.mul(a, 2)) end
  if e == 1 then return dy end
  if e == 0.5 then return m.div(m.mul(dy, 0.5), y) end
  return m.mul(m.mul(dy, b), m.pow(a, m.sub(b, 1)))
end

binary("pow", function(a, b, dy, y, na, nb)
  local da = na and pow_da(a, b, dy, y)
  if not nb then return da end
  -- d/db a^b = a^b log(a), taken as 0 where a <= 0 (as TF).
  local positive = m.greater(a, 0)
  local loga = m.where(positive, m.log(m.where(positive, a, 1)), 0)
  return da, m.mul(m.mul(dy, y), loga)
end)
-- Ties go to the first input, as TF's maximum/minimum gradients do.
binary("maximum", function(a, b, dy, _, na, nb)
  local first = m.greater_equal(a, b)
  return na and m.where(first, dy, 0), nb and m.where(first, 0, dy)
end)
binary("minimum", function(a, b, dy, _, na, nb)
  local first = m.less_equal(a, b)
  return na and m.where(first, dy, 0), nb and m.where(first, 0, dy)
end)

-- divide_no_nan: TF's _DivNoNanGrad, 0 wherever y == 0.
binary("div_no_nan", function(a, b, dy, _, na, nb)
  return na and m.divide_no_nan(dy, b), nb and m.mul(dy, m.divide_no_nan(m.divide_no_nan(m.neg(a), b), b))
end)
binary("squared_difference", function(a, b, dy, _, _, nb)
  local da = m.mul(m.mul(dy, 2), m.sub(a, b))
  return da, nb and m.neg(da)
end)
-- atan2(y, x): dy * x / (x^2 + y^2) for y, -dy * y / (x^2 + y^2) for x.
binary("atan2", function(a, b, dy, _, na, nb)
  local zinv = m.reciprocal(m.add(m.square(a), m.square(b)))
  return na and m.mul(m.mul(dy, b), zinv), nb and m.mul(m.mul(dy, m.neg(a)), zinv)
end)
-- xlogy, xlog1py, xdivy: TF's gradients, which stay 0 (not NaN) where x == 0.
local function nonzero(a) return m.cast(m.not_equal(a, 0), dtype.names[a.dt]) end
binary("xlogy", function(a, b, dy, _, na, nb)
  return na and m.mul(m.xlogy(nonzero(a), b), dy), nb and m.mul(m.xdivy(a, b), dy)
end)
binary("xlog1py", function(a, b, dy, _, na, nb)
  return na and m.mul(m.xlog1py(nonzero(a), b), dy), nb and m.mul(m.xdivy(a, m.add(b, 1)), dy)
end)
binary("xdivy", function(a, b, dy, _, na, nb)
  return na and m.mul(m.xdivy(nonzero(a), b), dy), nb and m.mul(m.xdivy(m.neg(a), m.square(b)), dy)
end)

-- igamma(a, x) = P(a, x): d/da is IgammaGradA (raw op), d/dx the density x^(a-1) e^-x / Gamma(a).
local function igamma_dx(a, x) return m.exp(m.sub(m.sub(m.mul(m.sub(a, 1), m.log(x)), x), m.lgamma(a))) end
local raw = require("tide.ops.plain").define("raw", {})
binary("igamma", function(a, x, dy, _, na, nb)
  return na and m.mul(dy, raw.igamma_grad_a(a, x)), nb and m.mul(dy, igamma_dx(a, x))
end)
binary("igammac", function(a, x, dy, _, na, nb)
  return na and m.neg(m.mul(dy, raw.igamma_grad_a(a, x))), nb and m.neg(m.mul(dy, igamma_dx(a, x)))
end)
-- zeta(x, q): TF has no gradient for x; d/dq = -x zeta(x + 1, q).
binary("zeta", function(x, q, dy, _, _, nb) return nil, nb and m.mul(dy, m.neg(m.mul(x, m.zeta(m.add(x, 1), q)))) end)
-- polygamma(n, x): none for n; d/dx = polygamma(n + 1, x).
binary("polygamma", function(n, x, dy, _, _, nb) return nil, nb and m.mul(dy, m.polygamma(m.add(n, 1), x)) end)
-- multiply_no_nan(x, y): TF's _MulNoNanGrad.
binary("multiply_no_nan", function(a, b, dy, _, na, nb)
  return na and m.multiply_no_nan(dy, b), nb and m.multiply_no_nan(a, dy)
end)

reg("where", function(node, dys, needs)
  local c, x, y = node.inputs[1], node.inputs[2], node.inputs[3]
  local dy = dys[1]
  return nil, util.needs(needs, x) and unbroadcast(m.where(c, dy, 0), x) or nil,
    util.needs(needs, y) and unbroadcast(m.where(c, 0, dy), y) or nil
end)

-- clip_by_value: the gradient goes to t inside the range, to the bound outside.
reg("clip_by_value", function(node, dys, needs)
  local t, lo, hi = node.inputs[1], node.inputs[2], node.inputs[3]
  local dy = dys[1]
  local below, above = m.less(t, lo), m.greater(t, hi)
  local dt, dlo, dhi
  if util.needs(needs, t) then
    dt = unbroadcast(m.where(m.logical_not(m.logical_or(below, above)), dy, 0), t)
  end
  if util.needs(needs, lo) then dlo = unbroadcast(m.where(below, dy, 0), lo) end
  if util.needs(needs, hi) then dhi = unbroadcast(m.where(above, dy, 0), hi) end
  return dt, dlo, dhi
end)
