-- stdlib/tide/file.lua — questions about paths that plain Lua answers: whether one
-- exists, whether it is a folder (io.open, no libtide call needed).
local M = {}

-- True when path names something that exists (a file or a folder).
function M.exists(path)
  local f = io.open(path, "rb")
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
