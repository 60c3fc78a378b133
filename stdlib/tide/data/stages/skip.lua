-- stdlib/tide/data/stages/skip.lua — ds:skip(n): all but the first n
-- elements (C: tide_dataset_skip).
local binding = require "tide.binding"
local stage = require "tide.data.stage"

local C = binding.C

-- ds:skip(n): all but the first n elements (n = -1: skip everything).
local function skip(self, n)
  n = stage.count_arg("skip", "count", n, -1)
  local ds = stage.derive(self, "skip", { count = n })
  local c = self:cardinality()
  if c < 0 then ds.card = c
  elseif n < 0 then ds.card = 0
  else ds.card = math.max(0, c - n) end
  return ds
end

local s = { copyable = true }

function s.c(ds, input) return C.tide_dataset_skip(input, ds.count) end

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local skipped = false
  return function()
    if not skipped then
      skipped = true
      local n = ds.count
      local i = 0
      while n < 0 or i < n do
        if nextf() == nil then return nil end
        i = i + 1
      end
    end
    return nextf()
  end, close
end

return { methods = { skip = skip }, stages = { skip = s } }
