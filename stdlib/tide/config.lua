-- stdlib/tide/config.lua — process-wide settings (tide.config): threads, the
-- CPU instruction set, memory statistics, and tide.trace's retracing warning
-- and eager switch.
local binding = require "tide.binding"
local tracing = require "tide.tracing.function"
local retracing = require "tide.tracing.retracing"
local C = binding.C

local M = {}

-- Threads CPU kernels use (default: the machine's cores; OpenBLAS and oneDNN
-- run inside them, one thread each).
function M.set_num_threads(n)
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

-- Cap the hot loops' instruction set at `name` (one of those of cpu_isa; a
-- CPU without it keeps its best): to compare levels, or to keep AVX-512 off.
function M.set_max_cpu_isa(name)
  if type(name) ~= "string" then
    binding.error("set_max_cpu_isa: name must be \"baseline\", \"avx2\" or \"avx512\", got " .. type(name))
  end
  if C.tide_set_max_cpu_isa(name) ~= 0 then binding.raise() end
end

-- Bytes held by tensors now, the peak, allocations made, and bytes of freed
-- blocks kept for reuse.
function M.memory_info()
  local s = binding.memory_stats
  return { current = tonumber(s.current), peak = tonumber(s.peak), allocations = tonumber(s.allocations),
           since_collect = tonumber(s.since_collect), cached = tonumber(s.cached) }
end

-- Collect garbage tensors now and give cached blocks back to the system.
function M.release_memory()
  binding.collect()
  C.tide_memory_release_cache()
end

-- Bytes of freed blocks kept for reuse at most (default 1 GiB; 0 disables).
function M.set_memory_cache_limit(bytes)
  if type(bytes) ~= "number" or bytes < 0 then
    binding.error("set_memory_cache_limit: bytes must be a non-negative number, got " .. tostring(bytes))
  end
  C.tide_memory_set_cache_limit(bytes)
end

-- Start the peak over from the bytes held now.
function M.reset_memory_peak()
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

return M
