-- tests/spec/distribute/mirrored_spec.lua — MirroredStrategy on a machine without
-- GPUs: one CPU replica as TF (the same results as no strategy, bit for bit),
-- device names and options and their errors, the NCCL entry point's checks,
-- and the replica machinery (batch split, per-replica gradients summed and
-- applied once) on two CPU replicas against one replica on the global batch.
-- The same on GPUs with NCCL: tests/spec/gpu/mirrored_spec.lua.
local tide = require "tide"
local h = require "helpers"
local binding = require "tide.binding"
local ffi, C = binding.ffi, binding.C

local D = tide.distribute
local f32 = function(v) return tide.tensor(v, "float32") end

local no_gpu = #tide.config.list_physical_devices("GPU") == 0
-- On a GPU machine the default strategy takes the GPUs (tests/spec/gpu checks
-- that): the checks of the no-GPU default are not defined, and said skipped
-- (tests/run.sh counts a SKIP line apart, never as passed).
local NO_GPU_DEFAULT_CHECKS = 2
if not no_gpu then
  print(string.format("SKIP %d: a GPU is visible: the checks of the no-GPU default (one CPU replica)",
    NO_GPU_DEFAULT_CHECKS))
end
local it_without_gpu = no_gpu and it or function() end

-- A small regression problem: 12 rows of 3 features, 2 targets.
local function data()
  tide.random.set_seed(11)
  return tide.random.normal({ 12, 3 }), tide.random.normal({ 12, 2 })
end

local function make_model(opt_name)
  tide.random.set_seed(5)
  local model = tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 4, activation = "tanh" },
                                  tide.layers.Dense { 2 } }
  local opt = opt_name == "adam" and tide.optimizers.Adam { learning_rate = 0.05 }
    or tide.optimizers.SGD { learning_rate = 0.3, momentum = 0.5 }
  return model, opt
end

local function weights(model)
  local out = {}
  for i, w in ipairs(model.trainable_weights) do out[i] = w:read_value():totable() end
  return out
end

-- steps of a custom loop over global batches of 4 rows; strategy nil: none
local function train(strategy, opt_name)
  local x, y = data()
  local model, opt
  if strategy then model, opt = strategy:scope(make_model, opt_name) else model, opt = make_model(opt_name) end
  local ds = tide.data.Dataset.from_tensor_slices { x, y }:batch(4)
  local function step(xb, yb)
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      return D.compute_average_loss(tide.reduce_sum((model(xb) - yb) ^ 2, 1), 4)
    end)
    local vars = model.trainable_weights
    local grads = tape:gradient(loss, vars)
    local pairs_list = {}
    for i, v in ipairs(vars) do pairs_list[i] = { grads[i], v } end
    opt:apply_gradients(pairs_list)
    return loss
  end
  local losses = {}
  local src = strategy and strategy:experimental_distribute_dataset(ds) or ds
  for xb, yb in src:iter() do
    local loss = strategy and strategy:run(step, { xb, yb }) or step(xb, yb)
    losses[#losses + 1] = strategy and strategy:reduce("SUM", loss):item() or loss:item()
  end
  return weights(model), losses, opt.iterations:read_value():item()
end

local function close(a, b, tol, path)
  path = path or "value"
  if type(a) == "table" then
    assert.are.equal(#a, #b, path)
    for i = 1, #a do close(a[i], b[i], tol, path .. "[" .. i .. "]") end
    return
  end
  assert.is_true(math.abs(a - b) <= tol * math.max(1, math.abs(a)), string.format("%s: %.9g vs %.9g", path, a, b))
end

describe("tide.distribute.MirroredStrategy", function()
  it_without_gpu("with no GPU visible is one replica on the CPU, as TF", function()
    local s = D.MirroredStrategy()
    assert.are.equal(1, s.num_replicas_in_sync)
    assert.are.same({ "cpu" }, s.devices)
    assert.are.equal("MirroredStrategy(num_replicas_in_sync=1)", tostring(s))
    assert.are.equal("ReductionToOneDevice(reduce_to_device=nil)", tostring(s.cross_device_ops))
    assert.is_true(s.is_chief)
    assert.are.equal(0, s.worker_index)
  end)

  it("takes TF's device names for the CPU", function()
    for _, name in ipairs { "/cpu:0", "cpu", "CPU:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0" } do
      local s = D.MirroredStrategy { name }
      assert.are.same({ "cpu" }, s.devices)
      assert.are.equal(1, s.num_replicas_in_sync)
    end
  end)

  for _, devices in ipairs { { nil }, { { "/cpu:0" } } } do
    local label = devices[1] and "devices={\"/cpu:0\"}" or "no devices"
    local define = devices[1] and it or it_without_gpu
    define("with " .. label .. " trains as without a strategy, bit for bit (SGD and Adam)", function()
      for _, opt_name in ipairs { "sgd", "adam" } do
        local w0, l0, it0 = train(nil, opt_name)
        local w1, l1, it1 = train(D.MirroredStrategy(devices[1]), opt_name)
        assert.are.same(w0, w1)
        assert.are.same(l0, l1)
        assert.are.equal(3, it0)
        assert.are.equal(it0, it1)
      end
    end)
  end

  it("fit under one replica's scope gives the weights fit gives without it", function()
    local function fit(strategy)
      local x, y = data()
      local build = function()
        local m = make_model()
        m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 }, loss = "mse" }
        return m
      end
      local m = strategy and strategy:scope(build) or build()
      m:fit(x, y, { batch_size = 4, epochs = 2, verbose = 0, shuffle = false })
      return weights(m)
    end
    assert.are.same(fit(nil), fit(D.MirroredStrategy { "/cpu:0" }))
  end)

  it("refuses bad devices and options, naming them", function()
    h.errors('device "/cpu:1": not a device name', function() D.MirroredStrategy { "/cpu:1" } end)
    h.errors('device "tpu:0": not a device name', function() D.MirroredStrategy { "tpu:0" } end)
    h.errors('device "gpu:x": the GPU number must be', function() D.MirroredStrategy { "gpu:x" } end)
    if no_gpu then
      h.errors('device "/gpu:0": no CUDA device visible', function() D.MirroredStrategy { "/gpu:0" } end)
      h.errors('device "/device:GPU:1": no CUDA device visible', function() D.MirroredStrategy { "/cpu:0", "/device:GPU:1" } end)
    end
    h.errors("devices is empty", function() D.MirroredStrategy {} end)
    h.errors('no duplicates allowed in devices: "cpu" and "/cpu:0" are both cpu',
      function() D.MirroredStrategy { "cpu", "/cpu:0" } end)
    h.errors("a device must be a name such as \"/gpu:0\" or \"/cpu:0\", got number", function() D.MirroredStrategy { 0 } end)
    h.errors("devices must be a list of device names", function() D.MirroredStrategy "/cpu:0" end)
    h.errors("unknown option 'cross_device_op'", function() D.MirroredStrategy(nil, { cross_device_op = 1 }) end)
    h.errors("cross_device_ops must be tide.distribute.NcclAllReduce() or ReductionToOneDevice(), got string",
      function() D.MirroredStrategy(nil, { cross_device_ops = "nccl" }) end)
    h.errors("NcclAllReduce sums across GPUs, but a replica is on the CPU",
      function() D.MirroredStrategy({ "/cpu:0" }, { cross_device_ops = D.NcclAllReduce() }) end)
    h.errors("num_packs must be a non-negative integer, got -1", function() D.NcclAllReduce { num_packs = -1 } end)
    h.errors("unknown option 'packs'", function() D.NcclAllReduce { packs = 1 } end)
    h.errors('ReductionToOneDevice: device "cpu:3"', function() D.ReductionToOneDevice { reduce_to_device = "cpu:3" } end)
    assert.are.equal("NcclAllReduce(num_packs=2)", tostring(D.NcclAllReduce { num_packs = 2 }))
    local s = D.MirroredStrategy({ "/cpu:0" }, { cross_device_ops = D.ReductionToOneDevice { reduce_to_device = "/cpu:0" } })
    assert.are.equal("/cpu:0", s.cross_device_ops.reduce_to_device)
    h.errors("MirroredStrategy:run: expected a function, got number", function() s:run(3) end)
    h.errors("MirroredStrategy:run: args must be a list", function() s:run(print, "x") end)
    h.errors('the reduce op must be "SUM" or "MEAN"', function() s:reduce("MAX", f32 { 1 }) end)
  end)

  it("checks the NCCL all-reduce's arguments before it needs a GPU", function()
    assert.is_true(C.tide_nccl_version() >= 0)
    local a, b = f32 { 1, 2 }, f32 { 3, 4 }
    local ins = ffi.new("const tide_tensor *[2]", { a, b })
    local outs = ffi.new("tide_tensor *[2]", { binding.Tensor(), binding.Tensor() })
    local function fails(msg, n_dev, n_t, i)
      assert.are_not.equal(0, C.tide_device_all_reduce_sum(n_dev, n_t, i or ins, outs))
      local err = ffi.string(C.tide_last_error())
      assert.truthy(err:find(msg, 1, true), err)
    end
    fails("tensor 0 of replica 0 is on the CPU; NCCL sums tensors on GPUs", 2, 1)
    fails("0 replicas", 0, 1)
    local c = f32 { 1, 2, 3 }
    fails("tensor 0 has shape [2] on replica 0 but [3] on replica 1", 2, 1, ffi.new("const tide_tensor *[2]", { a, c }))
    local d = tide.tensor({ 1, 2 }, "float64")
    fails("tensor 0 is float32 on replica 0 but float64 on replica 1", 2, 1, ffi.new("const tide_tensor *[2]", { a, d }))
    assert.are.equal(0, C.tide_device_all_reduce_sum(2, 0, nil, nil)) -- nothing to sum
  end)

  describe("on two replicas (both on the CPU, summing through it)", function()
    it("splits each global batch by rows and returns PerReplica results", function()
      local s = D._on_cpu_replicas(2)
      assert.are.equal(2, s.num_replicas_in_sync)
      local ds = tide.data.Dataset.from_tensor_slices(f32 { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }):batch(5)
      local parts = {}
      for pr in s:experimental_distribute_dataset(ds):iter() do
        assert.is_true(D.is_per_replica(pr))
        local local_values = s:experimental_local_results(pr)
        parts[#parts + 1] = { local_values[1]:totable(), local_values[2]:totable() }
      end
      assert.are.same({ { { 0, 1 }, { 2, 3, 4 } }, { { 5, 6 }, { 7, 8, 9 } } }, parts)
      local r = s:run(function(x) return x:sum(), x.shape[1] end, { D.PerReplica { f32 { 1, 2 }, f32 { 3, 4, 5 } } })
      assert.are.same({ 3, 12 }, { r.values[1]:item(), r.values[2]:item() })
      assert.are.equal(15, s:reduce("SUM", r):item())
      assert.are.equal(7.5, s:reduce("MEAN", r):item())
      local v = D.PerReplica { f32 { { 1, 2 } }, f32 { { 3, 4 }, { 5, 6 } } }
      assert.are.same({ 9, 12 }, s:reduce("SUM", v, 0):totable())
      assert.are.same({ 3, 4 }, s:reduce("MEAN", v, 0):totable()) -- over the 3 rows in all
      h.errors("cannot be summed over the replicas", function() s:reduce("SUM", f32 { 1 }) end)
      assert.are.same({ 1 }, s:reduce("MEAN", f32 { 1 }):totable())
      h.errors("a PerReplica argument has 3 values for 2 replicas",
        function() s:run(print, { D.PerReplica { 1, 2, 3 } }) end)
      local ids = s:experimental_distribute_values_from_function(function(ctx)
        return ctx.replica_id_in_sync_group * 10 + ctx.num_replicas_in_sync
      end)
      assert.are.same({ 2, 12 }, ids.values)
      -- distribute_datasets_from_function: per-replica batches, successive elements to successive replicas
      local per = s:distribute_datasets_from_function(function(ctx)
        assert.are.equal(2, ctx.num_replicas_in_sync)
        return tide.data.Dataset.from_tensor_slices(f32 { 0, 1, 2, 3, 4, 5, 6, 7 }):batch(ctx:get_per_replica_batch_size(4))
      end)
      local got = {}
      for pr in per:iter() do got[#got + 1] = { pr.values[1]:totable(), pr.values[2]:totable() } end
      assert.are.same({ { { 0, 1 }, { 2, 3 } }, { { 4, 5 }, { 6, 7 } } }, got)
    end)

    for _, opt_name in ipairs { "sgd", "adam" } do
      it("trains as one replica on the global batch (" .. opt_name .. "), applying each step once", function()
        local w1, l1, it1 = train(nil, opt_name)
        local w2, l2, it2 = train(D._on_cpu_replicas(2), opt_name)
        assert.are.equal(it1, it2) -- 3 steps, not 6
        close(w1, w2, 1e-5, "weights")
        close(l1, l2, 1e-5, "losses")
        -- and the weights moved: a run that applied nothing would not match
        local w0 = weights(make_model(opt_name))
        assert.is_true(math.abs(w0[1][1][1] - w2[1][1][1]) > 1e-4)
      end)
    end

    it("refuses replicas that apply different gradients, and fit", function()
      local s = D._on_cpu_replicas(2)
      local a, b = s:scope(function() return tide.Variable(f32 { 1 }), tide.Variable(f32 { 2 }) end)
      local opt = tide.optimizers.SGD { learning_rate = 0.1 }
      local replica = 0
      h.errors("replica 0 applied gradients 0 time(s) but another replica 1", function()
        s:run(function()
          replica = replica + 1
          if replica == 1 then opt:apply_gradients { { f32 { 1 }, a } } end -- the second replica only (run first)
        end)
      end)
      replica = 0
      h.errors("applied gradients to different variables", function()
        s:run(function()
          replica = replica + 1
          opt:apply_gradients { { f32 { 1 }, replica == 1 and b or a } }
        end)
      end)
      assert.are.same({ 1 }, a:read_value():totable()) -- nothing applied
      assert.are.same({ 2 }, b:read_value():totable())
      local m = s:scope(function()
        local m = tide.Sequential { tide.Input { shape = { 2 } }, tide.layers.Dense { 1 } }
        m:compile { optimizer = "sgd", loss = "mse" }
        return m
      end)
      h.errors("fit: under a MirroredStrategy of 2 replicas fit is not supported yet",
        function() m:fit(f32 { { 1, 2 } }, f32 { { 1 } }, { verbose = 0 }) end)
      h.errors("run was called inside run", function() s:run(function() s:run(print) end) end)
    end)
  end)
end)
