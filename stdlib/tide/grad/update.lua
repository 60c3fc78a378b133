-- stdlib/tide/grad/update.lua — the gradient of slice_update (ops/update.lua),
-- which reuses the node's own slice attributes.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local create = require "tide.ops.create"
local C = binding.C

local reg = grad.register
local SLICE, SLICE_UPDATE = C.TIDE_OP_SLICE, C.TIDE_OP_SLICE_UPDATE

-- slice_update(x, update): x's gradient is dy with the slice zeroed (those
-- elements were overwritten); update's is dy's slice.
reg("slice_update", function(node, dys, needs)
  local dy, x, u = dys[1], node.inputs[1], node.inputs[2]
  local dx = util.needs(needs, x) and dispatch.run(SLICE_UPDATE, node.attrs, { dy, create.zeros_like(u) }) or nil
  return dx, util.needs(needs, u) and dispatch.run_view(SLICE, node.attrs, dy) or nil
end)

return {}
