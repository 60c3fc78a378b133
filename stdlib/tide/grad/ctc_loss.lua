-- stdlib/tide/grad/ctc_loss.lua — the gradient of ops/ctc_loss.lua's C op: the saved d loss / d logits scaled by each
-- sequence's output gradient (TF's _CTCLossGrad). TF defines no second derivative; neither does tide.
local binding = require "tide.binding"
local grad = require "tide.grad.registry"
local m = require "tide.ops.math"
local shape = require "tide.ops.shape"

-- ctc_loss (logits [T, B, K], labels, label_length, logit_length) -> loss [B], grad [T, B, K].
grad.register("ctc_loss", function(node, dys)
  if dys[2] then
    binding.error("ctc_loss: its gradient has no gradient (TF's CTC loss is not twice differentiable)")
  end
  local dloss = shape.expand_dims(shape.expand_dims(dys[1], 0), 2) -- [B] -> [1, B, 1], B known or not
  return m.mul(node.outputs[2], dloss), nil, nil, nil
end)

return {}
