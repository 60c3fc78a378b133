-- examples/fashion_mnist_mlp.lua — Keras's classic: a 784-256-128-10 MLP on
-- Fashion-MNIST (Debian's dataset-fashion-mnist), 5 epochs with a
-- validation split, then the test accuracy.
--   build/tide examples/fashion_mnist_mlp.lua
-- TIDE_EXAMPLE_SUBSET=N trains one epoch on the first N images and tests on
-- the first N (tests/sh/test_examples.sh runs it so).
local tide = require "tide"
local read_idx = require("tide.io.idx").read_idx

local DIR = os.getenv("FASHION_MNIST_DIR") or "/usr/share/datasets/fashion-mnist"
local SUBSET = tonumber(os.getenv("TIDE_EXAMPLE_SUBSET") or "")

local function load(name)
  local path = DIR .. "/" .. name .. ".gz"
  local f = io.open(path, "rb")
  if not f then
    error(string.format("fashion_mnist_mlp: %s is missing; install Debian's package dataset-fashion-mnist " ..
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
  L.Dense { 256, activation = "relu" },
  L.Dense { 128, activation = "relu" },
  L.Dense { 10 },
}
model:summary()
model:compile {
  optimizer = tide.optimizers.Adam { learning_rate = 1e-3 },
  loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true },
  metrics = { "accuracy" },
}

local now = require("tide.models.progbar").now -- a monotonic wall clock, in seconds
local Timer = tide.callbacks.Callback:extend("Timer")
function Timer:on_epoch_begin() self.start = now() end
function Timer:on_epoch_end() self.times = self.times or {}; self.times[#self.times + 1] = now() - self.start end
local timer = Timer()

model:fit(x_train, y_train, { epochs = SUBSET and 1 or 5, batch_size = 128, validation_split = 0.1, callbacks = { timer } })
local loss, accuracy = unpack(model:evaluate(x_test, y_test, { batch_size = 256, verbose = 0 }))
local sum = 0
for _, t in ipairs(timer.times) do sum = sum + t end
print(string.format("test loss: %.4f", loss))
print(string.format("test accuracy: %.4f", accuracy))
print(string.format("mean epoch time (wall, validation included): %.2f s", sum / #timer.times))
