-- stdlib/tide/grad/special.lua — gradients of tide.math.special's own ops (ops/special.lua):
-- the Bessel J, Y, K functions, dawsn, expint, fresnel_cos/sin and spence, as TF's math_grad.py.
local grad = require "tide.grad.registry"
local m = require "tide.ops.math"
local s = require "tide.ops.special"

local function unary(name, fn)
  grad.register(name, function(node, dys) return fn(node.inputs[1], node.outputs[1], dys[1]) end)
end

-- x where x != 0 (1 elsewhere) and where it was 0: for the f(x)/x terms that TF takes at their limit.
local function safe(x)
  local zero = m.equal(x, 0)
  return zero, m.where(zero, 1, x)
end

unary("bessel_j0", function(x, _, dy) return m.neg(m.mul(dy, s.bessel_j1(x))) end)
unary("bessel_j1", function(x, y, dy) -- j0(x) - j1(x)/x, 1/2 at 0
  local zero, sx = safe(x)
  return m.mul(dy, m.where(zero, 0.5, m.sub(s.bessel_j0(sx), m.div(y, sx))))
end)
unary("bessel_y0", function(x, _, dy) return m.neg(m.mul(dy, s.bessel_y1(x))) end)
unary("bessel_y1", function(x, y, dy) return m.mul(dy, m.sub(s.bessel_y0(x), m.div(y, x))) end)
unary("bessel_k0", function(x, _, dy) return m.neg(m.mul(dy, s.bessel_k1(x))) end)
unary("bessel_k0e", function(x, y, dy) return m.mul(dy, m.sub(y, s.bessel_k1e(x))) end)
unary("bessel_k1", function(x, y, dy) return m.neg(m.mul(dy, m.add(s.bessel_k0(x), m.div(y, x)))) end)
unary("bessel_k1e", function(x, y, dy)
  return m.mul(dy, m.sub(m.mul(y, m.sub(1, m.reciprocal(x))), s.bessel_k0e(x)))
end)
-- dawsn' = 1 - 2 x dawsn(x); Ei' = e^x / x.
unary("dawsn", function(x, y, dy) return m.mul(dy, m.sub(1, m.mul(m.mul(x, y), 2))) end)
unary("expint", function(x, _, dy) return m.mul(dy, m.div(m.exp(x), x)) end)
-- C' = cos(pi x^2 / 2), S' = sin(pi x^2 / 2).
unary("fresnel_cos", function(x, _, dy) return m.mul(dy, m.cos(m.mul(m.square(x), math.pi / 2))) end)
unary("fresnel_sin", function(x, _, dy) return m.mul(dy, m.sin(m.mul(m.square(x), math.pi / 2))) end)
-- spence' = log(x) / (1 - x), -1 at x = 1.
unary("spence", function(x, _, dy)
  local one = m.equal(x, 1)
  local sx = m.where(one, 2, x)
  return m.mul(dy, m.where(one, -1, m.div(m.log(sx), m.sub(1, sx))))
end)

return {}
