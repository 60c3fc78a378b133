-- stdlib/tide/data/stages/concatenate.lua — ds:concatenate(other): ds's
-- elements, then other's (C: tide_dataset_concatenate).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C
local INFINITE, UNKNOWN = stage.INFINITE, stage.UNKNOWN

-- ds:concatenate(other): ds's elements, then other's (same structure and dtypes).
local function concatenate(self, other)
  stage.no_datasets("concatenate", self)
  stage.no_datasets("concatenate", stage.check_dataset("concatenate", other))
  if not structure.same(self.template, other.template) then
    binding.error("concatenate: the datasets' elements have different structures")
  end
  local specs = {}
  for i, s in ipairs(self.specs) do specs[i] = structure.common_spec(s, other.specs[i], "concatenate") end
  local a, b = self:cardinality(), other:cardinality()
  local card
  if a == INFINITE or b == INFINITE then card = INFINITE
  elseif a == UNKNOWN or b == UNKNOWN then card = UNKNOWN
  else card = a + b end
  return stage.new { kind = "concatenate", inputs = { self, other },
    template = structure.common_template(self.template, other.template), specs = specs, card = card }
end

local s = { copyable = true }

function s.c(ds, _, handle)
  local n = #ds.inputs
  local arr = ffi.new("tide_dataset *[?]", n)
  for i, d in ipairs(ds.inputs) do arr[i - 1] = handle(d) end
  return C.tide_dataset_concatenate(n, arr)
end

function s.lua(ds, open)
  local which = 1
  local nextf, close = open(ds.inputs[1])
  return function()
    while true do
      local flat = nextf()
      if flat ~= nil then return flat end
      if which == 2 then return nil end
      which = 2
      nextf, close = open(ds.inputs[2])
    end
  end, function() if close then close() end end
end

return { methods = { concatenate = concatenate }, stages = { concatenate = s } }
