-- bench/gpu.lua — tide on a GPU: matmul 8192² in fp32, tf32 and bf16 (TFLOP/s
-- and the share of the H200's dense peak), the eager tiny-op cost (µs per op)
-- and memory_info around allocations. bench/gpu_torch.py runs the same in PyTorch.
-- Without a GPU it prints one line saying so and exits 0.
local tide = require "tide"
local binding = require "tide.binding"
local C = binding.C

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

if #tide.config.list_physical_devices("GPU") == 0 then
  print("gpu: skipped (no GPU visible: " .. binding.ffi.string(C.tide_cuda_unavailable_reason()) .. ")")
  return
end

local GPU = "cuda:0"
local function sync() if C.tide_cuda_synchronize(0) ~= 0 then binding.raise() end end

-- H200 SXM dense peaks (NVIDIA's datasheet, without sparsity), TFLOP/s.
local PEAK = { fp32 = 67, tf32 = 494.5, bf16 = 989 }

tide.random.set_seed(0)
do
  local n = 8192
  local a32 = tide.random.uniform({ n, n }):to(GPU)
  local b32 = tide.random.uniform({ n, n }):to(GPU)
  local function bench(name, a, b)
    local t = measure(function() tide.matmul(a, b); sync() end, 3, 5)
    local tflops = 2 * n * n * n / t / 1e12
    emit("matmul_8192_" .. name, tflops, "TFLOP/s")
    emit("matmul_8192_" .. name .. "_peak_share", tflops / PEAK[name] * 100, "%")
  end
  bench("fp32", a32, b32)
  tide.config.enable_tensor_float_32(true)
  bench("tf32", a32, b32)
  tide.config.enable_tensor_float_32(false)
  bench("bf16", a32:cast("bfloat16"), b32:cast("bfloat16"))
end

-- Eager tiny ops: the whole path (Lua, registry, launch); synchronized once per batch.
do
  local a, b = tide.tensor({ 1.5 }):to(GPU), tide.tensor({ 2.5 }):to(GPU)
  local c
  local t = measure(function()
    for _ = 1, 100 do c = a + b end
    sync()
  end, 100)
  emit("add_1_gpu", t / 100 * 1e6, "us")
end

-- Memory: growth on demand, as memory_info reports it.
do
  local before = tide.config.memory_info(GPU)
  local big = tide.zeros({ 256, 1024, 1024 }):to(GPU) -- 1 GiB
  local during = tide.config.memory_info(GPU)
  big = nil
  collectgarbage()
  collectgarbage()
  local after = tide.config.memory_info(GPU)
  emit("memory_current_before", before.current / 2 ^ 20, "MiB")
  emit("memory_current_with_1GiB", during.current / 2 ^ 20, "MiB")
  emit("memory_current_after_free", after.current / 2 ^ 20, "MiB")
  emit("memory_peak", after.peak / 2 ^ 20, "MiB")
end
