-- tests/sh/distribute_resume.lua — model:fit with BackupAndRestore under
-- MultiWorkerMirroredStrategy, for tests/sh/test_distribute_resume.sh (run under mpirun -np 2).
--   build/tide tests/sh/distribute_resume.lua OUT BACKUP_DIR [KILL_MARK]
-- 192 samples, global batches of 32 (6 steps an epoch), shuffled, dropout,
-- Adam, 4 epochs, backed up at every epoch's end. With KILL_MARK, worker 1
-- writes its process id to KILL_MARK at epoch 2's step 3 and waits there to
-- be SIGKILLed (mid-epoch, after epoch 1's backup). Every worker writes its
-- final weights to OUT.rank<K> (one per line, %.9g) and the epochs it ran to OUT.epochs<K>.
local tide = require "tide"
local ffi = require "ffi"
local L = tide.layers
local dist = tide.distribute

ffi.cdef [[ int getpid(void); unsigned int sleep(unsigned int s); ]]

local out, backup_dir, kill_mark = arg[1], arg[2], arg[3]
local N, FEATURES, CLASSES = 192, 12, 3
local strategy = dist.MultiWorkerMirroredStrategy { timeout = 60 }
local rank = strategy.worker_index

local x, y = {}, {}
for g = 1, N do
  local row = {}
  for f = 1, FEATURES do row[f] = math.sin(g * 0.71 + f * 0.9) + 0.05 * math.cos(g * f) end
  x[g], y[g] = row, (g * 5 + math.floor(2 * (row[2] + 1.5))) % CLASSES
end
x, y = tide.tensor(x, "float32"), tide.tensor(y, "int32")

tide.random.set_seed(300 + rank) -- different initial weights on every worker (the chief's win)
local model = strategy:scope(function()
  local m = tide.Sequential {
    tide.Input { shape = { FEATURES } },
    L.Dense { 16, activation = "relu" },
    L.Dropout { 0.2 },
    L.Dense { CLASSES },
  }
  m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 },
              loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true } }
  return m
end)

local Killed = tide.callbacks.Callback:extend("Killed")
function Killed:on_epoch_begin(e) self.epoch = e end
function Killed:on_train_batch_end(s)
  if kill_mark and rank == 1 and self.epoch == 2 and s == 3 then
    local f = assert(io.open(kill_mark .. ".tmp", "w"))
    f:write(ffi.C.getpid(), "\n")
    f:close()
    assert(os.rename(kill_mark .. ".tmp", kill_mark))
    ffi.C.sleep(60) -- SIGKILLed here
    error("worker 1 was not killed")
  end
end

local history = model:fit(x, y, { batch_size = 32, epochs = 4, shuffle = true, verbose = 0,
  callbacks = { tide.callbacks.BackupAndRestore { backup_dir = backup_dir }, Killed() } })
local f = assert(io.open(out .. ".rank" .. rank, "w"))
for _, v in ipairs(model.trainable_weights) do
  for _, w in ipairs(tide.reshape(v:read_value(), { -1 }):totable()) do f:write(string.format("%.9g\n", w)) end
end
f:close()
f = assert(io.open(out .. ".epochs" .. rank, "w"))
f:write(table.concat(history.epoch, " "), "\n")
f:close()
