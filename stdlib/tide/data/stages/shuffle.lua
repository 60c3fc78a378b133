-- stdlib/tide/data/stages/shuffle.lua — ds:shuffle(buffer_size): TF's
-- buffered shuffle, the same Philox draws in C (tide_dataset_shuffle) and in Lua.
local binding = require "tide.binding"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C

-- ds:shuffle(buffer_size, {seed=, reshuffle_each_iteration=true}).
local function shuffle(self, buffer, opts)
  buffer = stage.count_arg("shuffle", "buffer_size", buffer, 1)
  opts = stage.options("shuffle", { "seed", "reshuffle_each_iteration" }, opts)
  local reshuffle = opts.reshuffle_each_iteration
  if reshuffle == nil then reshuffle = true end
  local ds = stage.derive(self, "shuffle", { buffer = buffer, seed = stage.draw_seed(opts.seed, "shuffle"),
    reshuffle = reshuffle, passes = 0 })
  ds.seedless = opts.seed == nil -- inside interleave's function: each inner dataset would need a seed of its own
  ds.card = self:cardinality()
  return ds
end

local s = { copyable = true }

function s.c(ds, input) return C.tide_dataset_shuffle(input, ds.buffer, ds.seed, ds.reshuffle and 1 or 0) end

-- TF's shuffle, drawn as the C stage draws (the same order).
function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local pass = ds.passes
  ds.passes = ds.passes + 1
  local key = C.tide_random_derive_key(ds.seed, ds.reshuffle and pass or 0)
  local counter = 0ULL
  local r = ffi.new("uint32_t[4]")
  local buf, count, filled, in_done = {}, 0, false, false
  return function()
    while not filled do
      local flat = nextf()
      if flat == nil then in_done = true else count = count + 1; buf[count] = flat end
      if flat == nil or count == ds.buffer then filled = true end
    end
    if count == 0 then return nil end
    C.tide_philox4x32(key, counter, 0, r)
    counter = counter + 1
    local x = ffi.cast("uint64_t", r[1]) * 4294967296ULL + r[0]
    local i = tonumber(x % count) + 1
    local out = buf[i]
    if not in_done then
      local flat = nextf()
      if flat ~= nil then buf[i] = flat; return out end
      in_done = true
    end
    buf[i] = buf[count]
    buf[count] = nil
    count = count - 1
    return out
  end, close
end

return { methods = { shuffle = shuffle }, stages = { shuffle = s } }
