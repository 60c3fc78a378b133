-- tests/sh/distribute_mlp.lua — one training run of a small MLP under
-- MultiWorkerMirroredStrategy, for tests/sh/test_distribute.sh (run alone and under mpirun -np 2).
--   build/tide tests/sh/distribute_mlp.lua OUT [STEPS [dataset | traced]]
-- Each worker takes its slice of every global batch of 64 rows (by hand, or
-- with "dataset" through strategy:experimental_distribute_dataset; with
-- "traced" the step is a tide.trace function, its all-reduce a graph node); every worker
-- seeds its initializers differently, so equal weights need the chief's
-- broadcast. The chief writes the final weights to OUT (one value per line,
-- %.9g), worker k to OUT.rankK, and the chief prints "step_ms: <median over the steps after the first>"
-- and "mpi_calls_per_step: <collectives per step>".
local tide = require "tide"
local L = tide.layers
local dist = tide.distribute

local out, steps, use_dataset, traced = arg[1], tonumber(arg[2] or "30"), arg[3] == "dataset", arg[3] == "traced"
local GLOBAL_BATCH, FEATURES, CLASSES = 64, 20, 4

local strategy = dist.MultiWorkerMirroredStrategy()
local n, rank = strategy.num_replicas_in_sync, strategy.worker_index
assert(GLOBAL_BATCH % n == 0, "the global batch must split evenly over the workers")
local local_batch = GLOBAL_BATCH / n

tide.random.set_seed(100 + rank) -- different on every worker: only the broadcast makes them equal

local model, optimizer = strategy:scope(function()
  local m = tide.Sequential {
    tide.Input { shape = { FEATURES } },
    L.Dense { 32, activation = "relu" },
    L.Dense { 16, activation = "tanh" },
    L.Dense { CLASSES },
  }
  return m, tide.optimizers.SGD { learning_rate = 0.1, momentum = 0.9 }
end)
local vars = model.trainable_weights
local loss_fn = tide.losses.SparseCategoricalCrossentropy { from_logits = true, reduction = "none" }

-- Global batch `step`, rows [first, first + count): the same numbers whoever computes them.
local function batch(step, first, count)
  local x, y = {}, {}
  for r = 1, count do
    local row, g = {}, (step * GLOBAL_BATCH + first + r - 1)
    for f = 1, FEATURES do row[f] = math.sin(g * 0.37 + f * 1.3) + 0.1 * math.cos(g * f) end
    x[r] = row
    y[r] = (g * 7 + math.floor(3 * (row[1] + 1.5))) % CLASSES
  end
  return tide.tensor(x, "float32"), tide.tensor(y, "int32")
end

local function step_fn(x, y)
  local tape = tide.GradientTape()
  local loss = tape:run(function()
    return dist.compute_average_loss(loss_fn(y, model(x)), GLOBAL_BATCH)
  end)
  optimizer:apply(tape:gradient(loss, vars), vars)
  return loss
end

local run_step = traced and tide.trace(step_fn) or step_fn

-- With "dataset": the global batches as a dataset, each worker iterating its part.
local next_batch
if use_dataset then
  local x, y = batch(0, 0, steps * GLOBAL_BATCH)
  local ds = tide.data.Dataset.from_tensor_slices({ x, y }):batch(GLOBAL_BATCH)
  local it = strategy:experimental_distribute_dataset(ds):iter()
  next_batch = function() return it() end
else
  local s = -1
  next_batch = function() s = s + 1; return batch(s, rank * local_batch, local_batch) end
end

local now_ns = require("tide.binding").C.tide_profiler_now_ns -- CLOCK_MONOTONIC
local times = {}
local calls0
for s = 0, steps - 1 do
  if s == 1 then calls0 = dist.collective_calls() end
  local x, y = next_batch()
  assert(x.shape[1] == local_batch, "each worker gets its part of the global batch")
  local ns0 = now_ns()
  strategy:run(run_step, { x, y })
  local ns1 = now_ns()
  if s > 0 then times[#times + 1] = tonumber(ns1 - ns0) / 1e6 end
end

do
  local f = assert(io.open(strategy.is_chief and out or (out .. ".rank" .. rank), "w"))
  for _, v in ipairs(vars) do
    local flat = tide.reshape(v:read_value(), { -1 }):totable()
    for _, x in ipairs(flat) do f:write(string.format("%.9g\n", x)) end
  end
  f:close()
end
if strategy.is_chief then
  table.sort(times)
  if #times > 0 then print(string.format("step_ms: %.3f", times[math.floor((#times + 1) / 2)])) end
  if calls0 and steps > 1 then
    print(string.format("mpi_calls_per_step: %.2f", (dist.collective_calls() - calls0) / (steps - 1)))
  end
end
