-- stdlib/tide/data/stages/prefetch.lua — ds:prefetch(n): elements made ahead
-- by a C thread (C: tide_dataset_prefetch); above a Lua stage it passes through.
local binding = require "tide.binding"
local stage = require "tide.data.stage"

local C = binding.C

-- ds:prefetch(n or tide.data.AUTOTUNE): elements made ahead by a C thread.
local function prefetch(self, n)
  if n ~= stage.AUTOTUNE then n = stage.count_arg("prefetch", "buffer_size", n, 1) end
  local ds = stage.derive(self, "prefetch", { n = n })
  ds.card = self:cardinality()
  return ds
end

local s = { copyable = true }

function s.c(ds, input) return C.tide_dataset_prefetch(input, ds.n) end

-- Above a Lua stage there is no thread to run ahead: prefetch passes through.
function s.lua(ds, open) return open(ds.input) end

return { methods = { prefetch = prefetch }, stages = { prefetch = s } }
