-- stdlib/tide/grad/nn_conv.lua — gradients of convolutions and pooling (TF's
-- nn_grad.py): each backprop op is linear, so its own gradient is another conv op.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local nn = require "tide.ops.nn_conv"
local create = require "tide.ops.create"
local raw, ops = nn.raw, nn.raw.ops

local reg = grad.register

-- t as the shape a backprop op produces (its attrs carry t's dims; None
-- dims are read when the graph runs): its rank must be known while tracing.
local function produced(op, t, what)
  if t.ndim < 0 then
    util.error(string.format("GradientTape:gradient: %s's gradient needs the rank of its %s while tracing, and " ..
      "the %s has an unknown rank; give its rank in the input_signature", op, what, what))
  end
  return t
end

-- conv (x, w) -> y and its two backprop ops, for conv2d and for depthwise.
-- dx = bp_input(dy, w), dw = bp_filter(x, dy); bp_input(dy, w) is linear in
-- each argument: d/d dy = conv(g, w), d/dw = bp_filter(g, dy); likewise
-- bp_filter(x, dy): d/dx = bp_input(dy, g), d/d dy = conv(x, g) (TF's
-- _Conv2DBackpropInputGrad and _Conv2DBackpropFilterGrad).
-- Only the gradients the tape needs are run (a first layer's input gradient is not).
local function conv_family(fwd, bp_input, bp_filter)
  reg(fwd, function(node, dys, needs)
    local x, w, g = node.inputs[1], node.inputs[2], dys[1]
    return util.needs(needs, x) and raw.run(ops[bp_input], node.attrs, { g, w }, produced(fwd, x, "input")) or nil,
      util.needs(needs, w) and raw.run(ops[bp_filter], node.attrs, { x, g }, produced(fwd, w, "filters")) or nil
  end)
  reg(bp_input, function(node, dys, needs)
    local dy, w, g = node.inputs[1], node.inputs[2], dys[1]
    return util.needs(needs, dy) and raw.run(ops[fwd], node.attrs, { g, w }) or nil,
      util.needs(needs, w) and raw.run(ops[bp_filter], node.attrs, { g, dy }, produced(bp_input, w, "filters")) or nil
  end)
  reg(bp_filter, function(node, dys, needs)
    local x, dy, g = node.inputs[1], node.inputs[2], dys[1]
    return util.needs(needs, x) and raw.run(ops[bp_input], node.attrs, { dy, g }, produced(bp_filter, x, "input")) or nil,
      util.needs(needs, dy) and raw.run(ops[fwd], node.attrs, { x, g }) or nil
  end)
end
conv_family("conv2d", "conv2d_backprop_input", "conv2d_backprop_filter")
conv_family("depthwise_conv2d", "depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter")

-- max_pool2d: the gradient goes to each window's maximum (the first one in
-- row-major order on ties, as TF's CPU kernel picks it).
reg("max_pool2d", function(node, dys)
  return raw.run(ops.max_pool2d_grad, node.attrs, { node.inputs[1], node.outputs[1], dys[1] })
end)
-- max_pool2d_grad(x, y, dy) is linear in dy: its gradient there is
-- max_pool2d_grad_grad, which reads each window's maximum where the first
-- order wrote it (one argmax rule in C, so the two agree on ties). In x it is
-- piecewise constant: zeros, as TF's _MaxPoolGradGrad gives; y is not read.
reg("max_pool2d_grad", function(node, dys, needs)
  local x, y, dy = node.inputs[1], node.inputs[2], node.inputs[3]
  return util.needs(needs, x) and create.zeros_like(x) or nil, nil,
    util.needs(needs, dy) and raw.run(ops.max_pool2d_grad_grad, node.attrs, { x, y, dys[1] }) or nil
end)
-- max_pool2d_grad_grad(x, y, g) is linear in g, the transpose of
-- max_pool2d_grad in dy: its gradient there is max_pool2d_grad again.
reg("max_pool2d_grad_grad", function(node, dys, needs)
  local x, y, g = node.inputs[1], node.inputs[2], node.inputs[3]
  return util.needs(needs, x) and create.zeros_like(x) or nil, nil,
    util.needs(needs, g) and raw.run(ops.max_pool2d_grad, node.attrs, { x, y, dys[1] }) or nil
end)

-- avg_pool2d: each input gets dy / (the window's element count) from each window
-- covering it; avg_pool2d_grad is linear in dy and its gradient is avg_pool2d.
reg("avg_pool2d", function(node, dys)
  return raw.run(ops.avg_pool2d_grad, node.attrs, { node.inputs[1], dys[1] })
end)
reg("avg_pool2d_grad", function(node, dys)
  return nil, raw.run(ops.avg_pool2d, node.attrs, { dys[1] })
end)

return {}
