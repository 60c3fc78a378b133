-- stdlib/tide/data/stages/shard.lua — ds:shard(num_shards, index): every
-- num_shards-th element from index on (C: tide_dataset_shard).
local binding = require "tide.binding"
local stage = require "tide.data.stage"

local C = binding.C

-- ds:shard(num_shards, index): every num_shards-th element from index on.
local function shard(self, num, index)
  num = stage.count_arg("shard", "num_shards", num, 1)
  index = stage.count_arg("shard", "index", index, 0)
  if index >= num then
    binding.error(string.format("shard: index must be less than num_shards (%d), got %d", num, index))
  end
  local ds = stage.derive(self, "shard", { num = num, index = index })
  local c = self:cardinality()
  if c < 0 then ds.card = c
  else ds.card = math.floor(c / num) + ((index < c % num) and 1 or 0) end
  return ds
end

local s = { copyable = true }

function s.c(ds, input) return C.tide_dataset_shard(input, ds.num, ds.index) end

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local i = -1
  return function()
    while true do
      local flat = nextf()
      if flat == nil then return nil end
      i = i + 1
      if i % ds.num == ds.index then return flat end
    end
  end, close
end

return { methods = { shard = shard }, stages = { shard = s } }
