-- stdlib/tide/data/stages/take_while.lua — ds:take_while(pred): the elements
-- up to the first pred refuses, as TF 2.21's (Lua engine only; pred traced when it can be).
--
-- As filter's, the predicate gets a list element's items as separate
-- arguments; traced (data/map_fn.lua), its graph runs from the Lua reader.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local stage = require "tide.data.stage"
local lua_engine = require "tide.data.lua_engine"

local UNKNOWN = stage.UNKNOWN

-- ds:take_while(pred): the elements up to (not with) the first for which pred is false.
local function take_while(self, pred)
  stage.check_fn("take_while", pred)
  local ds = stage.derive(self, "take_while", { fn = pred })
  ds.card = UNKNOWN -- TF 2.21: unknown, even over an infinite input
  local compiled, why = map_fn.trace(pred, "take_while", self.template, self.specs)
  if compiled then
    local s = compiled.out_specs
    if #s ~= 1 or s[1].dtype ~= "bool" or (s[1].shape and #s[1].shape ~= 0) then
      binding.error(string.format("take_while: the predicate must return one bool scalar, it returns %s",
        #s == 1 and tostring(s[1]) or (#s .. " values")))
    end
    ds.compiled = compiled
  elseif not structure.holds_datasets(self.specs) then
    map_fn.note_fallback("take_while", pred, why)
  end
  return ds
end

local s = {}

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local index, done = 0, false
  local function finish()
    done = true
    if close then close(); close = nil end
  end
  return function()
    if done then return nil end
    local flat = nextf()
    if flat == nil then finish(); return nil end
    local i = index
    index = index + 1
    local keep = lua_engine.predicate("take_while", ds, flat, i)
    if not keep then finish(); return nil end
    return flat
  end, function() if close then close() end end
end

return { methods = { take_while = take_while }, stages = { take_while = s } }
