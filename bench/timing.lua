-- bench/timing.lua — what every bench/*.lua script times with: a monotonic
-- clock, the median seconds per call over several runs, and the
-- `name: value unit` lines bench/compare.lua reads. Load it with
--   local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local ffi = require "ffi"

local M = {}

ffi.cdef [[ typedef struct { long tv_sec; long tv_nsec; } tide_bench_timespec;
            int clock_gettime(int clk, tide_bench_timespec *tp); ]]
local ts = ffi.new("tide_bench_timespec")

-- Seconds on CLOCK_MONOTONIC.
function M.wall()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

-- Median seconds per call of fn over `runs` (default 7) timings of `iters`
-- calls each, after one warm-up call (JIT, caches) and a collection per run.
function M.measure(fn, iters, runs)
  runs = runs or 7
  local times = {}
  fn()
  for r = 1, runs do
    collectgarbage()
    local t0 = M.wall()
    for _ = 1, iters do fn() end
    times[r] = (M.wall() - t0) / iters
  end
  table.sort(times)
  return times[math.ceil(runs / 2)]
end

function M.emit(name, value, unit)
  print(string.format("%s: %.4g %s", name, value, unit))
end

return M
