-- tests/spec/saved_model/keras_spec.lua — model:save and tide.models.load_model:
-- the same predictions, training that goes on where it stopped (optimizer
-- slots and iterations), a fresh process, several inputs, custom layers, errors.
local tide = require "tide"
local prog = require "tide_program"
local h = require "helpers"
local L = tide.layers

describe("model:save and load_model", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("keras_sm") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  local function trained_model()
    tide.random.set_seed(1)
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 8, activation = "relu" },
      L.BatchNormalization {}, L.Dense { 3 } }
    m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01, use_ema = true },
      loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
    local x = tide.random.normal { 64, 4 }
    local y = tide.random.uniform({ 64 }, { maxval = 3, dtype = "int32" })
    m:fit(x, y, { epochs = 2, batch_size = 16, verbose = 0 })
    return m, x, y
  end

  it("gives the same predictions, and fit continues as if it never stopped", function()
    local m, x, y = trained_model()
    m:save(dir .. "/m")
    local again = tide.models.load_model(dir .. "/m")
    h.close(again:predict(x, { verbose = 0 }), m:predict(x, { verbose = 0 }):totable(), 0)
    assert.are.equal(m.optimizer.iterations:item(), again.optimizer.iterations:item())
    assert.are.equal("Adam", getmetatable(again.optimizer).__name)
    assert.is_true(again.optimizer.use_ema)
    local h1 = m:fit(x, y, { epochs = 1, batch_size = 16, verbose = 0, shuffle = false })
    local h2 = again:fit(x, y, { epochs = 1, batch_size = 16, verbose = 0, shuffle = false })
    h.close({ h2.history.loss[1], h2.history.accuracy[1] }, { h1.history.loss[1], h1.history.accuracy[1] }, 1e-6)
    h.close(again.layers[1].kernel:read_value(), m.layers[1].kernel:numpy(), 1e-6)
  end)

  it("saves a model compiled but never trained, and the loaded one trains as the original would", function()
    tide.random.set_seed(2)
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 3 } }
    m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 }, loss = "mse" }
    m:save(dir .. "/fresh")
    local again = tide.models.load_model(dir .. "/fresh")
    assert.are.equal(0, again.optimizer.iterations:item())
    local x, y = tide.random.normal { 16, 4 }, tide.random.normal { 16, 3 }
    local h1 = m:fit(x, y, { epochs = 1, batch_size = 8, verbose = 0, shuffle = false })
    local h2 = again:fit(x, y, { epochs = 1, batch_size = 8, verbose = 0, shuffle = false })
    h.close({ h2.history.loss[1] }, { h1.history.loss[1] }, 1e-6)
  end)

  it("loads in a fresh process, as a Keras model and as a bare SavedModel", function()
    local m, x = trained_model()
    m:save(dir .. "/m")
    local want = m:predict(x:slice { { 0, 2 } }, { verbose = 0 }):totable()
    prog.write_file(dir .. "/load.lua", [[
      local tide = require "tide"
      local m = tide.models.load_model(arg[1])
      local inputs = tide.tensor({ ]] .. table.concat((function()
        local rows = {}
        for i, r in ipairs(x:slice { { 0, 2 } }:totable()) do rows[i] = "{" .. table.concat(r, ", ") .. "}" end
        return rows
      end)(), ", ") .. [[ }, "float32")
      local y = m:predict(inputs, { verbose = 0 })
      local s = tide.saved_model.load(arg[1]).signatures.serving_default(inputs).output_0
      for _, t in ipairs { y, s } do
        for _, row in ipairs(t:totable()) do print(table.concat(row, " ")) end
      end
    ]])
    local rc, out, err = prog.sh(dir, prog.quote(prog.path) .. " " .. dir .. "/load.lua " .. dir .. "/m")
    assert.are.equal(0, rc, err)
    local got = {}
    for line in out:gmatch("[^\n]+") do
      local row = {}
      for v in line:gmatch("%S+") do row[#row + 1] = tonumber(v) end
      got[#got + 1] = row
    end
    assert.are.equal(4, #got)
    for i = 1, 2 do
      for j = 1, 3 do
        assert.is_true(math.abs(got[i][j] - want[i][j]) < 1e-5)
        assert.is_true(math.abs(got[i + 2][j] - want[i][j]) < 1e-5)
      end
    end
  end)

  it("saves a functional model with two inputs, and a custom layer through custom_objects", function()
    local Twice = L.Layer:extend("KerasSpecTwice")
    function Twice:call(v) return v * 2 end
    local a, b = tide.Input { shape = { 3 }, name = "a" }, tide.Input { shape = { 2 }, name = "b" }
    local y = L.Dense { 2 }(L.Concatenate() { Twice()(a), b })
    local m = tide.Model { inputs = { a, b }, outputs = y }
    m:save(dir .. "/f", { include_optimizer = false })
    local xa, xb = tide.ones { 2, 3 }, tide.ones { 2, 2 }
    local again = tide.models.load_model(dir .. "/f", { custom_objects = { KerasSpecTwice = Twice } })
    h.close(again { xa, xb }, m { xa, xb }:totable(), 0)
    assert.is_nil(rawget(again, "optimizer"))
    local sig = tide.saved_model.load(dir .. "/f").signatures.serving_default
    h.close(sig(xa, xb).output_0, m { xa, xb }:totable(), 1e-6)
  end)

  it("saves a model with a map of inputs: its serving signature takes them in the model's input order", function()
    -- the signature's inputs are m.inputs (tide.nest's order: sorted keys); the
    -- serving function must fill the map in that order too, not in pairs' order
    local names = { "a", "b", "c", "d", "e" }
    local ins, list = {}, {}
    for i, n in ipairs { "e", "a", "d", "b", "c" } do ins[n] = tide.Input { shape = { 1 }, name = n } end
    for i, n in ipairs(names) do list[i] = ins[n] end
    local m = tide.Model { inputs = ins, outputs = L.Concatenate()(list) }
    m:save(dir .. "/map", { include_optimizer = false })
    local sig = tide.saved_model.load(dir .. "/map").signatures.serving_default
    local xs, x = {}, {}
    for i, n in ipairs(names) do
      xs[i] = tide.tensor({ { i } }, "float32")
      x[n] = xs[i]
    end
    assert.are.same({ { 1, 2, 3, 4, 5 } }, m(x):totable())
    assert.are.same({ { 1, 2, 3, 4, 5 } }, sig(unpack(xs)).output_0:totable())
  end)

  it("names what is wrong", function()
    local x = tide.Input { shape = { 2 } }
    local m = tide.Model { inputs = x, outputs = L.Dense { 1 }(x) }
    m:compile { optimizer = "sgd", loss = function(a, b) return (a - b):square() end }
    h.errors("save: the loss given to compile is a function, which a saved model cannot hold", m.save, m, dir .. "/x")
    m:save(dir .. "/ok", { include_optimizer = false })
    local f = tide.trace(function(v) return v * 2 end, { input_signature = { tide.TensorSpec { 2 } } })
    tide.saved_model.save(f, dir .. "/plain")
    h.errors("is a SavedModel without a Keras model", tide.models.load_model, dir .. "/plain")
    h.errors("save: the model's inputs are not known", function()
      local s = tide.Sequential { L.Dense { 1 } }
      s:save(dir .. "/s")
    end)
    local lam = tide.Model { inputs = x, outputs = L.Lambda { function(v) return v end }(x) }
    h.errors("holds a value a config cannot carry", lam.save, lam, dir .. "/lam")
  end)
end)
