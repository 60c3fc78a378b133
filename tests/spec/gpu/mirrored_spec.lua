-- tests/spec/gpu/mirrored_spec.lua — MirroredStrategy on GPUs: NCCL's all-reduce
-- across the process's GPUs against sums on the CPU, and training on 2 GPU
-- replicas against 1 replica on the global batch (NCCL and ReductionToOneDevice).
-- Without a GPU the file prints "SKIP N: no GPU visible ..." (tests/run.sh
-- counts those apart, never as passed); with one GPU the 2-replica checks are skipped the same way.
local tide = require "tide"
local binding = require "tide.binding"
local ffi, C = binding.ffi, binding.C

local D = tide.distribute
local gpus = #tide.config.list_physical_devices("GPU")
local TWO_GPU_CHECKS, ONE_GPU_CHECKS = 5, 2

if gpus == 0 then
  print(string.format("SKIP %d: no GPU visible: the GPU checks (%s)", TWO_GPU_CHECKS + ONE_GPU_CHECKS,
    ffi.string(C.tide_cuda_unavailable_reason())))
  describe("MirroredStrategy on GPUs", function() end)
  return
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

-- Train a small MLP for 3 steps of global batches of 8 under strategy; returns the weights on the CPU.
local function train(strategy)
  tide.random.set_seed(11)
  local x, y = tide.random.normal({ 24, 3 }), tide.random.normal({ 24, 2 })
  local model, opt = strategy:scope(function()
    tide.random.set_seed(5)
    return tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 4, activation = "tanh" },
                             tide.layers.Dense { 2 } }, tide.optimizers.SGD { learning_rate = 0.3 }
  end)
  local ds = strategy:experimental_distribute_dataset(tide.data.Dataset.from_tensor_slices { x, y }:batch(8))
  for xb, yb in ds:iter() do
    strategy:run(function(xr, yr)
      local tape = tide.GradientTape()
      local loss = tape:run(function() return D.compute_average_loss(tide.reduce_sum((model(xr) - yr) ^ 2, 1), 8) end)
      local vars = model.trainable_weights
      local grads = tape:gradient(loss, vars)
      local list = {}
      for i, v in ipairs(vars) do list[i] = { grads[i], v } end
      opt:apply_gradients(list)
    end, { xb, yb })
  end
  local out = {}
  for i, w in ipairs(model.trainable_weights) do out[i] = w:read_value():cpu():totable() end
  return out
end

describe("MirroredStrategy on one GPU", function()
  it("takes every visible GPU by default, with NCCL", function()
    local s = D.MirroredStrategy()
    assert.are.equal(gpus, s.num_replicas_in_sync)
    assert.are.equal("cuda:0", s.devices[1])
    assert.are.equal("nccl", s.cross_device_ops.kind)
  end)

  it("one GPU replica trains as the CPU does", function()
    close(train(D.MirroredStrategy { "/cpu:0" }), train(D.MirroredStrategy { "/gpu:0" }), 1e-4, "weights")
  end)
end)

if gpus < 2 then
  print(string.format("SKIP %d: one GPU visible: the two-GPU checks", TWO_GPU_CHECKS))
  return
end

describe("MirroredStrategy on two GPUs", function()
  it("NCCL sums float32, float64 and float16 tensors across the GPUs, several in one group", function()
    for _, dt in ipairs { "float32", "float64", "float16" } do
      local a = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, dt)
      local b = tide.tensor({ { 10, 20, 30 }, { 40, 50, 60 } }, dt)
      local c, d = tide.tensor({ 0.5 }, dt), tide.tensor({ 0.25 }, dt)
      local ins = ffi.new("const tide_tensor *[4]", { a:to("cuda:0"), b:to("cuda:1"), c:to("cuda:0"), d:to("cuda:1") })
      local outs = { binding.Tensor(), binding.Tensor(), binding.Tensor(), binding.Tensor() }
      local arr = ffi.new("tide_tensor *[4]", outs)
      assert.are.equal(0, C.tide_device_all_reduce_sum(2, 2, ins, arr), ffi.string(C.tide_last_error()))
      for i = 1, 4 do binding.finish(outs[i]) end
      assert.are.same({ { 11, 22, 33 }, { 44, 55, 66 } }, outs[1]:cpu():totable())
      assert.are.same({ { 11, 22, 33 }, { 44, 55, 66 } }, outs[2]:cpu():totable())
      assert.are.equal("cuda:1", outs[2].device)
      assert.are.same({ 0.75 }, outs[3]:cpu():totable())
      assert.are.same({ 0.75 }, outs[4]:cpu():totable())
    end
  end)

  it("sums a strided view (made contiguous first) and refuses two replicas on one GPU", function()
    local a = tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32"):to("cuda:0"):transpose()
    local b = tide.tensor({ { 1, 1 }, { 1, 1 } }, "float32"):to("cuda:1")
    local outs = { binding.Tensor(), binding.Tensor() }
    assert.are.equal(0, C.tide_device_all_reduce_sum(2, 1, ffi.new("const tide_tensor *[2]", { a, b }),
      ffi.new("tide_tensor *[2]", outs)), ffi.string(C.tide_last_error()))
    binding.finish(outs[1]); binding.finish(outs[2])
    assert.are.same({ { 2, 4 }, { 3, 5 } }, outs[1]:cpu():totable())
    local b0 = tide.tensor({ { 1, 1 }, { 1, 1 } }, "float32"):to("cuda:0")
    assert.are_not.equal(0, C.tide_device_all_reduce_sum(2, 1, ffi.new("const tide_tensor *[2]", { a, b0 }),
      ffi.new("tide_tensor *[2]", { binding.Tensor(), binding.Tensor() })))
    assert.truthy(ffi.string(C.tide_last_error()):find("both on cuda:0", 1, true))
  end)

  it("2 replicas with NCCL train as 1 replica on the global batch", function()
    local one = train(D.MirroredStrategy { "/gpu:0" })
    local two = train(D.MirroredStrategy { "/gpu:0", "/gpu:1" })
    close(one, two, 1e-5, "weights")
  end)

  it("2 replicas with ReductionToOneDevice train as with NCCL", function()
    local nccl = train(D.MirroredStrategy { "/gpu:0", "/gpu:1" })
    local one_device = train(D.MirroredStrategy({ "/gpu:0", "/gpu:1" },
      { cross_device_ops = D.ReductionToOneDevice { reduce_to_device = "/cpu:0" } }))
    close(nccl, one_device, 1e-5, "weights")
  end)

  it("a replica reads the variables on its own GPU", function()
    local s = D.MirroredStrategy { "/gpu:0", "/gpu:1" }
    local v = s:scope(function() return tide.Variable(tide.tensor({ 1, 2 }, "float32")) end)
    local where = s:run(function() return (v + 0).device end)
    assert.are.same({ "cuda:0", "cuda:1" }, where.values)
  end)
end)
