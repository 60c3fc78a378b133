-- bench/autodiff.lua — what autodiff costs: recording and differentiating a
-- 100-op chain of tiny ops (us per op, beside PyTorch autograd in
-- bench/autodiff_torch.py), and the memory gradient checkpointing saves on a
-- deep stack of large Dense layers (tide.recompute_grad).
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local wall, median, emit = timing.wall, timing.measure, timing.emit

-- A chain of 100 tiny ops (25 rounds of mul, add, sin, tanh) on one element.
local N_OPS = 100
local function chain(x)
  local y = x
  for _ = 1, N_OPS / 4 do y = tide.tanh(tide.sin(y * 0.9 + 0.1)) end
  return y
end

do
  local x = tide.Variable({0.5}, {name = "x"})
  local plain = median(function() return chain(tide.constant({0.5}, "float32")) end, 2000, 7)
  emit("chain100_eager", plain / N_OPS * 1e6, "us/op")
  local t = median(function()
    local tape = tide.GradientTape()
    local y = tape:run(function() return chain(x) end)
    return tape:gradient(y, x)
  end, 500, 7)
  emit("chain100_tape_forward_backward", t / N_OPS * 1e6, "us/op")
end

-- Checkpointing: peak memory of a 16-layer tanh MLP (batch 2048, width 1024)
-- and its gradients, plain and with recompute_grad around blocks of 4 layers
-- (only block inputs are kept; a block's intermediates are rebuilt in backward).
do
  tide.random.set_seed(1)
  local layers, per_block, width, batch = 16, 4, 1024, 2048
  local ws = {}
  for i = 1, layers do
    ws[i] = tide.Variable(tide.random.normal({width, width}, {stddev = 1 / math.sqrt(width)}), {name = "w" .. i})
  end
  local x = tide.random.normal({batch, width})
  local function block(first)
    return function(h)
      for i = first, first + per_block - 1 do h = tide.tanh(tide.matmul(h, ws[i])) end
      return h
    end
  end
  local function run(checkpoint)
    tide.config.release_memory()
    tide.config.reset_memory_peak()
    local base = tide.config.memory_info().current
    local t0 = wall()
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      local h = x
      for first = 1, layers, per_block do
        local f = block(first)
        h = checkpoint and tide.recompute_grad(f)(h) or f(h)
      end
      return tide.reduce_mean(h)
    end)
    local grads = tape:gradient(loss, ws)
    local seconds = wall() - t0
    assert(#grads == layers)
    return tide.config.memory_info().peak - base, seconds
  end
  local plain_peak, plain_s = run(false)
  local ckpt_peak, ckpt_s = run(true)
  emit("mlp16_peak_plain", plain_peak / 2 ^ 20, "MiB")
  emit("mlp16_peak_recompute", ckpt_peak / 2 ^ 20, "MiB")
  emit("mlp16_memory_saved", 100 * (1 - ckpt_peak / plain_peak), "%")
  emit("mlp16_step_plain", plain_s * 1e3, "ms")
  emit("mlp16_step_recompute", ckpt_s * 1e3, "ms")
end
