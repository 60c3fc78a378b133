-- stdlib/tide/file.lua — questions about paths: whether one exists, whether it
-- is a folder (a FIFO or a device is never opened, so never waited on).
local binding = require "tide.binding"

local M = {}

-- True when path names something that exists (a file or a folder). A FIFO
-- or a device counts as missing: binding.open_file refuses it at once.
function M.exists(path)
  if M.is_dir(path) then return true end
  local f = binding.open_file(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- True when path is a folder.
function M.is_dir(path)
  local f = io.open(path .. "/.", "rb")
  if f then f:close() end
  return f ~= nil
end

return M
