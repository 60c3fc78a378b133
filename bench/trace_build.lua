-- bench/trace_build.lua — what building a graph costs as it grows: traced
-- functions that call the previous traced function (depth 100 to 3,000), a
-- chain of ops on Lua-number constants (8k to 100k ops), many reads of one
-- Variable, and a tape:run / trace call's fixed cost. Each figure is the
-- median wall time of a first call (the one that traces) over fresh Functions.
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local wall, emit = timing.wall, timing.emit

tide.config.set_retracing_warning(false) -- every figure traces fresh Functions on purpose

-- Median seconds of make()'s result called once (a fresh Function each run).
local function first_call(make, runs)
  local times = {}
  for r = 1, runs do
    local f = make()
    collectgarbage()
    local t0 = wall()
    f(tide.tensor({1, 2}, "float32"))
    times[r] = wall() - t0
  end
  table.sort(times)
  return times[math.ceil(runs / 2)]
end

-- f_1(x) = x + 1; f_k(x) = f_{k-1}(x) * 1, each tide.trace'd: calling f_depth
-- traces all of them inline into one graph.
local function nested(depth)
  return function()
    local f = tide.trace(function(x) return x + 1 end)
    for _ = 2, depth do
      local g = f
      f = tide.trace(function(x) return g(x) * 1 end)
    end
    return f
  end
end

for _, depth in ipairs{100, 200, 400, 800, 1600, 3000} do
  emit("nested_trace_depth_" .. depth, first_call(nested(depth), depth >= 1600 and 3 or 5) * 1e3, "ms")
end

-- h = h * 1.0000001 + 0, n times: two Lua numbers (scalar constants) per step.
local function const_chain(n)
  return function()
    return tide.trace(function(x)
      local h = x
      for _ = 1, n do h = h * 1.0000001 + 0 end
      return h
    end)
  end
end

for _, n in ipairs{8000, 32000, 100000} do
  local s = first_call(const_chain(n), n >= 100000 and 3 or 5)
  emit("const_chain_" .. math.floor(n / 1000) .. "k_trace", s * 1e3, "ms")
  emit("const_chain_" .. math.floor(n / 1000) .. "k_per_op", s / (2 * n) * 1e6, "us/op")
end

-- h = h + v, n times: n reads of one Variable (one read node).
local function variable_reads(n)
  return function()
    local v = tide.Variable({1, 2})
    return tide.trace(function(x)
      local h = x
      for _ = 1, n do h = h + v end
      return h
    end)
  end
end
emit("variable_reads_32k_trace", first_call(variable_reads(32000), 5) * 1e3, "ms")

-- The fixed cost of a boundary: an outermost tape:run (which runs its
-- function in a coroutine of its own), and a call of a traced function.
do
  local x = tide.Variable({0.5})
  local function nothing() end
  local t = timing.measure(function()
    local tape = tide.GradientTape()
    tape:run(nothing)
  end, 20000, 7)
  emit("tape_run_empty", t * 1e6, "us")
  local f = tide.trace(function(a) return a end)
  local a = tide.tensor({1, 2}, "float32")
  emit("traced_call_identity", timing.measure(function() f(a) end, 20000, 7) * 1e6, "us")
  local one = tide.tensor({0.5}, "float32")
  emit("tape_run_mul_gradient", timing.measure(function()
    local tape = tide.GradientTape()
    local y = tape:run(function() return x * one end)
    tape:gradient(y, x)
  end, 20000, 7) * 1e6, "us")
end
