-- stdlib/tide/ops/linalg.lua — linear algebra: matmul (numpy batch broadcasting,
-- 1-D operands as vectors, transpose flags). tide.linalg.* is filled from here.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local bit = require "bit"
local C, Tensor = binding.C, binding.Tensor
local istype = binding.ffi.istype

local M = {}

local MATMUL = C.TIDE_OP_MATMUL

-- matmul(a, b, transpose_a=false, transpose_b=false) as tf.linalg.matmul:
-- the product of the last two dims, batch dims broadcast; a 1-D operand is a
-- vector whose dim leaves the result (numpy). adjoint_a/adjoint_b are the same
-- as transposes here (no complex dtypes). A Lua table takes the other's dtype.
function M.matmul(a, b, ...)
  local o = args.parse("matmul", { "transpose_a", "transpose_b", "adjoint_a", "adjoint_b" }, ...)
  if a == nil or b == nil then binding.error("matmul: expects two operands a and b") end
  if not istype(Tensor, a) then a = convert.coerce(a, b, "matmul", 1) end
  if not istype(Tensor, b) then b = convert.coerce(b, a, "matmul", 2) end
  local ta = args.bool("matmul", "transpose_a", o.transpose_a, false)
    or args.bool("matmul", "adjoint_a", o.adjoint_a, false)
  local tb = args.bool("matmul", "transpose_b", o.transpose_b, false)
    or args.bool("matmul", "adjoint_b", o.adjoint_b, false)
  local at = dispatch.attrs()
  at.flags = bit.bor(ta and C.TIDE_ATTR_TRANSPOSE_A or 0, tb and C.TIDE_ATTR_TRANSPOSE_B or 0)
  return dispatch.run(MATMUL, at, { a, b })
end

return M
