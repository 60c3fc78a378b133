-- bench/conv.lua — conv2d and pooling on Fashion-MNIST-sized work, forward and
-- forward+backward (through GradientTape), as images/s and ms per batch
-- (medians of several runs). bench/conv_torch.py runs the same work in PyTorch.
local tide = require "tide"
local nn = tide.nn

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

-- name, input shape, filters shape (3x3, SAME, stride 1)
local CONVS = {
  { "conv1", { 128, 28, 28, 1 }, { 3, 3, 1, 32 } },
  { "conv2", { 128, 14, 14, 32 }, { 3, 3, 32, 64 } },
}

tide.random.set_seed(0)
for _, c in ipairs(CONVS) do
  local name, xs, ws = c[1], c[2], c[3]
  local x = tide.random.uniform(xs)
  local w = tide.random.uniform(ws, -0.1, 0.1)
  local dy = tide.random.uniform({ xs[1], xs[2], xs[3], ws[4] })
  local n = xs[1]
  local t = measure(function() return nn.conv2d(x, w, 1, "SAME") end, 20)
  emit(name .. "_fwd", n / t, "img/s")
  emit(name .. "_fwd_time", t * 1e3, "ms")
  t = measure(function()
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      tape:watch(w)
      return nn.conv2d(x, w, 1, "SAME")
    end)
    return tape:gradient(y, { x, w }, { output_gradients = dy })
  end, 10)
  emit(name .. "_fwd_bwd", n / t, "img/s")
  emit(name .. "_fwd_bwd_time", t * 1e3, "ms")
end

-- 2x2 max pooling after conv1 ([128, 28, 28, 32] -> [128, 14, 14, 32]).
do
  local x = tide.random.uniform({ 128, 28, 28, 32 })
  local dy = tide.random.uniform({ 128, 14, 14, 32 })
  local t = measure(function() return nn.max_pool2d(x, 2) end, 20)
  emit("maxpool_fwd", 128 / t, "img/s")
  t = measure(function()
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return nn.max_pool2d(x, 2)
    end)
    return tape:gradient(y, x, { output_gradients = dy })
  end, 10)
  emit("maxpool_fwd_bwd", 128 / t, "img/s")
  -- the second order's op alone (TF's MaxPoolGradGrad; no PyTorch peer op)
  local raw = require("tide.ops.nn_conv").raw
  local a = require("tide.binding").ffi.new("tide_attrs")
  a.ints[0], a.ints[1], a.ints[2], a.ints[3], a.nints = 2, 2, 2, 2, 4
  local y, g = nn.max_pool2d(x, 2), tide.random.uniform({ 128, 28, 28, 32 })
  t = measure(function() return raw.run(raw.ops.max_pool2d_grad_grad, a, { x, y, g }) end, 20)
  emit("maxpool_grad_grad", 128 / t, "img/s")
end
