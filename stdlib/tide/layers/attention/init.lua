-- stdlib/tide/layers/attention/init.lua — the attention family of tide.layers: EinsumDense,
-- MultiHeadAttention, GroupQueryAttention (GroupedQueryAttention), Attention, AdditiveAttention.
local M = {}
for _, file in ipairs {
  require "tide.layers.attention.einsum_dense", -- EinsumDense
  require "tide.layers.attention.multi_head",   -- MultiHeadAttention, GroupQueryAttention
  require "tide.layers.attention.dot",          -- Attention, AdditiveAttention
} do
  for name, value in pairs(file) do M[name] = value end
end
return M
