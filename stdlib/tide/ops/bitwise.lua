-- stdlib/tide/ops/bitwise.lua — tide.bitwise.* as tf.bitwise: and, or, xor,
-- invert and the shifts on integer tensors (a Lua number takes their dtype).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local C = binding.C

local M = {}

for name, op in pairs {
  bitwise_and = C.TIDE_OP_BITWISE_AND, bitwise_or = C.TIDE_OP_BITWISE_OR, bitwise_xor = C.TIDE_OP_BITWISE_XOR,
  -- Shift counts outside [0, bits) are clamped into it, as TF's CPU kernels
  -- do: left_shift(1, 40) on int32 is 1 << 31; right_shift(-8, 99) is -1.
  left_shift = C.TIDE_OP_LEFT_SHIFT, right_shift = C.TIDE_OP_RIGHT_SHIFT,
} do
  M[name] = dispatch.binary(name, op)
end
M.invert = dispatch.unary("invert", C.TIDE_OP_INVERT)

return M
