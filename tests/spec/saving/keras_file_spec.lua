-- tests/spec/saving/keras_file_spec.lua — .keras files: tide.models.load_model of
-- Keras 3's own files (tests/fixtures/keras_files, gen.py) gives models that
-- predict what Keras predicted and go on training; model:save("x.keras") writes
-- Keras 3's zip (Keras loading it is checked in make interop); unknown classes,
-- subclassed models and broken archives are clear errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local json = require "tide.json"
local zip = require "tide.io.zip"

local L = tide.layers
local FIX = "tests/fixtures/keras_files/"
local E = dofile(FIX .. "expected.lua")

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- A copy of the fixture `name` with config.json replaced by edit(config).
local function edited(name, edit)
  local z = zip.open(FIX .. name .. ".keras")
  local w = zip.writer()
  for _, entry in ipairs(z:names()) do
    local bytes = z:read(entry)
    if entry == "config.json" then bytes = json.encode(edit(json.decode(bytes))) end
    w:add(entry, bytes)
  end
  local path = tmp.name(".keras")
  w:save(path)
  return path
end

describe("tide.models.load_model of Keras 3's .keras files", function()
  for _, name in ipairs { "mlp", "cnn", "lstm", "mlp_deflated" } do
    it(name .. ": predicts what Keras predicted", function()
      local m = tide.models.load_model(FIX .. name .. ".keras")
      local e = E[name:gsub("_deflated", "")]
      h.close(m:predict(tide.tensor(e.x)), e.y, 1e-5)
    end)
  end

  it("mixed: two inputs, Bidirectional GRU, MultiHeadAttention, TimeDistributed, Embedding, ... as Keras", function()
    local m = tide.models.load_model(FIX .. "mixed.keras")
    h.close(m:predict { tide.tensor(E.mixed.x[1]), tide.tensor(E.mixed.x[2]) }, E.mixed.y, 1e-5)
    -- and saved again, the config keeps attention's two positional tensors
    local path = tmp.name(".keras")
    m:save(path)
    local config = json.decode(zip.open(path):read("config.json"))
    for _, l in ipairs(config.config.layers) do
      if l.class_name == "MultiHeadAttention" then assert.equal(2, #l.inbound_nodes[1].args) end
      if l.class_name == "Concatenate" then assert.equal(1, #l.inbound_nodes[1].args) end
    end
    local back = tide.models.load_model(path)
    h.close(back:predict { tide.tensor(E.mixed.x[1]), tide.tensor(E.mixed.x[2]) }, E.mixed.y, 1e-5)
    tmp.remove(path)
  end)

  it("rebuilds the layers, names and the compile with the optimizer's state, and fit goes on", function()
    local m = tide.models.load_model(FIX .. "cnn.keras")
    local names = {}
    for i, l in ipairs(m.layers) do names[i] = getmetatable(l).__name end
    assert.same({ "InputLayer", "Conv2D", "BatchNormalization", "MaxPooling2D", "Flatten", "Dense" }, names)
    assert.equal("cnn", m.name)
    assert.equal("image", m.layers[1].name)
    assert.is_true(rawget(m, "compiled"))
    assert.equal("SGD", m.optimizer.__name)
    assert.equal(E.cnn.iterations, m.optimizer.iterations:numpy())
    assert.equal(E.cnn.optimizer_variables, #m.optimizer.variables)
    m:fit(tide.tensor(E.cnn.x), tide.tensor(E.cnn.y), { epochs = 1, verbose = 0 })
    assert.equal(E.cnn.iterations + 1, m.optimizer.iterations:numpy())
    local plain = tide.models.load_model(FIX .. "cnn.keras", { compile = false })
    assert.is_nil(rawget(plain, "compiled"))
  end)

  it("names every layer class tide lacks, at once", function()
    local path = edited("cnn", function(c)
      c.config.layers[2].class_name = "FancyConv"
      c.config.layers[4].class_name = "MagicPool"
      return c
    end)
    h.errors("the model uses layer classes tide does not have: FancyConv, MagicPool",
      function() tide.models.load_model(path) end)
    tmp.remove(path)
  end)

  it("refuses a subclassed model, Keras options tide lacks, and archives that are not .keras", function()
    local path = edited("mlp", function(c) c.class_name = "MyModel"; return c end)
    h.errors("the model is a 'MyModel'; tide loads Keras's Sequential and functional models",
      function() tide.models.load_model(path) end)
    tmp.remove(path)
    path = edited("cnn", function(c) c.config.layers[3].config.renorm = true; return c end)
    h.errors("BatchNormalization 'batch_normalization' has renorm = true, which tide's BatchNormalization does not",
      function() tide.models.load_model(path) end)
    tmp.remove(path)
    local w = zip.writer()
    w:add("hello.txt", "hi")
    path = tmp.name(".keras")
    w:save(path)
    h.errors("has no config.json (entries: hello.txt)", function() tide.models.load_model(path) end)
    tmp.remove(path)
    h.errors("TF-Keras's legacy HDF5 model files are not read",
      function() tide.models.load_model(FIX .. "hostile/legacy_model.h5") end)
  end)

  it("truncated and corrupt files: clear errors", function()
    local good = read_bytes(FIX .. "mlp.keras")
    local path = tmp.name(".keras")
    for _, n in ipairs { 0, 30, math.floor(#good / 2), #good - 10 } do
      local f = assert(io.open(path, "wb"))
      f:write(good:sub(1, n))
      f:close()
      h.errors("zip: '" .. path .. "'", function() tide.models.load_model(path) end)
    end
    tmp.remove(path)
  end)
end)

describe("model:save to .keras", function()
  it("writes Keras 3's entries and config, and loads back with the same predictions and optimizer", function()
    local x = tide.Input { shape = { 4 }, name = "features" }
    local a = L.Dense { 6, activation = "tanh" }(x)
    local b = L.Dense { 6 }(x)
    local y = L.Dense { 2 }(L.Add {} { a, b })
    local m = tide.Model { inputs = x, outputs = y, name = "two_paths" }
    m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 }, loss = "mse" }
    local xs = tide.tensor(E.mlp.x)
    m:fit(xs, tide.ones { 3, 2 }, { epochs = 2, verbose = 0 })
    local dir = tmp.dir("keras")
    local path = dir .. "/m.keras"
    m:save(path)
    local p = io.popen("ls -A " .. dir)
    assert.equal("m.keras\n", p:read("*a")) -- no temporary file left
    p:close()
    local z = zip.open(path)
    assert.same({ "metadata.json", "config.json", "model.weights.h5" }, z:names())
    local config = json.decode(z:read("config.json"))
    assert.equal("Functional", config.class_name)
    assert.equal("keras.src.models.functional", config.module)
    assert.same({ "features", 0, 0 }, config.config.input_layers)
    local add = config.config.layers[4]
    assert.equal("Add", add.class_name)
    assert.equal("keras.layers", add.module)
    local ref = add.inbound_nodes[1].args[1][1]
    assert.equal("__keras_tensor__", ref.class_name)
    assert.equal(3, #ref.config.keras_history)
    assert.equal("Adam", config.compile_config.optimizer.class_name)
    assert.truthy(json.decode(z:read("metadata.json")).keras_version)
    local back = tide.models.load_model(path)
    h.close(back:predict(xs), m:predict(xs), 1e-6)
    assert.equal(m.optimizer.iterations:numpy(), back.optimizer.iterations:numpy())
    tmp.remove(dir)
  end)

  it("a functional model nested in another (a backbone under a new head) loads back, names and calls kept", function()
    local bx = tide.Input { shape = { 4 }, name = "backbone_in" }
    local base = tide.Model { bx, L.Dense { 3, activation = "relu", name = "feat" }(L.Dense { 5, name = "stem" }(bx)),
      name = "backbone" }
    local aug = tide.Sequential { L.Dropout { 0.5 }, name = "aug" }
    local x = tide.Input { shape = { 4 } }
    local m = tide.Model { x, L.Dense { 2, name = "head" }(base(aug(x), { training = false })), name = "outer" }
    local path = tmp.name(".keras")
    m:save(path)
    local back = tide.models.load_model(path)
    local xs = tide.tensor(E.mlp.x)
    h.close(back:predict(xs), m:predict(xs), 1e-6)
    local inner = back:get_layer("backbone")
    assert.equal("feat", inner.layers[#inner.layers].name)
    assert.equal("aug", back:get_layer("aug").name)
    os.remove(path)
  end)

  it("refuses a subclassed model and a save_weights to .keras", function()
    local Sub = tide.Model:extend("SubForKeras")
    function Sub:init() tide.Model.init(self); self.d = L.Dense { 2 } end
    function Sub:call(x) return self.d(x) end
    local s = Sub()
    s(tide.ones { 1, 3 })
    h.errors("is a subclassed model", function() s:save(tmp.name(".keras")) end)
  end)
end)
