-- tests/spec/models/model_spec.lua — tide.Sequential, the functional
-- tide.Model and subclassed models: construction, build, weights and their
-- order, trainable, calling (inference by default), shared layers, several
-- inputs and outputs, summary() against Keras 3's text
-- (tests/fixtures/keras/models.lua, from models_gen.py), and the errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/models.lua")

local function capture(model, opts)
  local text
  opts = opts or {}
  opts.print_fn = function(s) text = s end
  model:summary(opts)
  return text
end

describe("tide.Sequential", function()
  before_each(function() L.clear_session() end)

  it("builds at once from tide.Input or input_shape=, and prints Keras 3's summary", function()
    local m = tide.Sequential { tide.Input { shape = { 784 } }, L.Dense { 256, activation = "relu" },
      L.Dense { 128, activation = "relu" }, L.Dense { 10 } }
    assert.is_true(m.built)
    assert.are.equal(F.summary_sequential, capture(m, { line_length = 76 }))
    assert.are.equal(235146, m:count_params())
    L.clear_session()
    local m2 = tide.Sequential { L.Dense { 256, activation = "relu", input_shape = { 784 } },
      L.Dense { 128, activation = "relu" }, L.Dense { 10 } }
    assert.are.equal(F.summary_sequential, capture(m2, { line_length = 76 }))
  end)

  it("without an input shape builds at the first call; summary says unbuilt before", function()
    local m = tide.Sequential { L.Dense { 3 } }
    assert.is_false(m.built)
    local text = capture(m, { line_length = 76 })
    assert.truthy(text:find("0 (unbuilt)", 1, true))
    assert.truthy(text:find("│ ?  ", 1, true))
    local y = m(tide.ones { 2, 5 })
    assert.are.same({ 2, 3 }, y.shape:as_list())
    assert.is_true(m.built)
    assert.are.equal(18, m:count_params())
  end)

  it("add, pop, layers, get_layer, weights in layer order, get/set_weights", function()
    local m = tide.Sequential()
    m:add(tide.Input { shape = { 4 } })
    local d1, d2 = L.Dense { 3, name = "first" }, L.Dense { 2, name = "second" }
    m:add(d1)
    m:add(d2)
    assert.are.equal(2, #m.layers)
    assert.are.equal(d2, m:get_layer("second"))
    assert.are.equal(d1, m:get_layer { index = 0 })
    local names = {}
    for i, v in ipairs(m.weights) do names[i] = v.name end
    assert.are.same({ "first/kernel", "first/bias", "second/kernel", "second/bias" }, names)
    local ws = m:get_weights()
    ws[1] = tide.zeros { 4, 3 }
    m:set_weights(ws)
    h.close(d1.kernel:numpy(), tide.zeros { 4, 3 }:totable(), 0)
    assert.are.equal(d2, m:pop())
    assert.are.equal(1, #m.layers)
    assert.are.same({ 2, 3 }, m(tide.ones { 2, 4 }).shape:as_list())
    h.errors("no layer named 'nope' (layers: first)", function() m:get_layer("nope") end)
  end)

  it("a direct call is inference; training=true reaches the layers", function()
    local m = tide.Sequential { tide.Input { shape = { 100 } }, L.Dropout { 0.5 } }
    local x = tide.ones { 4, 100 }
    h.close(m(x), x:totable(), 0)
    local y = m(x, { training = true })
    local zeros = tide.reduce_sum(tide.cast(y:eq(0), "float32")):item()
    assert.is_true(zeros > 50 and zeros < 350)
  end)

  it("trainable = false freezes every layer's weights", function()
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 3 }, L.BatchNormalization {} }
    assert.are.equal(4, #m.trainable_weights)
    m.trainable = false
    assert.are.equal(0, #m.trainable_weights)
    assert.are.equal(6, #m.non_trainable_weights)
    m.layers[1].trainable = true
    m.trainable = true
    assert.are.equal(4, #m.trainable_weights)
  end)

  it("a first layer that is a built model (a keras.applications base) builds the model at once", function()
    local x = tide.Input { shape = { 4, 4, 3 } }
    local base = tide.Model { inputs = x, outputs = L.GlobalAveragePooling2D {}(L.Conv2D { 2, 3, padding = "same" }(x)),
      name = "base" }
    base.trainable = false
    local m = tide.Sequential { base, L.Dense { 1 } }
    assert.is_true(m.built)
    assert.are.equal(56 + 3, m:count_params())
    assert.are.equal(2, #m.trainable_weights)
    assert.are.equal(2, #m.non_trainable_weights)
    local text = capture(m, { line_length = 76 })
    assert.truthy(text:find("base (Functional)", 1, true))
    assert.truthy(text:find("Total params: 59", 1, true))
    -- a built Sequential as the first layer, too; an unbuilt one leaves the model unbuilt
    local inner = tide.Sequential { tide.Input { shape = { 5 } }, L.Dense { 3 } }
    assert.is_true(tide.Sequential { inner, L.Dense { 2 } }.built)
    assert.is_false(tide.Sequential { tide.Sequential { L.Dense { 3 } }, L.Dense { 2 } }.built)
  end)

  it("names what is wrong", function()
    h.errors("Sequential: add expects a layer", function() tide.Sequential { 3 } end)
    h.errors("all layers must have unique names; 'x' is already in the model",
      function() tide.Sequential { L.Dense { 2, name = "x" }, L.Dense { 2, name = "x" } } end)
    h.errors("a KerasTensor may only come first", function()
      tide.Sequential { L.Dense { 2 }, tide.Input { shape = { 3 } } }
    end)
    h.errors("the model has no layers", function() tide.Sequential()(tide.ones { 2, 2 }) end)
    h.errors("unknown option 'foo'", function() tide.Sequential { foo = 1 } end)
  end)
end)

describe("tide.Model (functional)", function()
  before_each(function() L.clear_session() end)

  local function two_in_two_out()
    local a = tide.Input { shape = { 8 }, name = "a" }
    local b = tide.Input { shape = { 4 }, name = "b" }
    local shared = L.Dense { 4, name = "shared" }
    local x = L.Concatenate { name = "cat" } { shared(L.Dense { 4, name = "pa" }(a)), shared(b) }
    local y1 = L.Dense { 1, name = "out1" }(x)
    local y2 = L.BatchNormalization { name = "bn" }(L.Dense { 3, name = "d3" }(x))
    return tide.Model { inputs = { a, b }, outputs = { y1, y2 }, name = "two" }, shared
  end

  it("several inputs and outputs, a shared layer, Keras's layer order and summary", function()
    local m, shared = two_in_two_out()
    assert.are.equal(F.summary_functional, capture(m, { line_length = 76 }))
    local names = {}
    for i, l in ipairs(m.layers) do names[i] = l.name end
    assert.are.same({ "a", "pa", "b", "shared", "cat", "d3", "out1", "bn" }, names)
    assert.are.equal(12, #m.weights)
    assert.are.equal(10, #m.trainable_weights)
    local out = m { tide.ones { 2, 8 }, tide.ones { 2, 4 } }
    assert.are.same({ 2, 1 }, out[1].shape:as_list())
    assert.are.same({ 2, 3 }, out[2].shape:as_list())
    -- the shared layer is one set of weights used twice
    local xa, xb = tide.random.normal { 2, 8 }, tide.random.normal { 2, 4 }
    local cat = tide.concat({ shared(m:get_layer("pa")(xa)), shared(xb) }, -1)
    local got = m { xa, xb }
    h.close(got[1], m:get_layer("out1")(cat):totable(), 1e-5)
    h.close(got[2], m:get_layer("bn")(m:get_layer("d3")(cat)):totable(), 1e-5)
  end)

  it("computes what its layers compute, and nests as a layer of another model", function()
    local x = tide.Input { shape = { 3 } }
    local d1, d2 = L.Dense { 5, activation = "relu" }, L.Dense { 2 }
    local inner = tide.Model { inputs = x, outputs = d2(d1(x)) }
    local v = tide.random.normal { 4, 3 }
    h.close(inner(v), d2(d1(v)):totable(), 1e-6)
    local z = tide.Input { shape = { 3 } }
    local outer = tide.Model { inputs = z, outputs = L.Dense { 1 }(inner(z)) }
    assert.are.same({ 4, 1 }, outer(v).shape:as_list())
    assert.are.equal(6, #outer.weights)
  end)

  it("dict inputs are matched by name", function()
    local a, b = tide.Input { shape = { 2 } }, tide.Input { shape = { 2 } }
    local m = tide.Model { inputs = { left = a, right = b }, outputs = L.Add {} { a, b } }
    h.close(m { left = tide.ones { 1, 2 }, right = tide.ones { 1, 2 } * 2 }, { { 3, 3 } }, 0)
  end)

  it("names what is wrong", function()
    local a = tide.Input { shape = { 2 } }
    local b = tide.Input { shape = { 2 } }
    local y = L.Add {} { a, b }
    h.errors("graph disconnected: the outputs need the Input", function() tide.Model { inputs = a, outputs = y } end)
    h.errors("outputs= is required", function() tide.Model { inputs = a } end)
    h.errors("unknown option 'foo'", function() tide.Model { inputs = a, outputs = y, foo = 1 } end)
    h.errors("an input is missing", function()
      tide.Model { inputs = { a, b }, outputs = y } { tide.ones { 1, 2 } }
    end)
  end)
end)

describe("subclassed models", function()
  before_each(function() L.clear_session() end)

  local MLP = tide.Model:extend("MLP")
  function MLP:init(opts)
    self.hidden = L.Dense { opts.units, activation = "relu" }
    self.dropout = L.Dropout { 0.5 }
    self.out = L.Dense { 2 }
  end
  function MLP:call(x, opts)
    return self.out(self.dropout(self.hidden(x), { training = opts.training }))
  end

  it("tracks its layers, builds at the first call or by build(shape)", function()
    local m = MLP { units = 8 }
    assert.are.equal(0, #m.weights)
    m:build { tide.None, 5 }
    assert.are.equal(4, #m.weights)
    assert.are.equal(66, m:count_params())
    assert.are.same({ "dense", "dropout", "dense" }, (function()
      local out = {}
      for i, l in ipairs(m.layers) do out[i] = rawget(l, "name"):gsub("_%d+$", "") end
      return out
    end)())
    local m2 = MLP { units = 3, name = "mine" }
    assert.are.equal("mine", m2.name)
    assert.are.same({ 2, 2 }, m2(tide.ones { 2, 4 }).shape:as_list())
    local text = capture(m2, { line_length = 76 })
    assert.truthy(text:find('Model: "mine"', 1, true))
    assert.truthy(text:find("Total params: 23 (92.00 B)", 1, true))
  end)

  it("a direct call is inference", function()
    local m = MLP { units = 8 }
    local x = tide.ones { 3, 4 }
    h.close(m(x), m(x):totable(), 0)
  end)

  it("a subclass without call says so", function()
    local Bad = tide.Model:extend("Bad")
    function Bad:init() end
    h.errors("must define call(inputs, opts)", function() Bad {}(tide.ones { 1, 1 }) end)
  end)
end)
