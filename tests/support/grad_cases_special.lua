-- tests/support/grad_cases_special.lua — float64 finite-difference cases of the trigonometric inverses,
-- hyperbolics and special functions (ops/math.lua's and tide.math.special's), merged by grad_cases.lua.
-- Each input range keeps away from poles, branch points and the kinks of relu6.
local tide = require "tide"
local gc = require "gradcheck"

local M = {}
local R = gc.random
local S = tide.math.special

-- op -> { f, lo, hi, seed }: a contiguous [2, 3] input and a transposed one.
local UNARY = {
  asin = { tide.asin, -0.8, 0.8, 101 }, acos = { tide.acos, -0.8, 0.8, 102 }, atan = { tide.atan, -2, 2, 103 },
  sinh = { tide.sinh, -2, 2, 104 }, cosh = { tide.cosh, -2, 2, 105 }, asinh = { tide.asinh, -2, 2, 106 },
  acosh = { tide.acosh, 1.2, 3, 107 }, atanh = { tide.atanh, -0.8, 0.8, 108 },
  softsign = { tide.nn.softsign, -2, 2, 109 }, relu6 = { tide.nn.relu6, 0.5, 5.5, 110 },
  lgamma = { tide.lgamma, 0.3, 4, 111 }, digamma = { tide.digamma, 0.3, 4, 112 },
  erfinv = { tide.erfinv, -0.9, 0.9, 113 }, ndtri = { tide.ndtri, 0.05, 0.95, 114 },
  bessel_i0 = { tide.bessel_i0, -2, 2, 115 }, bessel_i0e = { tide.bessel_i0e, 0.2, 2, 116 },
  bessel_i1 = { tide.bessel_i1, -2, 2, 117 }, bessel_i1e = { tide.bessel_i1e, 0.2, 2, 118 },
  bessel_j0 = { S.bessel_j0, -3, 3, 119 }, bessel_j1 = { S.bessel_j1, -3, 3, 120 },
  bessel_y0 = { S.bessel_y0, 0.5, 4, 121 }, bessel_y1 = { S.bessel_y1, 0.5, 4, 122 },
  bessel_k0 = { S.bessel_k0, 0.5, 4, 123 }, bessel_k0e = { S.bessel_k0e, 0.5, 4, 124 },
  bessel_k1 = { S.bessel_k1, 0.5, 4, 125 }, bessel_k1e = { S.bessel_k1e, 0.5, 4, 126 },
  dawsn = { S.dawsn, -2, 2, 127 }, expint = { S.expint, 0.3, 3, 128 },
  fresnel_cos = { S.fresnel_cos, -2, 2, 129 }, fresnel_sin = { S.fresnel_sin, -2, 2, 130 },
  spence = { S.spence, 0.2, 3, 131 },
}
for name, c in pairs(UNARY) do
  local f, lo, hi, k = c[1], c[2], c[3], c[4]
  M[name] = function(add)
    add("contiguous", f, { R({ 2, 3 }, lo, hi, k) })
    add("transposed", f, { R({ 3, 2 }, lo, hi, k + 50):transpose() })
  end
end

-- Two inputs, broadcast; zeta and polygamma have a gradient for their second input only (as TF),
-- so their first is a constant the check closes over.
function M.igamma(add)
  add("broadcast", tide.igamma, { R({ 2, 1 }, 0.5, 3, 132), R({ 3 }, 0.3, 3, 133) })
  add("same shapes", tide.igamma, { R({ 2, 3 }, 1, 4, 134), R({ 2, 3 }, 0.5, 5, 135) })
end
function M.igammac(add)
  add("broadcast", tide.igammac, { R({ 2, 1 }, 0.5, 3, 136), R({ 3 }, 0.3, 3, 137) })
end
function M.zeta(add)
  local s = tide.tensor({ { 2 }, { 3.5 } }, "float64")
  add("q", function(q) return tide.zeta(s, q) end, { R({ 3 }, 0.5, 3, 138) })
end
function M.polygamma(add)
  local n = tide.tensor({ { 0 }, { 1 }, { 2 } }, "float64")
  add("x", function(x) return tide.polygamma(n, x) end, { R({ 2 }, 0.5, 3, 139) })
end
function M.betainc(add) -- in x only, as TF
  local a, b = tide.tensor({ { 0.8, 2.5, 4 } }, "float64"), tide.tensor(1.7, "float64")
  add("x", function(x) return tide.math.betainc(a, b, x) end, { R({ 1, 3 }, 0.1, 0.9, 142) })
  add("x transposed", function(x) return tide.math.betainc(a:transpose(), b, x) end, { R({ 1, 3 }, 0.1, 0.9, 143):transpose() })
end
function M.multiply_no_nan(add)
  add("broadcast", tide.multiply_no_nan, { R({ 2, 3 }, -2, 2, 140), R({ 3 }, -2, 2, 141) })
end

return M
