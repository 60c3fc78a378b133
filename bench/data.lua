-- bench/data.lua — the input pipeline: Fashion-MNIST from_tensor_slices ->
-- shuffle(10000) -> map(scale to float32 [0,1], add a channel dim) ->
-- batch(128) -> prefetch, samples/s over whole epochs (median of 3) with
-- map parallel 1 and AUTOTUNE; and the share of a training epoch spent
-- waiting for input, with and without prefetch; and a TFRecord file of
-- Examples parsed in the pipeline (records/s); shard and unbatch in C and
-- in the Lua engine.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local D = tide.data.Dataset

local train = tide.datasets.fashion_mnist.load_data()
local x, y = train[1], train[2]
local n = x.shape[1]

local function scale(img, label) return img:cast("float32"):expand_dims(-1) / 255, label end

local function pipeline(parallel)
  return D.from_tensor_slices { x, y }:shuffle(10000, { seed = 1 }):map(scale, { parallel = parallel })
    :batch(128):prefetch(tide.data.AUTOTUNE)
end

-- Samples per second over one epoch, median of `runs`.
local function rate(ds, runs)
  local times = {}
  for r = 1, runs do
    collectgarbage()
    local t0 = timing.wall()
    local count = 0
    for a in ds:iter() do count = count + a.shape[1] end
    assert(count == n)
    times[r] = timing.wall() - t0
  end
  table.sort(times)
  return n / times[math.ceil(runs / 2)]
end

timing.emit("fmnist_pipeline_parallel1", rate(pipeline(1), 3), "samples/s")
timing.emit("fmnist_pipeline_autotune", rate(pipeline(tide.data.AUTOTUNE), 3), "samples/s")

-- shard and unbatch (kernels/data/split.c), samples/s, median of 3 epochs:
-- worker 0 of 2's half of the pipeline above (shard(2, 0) first), and the
-- pipeline with its images scaled in batches of 256, unbatched and batched
-- by 128 again (bench/data_peers.py runs both in tf.data). Every stage runs
-- in C; `_lua_engine` runs shard or unbatch and the stages above it in the
-- Lua engine (as before they had a C stage).
do
  local function lua_from(ds, kind) -- the Lua engine for ds's stages down to the first `kind`
    ds._c_ok = false
    if ds.kind ~= kind then lua_from(ds.input, kind) end
    return ds
  end
  local function rate_of(make, kind, want)
    local times = {}
    for r = 1, 3 do
      collectgarbage()
      local ds = make()
      if kind then lua_from(ds, kind) end
      local t0 = timing.wall()
      local count = 0
      for a in ds:iter() do count = count + a.shape[1] end
      assert(count == want, count)
      times[r] = timing.wall() - t0
    end
    table.sort(times)
    return want / times[2]
  end
  local function sharded()
    return D.from_tensor_slices { x, y }:shard(2, 0):shuffle(10000, { seed = 1 })
      :map(scale, { parallel = tide.data.AUTOTUNE }):batch(128):prefetch(tide.data.AUTOTUNE)
  end
  local function unbatched()
    return D.from_tensor_slices { x, y }:batch(256):map(scale, { parallel = tide.data.AUTOTUNE }):unbatch()
      :batch(128):prefetch(tide.data.AUTOTUNE)
  end
  timing.emit("fmnist_shard2", rate_of(sharded, nil, n / 2), "samples/s")
  timing.emit("fmnist_shard2_lua_engine", rate_of(sharded, "shard", n / 2), "samples/s")
  timing.emit("fmnist_unbatch", rate_of(unbatched, nil, n), "samples/s")
  timing.emit("fmnist_unbatch_lua_engine", rate_of(unbatched, "unbatch", n), "samples/s")
end

-- TFRecords: the first 20,000 images as tf.train.Examples (the raw image
-- bytes, an int64 label) in one file, which bench/data_peers.py reads too
-- (DATA_BENCH_RECORDS; bench/run.sh puts it in its scratch folder), parsed
-- by a traced map on the pipeline's threads: record by record
-- (parse_single_example, parallel 1 and AUTOTUNE) and batch by batch
-- (batch(128) then parse_example), records/s, median of 3 passes.
do
  local ffi = require "ffi"
  local path = os.getenv("DATA_BENCH_RECORDS") or "/tmp/tide_data_bench.tfrecord"
  local nrec = 20000
  local xs, ys = ffi.cast("const char *", x:contiguous().data), ffi.cast("const uint8_t *", y:contiguous().data)
  local w = tide.io.TFRecordWriter(path)
  for i = 0, nrec - 1 do
    w:write(tide.io.serialize_example { image = { bytes_list = { ffi.string(xs + i * 784, 784) } },
      label = { int64_list = { ys[i] } } })
  end
  w:close()
  local F = tide.io.FixedLenFeature
  local features = { image = F({}, "string"), label = F({}, "int64") }
  local function records_rate(ds)
    local times = {}
    for r = 1, 3 do
      collectgarbage()
      local t0 = timing.wall()
      local count = 0
      for e in ds:iter() do count = count + e.label.shape[1] end
      assert(count == nrec, count)
      times[r] = timing.wall() - t0
    end
    table.sort(times)
    return nrec / times[2]
  end
  local function single(parallel)
    return tide.data.TFRecordDataset(path)
      :map(function(r) return tide.io.parse_single_example(r, features) end, { parallel = parallel })
      :batch(128):prefetch(tide.data.AUTOTUNE)
  end
  timing.emit("tfrecord_parse_single_parallel1", records_rate(single(1)), "records/s")
  timing.emit("tfrecord_parse_single_autotune", records_rate(single(tide.data.AUTOTUNE)), "records/s")
  timing.emit("tfrecord_batch_parse_example", records_rate(tide.data.TFRecordDataset(path):batch(128)
    :map(function(r) return tide.io.parse_example(r, features) end):prefetch(tide.data.AUTOTUNE)), "records/s")
end

-- A training epoch of a small MLP on the same batches: the share of wall
-- time spent in the iterator's next (waiting for input).
local model = tide.Sequential { tide.layers.Flatten(), tide.layers.Dense { 128, activation = "relu" },
  tide.layers.Dense { 10 } }
model:compile { optimizer = "adam", loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true } }
local function wait_share(ds, opts)
  local waited, t0 = 0, timing.wall()
  local it = ds:iter(opts)
  while true do
    local w0 = timing.wall()
    local a, b = it()
    waited = waited + timing.wall() - w0
    if a == nil then break end
    model:train_on_batch(a, b)
  end
  return 100 * waited / (timing.wall() - t0)
end
local plain = D.from_tensor_slices { x, y }:shuffle(10000, { seed = 1 }):map(scale):batch(128)
wait_share(plain:take(20), { prefetch = false }) -- warm-up: traces the step
-- one dataset for every epoch, as fit iterates the dataset it was given
-- (AUTOTUNE's prefetch depth carries over from epoch to epoch)
local prefetched = plain:prefetch(tide.data.AUTOTUNE)
local shares_no, shares_pf = {}, {}
for r = 1, 3 do
  shares_no[r] = wait_share(plain, { prefetch = false })
  shares_pf[r] = wait_share(prefetched)
end
table.sort(shares_no)
table.sort(shares_pf)
timing.emit("fmnist_epoch_input_wait_no_prefetch", shares_no[2], "%")
timing.emit("fmnist_epoch_input_wait_prefetch", shares_pf[2], "%")
