-- bench/trace.lua — what tide.trace buys: an LSTM cell of plain ops (batch 1,
-- hidden 32, input 32) unrolled 50 steps, traced and eager; a 10-op
-- elementwise chain on 1M float32 (in cache) and 10M (in memory), traced (one
-- fused node) and eager; and what a trace costs. bench/trace_torch.py runs
-- the same work in PyTorch (eager and TorchScript), bench/trace_peers.py in JAX and TensorFlow
-- (jax.jit, tf.function), with the same names; bench/run.sh prints them side by side.
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

tide.random.set_seed(0)

-- ---- LSTM cell, 50 steps ------------------------------------------------------
local STEPS, BATCH, INPUT, HIDDEN = 50, 1, 32, 32
local Wx = tide.random.normal({INPUT, 4 * HIDDEN}, {stddev = 0.2})
local Wh = tide.random.normal({HIDDEN, 4 * HIDDEN}, {stddev = 0.2})
local bias = tide.random.normal({4 * HIDDEN}, {stddev = 0.1})

local function lstm(xs, h, c)
  local x = tide.unstack(xs)
  for t = 1, STEPS do
    local gates = tide.matmul(x[t], Wx) + tide.matmul(h, Wh) + bias
    local parts = tide.split(gates, 4, 1)
    local i, f, g, o = tide.sigmoid(parts[1]), tide.sigmoid(parts[2]), tide.tanh(parts[3]), tide.sigmoid(parts[4])
    c = f * c + i * g
    h = o * tide.tanh(c)
  end
  return h, c
end

do
  local xs = tide.random.normal({STEPS, BATCH, INPUT})
  local h0, c0 = tide.zeros({BATCH, HIDDEN}), tide.zeros({BATCH, HIDDEN})
  local traced = tide.trace(lstm)
  local th, tc = traced(xs, h0, c0)
  local eh, ec = lstm(xs, h0, c0)
  local err = tide.reduce_max(tide.abs(th - eh)):item() + tide.reduce_max(tide.abs(tc - ec)):item()
  if err > 1e-5 then error("lstm: traced and eager disagree by " .. err) end

  local t_eager = measure(function() lstm(xs, h0, c0) end, 50, 9)
  local t_traced = measure(function() traced(xs, h0, c0) end, 500, 9)
  emit("lstm50_eager", t_eager * 1e6, "us")
  emit("lstm50_traced", t_traced * 1e6, "us")
  emit("lstm50_traced_speedup_over_eager", t_eager / t_traced, "x")
  local cf = traced:get_concrete_function(xs, h0, c0)
  emit("lstm50_graph_nodes", cf.graph:num_nodes(), "nodes")
  emit("lstm50_planned_bytes", cf.graph:planned_bytes(), "bytes")
  -- A trace: running lstm on symbolic tensors, then the passes (fresh Function each time).
  local t_trace = measure(function() tide.trace(lstm):get_concrete_function(xs, h0, c0) end, 5, 7)
  emit("lstm50_trace", t_trace * 1e3, "ms")
end

-- ---- a 10-op elementwise chain on 1M and 10M float32 ----------------------------------
local function chain(x)
  local y = x * 1.5 + 0.5           -- mul, add
  y = tide.relu(y) - 0.25           -- relu, sub
  y = tide.abs(y * x)               -- mul, abs
  y = tide.minimum(y, 4) + x        -- minimum, add
  return tide.square(y * 0.5)       -- mul, square
end

for _, case in ipairs { { 1000 * 1000, "1m", 100, 3 }, { 10 * 1000 * 1000, "10m", 10, 3 } } do
  local n, label, iters, eager_iters = case[1], case[2], case[3], case[4]
  local x = tide.random.uniform({n}, {minval = -1, maxval = 1})
  local traced = tide.trace(chain)
  local d = tide.reduce_max(tide.abs(traced(x) - chain(x))):item()
  if d > 1e-6 then error("chain: traced and eager disagree by " .. d) end
  local y
  local t_eager = measure(function() y = chain(x) end, eager_iters, 7)
  local t_fused = measure(function() y = traced(x) end, iters, 9)
  -- One array read and one written (write-allocate not counted, as STREAM's triad).
  emit("chain10_" .. label .. "_eager_time", t_eager * 1e3, "ms")
  emit("chain10_" .. label .. "_fused_time", t_fused * 1e3, "ms")
  emit("chain10_" .. label .. "_eager", 2 * n * 4 / t_eager / 1e9, "GB/s")
  emit("chain10_" .. label .. "_fused", 2 * n * 4 / t_fused / 1e9, "GB/s")
  emit("chain10_" .. label .. "_fused_speedup_over_eager", t_eager / t_fused, "x")
  if label == "1m" then
    local t_trace = measure(function() tide.trace(chain):get_concrete_function(x) end, 20, 7)
    emit("chain10_trace", t_trace * 1e3, "ms")
  end
end
