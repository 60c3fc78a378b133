-- tests/spec/saving/keras_weights_spec.lua — model:load_weights/save_weights
-- with Keras 3's .weights.h5 layout: Keras's own files (tests/fixtures/keras_files,
-- gen.py) load into tide models of the same structure and predict what Keras
-- predicted, with the optimizer's state; tide's files have Keras's layout;
-- mismatched and broken files are refused whole, with nothing changed.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local h5 = require "tide.io.h5"
local kw = require "tide.saving.keras_weights"

local L = tide.layers
local FIX = "tests/fixtures/keras_files/"
local E = dofile(FIX .. "expected.lua")

local MAKE = {
  mlp = function()
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 5, activation = "relu" },
      L.Dense { 3, activation = "softmax" } }
    m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 }, loss = "categorical_crossentropy" }
    return m
  end,
  cnn = function()
    local x = tide.Input { shape = { 6, 6, 2 } }
    local y = L.Conv2D { 3, 3, activation = "relu" }(x)
    y = L.Dense { 2 }(L.Flatten {}(L.MaxPooling2D { 2 }(L.BatchNormalization {}(y))))
    local m = tide.Model { inputs = x, outputs = y }
    m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.05, momentum = 0.9 }, loss = "mse" }
    return m
  end,
  lstm = function() return tide.Sequential { tide.Input { shape = { 5, 3 } }, L.LSTM { 4 }, L.Dense { 2 } } end,
}

local function weights_of(m)
  local out = {}
  for i, v in ipairs(m.weights) do out[i] = v:numpy() end
  return out
end

-- The file's datasets as "path dtype shape" lines, sorted.
local function layout(path)
  local out = {}
  for _, node in ipairs(h5.open(path):tree()) do
    if node.kind == "dataset" then
      out[#out + 1] = string.format("%s %s (%s)", node.path, node.dtype, table.concat(node.shape, ","))
    end
  end
  table.sort(out)
  return out
end

describe("load_weights of Keras 3's .weights.h5", function()
  for _, name in ipairs { "mlp", "cnn", "lstm" } do
    it(name .. ": predicts what Keras predicted, with the optimizer's state", function()
      local m = MAKE[name]()
      m:load_weights(FIX .. name .. ".weights.h5")
      h.close(m:predict(tide.tensor(E[name].x)), E[name].y, 1e-5)
      if E[name].iterations then
        assert.equal(E[name].iterations, m.optimizer.iterations:numpy())
        assert.equal(E[name].optimizer_variables, #m.optimizer.variables)
      end
    end)
  end

  it("a .keras file's weights load too", function()
    local m = MAKE.cnn()
    m:load_weights(FIX .. "cnn.keras")
    h.close(m:predict(tide.tensor(E.cnn.x)), E.cnn.y, 1e-5)
  end)

  it("an uncompiled model takes the weights and leaves the optimizer's out", function()
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 5, activation = "relu" },
      L.Dense { 3, activation = "softmax" } }
    m:load_weights(FIX .. "mlp.weights.h5")
    h.close(m:predict(tide.tensor(E.mlp.x)), E.mlp.y, 1e-5)
  end)

  it("a file that does not fit names every mismatch and changes nothing", function()
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 6 }, L.Dense { 3 }, L.Dense { 1 } }
    local before = weights_of(m)
    local err = h.errors("does not fit the model", function() m:load_weights(FIX .. "mlp.weights.h5") end)
    assert.truthy(err:find("variable 0 ('dense", 1, true), err)
    assert.truthy(err:find("has shape (4, 6), but 'layers/dense/vars/0'", 1, true), err)
    assert.truthy(err:find("has no 'layers/dense_2/vars'", 1, true), err)
    assert.same(before, weights_of(m))
    local lstm = MAKE.lstm()
    err = h.errors("holds weights the model has no place for", function() lstm:load_weights(FIX .. "cnn.weights.h5") end)
    assert.truthy(err:find("'layers/conv2d/vars'", 1, true), err)
  end)

  it("an optimizer with other variables is skipped with a warning, as Keras does", function()
    local m = MAKE.mlp()
    m:compile { optimizer = "sgd", loss = "mse" }
    local out = h.stderr_of(function() m:load_weights(FIX .. "mlp.weights.h5") end)
    assert.truthy(out:find("the optimizer in '.-' has 10 variables, but the model's sgd[_%d]* has 2"), out)
    h.close(m:predict(tide.tensor(E.mlp.x)), E.mlp.y, 1e-5)
  end)

  it("truncated, corrupt and foreign files: clear errors, weights unchanged", function()
    local src = assert(io.open(FIX .. "mlp.weights.h5", "rb"))
    local good = src:read("*a")
    src:close()
    local path = tmp.name(".weights.h5")
    local m = MAKE.mlp()
    local before = weights_of(m)
    for _, n in ipairs { 0, 7, 300, math.floor(#good / 3), #good - 40 } do
      local f = assert(io.open(path, "wb"))
      f:write(good:sub(1, n))
      f:close()
      local ok, err = pcall(m.load_weights, m, path)
      if not ok then assert.truthy(tostring(err):find("hdf5", 1, true) or tostring(err):find("does not fit", 1, true),
        tostring(err)) end
      if not ok then assert.same(before, weights_of(m)) end
    end
    local f = assert(io.open(path, "wb"))
    f:write(assert(io.open(FIX .. "mlp.keras", "rb")):read("*a"))
    f:close()
    h.errors("is not a readable HDF5 file", function() m:load_weights(path) end)
    assert.same(before, weights_of(m))
    tmp.remove(path)
  end)

  it("an unbuilt model is refused", function()
    local m = tide.Sequential { L.Dense { 3 } }
    h.errors("the model is not built", function() m:load_weights(FIX .. "mlp.weights.h5") end)
  end)
end)

describe("save_weights to .weights.h5", function()
  it("writes Keras 3's layout (the fixtures' paths, dtypes and shapes) and loads back", function()
    for _, name in ipairs { "mlp", "cnn", "lstm" } do
      local m = MAKE[name]()
      if rawget(m, "compiled") then
        m:fit(tide.tensor(E[name].x), tide.tensor(E[name].y), { epochs = 1, verbose = 0 })
      end
      local path = tmp.name(".weights.h5")
      m:save_weights(path)
      assert.same(layout(FIX .. name .. ".weights.h5"), layout(path))
      local again = MAKE[name]()
      again:load_weights(path)
      assert.same(weights_of(m), weights_of(again))
      if rawget(m, "compiled") then
        assert.equal(m.optimizer.iterations:numpy(), again.optimizer.iterations:numpy())
      end
      tmp.remove(path)
    end
  end)

  it("other names keep tide's safetensors; a .keras name is refused", function()
    local m = MAKE.lstm()
    local path = tmp.name(".safetensors")
    m:save_weights(path)
    assert.truthy(tide.safetensors.load_file(path)["0/lstm_cell/kernel"])
    tmp.remove(path)
    h.errors("save a whole model with model:save", function() m:save_weights("/tmp/x.keras") end)
  end)

  it("walks sub-layers as Keras does: attribute names in natural order, lists by class name", function()
    local Block = L.Layer:extend("Block")
    function Block:init(opts)
      L.Layer.init(self, opts)
      self.proj10 = L.Dense { 2 }
      self.proj2 = L.Dense { 2 }
      self.parts = { L.Dense { 2 }, L.Dense { 2 }, L.Conv1D { 2, 1 } }
    end
    function Block:call(x)
      for _, p in ipairs(self.parts) do x = p(x) end
      return self.proj10(self.proj2(x))
    end
    local x = tide.Input { shape = { 3, 2 } }
    local m = tide.Model { inputs = x, outputs = Block {}(x) }
    local paths = {}
    for _, e in ipairs(kw.entries(m)) do paths[#paths + 1] = e.path end
    assert.same({ "vars", "layers/input_layer/vars", "layers/block/vars", "layers/block/parts/dense/vars",
      "layers/block/parts/dense_1/vars", "layers/block/parts/conv1d/vars", "layers/block/proj2/vars",
      "layers/block/proj10/vars" }, paths)
  end)
end)
