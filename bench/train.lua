-- bench/train.lua [mlp|cnn] — Keras training on Fashion-MNIST: one epoch of
-- fit (batch 128, Adam 1e-3, shuffled, the first epoch, its trace included),
-- the test accuracy after it, predict's time per image on the 10,000 test
-- images (batch 128) and the process's peak RSS (VmHWM). Without an argument
-- each model runs in a process of its own, so their peaks do not mix.
-- The same work: bench/train_torch.py (PyTorch), bench/train_peers.py (TF Keras).
local which = arg[1]
if which == nil then
  for _, model in ipairs { "mlp", "cnn" } do
    local p = assert(io.popen(string.format("'%s' '%s' %s", arg[-1], arg[0], model)))
    io.write(p:read("*a"))
    io.stdout:flush()
    if not p:close() then error("bench/train.lua: the " .. model .. " run failed", 0) end
  end
  return
end
if which ~= "mlp" and which ~= "cnn" then error("bench/train.lua: the model is mlp or cnn, got " .. which, 0) end

local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local read_idx = require("tide.io.idx").read_idx

local DIR = os.getenv("FASHION_MNIST_DIR") or "/usr/share/datasets/fashion-mnist"
local function load(name)
  local path = DIR .. "/" .. name .. ".gz"
  if not io.open(path, "rb") then
    error("bench/train.lua: " .. path .. " is missing; install Debian's package dataset-fashion-mnist", 0)
  end
  return read_idx(path)
end
local shape = which == "mlp" and { -1, 784 } or { -1, 28, 28, 1 }
-- uint8 to float32 in [0, 1] in one fused pass: no float32 temporary of the
-- whole set (188 MB for the training images), as numpy's in-place division.
local to_float = tide.trace(function(u) return tide.reshape(tide.cast(u, "float32") / 255, shape) end)
local function images(name) return to_float(load(name)) end
local function labels(name) return tide.cast(load(name), "int32") end
local x_train, y_train = images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte")
local x_test, y_test = images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte")

tide.random.set_seed(0)
local L = tide.layers
local model
if which == "mlp" then
  model = tide.Sequential {
    tide.Input { shape = { 784 } },
    L.Dense { 256, activation = "relu" },
    L.Dense { 128, activation = "relu" },
    L.Dense { 10 },
  }
else
  model = tide.Sequential {
    tide.Input { shape = { 28, 28, 1 } },
    L.Conv2D { 32, 3, activation = "relu" },
    L.MaxPooling2D { 2 },
    L.Conv2D { 64, 3, activation = "relu" },
    L.MaxPooling2D { 2 },
    L.Flatten {},
    L.Dense { 128, activation = "relu" },
    L.Dense { 10 },
  }
end
model:compile {
  optimizer = tide.optimizers.Adam { learning_rate = 1e-3 },
  loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true },
  metrics = { "accuracy" },
}

-- A line of /proc/self/status (VmHWM: the peak resident set) in MiB.
local function status_mib(key)
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^" .. key .. ":%s+(%d+) kB")
    if kb then return tonumber(kb) / 1024 end
  end
end
local t0 = timing.wall()
model:fit(x_train, y_train, { epochs = 1, batch_size = 128, verbose = 0 })
local epoch = timing.wall() - t0
local accuracy = model:evaluate(x_test, y_test, { batch_size = 128, verbose = 0 })[2]
local n = x_test.shape[1]
local predict = timing.measure(function() return model:predict(x_test, { batch_size = 128 }) end, 1, 5)

local name = "train_" .. which
timing.emit(name .. "_epoch", epoch, "s")
timing.emit(name .. "_test_accuracy", accuracy, "acc")
timing.emit(name .. "_predict", predict / n * 1e6, "us/image")
timing.emit(name .. "_peak_rss", status_mib("VmHWM"), "MiB")
