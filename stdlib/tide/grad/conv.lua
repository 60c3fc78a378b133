-- stdlib/tide/grad/conv.lua — gradients of convolutions and pooling (TF's
-- nn_grad.py): each backprop op is linear, so its own gradient is another conv op.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local nn = require "tide.ops.nn_conv"
local raw, ops = nn.raw, nn.raw.ops
local dims = util.dims

local reg = grad.register

-- The dims of t that a backprop op produces (its attrs carry them): known
-- while tracing, or an error naming the op.
local function produced(op, t, what)
  local d = dims(t)
  if not util.all_known(d) then
    util.error(string.format("GradientTape:gradient: %s's gradient gives %s the shape it has while tracing, and " ..
      "%s has unknown dims or an unknown rank (shape %s); give them in the input_signature", op, what, what,
      tostring(t.shape)))
  end
  return d
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
-- TF differentiates MaxPoolGrad with MaxPoolGradGrad; tide has no such op yet.
reg("max_pool2d_grad", function()
  util.error("GradientTape:gradient: the second-order gradient of max_pool2d is not supported")
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
