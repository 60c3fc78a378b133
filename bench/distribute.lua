-- bench/distribute.lua — step time of the Fashion-MNIST MLP (784-256-128-10,
-- Adam, global batch 128) under MultiWorkerMirroredStrategy; run by hand:
--   build/tide bench/distribute.lua                     (1 worker)
--   mpirun -np 2 build/tide bench/distribute.lua        (2 workers; as root add --allow-run-as-root)
-- Prints (chief), over STEPS steps after warm-up, for the step eager and
-- traced (tide.trace: the gradients' all-reduce is one graph node):
--   distribute_mlp_step_<mode>_<N>w: <median> ms
--   distribute_mpi_calls_per_step_<mode>_<N>w: <collectives per step> calls
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
local function step(xb, yb)
  local tape = tide.GradientTape()
  local loss = tape:run(function() return dist.compute_average_loss(loss_fn(yb, model(xb)), GLOBAL) end)
  opt:apply(tape:gradient(loss, vars), vars)
end
for _, mode in ipairs { "eager", "traced" } do
  local fn = mode == "traced" and tide.trace(step) or step
  local times, calls = {}, 0
  for i = 1, WARMUP + STEPS do
    dist.barrier()
    local c0 = dist.collective_calls()
    local t0 = now_ns()
    strategy:run(fn, { x, y })
    local t1 = now_ns()
    if i > WARMUP then
      times[#times + 1] = tonumber(t1 - t0) / 1e6
      calls = calls + dist.collective_calls() - c0
    end
  end
  table.sort(times)
  if strategy.is_chief then
    print(string.format("distribute_mlp_step_%s_%dw: %.3f ms", mode, n, times[math.floor((#times + 1) / 2)]))
    print(string.format("distribute_mpi_calls_per_step_%s_%dw: %.2f calls", mode, n, calls / STEPS))
  end
end
