-- tests/interop/keras_files_write.lua DIR [check] — models built in tide (an MLP,
-- a functional CNN with BatchNormalization and a merge, an LSTM; trained a step
-- so optimizer state and statistics move) saved as DIR/<name>.keras and
-- DIR/<name>.weights.h5 with their inputs and predictions in DIR/<name>.json,
-- for tests/interop/keras_files_check.py; with "check", loads the .keras files
-- Keras wrote into DIR/keras_<name>.keras and compares with DIR/keras_<name>.json.
local tide = require "tide"
local json = require "tide.json"
local dir, mode = arg[1], arg[2]
local L = tide.layers

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return s
end

if mode == "check" then
  for _, name in ipairs { "mlp", "cnn", "lstm" } do
    local want = json.decode(read(dir .. "/keras_" .. name .. ".json"))
    local m = tide.models.load_model(dir .. "/keras_" .. name .. ".keras")
    local y = m:predict(tide.tensor(want.x)):totable()
    local flat_y, flat_w = {}, {}
    local function flat(t, out) for _, v in ipairs(t) do if type(v) == "table" then flat(v, out) else out[#out + 1] = v end end end
    flat(y, flat_y)
    flat(want.y, flat_w)
    assert(#flat_y == #flat_w, name .. ": output sizes differ")
    for i = 1, #flat_y do
      assert(math.abs(flat_y[i] - flat_w[i]) <= 1e-5 + 1e-5 * math.abs(flat_w[i]),
        string.format("%s: output %d is %g in tide, %g in Keras", name, i, flat_y[i], flat_w[i]))
    end
    if want.iterations then
      assert(m.optimizer.iterations:numpy() == want.iterations, name .. ": optimizer iterations differ")
    end
  end
  print("tide read Keras's .keras files: ok")
  return
end

tide.random.set_seed(1)
local models = {}
models.mlp = function()
  local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 5, activation = "relu" },
    L.Dense { 3, activation = "softmax" } }
  m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 }, loss = "categorical_crossentropy" }
  return m, { 3, 4 }, { 3, 3 }
end
models.cnn = function()
  local x = tide.Input { shape = { 6, 6, 2 }, name = "image" }
  local y = L.Conv2D { 3, 3, activation = "relu", padding = "same" }(x)
  y = L.BatchNormalization {}(y)
  local z = L.Conv2D { 3, 1 }(x)
  y = L.MaxPooling2D { 2 }(L.Add {} { y, z })
  y = L.Dense { 2 }(L.Flatten {}(y))
  local m = tide.Model { inputs = x, outputs = y, name = "cnn" }
  m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.05, momentum = 0.9 }, loss = "mse" }
  return m, { 2, 6, 6, 2 }, { 2, 2 }
end
models.lstm = function()
  return tide.Sequential { tide.Input { shape = { 5, 3 } }, L.LSTM { 4 }, L.Dense { 2 } }, { 2, 5, 3 }, nil
end
for _, name in ipairs { "mlp", "cnn", "lstm" } do
  local m, xshape, yshape = models[name]()
  local x = tide.random.uniform(xshape, -1, 1)
  if yshape then m:fit(x, tide.random.uniform(yshape), { epochs = 1, verbose = 0 }) end
  m:save(dir .. "/" .. name .. ".keras")
  m:save_weights(dir .. "/" .. name .. ".weights.h5")
  local info = { x = x:totable(), y = m:predict(x):totable() }
  if yshape then info.iterations = m.optimizer.iterations:numpy() end
  write(dir .. "/" .. name .. ".json", json.encode(info))
end
print("tide wrote .keras and .weights.h5 files")
