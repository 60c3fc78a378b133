-- stdlib/tide/data/stages/repeat.lua — ds:repeat_(count): count passes over
-- ds (C: tide_dataset_repeat). `repeat` is a Lua keyword.
local binding = require "tide.binding"
local stage = require "tide.data.stage"

local C = binding.C
local INFINITE = stage.INFINITE

-- ds:repeat_(count): count passes (nil or -1: forever).
local function repeat_(self, count)
  if count == nil then count = -1 end
  count = stage.count_arg("repeat_", "count", count, -1)
  local ds = stage.derive(self, "repeat", { count = count })
  local c = self:cardinality()
  if count < 0 then ds.card = (c == 0) and 0 or INFINITE
  elseif c < 0 then ds.card = (count == 0) and 0 or c
  else ds.card = c * count end
  return ds
end

local s = { copyable = true }

function s.c(ds, input) return C.tide_dataset_repeat(input, ds.count) end

function s.lua(ds, open)
  local nextf, close, epoch, in_epoch = nil, nil, 0, 0
  return function()
    while true do
      if nextf == nil then
        if ds.count >= 0 and epoch >= ds.count then return nil end
        nextf, close = open(ds.input)
        epoch, in_epoch = epoch + 1, 0
      end
      local flat = nextf()
      if flat ~= nil then in_epoch = in_epoch + 1; return flat end
      nextf = nil
      if in_epoch == 0 then return nil end
    end
  end, function() if close then close() end end
end

return { methods = { repeat_ = repeat_ }, stages = { ["repeat"] = s } }
