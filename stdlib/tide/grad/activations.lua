-- stdlib/tide/grad/activations.lua — gradients of Keras 3's activation kernels with a parameter (celu,
-- hard_shrink, soft_shrink, squareplus: ops/activations.lua runs them), the parameter read from the node's attrs.
local grad = require "tide.grad.registry"
local m = require "tide.ops.math"

local function unary(name, fn)
  grad.register(name, function(node, dys) return fn(node.inputs[1], node.outputs[1], dys[1], node) end)
end

-- celu: 1 above 0, exp(x / alpha) below (the derivative, 1 at 0 where Keras's max + min composition gives 2)
unary("celu", function(x, _, dy, node)
  return m.where(m.greater(x, 0), dy, m.mul(dy, m.exp(m.div(x, node.attrs.scalars[0]))))
end)
local function outside(x, node) return m.greater(m.abs(x), node.attrs.scalars[0]) end
unary("hard_shrink", function(x, _, dy, node) return m.where(outside(x, node), dy, 0) end)
unary("soft_shrink", function(x, _, dy, node) return m.where(outside(x, node), dy, 0) end)
-- squareplus: (1 + x / sqrt(x^2 + b)) / 2
unary("squareplus", function(x, _, dy, node)
  local root = m.sqrt(m.add(m.square(x), node.attrs.scalars[0]))
  return m.mul(dy, m.mul(m.add(m.div(x, root), 1), 0.5))
end)

