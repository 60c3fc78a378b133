-- bench/autodiff_trace.lua — gradients through traced code: a traced MLP step
-- differentiated by a tape outside the call (forward and backward time, and
-- how many times the forward runs per step), and the gradient of a traced
-- while_loop against its number of iterations (a small RNN-like body).
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

tide.random.set_seed(0)

-- ---- a tape outside a traced MLP (batch 64, 256 -> 256 -> 256 -> 1, tanh) ----
do
  local BATCH, WIDTH = 64, 256
  local w1 = tide.Variable(tide.random.normal({WIDTH, WIDTH}, {stddev = 0.06}), {name = "w1"})
  local w2 = tide.Variable(tide.random.normal({WIDTH, WIDTH}, {stddev = 0.06}), {name = "w2"})
  local w3 = tide.Variable(tide.random.normal({WIDTH, 1}, {stddev = 0.06}), {name = "w3"})
  local vars = {w1, w2, w3}
  local mlp = tide.trace(function(x, y)
    local h = tide.tanh(tide.matmul(x, w1))
    h = tide.tanh(tide.matmul(h, w2))
    return tide.reduce_mean((tide.matmul(h, w3) - y) ^ 2)
  end, {name = "mlp"})
  local x = tide.random.normal({BATCH, WIDTH})
  local y = tide.random.normal({BATCH, 1})
  local function step()
    local tape = tide.GradientTape()
    local loss = tape:run(function() return mlp(x, y) end)
    return tape:gradient(loss, vars)
  end
  local t_fwd = measure(function() return mlp(x, y) end, 200, 9)
  local t_step = measure(step, 100, 9)
  emit("mlp_traced_forward", t_fwd * 1e6, "us")
  emit("mlp_traced_tape_forward_backward", t_step * 1e6, "us")
  emit("mlp_traced_backward_over_forward", t_step / t_fwd, "x")
  -- Forward runs per step: the forward graph's, plus one more when the
  -- backward graph computes the forward's tanh activations again (the
  -- gradient of tanh reads its output, so a backward that keeps what the
  -- forward saved has none).
  local cf = mlp:concrete_functions()[1]
  local function count_tanh(text)
    local n = 0
    for line in text:gmatch("[^\n]+") do
      local op = line:match("= ([%w_]+)%(") or line:match("= (fused%[[^%]]*%])")
      if op then
        for _ in op:gmatch("tanh") do n = n + 1 end
      end
    end
    return n
  end
  local fwd_text, bwd_text
  local pair = cf._taped and cf._taped.generic
  if pair then -- the forward graph that keeps what the backward needs, and that backward
    local binding = require "tide.binding"
    fwd_text = binding.ffi.string(binding.C.tide_graph_text(pair.forward))
    bwd_text = pair.backward_cf.graph:text()
  else -- (before: the call's own graph, and a backward function that runs fn again)
    fwd_text = cf.graph:text()
    bwd_text = cf._backward:concrete_functions()[1].graph:text()
  end
  local in_fwd, in_bwd = count_tanh(fwd_text), count_tanh(bwd_text)
  emit("mlp_traced_forward_runs_per_step", 1 + in_bwd / in_fwd, "runs")
end

-- ---- the gradient of a traced while_loop vs its iterations ---------------------
-- h <- tanh(h W + b) for n iterations (n a tensor argument: one trace), the
-- loss and its gradient w.r.t. W and b computed inside the trace.
do
  local H, BATCH = 32, 4
  -- (a contracting W: the gradient through 10,000 steps vanishes to zero
  -- instead of exploding, and passes through denormals only briefly, whose
  -- slow arithmetic would otherwise dominate the time per iteration)
  local W = tide.Variable(tide.random.normal({H, H}, {stddev = 0.15}), {name = "W"})
  local b = tide.Variable(tide.random.normal({1, H}, {stddev = 0.1}), {name = "b"})
  local function run(h0, n)
    local _, h = tide.while_loop(function(i) return i:lt(n) end,
      function(i, h) return i + 1, tide.tanh(tide.matmul(h, W) + b) end, {tide.tensor(0), h0})
    return tide.reduce_sum(h)
  end
  local forward = tide.trace(run, {name = "rnn_forward"})
  local grad_step = tide.trace(function(h0, n)
    local tape = tide.GradientTape()
    local loss = tape:run(function() return run(h0, n) end)
    local g = tape:gradient(loss, {W, b})
    return loss, g[1], g[2]
  end, {name = "rnn_grad"})
  local h0 = tide.random.normal({BATCH, H})
  local per_iter = {}
  for _, n in ipairs {100, 1000, 10000} do
    local nt = tide.tensor(n)
    local reps = math.max(1, math.floor(20000 / n))
    local t_f = measure(function() return forward(h0, nt) end, reps, 5)
    local t_g = measure(function() return grad_step(h0, nt) end, math.max(1, math.floor(reps / 4)), 5)
    emit(string.format("while_rnn_forward_%d", n), t_f * 1e3, "ms")
    emit(string.format("while_rnn_gradient_%d", n), t_g * 1e3, "ms")
    emit(string.format("while_rnn_gradient_per_iter_%d", n), t_g / n * 1e6, "us")
    per_iter[n] = t_g / n
  end
  -- Linear: the cost per iteration stays flat as the iterations grow.
  emit("while_rnn_gradient_per_iter_ratio_10000_vs_100", per_iter[10000] / per_iter[100], "x")
end
