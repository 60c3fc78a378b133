-- stdlib/tide/data/stages/take.lua — ds:take(n): the first n elements
-- (C: tide_dataset_take).
local binding = require "tide.binding"
local stage = require "tide.data.stage"

local C = binding.C
local INFINITE, UNKNOWN = stage.INFINITE, stage.UNKNOWN

-- ds:take(n): the first n elements (n = -1: all).
local function take(self, n)
  n = stage.count_arg("take", "count", n, -1)
  local ds = stage.derive(self, "take", { count = n })
  local c = self:cardinality()
  if n < 0 then ds.card = c
  elseif c == INFINITE then ds.card = n
  elseif c == UNKNOWN then ds.card = UNKNOWN
  else ds.card = math.min(c, n) end
  return ds
end

local s = { copyable = true }

function s.c(ds, input) return C.tide_dataset_take(input, ds.count) end

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local seen = 0
  return function()
    if ds.count >= 0 and seen >= ds.count then
      if close then close(); close = nil end -- stop reading the input (a cache above learns it was partial)
      return nil
    end
    local flat = nextf()
    if flat ~= nil then seen = seen + 1 end
    return flat
  end, function() if close then close() end end
end

return { methods = { take = take }, stages = { take = s } }
