-- stdlib/tide/keras_mask.lua — Keras's masks (its `_keras_mask`): a bool
-- tensor riding along with a layer's output (Embedding{mask_zero=true},
-- Masking), passed to the next layer's call as opts.mask, and folded into
-- the loss and the metrics. tide's tensors are FFI cdata, which take no
-- fields, so the masks live in a table keyed weakly by the tensors.
local binding = require "tide.binding"

local istensor = binding.istensor
local M = {}

local masks = setmetatable({}, { __mode = "k" })

-- The mask riding with t (a tensor), or nil.
function M.get(t)
  if istensor(t) then return masks[t] end
  return nil
end

-- Let mask (a bool tensor, or nil) ride with tensor t.
function M.set(t, mask)
  if istensor(t) then masks[t] = mask end
end

-- The masks of inputs: a tensor's, or for a list a list of them (nil when
-- none has one).
function M.of(inputs)
  if istensor(inputs) then return masks[inputs] end
  if type(inputs) ~= "table" or getmetatable(inputs) ~= nil then return nil end
  local out, any = {}, false
  for i = 1, #inputs do -- (a hole where an input has none: callers index by input)
    out[i] = M.get(inputs[i])
    any = any or out[i] ~= nil
  end
  return any and out or nil
end

return M
