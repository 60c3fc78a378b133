-- tests/spec/models/config_spec.lua — models as configs: get_config/from_config
-- of functional and Sequential models (shared layers, several inputs and
-- outputs, nested RNN layers), model_from_config, clone_model, custom classes.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local config = require "tide.models.config"

local function same_outputs(a, b, x)
  local ya, yb = a(x), b(x)
  if tide.is_tensor(ya) then ya, yb = { ya }, { yb } end
  for i = 1, #ya do h.close(yb[i], ya[i]:totable(), 1e-6) end
end

describe("model configs", function()
  it("a functional model with shared layers, two inputs and two outputs rebuilds from its config", function()
    local a, b = tide.Input { shape = { 5 }, dtype = "int32", name = "a" }, tide.Input { shape = { 5 }, dtype = "int32" }
    local emb = L.Embedding { 7, 3, mask_zero = true }
    local ea, eb = emb(a), emb(b) -- one layer, two nodes
    local seq = L.LSTM { 4, return_sequences = true }(L.Add() { ea, eb })
    local last = L.Dense { 2, activation = "softmax" }(L.Bidirectional { L.GRU { 2 }, merge_mode = "sum" }(ea))
    local model = tide.Model { inputs = { a, b }, outputs = { seq, last }, name = "two_heads" }
    local c = model:get_config()
    assert.is_true(config.is_plain(c))
    assert.are.equal("two_heads", c.name)
    local emb_entry
    for _, e in ipairs(c.layers) do if e.class_name == "Embedding" then emb_entry = e end end
    assert.are.equal(2, #emb_entry.inbound_nodes)
    assert.are.same({ "__keras_tensor__", "a", 0, 0 }, emb_entry.inbound_nodes[1].args)
    local again = tide.Model:from_config(c)
    again:set_weights(model:get_weights())
    assert.are.equal(model:count_params(), again:count_params())
    same_outputs(model, again, { tide.tensor { { 1, 2, 0, 0, 0 }, { 3, 0, 0, 0, 0 } },
                                  tide.tensor { { 4, 4, 4, 0, 0 }, { 5, 6, 0, 0, 0 } } })
  end)

  it("a Sequential keeps its input (shape and dtype) and layers; clone_model gives fresh weights", function()
    local s = tide.Sequential { tide.Input { shape = { 5 }, dtype = "int32" }, L.Embedding { 9, 4 },
      L.Conv1D { 3, 2, activation = "relu" }, L.LSTM { 2, dropout = 0.1 }, L.Dense { 1, kernel_constraint = "non_neg" } }
    local c = s:get_config()
    assert.is_true(config.is_plain(c))
    assert.are.equal("InputLayer", c.layers[1].class_name)
    assert.are.equal("int32", c.layers[1].config.dtype)
    local copy = tide.models.clone_model(s)
    assert.are.equal(s:count_params(), copy:count_params())
    assert.are_not.same(s:get_weights()[1]:totable(), copy:get_weights()[1]:totable())
    copy:set_weights(s:get_weights())
    same_outputs(s, copy, tide.tensor { { 1, 2, 3, 4, 5 } })
    local from = tide.models.model_from_config(tide.layers.serialize(s))
    assert.are.equal("Sequential", getmetatable(from).__name)
  end)

  it("finds classes made with extend, or given in custom_objects", function()
    local Scale = L.Layer:extend("ConfigSpecScale")
    function Scale:init(opts) self.factor = opts and opts.factor or 1 end
    function Scale:call(x) return x * self.factor end
    function Scale:get_config()
      local c = L.Layer.get_config(self)
      c.factor = self.factor
      return c
    end
    local x = tide.Input { shape = { 2 } }
    local model = tide.Model { inputs = x, outputs = Scale { factor = 3 }(L.Dense { 2 }(x)) }
    local spec = tide.layers.serialize(model)
    local again = tide.models.model_from_config(spec)
    again:set_weights(model:get_weights())
    same_outputs(model, again, tide.ones { 1, 2 })
    local Other = L.Layer:extend("ConfigSpecOther")
    function Other:init() end -- takes (and ignores) the factor option
    function Other:call(v) return v * 0 end
    local replaced = tide.models.model_from_config(spec, { custom_objects = { ConfigSpecScale = Other } })
    h.close(replaced(tide.ones { 1, 2 }), { { 0, 0 } }, 0)
    spec.config.layers[#spec.config.layers].class_name = "NoSuchLayer"
    h.errors("unknown layer class 'NoSuchLayer': pass it as custom_objects = {NoSuchLayer = NoSuchLayer}",
      tide.models.model_from_config, spec)
  end)

  it("names what a config cannot carry, and broken configs", function()
    local x = tide.Input { shape = { 2 } }
    local model = tide.Model { inputs = x, outputs = L.Lambda { function(v) return v * 2 end }(x) }
    h.errors("holds a value a config cannot carry (a function or an object) at config.", function()
      model:get_config()
    end)
    h.errors("model_from_config: expects {class_name = ..., config = {...}}", tide.models.model_from_config, {})
    h.errors("Model.from_config: expects a functional model's config", function()
      tide.models.Model:from_config { layers = 3 }
    end)
    local y = L.Dense { 1 }(x)
    local c = tide.Model { inputs = x, outputs = y }:get_config()
    c.layers[2].inbound_nodes[1].args = { "__keras_tensor__", "nowhere", 0, 0 }
    h.errors("need tensors no layer makes", function() tide.models.Model:from_config(c) end)
  end)
end)
