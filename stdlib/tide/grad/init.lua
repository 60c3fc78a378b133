-- stdlib/tide/grad/init.lua — gradients of the registry's ops, by op code.
-- Each is fn(node, dys, needs) -> one gradient per input (nil where none
-- flows), written with tide ops so that it is itself recorded and
-- differentiable. node: { op, attrs (a copy of the op's tide_attrs), inputs,
-- outputs }. needs[input] is true for the inputs whose gradient the tape
-- uses (nil: all): a fn may skip the others' work (a constant's gradient).
local binding = require "tide.binding"
local registry = require "tide.grad.registry"
local ffi, C = binding.ffi, binding.C

local M = { register = registry.register }
local fns = registry.fns

-- The gradients of a recorded node's inputs, given its outputs' gradients
-- (dys[k] is nil where an output got none) and the inputs that need one.
function M.backward(node, dys, needs)
  if node.grad_fn then return node.grad_fn(dys, needs) end -- (a custom node may skip unneeded work too)
  local fn = fns[node.op]
  if not fn then
    binding.error("GradientTape:gradient: no gradient is defined for op '" .. ffi.string(C.tide_op_name(node.op)) .. "'")
  end
  return fn(node, dys, needs)
end

-- The families register themselves when loaded: grad/X.lua holds the
-- gradients of the ops whose Lua functions ops/X.lua (or X.lua) defines
-- (tests/spec/ops/registry_spec.lua checks the mirror).
require "tide.grad.math"
require "tide.grad.activations"
require "tide.grad.reduce"
require "tide.grad.shape"
require "tide.grad.tensor"
require "tide.grad.update"
require "tide.grad.scatter"
require "tide.grad.linalg"
require "tide.grad.linalg_decomp"
require "tide.grad.nn"
require "tide.grad.ctc_loss"
require "tide.grad.nn_conv"
require "tide.grad.index"
require "tide.grad.segment"
require "tide.grad.image"
require "tide.grad.special"

return M
