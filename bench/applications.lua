-- bench/applications.lua — keras.applications inference: ResNet50 and MobileNetV2 at
-- 224x224, batch 1 and 8, `model:predict_on_batch` (tide.trace'd, inference mode), in ms per
-- batch (wall medians, and the process's CPU time per batch), random weights (the speed does not depend on them); bench/applications_peers.py
-- times Keras 3 on TensorFlow the same way. Threads: TIDE_NUM_THREADS (bench/run.sh sets it).
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

local A = tide.applications
local ONLY = os.getenv("APPS_BENCH_ONLY") -- e.g. "resnet50" to time one model
local RUNS = tonumber(os.getenv("APPS_BENCH_RUNS") or "5") -- timed runs per figure (the median is kept)

for _, spec in ipairs {
  { "resnet50", function() return A.ResNet50 {} end },
  { "mobilenet_v2", function() return A.MobileNetV2 {} end },
} do
  if not ONLY or ONLY == spec[1] then
    local model = spec[2]()
    for _, batch in ipairs { 1, 8 } do
      local x = tide.random.uniform({ batch, 224, 224, 3 }, { seed = 1 })
      local iters = batch == 1 and 2 or 1
      local cpu, calls = os.clock(), 0
      local s = timing.measure(function()
        calls = calls + 1
        return model:predict_on_batch(x)
      end, iters, RUNS)
      cpu = (os.clock() - cpu) / calls
      timing.emit(string.format("%s_224_b%d", spec[1], batch), s * 1e3, "ms")
      -- the process's CPU time per batch (all threads; the mean over the calls, warm-up included):
      -- on a machine shared with other work, what the wall time cannot show
      timing.emit(string.format("%s_224_b%d_cpu", spec[1], batch), cpu * 1e3, "ms")
    end
  end
end
