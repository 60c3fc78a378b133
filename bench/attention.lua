-- bench/attention.lua — attention: Keras's MultiHeadAttention forward and forward +
-- backward (gradients of every weight and the query) at issue 26's sizes (batch 32,
-- sequence 128, model 128, 4 heads of 32), traced (as fit runs it) and eager, and
-- tide.einsum in attention shapes ("bhqd,bhkd->bhqk" and back). The same work:
-- bench/attention_torch.py (nn.MultiheadAttention, torch.einsum).
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local median, emit = timing.measure, timing.emit

local B, T, D, H = 32, 128, 128, 4
tide.random.set_seed(0)
local L = tide.layers
local mha = L.MultiHeadAttention { num_heads = H, key_dim = D / H }
local x = tide.random.normal({ B, T, D })
mha(x, x) -- builds
local weights = mha.trainable_weights

local forward = tide.trace(function(q) return mha(q, q) end)
emit("mha_forward", median(function() return forward(x) end, 10) * 1e3, "ms")

-- one training step's attention work: the output, and the gradients of sum(output)
local function fwd_bwd(q)
  local tape = tide.GradientTape()
  local loss = tape:run(function()
    tape:watch(q)
    return tide.reduce_sum(mha(q, q, { training = true }))
  end)
  local sources = { q }
  for i, w in ipairs(weights) do sources[i + 1] = w end
  return unpack(tape:gradient(loss, sources))
end
local traced = tide.trace(fwd_bwd)
emit("mha_forward_backward", median(function() return traced(x) end, 5) * 1e3, "ms")
emit("mha_forward_backward_eager", median(function() return fwd_bwd(x) end, 5) * 1e3, "ms")

-- the einsums of attention: scores [B, H, T, T] and the weighted values [B, H, T, dh]
local q = tide.random.normal({ B, H, T, D / H })
local k = tide.random.normal({ B, H, T, D / H })
local p = tide.random.normal({ B, H, T, T })
emit("einsum_scores", median(function() return tide.einsum("bhqd,bhkd->bhqk", q, k) end, 20) * 1e3, "ms")
emit("einsum_context", median(function() return tide.einsum("bhqk,bhkd->bhqd", p, k) end, 20) * 1e3, "ms")
