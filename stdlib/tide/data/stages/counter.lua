-- stdlib/tide/data/stages/counter.lua — Dataset.counter (start, start + step, ... without end, TF's) and
-- Dataset.random (seeded int64 draws in [0, 2^32), as TF's range of values): C via tide_dataset_range (and map).
local binding = require "tide.binding"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"
local dtype = require "tide.dtype"
local stage = require "tide.data.stage"
local tide_random = require "tide.random"
local shape_ops = require "tide.ops.shape"

local C = binding.C
local TensorSpec = spec.TensorSpec
local INT64_MAX, INT64_MIN = 9223372036854775807LL, -9223372036854775807LL - 1

-- Dataset.counter(start=0, step=1, dtype="int64"): an endless count (TF's cardinality INFINITE).
local function counter(start, step, dt)
  if type(start) == "table" and not binding.istensor(start) then -- counter{start=, step=, dtype=}
    local o = stage.options("counter", { "start", "step", "dtype" }, start)
    start, step, dt = o.start, o.step, o.dtype
  end
  start = stage.count_arg("counter", "start", start or 0)
  step = stage.count_arg("counter", "step", step or 1)
  dt = dt or "int64"
  if dt ~= "int64" and dt ~= "int32" then binding.error("counter: dtype must be int64 or int32, got " .. tostring(dt)) end
  if dt == "int32" and (start < -2 ^ 31 or start >= 2 ^ 31) then
    binding.error("counter: start " .. start .. " does not fit int32")
  end
  return stage.new { kind = "counter", start = start, step = step, dt = dt, card = stage.INFINITE,
    template = { kind = "tensor", index = 1 }, specs = { TensorSpec({}, dt) } }
end

local s = { copyable = true }

-- C: a range to the end of int64 (TF's counter is range(start, max, step) too); int32 wraps as TF's cast.
function s.c(ds)
  return C.tide_dataset_range(ds.start, ds.step >= 0 and INT64_MAX or INT64_MIN, ds.step, dtype.codes[ds.dt])
end

function s.lua(ds)
  local v = ds.start
  return function()
    local t = convert.tensor(v, ds.dt, "counter")
    v = v + ds.step
    if ds.dt == "int32" and (v >= 2 ^ 31 or v < -2 ^ 31) then v = (v + 2 ^ 31) % 2 ^ 32 - 2 ^ 31 end
    return { t }
  end
end

-- Dataset.random(seed=None, rerandomize_each_iteration=None): endless int64 scalars drawn uniformly from
-- [0, 2^32) (TF's range), from tide's Philox stream keyed by the seed (a seed gives the same numbers on
-- every pass and run; TF's own numbers differ). No seed: one drawn from tide's global stream.
local function random(seed, rerandomize)
  if type(seed) == "table" and not binding.istensor(seed) then
    local o = stage.options("random", { "seed", "rerandomize_each_iteration", "name" }, seed)
    seed, rerandomize = o.seed, o.rerandomize_each_iteration
  end
  if rerandomize then
    binding.error("random: rerandomize_each_iteration = true is not supported (each pass repeats the seed's " ..
      "numbers); draw a new Dataset.random(seed) per epoch")
  end
  seed = stage.draw_seed(seed, "random") % 2 ^ 53
  local key = convert.tensor(seed, "int64", "random")
  local ds = counter(0, 1, "int64"):map(function(i)
    return tide_random.stateless_uniform({}, shape_ops.stack { key, i }, { minval = 0, maxval = 4294967296,
      dtype = "int64" })
  end)
  ds.card = stage.INFINITE
  return ds
end

return { methods = { counter = counter, random = random }, stages = { counter = s } }
