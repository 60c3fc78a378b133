-- stdlib/tide/data/stages/enumerate.lua — ds:enumerate(start): elements
-- {i, element}; in C TF's own form, a zip with a counting range.
local binding = require "tide.binding"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C
local TensorSpec = spec.TensorSpec
local DTYPE_INT64 = require("tide.dtype").codes.int64

-- ds:enumerate(start=0): elements {i, element} with i an int64 scalar.
local function enumerate(self, start)
  start = stage.count_arg("enumerate", "start", start or 0)
  local ds = stage.derive(self, "enumerate", { start = start })
  ds.template = structure.list_of({ { kind = "tensor", index = 1 }, self.template })
  ds.specs = { TensorSpec({}, "int64") }
  for _, s in ipairs(self.specs) do ds.specs[#ds.specs + 1] = s end
  ds.card = self:cardinality()
  return ds
end

local s = { copyable = true }

function s.c(ds, input) -- zip{range(start, int64 max), ds}
  local counter = C.tide_dataset_range(ds.start, 9223372036854775807LL, 1, DTYPE_INT64)
  if counter == nil then binding.raise() end
  local h = C.tide_dataset_zip(2, ffi.new("tide_dataset *[2]", counter, input))
  C.tide_dataset_free(counter) -- the zip holds it
  return h
end

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local i = ds.start
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    local out = { convert.tensor(i, "int64", "enumerate") }
    i = i + 1
    for _, x in ipairs(flat) do out[#out + 1] = x end
    return out
  end, close
end

return { methods = { enumerate = enumerate }, stages = { enumerate = s } }
