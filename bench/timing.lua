-- bench/timing.lua — what every bench/*.lua script times with: a monotonic
-- clock, the median seconds per call over several runs, and the
-- `name: value unit` lines bench/compare.lua reads, and a `# machine:` line
-- (CPU model, cores, caches, the instruction set tide chose, how it runs
-- matrix products) printed once when loaded, so every figure says where it
-- came from. Load it with
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

local function read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- "L1d 48K, L2 1024K, L3 32768K" from the first CPU's cache folders (Linux).
local function caches()
  local out = {}
  for i = 0, 9 do
    local dir = "/sys/devices/system/cpu/cpu0/cache/index" .. i .. "/"
    local level, kind, size = read(dir .. "level"), read(dir .. "type"), read(dir .. "size")
    if not level then break end
    if kind and not kind:find("Instruction") then
      out[#out + 1] = "L" .. level:gsub("%s", "") .. (kind:find("Data") and "d" or "") .. " " .. size:gsub("%s", "")
    end
  end
  return #out > 0 and table.concat(out, ", ") or "caches unknown"
end

-- One line saying what machine this is and what tide chose on it.
function M.machine()
  local cpuinfo = read("/proc/cpuinfo") or ""
  local model = cpuinfo:match("model name%s*:%s*([^\n]+)") or cpuinfo:match("Model%s*:%s*([^\n]+)") or "unknown CPU"
  local cores = 0
  for _ in cpuinfo:gmatch("\nprocessor%s*:") do cores = cores + 1 end
  if cpuinfo:match("^processor%s*:") then cores = cores + 1 end
  local tide = require "tide"
  return string.format("%s, %d logical CPUs, %s; tide: ISA %s, %d threads; products: %s", model, cores, caches(),
                       tide.config.cpu_isa(), tide.config.get_num_threads(), tide.config.gemm_plan())
end

print("# machine: " .. M.machine())

return M
