-- stdlib/tide/grad/nn.lua — gradients of the neural-network C ops: softmax,
-- log_softmax and the fused sparse softmax cross-entropy (TF's nn_grad.py).
-- The composites in ops/nn.lua differentiate through their primitives.
local grad = require "tide.grad.registry"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local nn = require "tide.ops.nn"

local reg = grad.register

-- The op's axis, non-negative when the rank is known (else as given: the
-- reduction normalizes it when the graph runs).
local function axis_of(node)
  local ax, nd = node.attrs.axis, node.inputs[1].ndim
  return (ax < 0 and nd >= 0) and ax + nd or ax
end

-- softmax: dx = y * (dy - sum(dy * y, axis)). Written with y, an output the
-- tape also tracks, so the second order differentiates through it again.
reg("softmax", function(node, dys)
  local y, dy, ax = node.outputs[1], dys[1], axis_of(node)
  return m.mul(y, m.sub(dy, reduce.reduce_sum(m.mul(dy, y), ax, true)))
end)

-- log_softmax: dx = dy - exp(y) * sum(dy, axis).
reg("log_softmax", function(node, dys)
  local y, dy, ax = node.outputs[1], dys[1], axis_of(node)
  return m.sub(dy, m.mul(m.exp(y), reduce.reduce_sum(dy, ax, true)))
end)

-- sparse_softmax_cross_entropy (labels [B], logits [B, K]) -> loss [B], backprop [B, K].
-- The loss's gradient is the saved backprop (softmax - onehot) times dloss per
-- row, as TF. That backprop is itself an output of the node, so an outer tape
-- differentiates it through the second branch: backprop's own gradient, the
-- softmax's vector-Jacobian product (TF refuses this second derivative; tide
-- gives it). Labels get none.
reg("sparse_softmax_cross_entropy", function(node, dys)
  local logits = node.inputs[2]
  local dloss, dbp = dys[1], dys[2]
  local g
  if dloss then
    g = m.mul(node.outputs[2], shape.expand_dims(dloss, 1)) -- [B] -> [B, 1], B known or not
  end
  if dbp then
    local s = nn.softmax(logits, -1)
    local gb = m.mul(s, m.sub(dbp, reduce.reduce_sum(m.mul(dbp, s), -1, true)))
    g = g and m.add(g, gb) or gb
  end
  return nil, g
end)

return {}
