-- stdlib/tide/grad/index.lua — gradients of the n-d index ops: gather_nd and
-- tensor_scatter_nd_add/update, each the other's transpose (TF's array_grad.py).
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local index = require "tide.ops.index"
local create = require "tide.ops.create"

local reg = grad.register

-- gather_nd: dy added into zeros shaped like params at the gathered slices
-- (TF: scatter_nd into params' shape; repeated indices accumulate). Indices get none.
reg("gather_nd", function(node, dys)
  local params, indices = node.inputs[1], node.inputs[2]
  return index.tensor_scatter_nd_add(create.zeros_like(params), indices, dys[1], { batch_dims = tonumber(node.attrs.n) })
end)

-- tensor_scatter_nd_add: tensor passes dy through; updates read dy back at their indices.
reg("tensor_scatter_nd_add", function(node, dys, needs)
  local dy = dys[1]
  if not util.needs(needs, node.inputs[3]) then return dy end
  return dy, nil, index.gather_nd(dy, node.inputs[2], { batch_dims = tonumber(node.attrs.n) })
end)

-- tensor_scatter_nd_update: the replaced elements of tensor get no gradient
-- (dy with zeros written there); updates read dy at their indices (every one
-- of repeated indices, as TF, though only the last was kept).
reg("tensor_scatter_nd_update", function(node, dys, needs)
  local dy, indices, updates = dys[1], node.inputs[2], node.inputs[3]
  local bd = { batch_dims = tonumber(node.attrs.n) }
  local dt = util.needs(needs, node.inputs[1])
    and index.tensor_scatter_nd_update(dy, indices, create.zeros_like(updates), bd) or nil
  local du = util.needs(needs, updates) and index.gather_nd(dy, indices, bd) or nil
  return dt, nil, du
end)

return {}
