-- examples/custom_loop.lua — a training loop written by hand, as TF's
-- "Writing a training loop from scratch": a traced train step (tide.trace)
-- with GradientTape, the layers' regularization losses added to the loss,
-- Mean and SparseCategoricalAccuracy metrics, and a summary per epoch, on
-- Fashion-MNIST (Debian's dataset-fashion-mnist).
--   build/tide examples/custom_loop.lua
-- TIDE_EXAMPLE_SUBSET=N trains one epoch on the first N images and tests on
-- the first N (tests/sh/test_examples.sh runs it so).
local tide = require "tide"
local read_idx = require("tide.io.idx").read_idx

local DIR = os.getenv("FASHION_MNIST_DIR") or "/usr/share/datasets/fashion-mnist"
local SUBSET = tonumber(os.getenv("TIDE_EXAMPLE_SUBSET") or "")
local EPOCHS = SUBSET and 1 or 5
local BATCH = 128

local function load(name)
  local path = DIR .. "/" .. name .. ".gz"
  local f = io.open(path, "rb")
  if not f then
    error(string.format("custom_loop: %s is missing; install Debian's package dataset-fashion-mnist " ..
      "(apt-get install dataset-fashion-mnist) or set FASHION_MNIST_DIR", path), 0)
  end
  f:close()
  local t = read_idx(path)
  if SUBSET then t = t:slice { { 0, math.min(SUBSET, t.shape[1]) } } end
  return t
end

local function images(name) return tide.cast(load(name), "float32"):reshape { -1, 784 } / 255 end
local function labels(name) return tide.cast(load(name), "int32") end

local x_train, y_train = images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte")
local x_test, y_test = images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte")

local L = tide.layers
local model = tide.Sequential {
  tide.Input { shape = { 784 } },
  L.Dense { 256, activation = "relu", kernel_regularizer = tide.regularizers.l2(1e-4) },
  L.Dense { 128, activation = "relu", kernel_regularizer = tide.regularizers.l2(1e-4) },
  L.Dense { 10 },
}
local optimizer = tide.optimizers.Adam { learning_rate = 1e-3 }
local loss_fn = tide.losses.SparseCategoricalCrossentropy { from_logits = true }
local train_loss = tide.metrics.Mean { name = "loss" }
local train_acc = tide.metrics.SparseCategoricalAccuracy { name = "accuracy" }
local test_acc = tide.metrics.SparseCategoricalAccuracy { name = "test_accuracy" }

local vars = model.trainable_weights -- the model was built by its Input
optimizer:build(vars)                -- slots made outside the trace

-- One optimizer step. Traced once: every batch but the last has the same
-- shape, and the last one traces a second graph (a different batch size).
local train_step = tide.trace(function(x, y)
  local tape = tide.GradientTape()
  local logits, loss = tape:run(function()
    local logits = model(x, { training = true })
    local loss = loss_fn(y, logits)
    for _, penalty in ipairs(model.losses) do loss = loss + penalty end -- the L2 terms
    return logits, loss
  end)
  optimizer:apply(tape:gradient(loss, vars), vars)
  train_loss:update_state(loss)
  train_acc:update_state(y, logits)
end, { name = "train_step" })

local test_step = tide.trace(function(x, y)
  test_acc:update_state(y, model(x, { training = false }))
end, { name = "test_step" })

local now = require("tide.models.progbar").now -- a monotonic wall clock, in seconds
local n = x_train.shape[1]
for epoch = 1, EPOCHS do
  local start = now()
  train_loss:reset_state()
  train_acc:reset_state()
  local order = tide.random.permutation(n)
  for a = 0, n - 1, BATCH do
    local rows = order:slice { { a, math.min(n, a + BATCH) } }
    train_step(tide.gather(x_train, rows), tide.gather(y_train, rows))
  end
  print(string.format("epoch %d/%d: loss %.4f, accuracy %.4f (%.1f s)", epoch, EPOCHS,
    train_loss:result():item(), train_acc:result():item(), now() - start))
end

test_acc:reset_state()
for a = 0, x_test.shape[1] - 1, 256 do
  local b = math.min(x_test.shape[1], a + 256)
  test_step(x_test:slice { { a, b } }, y_test:slice { { a, b } })
end
print(string.format("traces: train_step %d, test_step %d", train_step:trace_count(), test_step:trace_count()))
print(string.format("test accuracy: %.4f", test_acc:result():item()))
