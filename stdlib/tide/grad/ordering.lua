-- stdlib/tide/grad/ordering.lua — gradients of the index-driven ops: gather and
-- scatter_add (each other's transpose), sort and top_k values (the gradient
-- goes back to where each value came from).
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local scatter = require "tide.ops.scatter"
local binding = require "tide.binding"
local C = binding.C

local reg = grad.register

-- gather: dy added into zeros shaped like params at the gathered positions
-- (TF returns IndexedSlices for axis 0; tide's gradients are dense tensors).
-- Repeated indices accumulate. Indices get none.
reg("gather", function(node, dys)
  local params, indices = node.inputs[1], node.inputs[2]
  local a = node.attrs
  return scatter.scatter_add(create.zeros_like(params), indices, dys[1], { axis = a.axis, batch_dims = tonumber(a.n) })
end)

-- scatter_add: base passes dy through; updates read dy back at their indices.
reg("scatter_add", function(node, dys, needs)
  local a = node.attrs
  local dy = dys[1]
  if not util.needs(needs, node.inputs[3]) then return dy end
  return dy, nil, shape.gather(dy, node.inputs[2], { axis = a.axis, batch_dims = tonumber(a.n) })
end)

-- dy's values scattered along the last axis of zeros shaped like x, at the
-- positions idx (an int tensor shaped like dy) says they came from.
local function scatter_last(x, idx, dy)
  local nd = x.ndim
  if nd < 0 then -- an unknown rank: counted from the end (batch_dims from indices' rank, axis from x's)
    return scatter.scatter_add(create.zeros_like(x), idx, dy, { axis = -1, batch_dims = -1 })
  end
  return scatter.scatter_add(create.zeros_like(x), idx, dy, { axis = nd - 1, batch_dims = nd - 1 })
end

-- top_k values: scattered back into zeros along the last axis (TF's _TopKGrad).
-- The indices output gets no gradient (it is int32).
reg("top_k", function(node, dys)
  if dys[1] == nil then return nil end
  return scatter_last(node.inputs[1], node.outputs[2], dys[1])
end)

-- sort: dy goes back through the sorting permutation, which argsort gives
-- (both sorts are stable, so ties map as the forward sort placed them). TF
-- sorts with top_k and inherits its gradient; this is the same map. A sort
-- along another axis moves that axis last and back (transpose views).
reg("sort", function(node, dys)
  local x, dy = node.inputs[1], dys[1]
  local a = node.attrs
  local nd = x.ndim
  if nd == 0 then return dy end
  local dir = bit.band(a.flags, C.TIDE_ATTR_DESCENDING) ~= 0 and "DESCENDING" or "ASCENDING"
  if nd < 0 then
    if a.axis ~= -1 then
      util.error("GradientTape:gradient: sort's gradient along an axis other than -1 moves that axis last, " ..
        "which needs the input's rank while tracing; it is unknown (a TensorSpec of shape nil)")
    end
    return scatter_last(x, reduce.argsort(x, -1, dir), dy)
  end
  local ax = a.axis < 0 and a.axis + nd or a.axis
  local perm = reduce.argsort(x, ax, dir)
  if ax == nd - 1 then return scatter_last(x, perm, dy) end
  local swap = {}
  for d = 1, nd do swap[d] = d - 1 end
  swap[ax + 1], swap[nd] = nd - 1, ax
  local g = scatter_last(shape.transpose(x, swap), shape.transpose(perm, swap), shape.transpose(dy, swap))
  return shape.transpose(g, swap)
end)

return {}
