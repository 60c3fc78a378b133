-- bench/distribute_collectives.lua — the latency of one collective between
-- workers: all-reduce of 1, 1k and 1M float32, broadcast of 1k, barrier;
-- run by hand under mpirun (as root add --allow-run-as-root, --oversubscribe past the cores):
--   mpirun -np 2 build/tide bench/distribute_collectives.lua
-- Prints "dist_<what>: <median> us" (chief) over REPS calls after warm-up.
local tide = require "tide"
local dist = tide.distribute
local now_ns = require("tide.binding").C.tide_profiler_now_ns

local REPS = tonumber(os.getenv("REPS") or "300")
local n = dist.num_workers()
local function bench(name, fn, reps)
  local times = {}
  for i = 1, 10 + reps do
    local t0 = now_ns()
    fn()
    local t1 = now_ns()
    if i > 10 then times[#times + 1] = tonumber(t1 - t0) / 1e3 end
  end
  table.sort(times)
  if dist.worker_index() == 0 then
    print(string.format("dist_%s_%dw: %.1f us", name, n, times[math.floor((#times + 1) / 2)]))
  end
end
for _, size in ipairs { 1, 1000, 1000000 } do
  local x = tide.ones { size }
  bench("all_reduce_" .. size, function() dist.all_reduce_sum(x) end, size >= 1000000 and math.ceil(REPS / 10) or REPS)
end
local y = tide.ones { 1000 }
bench("broadcast_1000", function() dist.broadcast(y, 0) end, REPS)
bench("barrier", function() dist.barrier() end, REPS)
