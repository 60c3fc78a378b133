-- tests/sh/embed_model.lua DIR — the Lua half of tests/sh/test_embed_model.sh:
-- trains a small Keras classifier, saves it with model:save(DIR/keras) and a
-- traced function with tide.saved_model.save(DIR/traced), and writes inputs
-- and the Lua predictions for the C half to compare (DIR/keras.txt, DIR/traced.txt).
local tide = require "tide"
local dir = assert(arg[1], "usage: embed_model.lua DIR")

tide.random.set_seed(7)
local L = tide.layers
local model = tide.Sequential {
  tide.Input { shape = { 8 } },
  L.Dense { 16, activation = "relu" },
  L.Dense { 3, activation = "softmax" },
}
model:compile { optimizer = "adam", loss = "sparse_categorical_crossentropy" }
local x_train = tide.random.normal({ 64, 8 })
local y_train = tide.cast(tide.argmax(x_train:slice { {}, { 0, 3 } }, 1), "int32")
model:fit(x_train, y_train, { epochs = 3, batch_size = 16, verbose = 0 })
model:save(dir .. "/keras")

local w = tide.Variable(tide.random.normal({ 8, 4 }, { stddev = 0.5 }))
local f = tide.trace(function(x) return tide.tanh(tide.matmul(x, w)) end,
  { input_signature = { tide.TensorSpec({ tide.None, 8 }, "float32", "x") } })
tide.saved_model.save(f, dir .. "/traced")

-- "rows cols", the inputs, then the number of outputs and the outputs, row-major.
local function write(path, x, y)
  local out = assert(io.open(path, "w"))
  out:write(string.format("%d %d\n", x.shape[1], x.shape[2]))
  for _, row in ipairs(x:totable()) do
    for _, v in ipairs(row) do out:write(string.format("%.9g ", v)) end
    out:write("\n")
  end
  out:write(string.format("%d\n", y.shape[1] * y.shape[2]))
  for _, row in ipairs(y:totable()) do
    for _, v in ipairs(row) do out:write(string.format("%.9g ", v)) end
    out:write("\n")
  end
  out:close()
end

local x = tide.random.normal({ 5, 8 })
write(dir .. "/keras.txt", x, model:predict(x, { verbose = 0 }))
write(dir .. "/traced.txt", x, f(x))
