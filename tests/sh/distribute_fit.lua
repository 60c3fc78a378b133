-- tests/sh/distribute_fit.lua — model:fit under MultiWorkerMirroredStrategy,
-- for tests/sh/test_distribute.sh (run alone and under mpirun -np 2).
--   build/tide tests/sh/distribute_fit.lua OUT DIR [MODE [MUTATION]]
-- MODE "tensors" (default): 201 samples, global batches of 64 (the last, of
-- 9, splits 4/5), shuffled, 2 epochs, a CSVLogger writing DIR/log<rank>.csv.
-- MODE "dataset": the same samples as a tide.data.Dataset shuffled with a
-- seed and batched by 64 (the last batch of 9 too), which fit shards by data.
-- MODE "files": the samples' indices written by the chief to 4 text files
-- in DIR, read back with TextLineDataset and parsed in map: fit shards by
-- file; each worker also writes the lines its shard holds to OUT.ids<K>.
-- MODE "eager": "tensors" with run_eagerly.
-- MUTATION "no_all_reduce": gradients are not summed over the workers;
-- "local_metrics": the metrics are each worker's own (the checks must fail).
-- Every worker writes its final weights to OUT.rank<K> (one per line, %.9g),
-- its last epoch's loss and accuracy to OUT.loss<K> and OUT.acc<K>, and how
-- the step ran ("traced" or "eager") and the shard policy to OUT.info<K>.
local tide = require "tide"
local L = tide.layers
local dist = tide.distribute

local out, dir, mode, mutation = arg[1], arg[2], arg[3] or "tensors", arg[4]
local N, FEATURES, CLASSES = 201, 12, 3
local strategy = dist.MultiWorkerMirroredStrategy()
local rank = strategy.worker_index

if mutation == "no_all_reduce" then
  require("tide.optimizers.optimizer").aggregate_gradients = function(gs) return gs end
elseif mutation == "local_metrics" then
  require("tide.models.compile").global_results = nil
elseif mutation then
  error("unknown mutation " .. mutation)
end

-- Sample g's features and label, from g as a float32 tensor (so that a map
-- function computes them in the pipeline as the tensors below do).
local function features(g)
  local cols = {}
  for f = 1, FEATURES do cols[f] = tide.sin(g * 0.71 + f * 0.9) + tide.cos(g * (f * 0.37)) * 0.05 end
  return tide.stack(cols, -1)
end
local function label(g, x0) return tide.cast(tide.floormod(g * 5 + tide.floor((x0 + 1.5) * 2), CLASSES), "int32") end

local gs = tide.cast(tide.range(N), "float32")
local x = features(gs)
local y = label(gs, x:slice { {}, { 1, 2 } }:reshape { -1 })

tide.random.set_seed(200 + rank) -- different initial weights on every worker (the chief's win)
local model = strategy:scope(function()
  local m = tide.Sequential {
    tide.Input { shape = { FEATURES } },
    L.Dense { 16, activation = "relu" },
    L.Dense { CLASSES },
  }
  m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 },
              loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" },
              run_eagerly = mode == "eager" }
  return m
end)

local history, policy = nil, "none"
local callbacks = { tide.callbacks.CSVLogger(dir .. "/log" .. rank .. ".csv") }
if mode == "tensors" or mode == "eager" then
  history = model:fit(x, y, { batch_size = 64, epochs = 2, shuffle = true, verbose = 0, callbacks = callbacks })
elseif mode == "dataset" then
  local ds = tide.data.Dataset.from_tensor_slices({ x, y }):shuffle(256, { seed = 7 }):batch(64):prefetch(2)
  local _
  _, policy = dist.auto_shard(strategy, ds)
  history = model:fit(ds, { epochs = 2, verbose = 0, callbacks = callbacks })
elseif mode == "files" then
  local names = {}
  for k = 1, 4 do names[k] = string.format("%s/part%d.txt", dir, k) end
  if strategy.is_chief then
    local fs = {}
    for k = 1, 4 do fs[k] = assert(io.open(names[k], "w")) end
    for g = 0, N - 1 do fs[g % 4 + 1]:write(g, "\n") end
    for k = 1, 4 do fs[k]:close() end
  end
  dist.barrier() -- the files exist for every worker
  local ds = tide.data.TextLineDataset(names):map(function(line)
    local g = tide.strings.to_number(line, { out_type = "float32" })
    local xf = features(g)
    return xf, label(g, xf:slice { { 0, 1 } }:reshape {})
  end):batch(4) -- 2 per worker: 51 and 50 batches, so fit's workers must agree when one runs out
  local _
  _, policy = dist.auto_shard(strategy, ds)
  local seen = assert(io.open(out .. ".ids" .. rank, "w"))
  local raw = dist.auto_shard(strategy, tide.data.TextLineDataset(names):batch(16))
  for lines in raw:iter() do
    for _, s in ipairs(lines:totable()) do seen:write(s, "\n") end
  end
  seen:close()
  history = model:fit(ds, { epochs = 2, verbose = 0, callbacks = callbacks })
else
  error("unknown mode " .. mode)
end

local function write(path, lines)
  local f = assert(io.open(path, "w"))
  for _, l in ipairs(lines) do f:write(l, "\n") end
  f:close()
end
local weights = {}
for _, v in ipairs(model.trainable_weights) do
  for _, w in ipairs(tide.reshape(v:read_value(), { -1 }):totable()) do weights[#weights + 1] = string.format("%.9g", w) end
end
write(out .. ".rank" .. rank, weights)
write(out .. ".loss" .. rank, { string.format("%.9g", history.history.loss[1]), string.format("%.9g", history.history.loss[2]) })
write(out .. ".acc" .. rank, { string.format("%.9g", history.history.accuracy[1]), string.format("%.9g", history.history.accuracy[2]) })
write(out .. ".info" .. rank, { type(rawget(model, "train_function")) == "function" and "eager" or "traced", policy })
