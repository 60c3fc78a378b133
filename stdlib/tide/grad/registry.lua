-- stdlib/tide/grad/registry.lua — the table of op gradients by op code; the
-- family files (grad/math.lua, ...) fill it through register().
local binding = require "tide.binding"
local C = binding.C

-- fns[code]: the gradient; files[code]: the source file that registered it
-- (tests/spec/ops/registry_spec.lua checks grad/X.lua mirrors ops/X.lua).
local M = { fns = {}, files = {} }

-- Register the gradient of the op named `name` (its registry name, e.g. "add").
function M.register(name, fn)
  local code = C.tide_op_lookup(name)
  if code < 0 then error("tide.grad: no op named '" .. name .. "'", 2) end
  M.fns[code] = fn
  M.files[code] = debug.getinfo(2, "S").source
end

return M
