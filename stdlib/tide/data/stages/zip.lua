-- stdlib/tide/data/stages/zip.lua — Dataset.zip: the elements of several
-- datasets side by side, until the shortest ends (C: tide_dataset_zip).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"
local nest = require "tide.nest"

local ffi, C = binding.ffi, binding.C
local INFINITE, UNKNOWN = stage.INFINITE, stage.UNKNOWN

-- Dataset.zip{a, b, ...} (or a map {name = ds}): elements side by side,
-- until the shortest ends.
local function zip(datasets, ...)
  if stage.is_dataset(datasets) then datasets = { datasets, ... } end
  if type(datasets) ~= "table" then binding.error("zip: expected a list or map of datasets, got " .. type(datasets)) end
  local list, keys = {}, nil
  if #datasets > 0 then
    for i = 1, #datasets do list[i] = stage.check_dataset("zip", datasets[i]) end
  else
    keys = nest.sorted_keys(datasets) -- tide.nest's order, as elements are flattened in
    if #keys == 0 then binding.error("zip: expected at least one dataset") end
    for i, k in ipairs(keys) do list[i] = stage.check_dataset("zip", datasets[k]) end
  end
  local templates, specs, card = {}, {}, nil
  for i, d in ipairs(list) do
    templates[i] = d.template
    for _, s in ipairs(d.specs) do specs[#specs + 1] = s end
    local c = d:cardinality()
    if card == nil then card = c
    elseif c == UNKNOWN or card == UNKNOWN then card = (c == INFINITE and card) or (card == INFINITE and c) or UNKNOWN
    elseif c ~= INFINITE then card = (card == INFINITE) and c or math.min(card, c) end
  end
  local template = structure.list_of(templates)
  if keys then template = { kind = "map", keys = keys, items = template.items } end
  return stage.new { kind = "zip", inputs = list, template = template, specs = specs, card = card }
end

local s = { copyable = true }

function s.c(ds, _, handle)
  local n = #ds.inputs
  local arr = ffi.new("tide_dataset *[?]", n)
  for i, d in ipairs(ds.inputs) do arr[i - 1] = handle(d) end
  return C.tide_dataset_zip(n, arr)
end

function s.lua(ds, open)
  local its = {}
  for i, d in ipairs(ds.inputs) do
    local nextf, close = open(d)
    its[i] = { nextf = nextf, close = close }
  end
  local function close_all() for _, it in ipairs(its) do if it.close then it.close() end end end
  return function()
    local flat = {}
    for _, it in ipairs(its) do
      local e = it.nextf()
      if e == nil then close_all(); return nil end
      for _, x in ipairs(e) do flat[#flat + 1] = x end
    end
    return flat
  end, close_all
end

return { methods = { zip = zip }, stages = { zip = s } }
