-- tests/spec/optimizers/multi_optimizer_spec.lua — MultiOptimizer and OptimizerMap against TF 2.21's Keras
-- (tests/fixtures/keras/multi_optimizer.lua): an exact path, a pattern and the default, eager and traced;
-- in compile/fit; config round trip; errors.
local tide = require "tide"
local h = require "helpers"
local O = tide.optimizers

local F = dofile("tests/fixtures/keras/multi_optimizer.lua")

local function make()
  local map = O.OptimizerMap(O.SGD { 0.1, momentum = 0.5 }, { ["enc_.*"] = O.Adam { 0.05 }, head = O.RMSprop { 0.01 } })
  return O.MultiOptimizer(map)
end

local function variables()
  local vs = {}
  for i, n in ipairs(F.names) do vs[i] = tide.Variable(tide.tensor(F.inits[n], "float32"), { name = n }) end
  return vs
end

local function grads(s)
  local gs = {}
  for i, n in ipairs(F.names) do gs[i] = tide.tensor(F.grads[s][n], "float32") end
  return gs
end

describe("MultiOptimizer", function()
  it("updates each variable with its optimizer as Keras does, eager and traced", function()
    for _, traced in ipairs { false, true } do
      local opt, vs = make(), variables()
      local step = traced and tide.trace(function(a, b, c) opt:apply({ a, b, c }, vs) end) or
        function(a, b, c) opt:apply({ a, b, c }, vs) end
      for s = 1, #F.steps do
        local g = grads(s)
        step(g[1], g[2], g[3])
        for i, n in ipairs(F.names) do h.close(vs[i]:numpy(), F.steps[s][n], 1e-5) end
      end
      assert.are.equal(F.iterations, opt.iterations:item())
      assert.are.equal(3, #opt.optimizers)
    end
  end)

  it("trains a model through compile and fit, and round-trips its config", function()
    tide.random.set_seed(2)
    local inp = tide.Input { shape = { 3 } }
    local enc = tide.layers.Dense { 2, name = "enc" }
    local m = tide.Model { inp, tide.layers.Dense { 1, name = "dec" }(enc(inp)) }
    local adam = O.Adam { 0.01 }
    local opt = O.MultiOptimizer(O.OptimizerMap(O.SGD { 0.1 }, { ["enc/.*"] = adam }))
    m:compile { optimizer = opt, loss = "mse" }
    local hist = m:fit(tide.ones({ 8, 3 }), tide.ones({ 8, 1 }), { epochs = 2, verbose = 0 })
    assert.is_true(hist.history.loss[2] < hist.history.loss[1])
    assert.is_not_nil(adam:get_slot(enc.kernel, "momentum"))
    assert.is_nil(adam:get_slot(m.layers[3].kernel, "momentum"))
    local again = O.deserialize(O.serialize(opt))
    assert.are.equal("MultiOptimizer", again.__name)
    assert.are.same(opt:get_config().optimizer_map.config.optimizer_map["enc/.*"],
      again:get_config().optimizer_map.config.optimizer_map["enc/.*"])
  end)

  it("names what is wrong", function()
    h.errors("optimizer_map must be an OptimizerMap or a function", O.MultiOptimizer, 3)
    h.errors("default_optimizer must be an optimizer", O.OptimizerMap, "sgd")
    h.errors("the optimizer for 'x' must be an optimizer", O.OptimizerMap, O.SGD(), { x = 1 })
    h.errors("an entry cannot be a LossScaleOptimizer", O.OptimizerMap, O.SGD(),
      { x = O.LossScaleOptimizer(O.SGD()) })
    local map = O.OptimizerMap(O.SGD())
    map:set("a", O.Adam())
    h.errors("'a' is already in the map", map.set, map, "a", O.Adam())
    local two = O.OptimizerMap(O.SGD(), { ["w.*"] = O.Adam(), ["wx"] = O.Adam(), ["w."] = O.RMSprop() })
    h.errors("several optimizers match variable 'wy'", two.get, two, "wy")
    local mo = make()
    h.errors("no learning_rate of its own", function() return mo.learning_rate end)
    h.errors("set the learning rate on the inner optimizers", function() mo.learning_rate = 1 end)
    h.errors("the map gave", function()
      O.MultiOptimizer(function() return 3 end):build { tide.Variable(tide.ones({ 1 })) }
    end)
    h.errors("a function map cannot be serialized", function() O.MultiOptimizer(function() end):get_config() end)
  end)
end)
