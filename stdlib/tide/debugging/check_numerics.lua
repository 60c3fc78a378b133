-- stdlib/tide/debugging/check_numerics.lua — the check-numerics switch
-- (tf.debugging.enable_check_numerics): every eager op and graph node checks its float results.
local binding = require "tide.binding"

local C = binding.C
local M = {}

-- From now on, the first eager op or graph node whose float result holds a
-- NaN or an infinity raises an error naming the op, its inputs' dtypes and
-- shapes, and the Lua line that ran it (eager) or recorded it (traced).
-- Functions traced while it is on are not fused, so every op is checked.
-- Process-wide (every thread's ops are checked): refused in a sandbox unless allowed.
function M.enable_check_numerics()
  binding.check_process_wide("enable_check_numerics")
  C.tide_set_check_numerics(1)
end
function M.disable_check_numerics()
  binding.check_process_wide("disable_check_numerics")
  C.tide_set_check_numerics(0)
end
function M.check_numerics_enabled() return C.tide_check_numerics_enabled() ~= 0 end

return M
