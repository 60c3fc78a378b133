-- tests/spec/layers/reversible_embedding_spec.lua — tide.layers.ReversibleEmbedding against TF 2.21's Keras
-- (tests/fixtures/keras/reversible_embedding.lua): forward and reverse calls, tied and untied, soft cap; masks,
-- gradients, config, errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers

local F = dofile("tests/fixtures/keras/reversible_embedding.lua")

describe("ReversibleEmbedding", function()
  for _, case in ipairs(F.cases) do
    it(case.id .. ": Keras's embeddings and logits, eager and traced; config", function()
      local config = { 10, 4 }
      for k, v in pairs(case.config) do config[k] = v end
      local e = L.ReversibleEmbedding(config)
      local ids, hid = tide.tensor(F.ids, "int32"), tide.tensor(F.h, "float32")
      e(ids)
      local ws = {}
      for i, w in ipairs(case.weights) do ws[i] = tide.tensor(w, "float32") end
      e:set_weights(ws)
      h.close(e(ids), case.forward, 1e-6)
      h.close(e(hid, { reverse = true }), case.reverse, 1e-5)
      h.close(tide.trace(function(v) return e(v, { reverse = true }) end)(hid), case.reverse, 1e-5)
      local c = e:get_config()
      for k, v in pairs(case.keras_config) do assert.are.same(v, c[k], k) end
    end)
  end

  it("masks the forward call only (mask_zero), and differentiates the reverse one", function()
    local e = L.ReversibleEmbedding { 6, 3, mask_zero = true }
    local out = e(tide.tensor({ { 1, 0 } }, "int32"))
    local keras_mask = require "tide.keras_mask"
    h.close(keras_mask.get(out), { { true, false } }, 0)
    assert.is_nil(keras_mask.get(e(out, { reverse = true })))
    local g = L.ReversibleEmbedding { 5, 3, tie_weights = false, logit_soft_cap = 2, dtype = "float64" }
    g(tide.tensor({ { 1 } }, "int32"))
    gc.check(function(v) return g(v, { reverse = true }) end, { gc.random({ 2, 3 }, -1, 1, 601) })
  end)

  it("names what is wrong", function()
    h.errors("tie_weights must be true or false", L.ReversibleEmbedding, { 4, 2, tie_weights = 1 })
    h.errors("logit_soft_cap must be a number > 0", L.ReversibleEmbedding, { 4, 2, logit_soft_cap = 0 })
    h.errors("reverse_dtype must be a float dtype", L.ReversibleEmbedding, { 4, 2, reverse_dtype = "int32" })
    local e = L.ReversibleEmbedding { 4, 2 }
    e(tide.tensor({ 1 }, "int32"))
    h.errors("hidden states of last dim 2 (output_dim)", function() e(tide.ones({ 1, 3 }), { reverse = true }) end)
  end)
end)
