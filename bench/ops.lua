-- bench/ops.lua — tide's eager op costs, printed as `name: value unit` lines
-- (medians of several runs). bench/ops_torch.py runs the same work in PyTorch;
-- bench/run.sh runs both and prints the ratios.
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

tide.random.set_seed(0)

-- Tiny ops: the eager dispatch cost.
for _, n in ipairs { 1, 100, 10000 } do
  local a = tide.random.uniform({n})
  local b = tide.random.uniform({n})
  local c
  local iters = n == 10000 and 100000 or 1000000
  local t = measure(function() for _ = 1, 10 do c = a + b end end, iters / 10)
  emit("add_" .. n, t / 10 * 1e6, "us")
end

-- A 10-op elementwise chain on 100 elements.
do
  local x = tide.random.uniform({100})
  local y
  local t = measure(function()
    y = tide.tanh(tide.exp(tide.sin(x) * 0.5 + x) - x * x + 1) * 2 - x
  end, 100000)
  emit("chain10_100", t * 1e6, "us")
end

-- a*b+c on 10M floats: bandwidth counting every array read and written
-- (a*b reads 2 and writes 1; + c reads 2 and writes 1: 6 x 40 MB).
do
  local n = 10 * 1000 * 1000
  local a, b, c = tide.random.uniform({n}), tide.random.uniform({n}), tide.random.uniform({n})
  local d
  local t = measure(function() d = a * b + c end, 3, 7)
  emit("fma_10m", 6 * n * 4 / t / 1e9, "GB/s")
  emit("fma_10m_time", t * 1e3, "ms")
end

-- sum over 10M floats.
do
  local n = 10 * 1000 * 1000
  local a = tide.random.uniform({n})
  local s
  local t = measure(function() s = tide.reduce_sum(a) end, 5, 9)
  emit("sum_10m", n * 4 / t / 1e9, "GB/s")
end

-- matmul (OpenBLAS's own sgemm on the same products is bench/ops_openblas.lua,
-- run in a process of its own: its threads spin after each call and would
-- slow whatever runs next in this one).
for _, n in ipairs { 256, 1024, 2048 } do
  local a, b = tide.random.uniform({n, n}), tide.random.uniform({n, n})
  local iters = n == 256 and 50 or (n == 1024 and 5 or 2)
  local t = measure(function() return tide.matmul(a, b) end, iters, 7)
  emit("matmul_" .. n, 2 * n * n * n / t / 1e9, "GFLOP/s")
end
