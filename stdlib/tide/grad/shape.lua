-- stdlib/tide/grad/shape.lua — gradients of the view and shape ops: each
-- moves the output gradient back into the input's layout.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local shape = require "tide.ops.shape"

local reg = grad.register

-- reshape, squeeze, expand_dims: the same elements in the input's shape
-- (with None dims, its shape when the graph runs).
local function back_to_input_shape(node, dys)
  return util.reshape_like(dys[1], node.inputs[1])
end
reg("reshape", back_to_input_shape)
reg("squeeze", back_to_input_shape)
reg("expand_dims", back_to_input_shape)

-- transpose: the inverse permutation (the reverse of all dims is its own;
-- a perm names the rank even when the input's is unknown).
reg("transpose", function(node, dys)
  local a, nd = node.attrs, node.inputs[1].ndim
  local perm = {}
  if a.nints == 0 then
    return shape.transpose(dys[1])
  else
    nd = a.nints
    for i = 0, nd - 1 do
      local p = tonumber(a.ints[i])
      perm[i + 1] = p < 0 and p + nd or p
    end
  end
  local inverse = {}
  for i, p in ipairs(perm) do inverse[p + 1] = i - 1 end
  return shape.transpose(dys[1], inverse)
end)

-- broadcast_to: sum over the broadcast dims.
reg("broadcast_to", function(node, dys)
  return util.unbroadcast(dys[1], node.inputs[1])
end)

-- sum_to (the gradients' unbroadcast with None dims): its transpose, broadcast_to.
reg("sum_to", function(node, dys)
  return util.broadcast_like(dys[1], node.inputs[1])
end)

return {}
