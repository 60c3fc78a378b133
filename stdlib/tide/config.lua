-- stdlib/tide/config.lua — process-wide settings (tide.config): threads, the
-- CPU instruction set, memory statistics, tide.trace's retracing warning
-- and eager switch, and the devices (GPUs, their memory, TF32).
local binding = require "tide.binding"
local tracing = require "tide.tracing.function"
local retracing = require "tide.tracing.retracing"
local device = require "tide.device"
local C, ffi = binding.C, binding.ffi

local M = {}

-- Threads CPU kernels use (default: the machine's cores; OpenBLAS and oneDNN
-- run inside them, one thread each).
function M.set_num_threads(n)
  binding.check_process_wide("set_num_threads")
  if type(n) ~= "number" or n ~= math.floor(n) then
    binding.error("set_num_threads: n must be a positive integer, got " .. tostring(n))
  end
  if n > 2147483647 then -- C takes an int: a larger number would wrap
    binding.error(string.format("set_num_threads: n must be at most 2147483647, got %.0f", n))
  end
  if C.tide_set_num_threads(n) ~= 0 then binding.raise() end
end

-- Threads CPU kernels use now.
function M.get_num_threads()
  return C.tide_get_num_threads()
end

-- The instruction set the hot CPU loops run: "baseline" (x86-64-v2), "avx2"
-- (x86-64-v3) or "avx512" (x86-64-v4); the best this CPU has unless capped.
function M.cpu_isa()
  return binding.ffi.string(C.tide_cpu_isa())
end

-- How CPU matrix products run on this machine, in one line: which library
-- takes which sizes, measured here at first use or pinned by the environment
-- variable TIDE_GEMM_SMALL ("openblas", "onednn" or a number of
-- multiply-adds from which oneDNN runs small float32 products).
function M.gemm_plan()
  return binding.ffi.string(C.tide_cpu_gemm_plan())
end

-- Cap the hot loops' instruction set at `name` (one of those of cpu_isa; a
-- CPU without it keeps its best): to compare levels, or to keep AVX-512 off.
function M.set_max_cpu_isa(name)
  binding.check_process_wide("set_max_cpu_isa")
  if type(name) ~= "string" then
    binding.error("set_max_cpu_isa: name must be \"baseline\", \"avx2\" or \"avx512\", got " .. type(name))
  end
  if C.tide_set_max_cpu_isa(name) ~= 0 then binding.raise() end
end

-- Bytes held by tensors now, the peak, allocations made, and bytes of freed
-- blocks kept for reuse; memory_info("cuda:0") gives a GPU's { current=, peak= }
-- (TF's get_memory_info).
function M.memory_info(dev)
  if dev ~= nil and device.parse(dev, "memory_info") ~= C.TIDE_CPU then
    local k = device.gpu_ordinal(dev, "memory_info")
    local cur, peak = ffi.new("int64_t[1]"), ffi.new("int64_t[1]")
    if C.tide_cuda_memory_info(k, cur, peak) ~= 0 then binding.raise() end
    return { current = tonumber(cur[0]), peak = tonumber(peak[0]) }
  end
  local s = binding.memory_stats
  return { current = tonumber(s.current), peak = tonumber(s.peak), allocations = tonumber(s.allocations),
           since_collect = tonumber(s.since_collect), cached = tonumber(s.cached) }
end

-- Collect garbage tensors now and give cached blocks back to the system
-- (the cache is the process's: a sandbox that may not touch process
-- settings only collects its own garbage).
function M.release_memory()
  binding.collect()
  if pcall(binding.check_process_wide, "release_memory") then C.tide_memory_release_cache() end
end

-- Bytes of freed blocks kept for reuse at most (default 1 GiB; 0 disables).
function M.set_memory_cache_limit(bytes)
  binding.check_process_wide("set_memory_cache_limit")
  if type(bytes) ~= "number" or bytes < 0 then
    binding.error("set_memory_cache_limit: bytes must be a non-negative number, got " .. tostring(bytes))
  end
  C.tide_memory_set_cache_limit(bytes)
end

-- Start the peak over from the bytes held now.
function M.reset_memory_peak()
  binding.check_process_wide("reset_memory_peak")
  C.tide_memory_reset_peak()
end

-- tide.trace warns when `threshold` of the last `window` calls of one Lua
-- function traced a new graph (TF's rule, 5 of 10): set_retracing_warning{
-- threshold=, window=}, or false to turn the warning off (true: on again).
M.set_retracing_warning = retracing.set_retracing_warning

-- The retracing warning's settings: { enabled=, threshold=, window= }.
M.get_retracing_warning = retracing.get_retracing_warning

-- run_functions_eagerly(true): tide.trace's functions run as plain Lua (TF's
-- tf.config.run_functions_eagerly, for debugging); false: traced again.
function M.run_functions_eagerly(on)
  tracing.eager = on and true or false
end

-- True while traced functions run eagerly.
function M.functions_run_eagerly() return tracing.eager end

-- ---- devices (TF's tf.config physical devices and GPU memory) ----

-- The physical devices of a kind ("GPU" or "CPU"; nil: both), as a list of
-- { name = "/physical_device:GPU:0", device_type = "GPU" }. GPUs are those
-- CUDA_VISIBLE_DEVICES leaves visible; none without a driver or a GPU.
function M.list_physical_devices(kind)
  if kind ~= nil and kind ~= "GPU" and kind ~= "CPU" then
    binding.error("list_physical_devices: device_type must be \"GPU\", \"CPU\" or nil, got " .. tostring(kind))
  end
  local out = {}
  if kind ~= "GPU" then out[#out + 1] = { name = "/physical_device:CPU:0", device_type = "CPU" } end
  if kind ~= "CPU" then
    for k = 0, device.gpu_count() - 1 do
      out[#out + 1] = { name = "/physical_device:GPU:" .. k, device_type = "GPU" }
    end
  end
  return out
end

-- set_memory_growth(gpu, true|false): grow on demand (the default) or
-- reserve the GPU's memory at its first use. Errors once the GPU is in use, as TF's.
function M.set_memory_growth(gpu, enable)
  binding.check_process_wide("set_memory_growth")
  local k = device.gpu_ordinal(gpu, "set_memory_growth")
  if type(enable) ~= "boolean" then
    binding.error("set_memory_growth: enable must be true or false, got " .. tostring(enable))
  end
  if C.tide_cuda_set_memory_growth(k, enable) ~= 0 then binding.raise() end
end

-- set_logical_device_configuration(gpu, { memory_limit = MB }) (or a list
-- of one such table, as TF's list of LogicalDeviceConfiguration): cap the
-- GPU's memory. Errors once the GPU is in use, as TF's.
function M.set_logical_device_configuration(gpu, config)
  binding.check_process_wide("set_logical_device_configuration")
  local k = device.gpu_ordinal(gpu, "set_logical_device_configuration")
  if type(config) == "table" and config[1] ~= nil then
    if #config > 1 then
      binding.error("set_logical_device_configuration: splitting a GPU into several logical devices is not supported")
    end
    config = config[1]
  end
  local mb = type(config) == "table" and config.memory_limit
  if type(mb) ~= "number" or mb <= 0 or mb ~= math.floor(mb) then
    binding.error("set_logical_device_configuration: expected { memory_limit = MB } with a positive whole number, got "
      .. tostring(mb))
  end
  if C.tide_cuda_set_memory_limit(k, mb * 1024 * 1024) ~= 0 then binding.raise() end
end

-- The CUDA libraries tide's GPU backend loaded (TF's tf.sysconfig.get_build_info):
-- { cuda_runtime=, cuda_driver= (0: no driver), cublaslt=, cudnn=, nvrtc= }, each
-- as the library reports its version; an error when the backend is not there.
function M.cuda_versions()
  local v = ffi.new("int64_t[5]")
  if C.tide_cuda_library_versions(v) ~= 0 then binding.raise() end
  return { cuda_runtime = tonumber(v[0]), cuda_driver = tonumber(v[1]), cublaslt = tonumber(v[2]),
           cudnn = tonumber(v[3]), nvrtc = tonumber(v[4]) }
end

-- TF32 tensor cores for float32 matmuls on the GPU (off by default, unlike TF).
function M.enable_tensor_float_32(on)
  binding.check_process_wide("enable_tensor_float_32")
  if type(on) ~= "boolean" then binding.error("enable_tensor_float_32: expected true or false, got " .. tostring(on)) end
  C.tide_cuda_enable_tf32(on)
end

function M.tensor_float_32_enabled() return C.tide_cuda_tf32_enabled() end

return M
