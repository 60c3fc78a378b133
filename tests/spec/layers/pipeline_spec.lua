-- tests/spec/layers/pipeline_spec.lua — tide.layers.Pipeline (Keras 3's): layers in turn, training on by
-- default, masks passed along, config round trip, inside tide.data maps and traced functions; errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

describe("Pipeline", function()
  it("applies its layers in turn", function()
    local p = L.Pipeline { { L.Rescaling { 0.5 }, L.Normalization { mean = 1, variance = 4 } }, name = "prep" }
    local x = tide.tensor({ { 2, 4, 6 } }, "float32")
    h.close(p(x), { { 0, 0.5, 1 } }, 1e-6)
    assert.are.equal("prep", p.name)
    h.close(tide.trace(function(v) return p(v) end)(x), { { 0, 0.5, 1 } }, 1e-6)
    local ds = tide.data.Dataset.from_tensor_slices(x):map(function(v) return p(v) end)
    for e in ds:iter() do h.close(e, { 0, 0.5, 1 }, 1e-6) end
  end)

  it("trains unless told not to (augmentations and dropout apply), as Keras's Pipeline", function()
    tide.random.set_seed(3)
    local p = L.Pipeline({ L.Dropout { 0.5 } })
    local x = tide.ones({ 200 })
    local dropped = p(x)
    assert.is_true(tide.reduce_min(dropped):item() == 0)
    h.close(p(x, { training = false }), x, 0)
  end)

  it("passes each layer's mask to the next", function()
    local p = L.Pipeline { { L.Embedding { 5, 2, mask_zero = true }, L.GlobalAveragePooling1D() } }
    local ids = tide.tensor({ { 1, 0, 0 }, { 2, 3, 0 } }, "int32")
    local emb = p.layers[1]
    local want = tide.reduce_mean(emb(tide.tensor({ { 1 } }, "int32")), 1)
    h.close(p(ids):slice { { 0, 1 } }, want, 1e-6)
  end)

  it("round-trips its config, and tracks its layers' weights", function()
    local p = L.Pipeline { { L.Dense { 2 }, L.Dense { 1 } } }
    p(tide.ones({ 1, 3 }))
    assert.are.equal(4, #p.trainable_weights)
    local c = p:get_config()
    assert.are.equal("Dense", c.layers[1].class_name)
    local q = L.Pipeline:from_config(c)
    assert.are.equal(2, #q.layers)
    assert.are.equal(2, q.layers[1].units)
  end)

  it("names what is wrong", function()
    h.errors("expects a non-empty list of layers", L.Pipeline, {})
    h.errors("entry 2 of the list is not a layer", L.Pipeline, { { L.Dense { 2 }, 3 } })
    h.errors("unknown option 'scale'", L.Pipeline, { { L.Dense { 2 } }, scale = 2 })
    h.errors("the config must hold layers", L.Pipeline.from_config, L.Pipeline, { name = "x" })
  end)
end)
