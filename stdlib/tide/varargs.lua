-- stdlib/tide/varargs.lua — packing a call's arguments or results with their count
-- (Lua 5.2's table.pack, which LuaJIT 2.1 lacks), so trailing nils survive the round trip.
local M = {}

local select, unpack = select, unpack

-- pack(...) -> { n = select("#", ...), ... }: the values and their count.
function M.pack(...) return { n = select("#", ...), ... } end

-- unpack(t) -> the values of a packed table, nils included (t[1] .. t[t.n]).
function M.unpack(t) return unpack(t, 1, t.n) end

return M
