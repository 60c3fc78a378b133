-- examples/embed/train.lua DIR — trains the small Fashion-MNIST classifier
-- that game_loop.c runs, in seconds: a 784-128-10 MLP, one epoch on the
-- first 12,000 training images (TIDE_EXAMPLE_SUBSET=N: N), softmax outputs.
-- Writes DIR/classifier (model:save), and the frames the game shows:
-- DIR/frames.npy (256 test images, float32 [256, 784]) and DIR/labels.npy.
--   tide examples/embed/train.lua out && ./game_loop out
local tide = require "tide"

local dir = arg and arg[1]
if not dir then
  io.stderr:write("usage: tide examples/embed/train.lua DIR\n")
  os.exit(2)
end
local SUBSET = tonumber(os.getenv("TIDE_EXAMPLE_SUBSET") or "") or 12000
local FRAMES = 256

local train, test = tide.datasets.fashion_mnist.load_data()
local function images(x, n) return tide.cast(x:slice { { 0, math.min(n, x.shape[1]) } }, "float32"):reshape { -1, 784 } / 255 end
local function labels(y, n) return tide.cast(y:slice { { 0, math.min(n, y.shape[1]) } }, "int32") end

tide.random.set_seed(1)
local L = tide.layers
local model = tide.Sequential {
  tide.Input { shape = { 784 } },
  L.Dense { 128, activation = "relu" },
  L.Dense { 10, activation = "softmax" },
}
model:compile { optimizer = "adam", loss = "sparse_categorical_crossentropy", metrics = { "accuracy" } }
local now = require("tide.models.progbar").now -- a monotonic wall clock, in seconds
local t0 = now()
model:fit(images(train[1], SUBSET), labels(train[2], SUBSET), { epochs = 1, batch_size = 64, verbose = 0 })
local x_frames, y_frames = images(test[1], FRAMES), labels(test[2], FRAMES)
local _, accuracy = unpack(model:evaluate(x_frames, y_frames, { verbose = 0 }))
print(string.format("trained on %d images in %.1f s; accuracy on the %d frames: %.3f", math.min(SUBSET, 60000),
  now() - t0, FRAMES, accuracy))

os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'")
model:save(dir .. "/classifier")
tide.io.write_npy(dir .. "/frames.npy", x_frames)
tide.io.write_npy(dir .. "/labels.npy", y_frames)
print("saved " .. dir .. "/classifier, frames.npy and labels.npy")
