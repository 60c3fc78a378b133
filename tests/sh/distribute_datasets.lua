-- tests/sh/distribute_datasets.lua — under mpirun -np 2 (tests/sh/test_distribute.sh):
-- which rows each worker's part of a distributed dataset holds, and the
-- datasets that would leave the workers different numbers of batches, refused;
-- fit's auto-shard policy (DATA: each worker its rows of every global
-- batch, whatever the size; FILE only with a file per worker).
local tide = require "tide"
local D = tide.distribute
local s = D.MultiWorkerMirroredStrategy()
assert(s.num_replicas_in_sync == 2, "run with mpirun -np 2")
local r = s.worker_index
local Dataset = tide.data.Dataset

local function rows(ds)
  local out = {}
  for b in ds:iter() do out[#out + 1] = table.concat(b:totable(), ",") end
  return table.concat(out, " ")
end
local function expect(want, got, what)
  if want ~= got then error(string.format("worker %d, %s: expected %s, got %s", r, what, want, got), 0) end
end
local function refuses(needle, fn)
  local ok, err = pcall(fn)
  if ok or not tostring(err):find(needle, 1, true) then
    error(string.format("worker %d: expected an error containing %q, got %s", r, needle, tostring(err)), 0)
  end
end

local twelve = Dataset.from_tensor_slices(tide.range(12))
expect(r == 0 and "0,1 4,5 8,9" or "2,3 6,7 10,11", rows(s:experimental_distribute_dataset(twelve:batch(4))), "12 in 4s")
local ten = Dataset.from_tensor_slices(tide.range(10))
expect(r == 0 and "0,1 4,5" or "2,3 6,7",
  rows(s:experimental_distribute_dataset(ten:batch(4, { drop_remainder = true }))), "10 in 4s, dropped")
expect(r == 0 and "0,1 4,5 8,9" or "2,3 6,7 10,11",
  rows(s:experimental_distribute_dataset(twelve:repeat_():batch(4)):take(3)), "repeated")
refuses("10 elements in global batches of 4 leave the workers different numbers of batches",
  function() s:experimental_distribute_dataset(ten:batch(4)) end)
refuses("does not split evenly over 2 workers", function() s:experimental_distribute_dataset(twelve:batch(3)) end)
refuses("must end with batch(global_batch_size) (it ends with prefetch)",
  function() s:experimental_distribute_dataset(twelve:batch(4):prefetch(1)) end)
refuses("the dataset's size is unknown", function()
  s:experimental_distribute_dataset(twelve:filter(function(x) return x:gt(1) end):batch(4))
end)
local ctx_rows = rows(s:distribute_datasets_from_function(function(ctx)
  return twelve:shard(ctx.num_input_pipelines, ctx.input_pipeline_id):batch(ctx:get_per_replica_batch_size(4))
end))
expect(r == 0 and "0,2 4,6 8,10" or "1,3 5,7 9,11", ctx_rows, "from a function")
-- fit's auto-shard: DATA through a trailing prefetch; FILE needs a file per worker at least
local data_ds, policy = D.auto_shard(s, twelve:batch(4):prefetch(1))
expect("DATA", policy, "policy of slices")
expect(r == 0 and "0,1 4,5 8,9" or "2,3 6,7 10,11", rows(data_ds), "auto-shard by data")
-- a short last batch splits as evenly as it can; one of fewer rows than workers is everyone's
expect(r == 0 and "0,1 4,5 8" or "2,3 6,7 9", rows((D.auto_shard(s, ten:batch(4)))), "10 in 4s by data")
expect(r == 0 and "0 3 6 9" or "1,2 4,5 7,8 10,11", rows((D.auto_shard(s, twelve:batch(3)))), "12 in 3s by data")
expect(r == 0 and "0,1 4,5 8" or "2,3 6,7 8", rows((D.auto_shard(s, Dataset.from_tensor_slices(tide.range(9)):batch(4)))),
  "a last batch of one row")
expect(r == 0 and "0 2" or "1 3", rows((D.auto_shard(s, twelve:filter(function(v) return v:lt(4) end):batch(2)))),
  "an unknown size")
local path = os.tmpname()
if r == 0 then
  local f = assert(io.open(path, "w"))
  f:write("a\nb\n")
  f:close()
end
D.barrier()
local _, one_file = D.auto_shard(s, tide.data.TextLineDataset(path):batch(2))
expect("DATA", one_file, "policy of one file for two workers")
D.barrier()
os.remove(path) -- each worker made one (os.tmpname)
print("worker " .. r .. ": ok")
