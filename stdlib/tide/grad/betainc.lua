-- stdlib/tide/grad/betainc.lua — the gradient of ops/betainc.lua's op, as TF's _BetaincGrad: in x only,
-- dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b) (written with xlogy and xlog1py, so x = 0 or 1 with a or b = 1 stays finite);
-- a and b get none (TF defines none).
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local m = require "tide.ops.math"

grad.register("betainc", function(node, dys, needs)
  local a, b, x = node.inputs[1], node.inputs[2], node.inputs[3]
  if not util.needs(needs, x) then return nil, nil, nil end
  local log_beta = m.sub(m.add(m.lgamma(a), m.lgamma(b)), m.lgamma(m.add(a, b)))
  local partial = m.exp(m.sub(m.add(m.xlog1py(m.sub(b, 1), m.neg(x)), m.xlogy(m.sub(a, 1), x)), log_beta))
  return nil, nil, util.unbroadcast(m.mul(dys[1], partial), x)
end)

return {}
