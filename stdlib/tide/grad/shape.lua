-- stdlib/tide/grad/shape.lua — gradients of the view and shape ops: each
-- moves the output gradient back into the input's layout.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local shape = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"

local reg = grad.register

-- reshape, squeeze, expand_dims: the same elements in the input's shape.
local function back_to_input_shape(node, dys)
  local x = node.inputs[1]
  local d = util.dims(x)
  if not util.all_known(d) then d = dynamic_shape.shape(x) end -- None dims: sized at run time
  return shape.reshape(dys[1], d)
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

-- sum_to (x, like): dy broadcast back to x's shape (like gets none: only its shape is read).
reg("sum_to", function(node, dys)
  local x = node.inputs[1]
  local d = util.dims(x)
  if not util.all_known(d) then d = dynamic_shape.shape(x) end
  return shape.broadcast_to(dys[1], d), nil
end)

return {}
