-- stdlib/tide/utils/io_utils.lua — keras.utils' interactive logging switches and print_msg, through which the
-- progress bar (fit, evaluate, predict, tide.utils.Progbar) and the folder datasets' counts are written.
local binding = require "tide.binding"

local M = {}

-- Keras keeps the switch per thread; tide's Lua state is one thread, so one flag.
local interactive = true

-- enable_interactive_logging(): messages go to stdout (the default).
function M.enable_interactive_logging() interactive = true end

-- disable_interactive_logging(): messages are dropped. Keras sends them to absl's logging.info, which shows
-- nothing unless absl's verbosity is raised; tide has no absl, so they go nowhere (docs/tf_differences.md).
function M.disable_interactive_logging() interactive = false end

-- is_interactive_logging_enabled(): the switch.
function M.is_interactive_logging_enabled() return interactive end

-- print_msg(message, line_break=true): written to stdout and flushed while interactive logging is on.
function M.print_msg(message, line_break)
  if type(message) ~= "string" then
    binding.error(string.format("print_msg: message must be a string, got %s", type(message)))
  end
  if not interactive then return end
  if line_break == nil or line_break then message = message .. "\n" end
  io.stdout:write(message)
  io.stdout:flush()
end

return M
