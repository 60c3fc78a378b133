-- tests/sh/distribute_fit.lua — model:fit under MultiWorkerMirroredStrategy,
-- for tests/sh/test_distribute.sh (run alone and under mpirun -np 2).
--   build/tide tests/sh/distribute_fit.lua OUT DIR
-- 201 samples, global batches of 64 (the last, of 9, splits 4/5), shuffled,
-- 2 epochs, a CSVLogger writing DIR/log<rank>.csv. Every worker writes its
-- final weights to OUT.rank<K> (one per line, %.9g) and its last epoch's loss to OUT.loss<K>.
local tide = require "tide"
local L = tide.layers
local dist = tide.distribute

local out, dir = arg[1], arg[2]
local N, FEATURES, CLASSES = 201, 12, 3
local strategy = dist.MultiWorkerMirroredStrategy()
local rank = strategy.worker_index

local x, y = {}, {}
for g = 1, N do
  local row = {}
  for f = 1, FEATURES do row[f] = math.sin(g * 0.71 + f * 0.9) + 0.05 * math.cos(g * f) end
  x[g], y[g] = row, (g * 5 + math.floor(2 * (row[2] + 1.5))) % CLASSES
end
x, y = tide.tensor(x, "float32"), tide.tensor(y, "int32")

tide.random.set_seed(200 + rank) -- different initial weights on every worker (the chief's win)
local model = strategy:scope(function()
  local m = tide.Sequential {
    tide.Input { shape = { FEATURES } },
    L.Dense { 16, activation = "relu" },
    L.Dense { CLASSES },
  }
  m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 },
              loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
  return m
end)
local history = model:fit(x, y, { batch_size = 64, epochs = 2, shuffle = true, verbose = 0,
                                  callbacks = { tide.callbacks.CSVLogger(dir .. "/log" .. rank .. ".csv") } })
local f = assert(io.open(out .. ".rank" .. rank, "w"))
for _, v in ipairs(model.trainable_weights) do
  for _, w in ipairs(tide.reshape(v:read_value(), { -1 }):totable()) do f:write(string.format("%.9g\n", w)) end
end
f:close()
f = assert(io.open(out .. ".loss" .. rank, "w"))
f:write(string.format("%.9g\n", history.history.loss[2]))
f:close()
