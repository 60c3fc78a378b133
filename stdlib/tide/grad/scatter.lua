-- stdlib/tide/grad/scatter.lua — the gradient of scatter_add (ops/scatter.lua),
-- gather's transpose.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local shape = require "tide.ops.shape"

local reg = grad.register

-- scatter_add: base passes dy through; updates read dy back at their indices.
reg("scatter_add", function(node, dys, needs)
  local a = node.attrs
  local dy = dys[1]
  if not util.needs(needs, node.inputs[3]) then return dy end
  return dy, nil, shape.gather(dy, node.inputs[2], { axis = a.axis, batch_dims = tonumber(a.n) })
end)

return {}
