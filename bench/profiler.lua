-- bench/profiler.lua — what the profiler and check numerics cost: eager
-- `a + b` and a traced 10-op chain with both off (compare builds), and the
-- cost per eager op and per graph node with each on.
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

tide.random.set_seed(0)
local a, b = tide.random.uniform({1}), tide.random.uniform({1})
local x = tide.random.uniform({100})
local chain = tide.trace(function(v) return tide.tanh(tide.exp(tide.sin(v) * 0.5 + v) - v * v + 1) * 2 - v end)
chain(x)

local function eager_add()
  local c
  return measure(function() for _ = 1, 10 do c = a + b end end, 100000) / 10
end
local function traced_chain() return measure(function() chain(x) end, 100000) end

local C = require("tide.binding").C
local has_profiler = pcall(function() return C.tide_profiler_start end)
local off_add, off_chain = eager_add(), traced_chain()
emit("add_1_off", off_add * 1e9, "ns")
emit("trace_chain10_off", off_chain * 1e9, "ns")
if has_profiler and not os.getenv("BASELINE") then
  local profiler = require "tide.profiler"
  profiler.start()
  local on_add, on_chain = eager_add(), traced_chain()
  profiler.stop()
  emit("add_1_profiling", on_add * 1e9, "ns")
  emit("profile_cost_per_eager_op", (on_add - off_add) * 1e9, "ns")
  emit("trace_chain10_profiling", on_chain * 1e9, "ns")
  tide.debugging.enable_check_numerics()
  local num_add = eager_add()
  tide.debugging.disable_check_numerics()
  emit("add_1_check_numerics", num_add * 1e9, "ns")
end
