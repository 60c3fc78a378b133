-- stdlib/tide/ops/bitwise.lua — tide.bitwise.* as tf.bitwise: and, or, xor,
-- invert and the shifts on integer tensors (a Lua number takes their dtype).
local M = {}

-- bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift: the
-- registry's plain ops of tide.ops.plain's family "bitwise". Shift counts
-- outside [0, bits) are clamped into it, as TF's CPU kernels do:
-- left_shift(1, 40) on int32 is 1 << 31; right_shift(-8, 99) is -1.
require("tide.ops.plain").define("bitwise", M)

return M
