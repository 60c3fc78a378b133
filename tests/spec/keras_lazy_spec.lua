-- tide's Keras modules load on first use (stdlib/tide/init.lua): a script
-- that only uses tensors keeps them out of its heap, and tide.layers,
-- tide.Sequential and the rest read as if loaded at once.
local tide = require "tide"

describe("Keras loaded on first use", function()
  it("is not loaded by require 'tide', and loads when a name is read", function()
    for _, m in ipairs { "tide.layers", "tide.models", "tide.optimizers", "tide.losses", "tide.metrics" } do
      assert.is_nil(package.loaded[m], m .. " was loaded by require 'tide'")
    end
    local heap = collectgarbage("count")
    local Sequential = tide.Sequential
    assert.are.equal(require("tide.models").Sequential, Sequential)
    assert.is_not_nil(package.loaded["tide.models"])
    assert.is_true(collectgarbage("count") > heap) -- it did load something
    assert.are.equal(require("tide.layers"), tide.layers)
    assert.are.equal(require("tide.layers").Input, tide.Input)
    assert.are.equal(require("tide.models").Model, tide.Model)
    for _, name in ipairs { "initializers", "activations", "regularizers", "losses", "metrics", "optimizers",
                            "callbacks" } do
      assert.are.equal(require("tide." .. name), tide[name], name)
    end
  end)

  it("leaves other names as they were: unknown ones are nil", function()
    assert.is_nil(tide.no_such_thing)
    assert.is_function(tide.matmul)
  end)
end)
