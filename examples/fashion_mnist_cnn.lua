-- examples/fashion_mnist_cnn.lua — TF's guide CNN on Fashion-MNIST (Debian's
-- dataset-fashion-mnist): Conv2D with an L2 penalty, pooling, dropout and
-- BatchNormalization, trained with fit, then the test accuracy.
--   build/tide examples/fashion_mnist_cnn.lua
-- TIDE_EXAMPLE_SUBSET=N trains one epoch on the first N images and tests on
-- the first N (tests/sh/test_examples.sh runs it so).
local tide = require "tide"
local read_idx = require("tide.io.idx").read_idx

local DIR = os.getenv("FASHION_MNIST_DIR") or "/usr/share/datasets/fashion-mnist"
local SUBSET = tonumber(os.getenv("TIDE_EXAMPLE_SUBSET") or "")
local EPOCHS = SUBSET and 1 or 3

local function load(name)
  local path = DIR .. "/" .. name .. ".gz"
  local f = io.open(path, "rb")
  if not f then
    error(string.format("fashion_mnist_cnn: %s is missing; install Debian's package dataset-fashion-mnist " ..
      "(apt-get install dataset-fashion-mnist) or set FASHION_MNIST_DIR", path), 0)
  end
  f:close()
  local t = read_idx(path)
  if SUBSET then t = t:slice { { 0, math.min(SUBSET, t.shape[1]) } } end
  return t
end

-- Images as [N, 28, 28, 1] in [0, 1] (channels last, as Keras), labels int32.
local function images(name) return tide.cast(load(name), "float32"):reshape { -1, 28, 28, 1 } / 255 end
local function labels(name) return tide.cast(load(name), "int32") end

local x_train, y_train = images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte")
local x_test, y_test = images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte")

local L = tide.layers
local model = tide.Sequential {
  tide.Input { shape = { 28, 28, 1 } },
  L.Conv2D { 32, 3, activation = "relu", kernel_regularizer = tide.regularizers.l2(0.02) },
  L.MaxPooling2D {},
  L.Flatten {},
  L.Dropout { 0.1 },
  L.Dense { 64, activation = "relu" },
  L.BatchNormalization {},
  L.Dense { 10 },
}
model:summary()
model:compile {
  optimizer = tide.optimizers.Adam { learning_rate = 1e-3 },
  loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true },
  metrics = { "accuracy" },
}

model:fit(x_train, y_train, { epochs = EPOCHS, batch_size = 128, verbose = SUBSET and 0 or 1 })
local loss, accuracy = unpack(model:evaluate(x_test, y_test, { batch_size = 256, verbose = 0 }))
print(string.format("test loss: %.4f", loss))
print(string.format("test accuracy: %.4f", accuracy))
