-- tests/support/data_engines.lua — a data spec's cases run under both data
-- engines, so that C and Lua are held to the same answers (the TF fixtures' specs).
--   local engines = require "data_engines"
--   engines.each(function(engine) it("case", ...) end)
-- declares body's cases twice, in a describe named after each engine: "[C
-- engine]" runs every pass as tide chooses (in C wherever each stage can run
-- there) and "[Lua engine]" forces the Lua engine on every pass
-- (data/lua_engine.lua's force: the sources only C reads are still read by C).
-- engine.lua is true in the second. Build datasets inside the cases: the
-- switch is on while a case of the Lua engine runs (before_each/after_each).
local lua_engine = require "tide.data.lua_engine"

local M = {}

M.ENGINES = { { name = "C engine", lua = false }, { name = "Lua engine", lua = true } }

function M.each(body)
  local b = getfenv(2) -- busted's describe and hooks live in the calling spec's environment
  for _, engine in ipairs(M.ENGINES) do
    b.describe("[" .. engine.name .. "]", function()
      local prev
      b.before_each(function() prev = lua_engine.force(engine.lua) end)
      b.after_each(function() lua_engine.force(prev) end)
      body(engine)
    end)
  end
end

-- fn() with the Lua engine forced (lua = true) or not; the switch is restored on every way out.
function M.with(lua, fn, ...)
  local prev = lua_engine.force(lua)
  local res = { pcall(fn, ...) }
  lua_engine.force(prev)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, table.maxn(res))
end

return M
