-- stdlib/tide/debugging/init.lua — tide.debugging (tf.debugging): the face that hands on the
-- check-numerics switch, the assertions (eager and traced) and gradient_health.
--   check_numerics.lua   enable_check_numerics, disable_check_numerics, check_numerics_enabled
--   assertions.lua       assert_positive, assert_equal, check_numerics, assert_rank, assert_shapes, ...
--   gradient_health.lua  per-layer gradient norms, logged and checked
local check_numerics = require "tide.debugging.check_numerics"
local assertions = require "tide.debugging.assertions"

local M = {}

for k, f in pairs(check_numerics) do M[k] = f end
for k, f in pairs(assertions) do M[k] = f end

-- gradient_health(grads, vars_or_model, opts): per-layer gradient norms,
-- logged and checked (tide.debugging.gradient_health's file has the rule).
M.gradient_health = require("tide.debugging.gradient_health").gradient_health

return M
