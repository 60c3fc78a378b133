-- bench/distribute.lua — step time of the Fashion-MNIST MLP (784-256-128-10,
-- Adam, global batch 128) under MultiWorkerMirroredStrategy; run by hand:
--   build/tide bench/distribute.lua                     (1 worker)
--   mpirun -np 2 build/tide bench/distribute.lua        (2 workers; as root add --allow-run-as-root)
-- Prints "distribute_mlp_step_<N>w: <median> ms" (chief) over STEPS steps after warm-up.
local tide = require "tide"
local L = tide.layers
local dist = tide.distribute
local now_ns = require("tide.binding").C.tide_profiler_now_ns

local GLOBAL, STEPS, WARMUP = 128, tonumber(os.getenv("STEPS") or "60"), 5
local strategy = dist.MultiWorkerMirroredStrategy()
local n, rank = strategy.num_replicas_in_sync, strategy.worker_index
local b = GLOBAL / n
tide.random.set_seed(1)
local model, opt = strategy:scope(function()
  return tide.Sequential { tide.Input { shape = { 784 } }, L.Dense { 256, activation = "relu" },
                           L.Dense { 128, activation = "relu" }, L.Dense { 10 } },
         tide.optimizers.Adam { learning_rate = 1e-3 }
end)
local vars = model.trainable_weights
local loss_fn = tide.losses.SparseCategoricalCrossentropy { from_logits = true, reduction = "none" }
local x = tide.random.uniform { b, 784 }
local y = tide.cast(tide.random.uniform({ b }, { maxval = 10 }), "int32")
local function step()
  local tape = tide.GradientTape()
  local loss = tape:run(function() return dist.compute_average_loss(loss_fn(y, model(x)), GLOBAL) end)
  opt:apply(tape:gradient(loss, vars), vars)
end
local times = {}
for i = 1, WARMUP + STEPS do
  dist.barrier()
  local t0 = now_ns()
  strategy:run(step)
  local t1 = now_ns()
  if i > WARMUP then times[#times + 1] = tonumber(t1 - t0) / 1e6 end
end
table.sort(times)
if strategy.is_chief then
  print(string.format("distribute_mlp_step_%dw: %.3f ms", n, times[math.floor((#times + 1) / 2)]))
end
