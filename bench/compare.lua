-- bench/compare.lua FILE_TIDE FILE_PEER PEER [FILE_PEER PEER ...] — prints
-- tide's lines, each followed by every peer's figure for the same name and
-- tide's speed ratio to it (above 1: tide is faster):
--   add_1: 0.08 us  | torch 0.71 us 8.9x | jax 8.5 us 106x
-- For times (us, ms) and memory (MiB) lower is better; for rates (GB/s,
-- GFLOP/s) and accuracies higher is.
-- A missing or empty peer file adds nothing (that peer did not run).
local tide_file = arg[1]

local function read(path)
  local out, order = {}, {}
  local f = path and io.open(path)
  if not f then return out, order end
  for line in f:lines() do
    local name, value, unit = line:match("^([%w_%.]+): ([%d%.eE+-]+) (.+)$")
    if name then
      out[name] = { value = tonumber(value), unit = unit }
      order[#order + 1] = name
    end
  end
  f:close()
  return out, order
end

local mine, order = read(tide_file)
local peers = {}
for i = 2, #arg, 2 do
  peers[#peers + 1] = { name = arg[i + 1] or "peer", lines = read(arg[i]) }
end

-- Times (us, ms, us/op ...) and memory (MiB) are better lower; rates (GB/s,
-- img/s) and accuracies higher.
local LOWER_UNITS = { us = true, ms = true, s = true, ns = true, MiB = true }
local function lower_better(unit) return LOWER_UNITS[unit:match("^[^/]+")] == true end

for _, name in ipairs(order) do
  local m = mine[name]
  local line = string.format("%s: %.4g %s", name, m.value, m.unit)
  for _, p in ipairs(peers) do
    local t = p.lines[name]
    if t and t.unit == m.unit and t.value > 0 and m.value > 0 then
      local ratio = lower_better(m.unit) and t.value / m.value or m.value / t.value
      line = line .. string.format("  | %s %.4g %s, tide %.2fx", p.name, t.value, t.unit, ratio)
    end
  end
  print(line)
end
