-- stdlib/tide/ops/special.lua — tide.math.special as tf.math.special: the
-- Bessel functions, Dawson's integral, Ei, the Fresnel integrals and Spence's.
local math_ops = require "tide.ops.math"

local M = {}

-- bessel_j0 ... spence: the registry's plain ops of tide.ops.plain's family
-- "special" (formulas in kernels/core/special_bessel.h).
require("tide.ops.plain").define("special", M)

-- tf.math.special also holds the I functions, which tf.math has too: tide.math's,
-- called through (so each op has one exporting module, ops/math.lua).
for _, name in ipairs { "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e" } do
  local f = math_ops[name]
  M[name] = function(x) return f(x) end
end

return M
