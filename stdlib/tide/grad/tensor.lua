-- stdlib/tide/grad/tensor.lua — the gradient of slice, the op of the tensor's
-- indexing (x[i], x:slice{...} in tensor.lua; split and unstack slice too).
local grad = require "tide.grad.registry"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local create = require "tide.ops.create"

local reg = grad.register
local SLICE_UPDATE = binding.C.TIDE_OP_SLICE_UPDATE

-- slice (x[i], x:slice{...}, and so split and unstack): dy written into
-- zeros of x's shape at the slice (TF's StridedSliceGrad). tide.newaxis
-- entries are expand_dims nodes of their own, so dy has the slice's shape.
reg("slice", function(node, dys)
  return dispatch.run(SLICE_UPDATE, node.attrs, { create.zeros_like(node.inputs[1]), dys[1] })
end)

return {}
