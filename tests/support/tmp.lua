-- tests/support/tmp.lua — temporary files and folders for specs, one home for making
-- and removing them (folders are /tmp/tide_<tag>_XXXXXX, and remove touches nothing else).
--   local tmp = require "tmp"
--   local dir = tmp.dir("checkpoint")        ...   tmp.remove(dir)
--   local tmpdir, remove_all = tmp.dirs("summary"); teardown(remove_all)
--   local path = tmp.name(".csv")            -- a fresh path; the spec makes and removes the file
-- Whatever a spec made here and did not remove (it failed before its
-- teardown, say) goes when the spec file ends: tests/run_busted.lua calls
-- tmp.remove_made() whether the file passed or failed.
local M = {}

-- Paths handed out and not yet removed, in order.
local made = {}

local function quote(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

-- A new, empty folder /tmp/tide_<tag>_XXXXXX.
function M.dir(tag)
  local p = io.popen("mktemp -d /tmp/tide_" .. (tag or "spec") .. "_XXXXXX")
  local dir = p:read("*l")
  p:close()
  assert(dir and #dir > 0, "mktemp failed")
  made[#made + 1] = dir
  return dir
end

-- Remove what dir or name gave, a folder with all it holds or a file
-- (nothing outside /tmp/tide_* and os.tmpname's /tmp/lua_*).
function M.remove(path)
  if path and (path:match("^/tmp/tide_") or path:match("^/tmp/lua_")) then os.execute("rm -rf " .. quote(path)) end
  for i = #made, 1, -1 do
    if made[i] == path then table.remove(made, i) end
  end
end

-- Remove every folder and file this module handed out and the spec did not
-- remove (run_busted.lua's last step), in one rm; returns how many paths were left.
function M.remove_made()
  local quoted = {}
  for _, p in ipairs(made) do
    if p:match("^/tmp/tide_") or p:match("^/tmp/lua_") then quoted[#quoted + 1] = quote(p) end
  end
  if #quoted > 0 then os.execute("rm -rf " .. table.concat(quoted, " ")) end
  local n = #made
  made = {}
  return n
end

-- dirs(tag) -> make, remove_all: make() gives a new folder (tmp.dir(tag))
-- and remembers it; remove_all() removes every one made so far (a teardown).
function M.dirs(tag)
  local made = {}
  local function make()
    local d = M.dir(tag)
    made[#made + 1] = d
    return d
  end
  local function remove_all()
    for _, d in ipairs(made) do M.remove(d) end
    made = {}
  end
  return make, remove_all
end

-- A fresh path in /tmp that nothing holds (os.tmpname's, freed again),
-- with suffix appended; the spec makes and removes what goes there.
function M.name(suffix)
  local p = os.tmpname()
  os.remove(p)
  made[#made + 1] = p .. (suffix or "")
  return p .. (suffix or "")
end

-- A fresh path (tmp.name(suffix)) holding text; the spec removes it.
function M.file(text, suffix)
  local path = M.name(suffix)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

return M
