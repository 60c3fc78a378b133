-- tests/spec/layers/gradients_spec.lua — gradients through layers: every
-- trainable weight gets one (a tape test per layer), and float64 finite
-- differences agree with the tape for Dense, LayerNormalization and
-- BatchNormalization in training, with respect to the input and each weight
-- (gradcheck.check_layer).
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

local gc = require "gradcheck"
local weights_like, gradcheck = gc.layer_weights, gc.check_layer

describe("gradients through layers", function()
  before_each(function() tide.random.set_seed(5) end)

  it("Dense (float64): finite differences agree for the input, kernel and bias", function()
    gradcheck(L.Dense { 3, activation = "tanh", dtype = "float64" }, tide.random.normal({ 4, 5 }, { dtype = "float64" }))
    gradcheck(L.Dense { 2, activation = "gelu", dtype = "float64" }, tide.random.normal({ 2, 3, 4 }, { dtype = "float64" }))
  end)

  it("LayerNormalization (float64): finite differences agree for the input, gamma and beta", function()
    local ln = L.LayerNormalization { dtype = "float64" }
    ln(tide.zeros({ 1, 6 }, "float64"))
    ln:set_weights({ weights_like(tide.zeros({ 6 }, "float64")), tide.random.normal({ 6 }, { dtype = "float64" }) })
    gradcheck(ln, tide.random.normal({ 3, 6 }, { dtype = "float64" }))
    gradcheck(L.LayerNormalization { axis = { 1, 2 }, dtype = "float64" },
      tide.random.normal({ 2, 3, 4 }, { dtype = "float64" }))
  end)

  it("BatchNormalization in training (float64): finite differences agree for the input, gamma and beta", function()
    local bn = L.BatchNormalization { dtype = "float64" }
    bn(tide.zeros({ 1, 4 }, "float64"))
    bn:set_weights({ weights_like(tide.zeros({ 4 }, "float64")), tide.random.normal({ 4 }, { dtype = "float64" }),
      tide.zeros({ 4 }, "float64"), tide.ones({ 4 }, "float64") })
    gradcheck(bn, tide.random.normal({ 5, 4 }, { dtype = "float64" }), { training = true })
    gradcheck(L.BatchNormalization { axis = 1, dtype = "float64" }, tide.random.normal({ 3, 2, 4 }, { dtype = "float64" }),
      { training = true })
  end)

  it("Conv2D and Conv1D (float64): finite differences agree for the input, kernel and bias", function()
    gradcheck(L.Conv2D { 2, 2, strides = 2, padding = "same", activation = "tanh", dtype = "float64" },
      tide.random.normal({ 1, 3, 3, 2 }, { dtype = "float64" }))
    gradcheck(L.Conv1D { 2, 2, padding = "causal", dtype = "float64" }, tide.random.normal({ 1, 4, 2 }, { dtype = "float64" }))
  end)

  it("every trainable weight of every layer gets a gradient from a tape", function()
    local x4 = tide.random.normal { 2, 3, 4, 2 }
    local x2 = tide.random.normal { 3, 4 }
    local cases = {
      { L.Dense { 3 }, x2 }, { L.LayerNormalization(), x2 }, { L.BatchNormalization(), x2, true },
      { L.Embedding { 5, 3 }, tide.tensor { { 1, 4 }, { 0, 0 } } },
      { L.Conv2D { 3, 2, padding = "same", activation = "relu" }, x4 },
      { L.Conv1D { 2, 3, padding = "causal" }, tide.random.normal { 2, 5, 3 } },
    }
    for _, c in ipairs(cases) do
      local layer, x, training = c[1], c[2], c[3]
      layer(x)
      local tape = tide.GradientTape()
      local loss = tape:run(function() return tide.reduce_sum(layer(x, { training = training }) ^ 2) end)
      local grads = tape:gradient(loss, layer.trainable_weights)
      assert.are.equal(#layer.trainable_weights, #grads)
      -- by index over the weights: #grads and ipairs stop at (or before) the first nil
      for i = 1, #layer.trainable_weights do
        local g = grads[i]
        assert.is_not_nil(g, layer.name .. ": weight " .. i .. " got no gradient")
        assert.are.same(layer.trainable_weights[i].shape, g.shape)
      end
    end
    -- a subclassed block with sub-layers in a table: its weights all get gradients
    local Block = L.Layer:extend("GradBlock")
    function Block:init() self.parts = { L.Dense { 4, activation = "relu" }, L.LayerNormalization(), L.Dense { 1 } } end
    function Block:call(x)
      for _, p in ipairs(self.parts) do x = p(x) end
      return x
    end
    local b = Block()
    local tape = tide.GradientTape()
    local loss = tape:run(function() return tide.reduce_sum(b(tide.reshape(x4, { 2, -1 }))) end)
    local grads = tape:gradient(loss, b.trainable_weights)
    assert.are.equal(6, #b.trainable_weights)
    assert.are.equal(6, #grads)
    for i = 1, 6 do assert.is_not_nil(grads[i]) end
    -- the embedding's gradient lands on the rows looked up
    local e = L.Embedding { 4, 2, embeddings_initializer = "ones" }
    local t = tide.GradientTape()
    local l = t:run(function() return tide.reduce_sum(e({ 1, 1, 3 })) end)
    assert.are.same({ { 0, 0 }, { 2, 2 }, { 0, 0 }, { 1, 1 } }, t:gradient(l, e.embeddings):totable())
  end)
end)
