-- stdlib/tide/data/stages/filter.lua — ds:filter(pred): the elements pred
-- keeps; traced, a graph C runs (C: tide_dataset_filter), else called in Lua.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local stage = require "tide.data.stage"
local lua_engine = require "tide.data.lua_engine"

local C = binding.C
local INFINITE, UNKNOWN = stage.INFINITE, stage.UNKNOWN

-- ds:filter(pred): the elements for which pred gives true (a bool scalar).
local function filter(self, pred)
  if type(pred) ~= "function" then binding.error("filter: expected a function, got " .. type(pred)) end
  local ds = stage.derive(self, "filter", { fn = pred })
  local c = self:cardinality()
  ds.card = c == INFINITE and INFINITE or UNKNOWN
  local compiled, why = map_fn.trace(pred, "filter", self.template, self.specs)
  if compiled then
    local s = compiled.out_specs
    if #s ~= 1 or s[1].dtype ~= "bool" or (s[1].shape and #s[1].shape ~= 0) then
      binding.error(string.format("filter: the predicate must return one bool scalar, it returns %s",
        tostring(s[1])))
    end
    ds.compiled = compiled
  else
    if not structure.holds_datasets(self.specs) then map_fn.note_fallback("filter", pred, why) end
  end
  return ds
end

local s = { copyable = true }

function s.in_c(ds) return ds.compiled ~= nil end -- an untraced predicate runs in Lua

function s.c(ds, input) return C.tide_dataset_filter(input, ds.compiled.graph) end

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local index = 0
  return function()
    while true do
      local flat = nextf()
      if flat == nil then return nil end
      local i = index
      index = index + 1
      if lua_engine.predicate("filter", ds, flat, i) then return flat end
    end
  end, close
end

return { methods = { filter = filter }, stages = { filter = s } }
