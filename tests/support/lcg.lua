-- tests/support/lcg.lua — the specs' deterministic pseudo-random step, the same
-- on every machine: s -> (s * 1103515245 + 12345) mod 2^31, as the specs have
-- always drawn it, with the product rounded on its own.
--   local lcg_step = require "lcg"; s = lcg_step(s) -- a whole number in [0, 2^31)
-- s * 1103515245 passes 2^53, so it is rounded. x86 rounds the product,
-- then the sum; arm64 LuaJIT's compiled code fuses the two into one
-- multiply-add with one rounding, so its values drifted from its own
-- interpreter's (178 of 200 weights differed). math.floor between the two
-- (exact on the whole-number product) stops the fusion: the values are x86's
-- everywhere, so no spec's numbers change.
return function(s)
  return (math.floor(s * 1103515245) + 12345) % 2147483648
end
