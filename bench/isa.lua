-- bench/isa.lua — what the run-time choice of instruction set buys and costs:
-- the same ops with the hot loops capped at each level this CPU runs
-- (baseline = x86-64-v2, what a portable build without dispatch would run;
-- avx2; avx512), in alternating rounds within one process. Prints
-- `name_level: value unit` lines (medians), and the level chosen by default.
local tide = require "tide"
local binding = require "tide.binding"
local ffi, C = binding.ffi, binding.C

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

local best = ffi.string(C.tide_cpu_isa())
print("# hot loops chosen at load: " .. best)
local levels = {}
for _, l in ipairs { "baseline", "avx2", "avx512" } do
  assert(C.tide_set_max_cpu_isa(l) == 0)
  if ffi.string(C.tide_cpu_isa()) == l then levels[#levels + 1] = l end
end

tide.random.set_seed(0)
local cases = {}
local function case(name, unit, per_call, fn, iters)
  cases[#cases + 1] = { name = name, unit = unit, per_call = per_call, fn = fn, iters = iters }
end

-- The tiny-op path: the loop is picked through one more pointer per op.
local one_a, one_b = tide.random.uniform({1}), tide.random.uniform({1})
case("add_1", "us", function(t) return t * 1e6 end, function() return one_a + one_b end, 200000)
-- In-cache work (100k float32 = 400 KB per operand), where vector width shows.
local ka, kb = tide.random.uniform({100000}), tide.random.uniform({100000})
case("add_100k", "GB/s", function(t) return 3 * 4e5 / t / 1e9 end, function() return ka + kb end, 2000)
case("sum_100k", "GB/s", function(t) return 4e5 / t / 1e9 end, function() return tide.reduce_sum(ka) end, 2000)
case("max_100k", "GB/s", function(t) return 4e5 / t / 1e9 end, function() return tide.reduce_max(ka) end, 2000)
case("cast_100k_to_int32", "GB/s", function(t) return 8e5 / t / 1e9 end, function() return ka:cast("int32") end, 2000)
case("exp_100k", "GB/s", function(t) return 8e5 / t / 1e9 end, function() return tide.exp(ka) end, 2000)
-- The fused engine: a traced 10-op chain on 100k floats (one fused node).
local chain = tide.trace(function(x)
  local y = tide.relu(x * 1.5 + 0.5) - 0.25
  y = tide.minimum(tide.abs(y * x), 4) + x
  return tide.square(tide.tanh(y) * 0.5)
end)
case("chain10_100k_fused", "GB/s", function(t) return 8e5 / t / 1e9 end, function() return chain(ka) end, 2000)
-- Memory-bound work (10M float32 = 40 MB per operand).
local ma, mb = tide.random.uniform({10000000}), tide.random.uniform({10000000})
case("add_10m", "GB/s", function(t) return 3 * 4e7 / t / 1e9 end, function() return ma + mb end, 5)
case("sum_10m", "GB/s", function(t) return 4e7 / t / 1e9 end, function() return tide.reduce_sum(ma) end, 5)

local results = {}
for round = 1, 5 do
  for _, c in ipairs(cases) do
    for _, l in ipairs(levels) do
      C.tide_set_max_cpu_isa(l)
      local key = c.name .. "_" .. l
      results[key] = results[key] or {}
      table.insert(results[key], measure(c.fn, c.iters, 3))
    end
  end
end
C.tide_set_max_cpu_isa("avx512")
for _, c in ipairs(cases) do
  for _, l in ipairs(levels) do
    local t = results[c.name .. "_" .. l]
    table.sort(t)
    emit(c.name .. "_" .. l, c.per_call(t[math.ceil(#t / 2)]), c.unit)
  end
end
