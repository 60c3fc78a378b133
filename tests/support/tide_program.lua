-- tests/support/tide_program.lua — for specs that run the built tide program: its
-- path, shell quoting, files, a private temporary folder, and shell runs
-- that capture exit status, stdout and stderr.
require "tide" -- sets package.loaded["tide.host"]
local tmp = require "tmp"

local M = {}

M.build = package.loaded["tide.host"].lib:match("^(.*)/[^/]*$")
M.path = M.build .. "/tide"

function M.quote(s)
  return "'" .. tostring(s):gsub("'", [['\'']]) .. "'"
end

-- The file's bytes, or nil when it cannot be opened.
function M.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

function M.write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- A new folder /tmp/tide_<tag>_XXXXXX, and removing one (nothing else): tests/support/tmp.lua's.
M.make_tmpdir, M.remove_tmpdir = tmp.dir, tmp.remove

-- Run a shell command line with stdin_text as its input, through files in
-- dir; returns exit status, stdout, stderr.
function M.sh(dir, cmdline, stdin_text)
  local input = dir .. "/stdin.txt"
  M.write_file(input, stdin_text or "")
  local out, err = dir .. "/stdout.txt", dir .. "/stderr.txt"
  local p = io.popen("(" .. cmdline .. ") <" .. input .. " >" .. out .. " 2>" .. err .. "; echo $?")
  local rc = tonumber(p:read("*a"):match("%d+"))
  p:close()
  return rc, M.read_file(out) or "", M.read_file(err) or ""
end

return M
