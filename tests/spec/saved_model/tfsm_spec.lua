-- tests/spec/saved_model/tfsm_spec.lua — a TF Hub-style BERT encoder SavedModel (tests/fixtures/tf_saved_model/
-- bert_gen.py, TF 2.21) as tide.layers.TFSMLayer and tide.hub.KerasLayer: TF's outputs, TF's gradients and finite
-- differences through the layer, freezing, a short fine-tune, use in functional and subclassed models, errors.
local tide = require "tide"
local h = require "helpers"

local FIX = "tests/fixtures/tf_saved_model/"
local BERT = FIX .. "bert"
local E = dofile(FIX .. "bert_expected.lua")

local function inputs()
  return {
    input_word_ids = tide.tensor(E.input_word_ids, "int32"),
    input_mask = tide.tensor(E.input_mask, "int32"),
    input_type_ids = tide.tensor(E.input_type_ids, "int32"),
  }
end

local function by_name(vars, name)
  for _, v in ipairs(vars) do if v.name == name then return v end end
  error("no variable " .. name)
end

-- sum(pooled_output * r): the scalar whose gradients bert_gen.py wrote.
local function objective(layer, x)
  return tide.reduce_sum(layer(x).pooled_output * tide.tensor(E.r, "float32"))
end

describe("tide.layers.TFSMLayer on a TF Hub BERT SavedModel", function()
  it("gives TF's pooled_output and sequence_output, by name", function()
    local l = tide.layers.TFSMLayer { BERT, call_endpoint = "serve" }
    local out = l(inputs())
    assert.are.same({ 2, 64 }, out.pooled_output.shape)
    assert.are.same({ 2, 10, 64 }, out.sequence_output.shape)
    h.close(out.pooled_output, E.pooled_output, 2e-5)
    h.close(out.sequence_output, E.sequence_output, 2e-5)
    -- the other batch and sequence lengths go through the same graph (None dims)
    local one = l { input_word_ids = tide.tensor({ E.input_word_ids[2] }, "int32"),
      input_mask = tide.tensor({ E.input_mask[2] }, "int32"), input_type_ids = tide.tensor({ E.input_type_ids[2] }, "int32") }
    h.close(one.pooled_output, { E.pooled_output[2] }, 2e-5)
  end)

  it("holds the model's variables as trainable Variables; trainable = false freezes them", function()
    local l = tide.layers.TFSMLayer { BERT }
    assert.are.equal(39, #l.trainable_variables) -- 5 of the embeddings, 16 per layer x 2, 2 of the pooler
    assert.are.equal(39, #l.weights)
    -- named by their checkpoint paths (the tf.Module's attributes)
    assert.are.equal("word_embeddings", l.weights[1].name)
    assert.are.same({ 100, 64 }, l.weights[1].shape)
    local b = by_name(l.weights, "pool_b")
    assert.is_true(b.trainable)
    l.trainable = false
    assert.are.equal(0, #l.trainable_variables)
    assert.are.equal(39, #l.non_trainable_weights)
    assert.is_false(b.trainable)
    local frozen = tide.layers.TFSMLayer { BERT, trainable = false }
    assert.are.equal(0, #frozen.trainable_weights)
  end)

  it("gives TF's gradients of its variables under a GradientTape", function()
    local l = tide.layers.TFSMLayer { BERT }
    local x = inputs()
    local pb, q = by_name(l.weights, "pool_b"), by_name(l.weights, "layers/1/q")
    local tape = tide.GradientTape()
    local y = tape:run(function() return objective(l, x) end)
    local g = tape:gradient(y, { pb, q })
    h.close(g[1], E.grad_pool_b, 1e-4)
    h.close(g[2], E.grad_query_1, 1e-4)
    -- every trainable variable gets a gradient
    local tape2 = tide.GradientTape()
    local y2 = tape2:run(function() return objective(l, x) end)
    local all = tape2:gradient(y2, l.trainable_variables)
    for i, v in ipairs(l.trainable_variables) do
      assert(all[i] ~= nil, "no gradient for " .. v.name)
      assert.are.same(v.shape, all[i].shape)
    end
  end)

  it("agrees with central differences on two variables", function()
    local l = tide.layers.TFSMLayer { BERT }
    local x = inputs()
    for _, case in ipairs { { "layers/0/wi", { 3, 7 } }, { "emb_gamma", { 5 } } } do
      local v = by_name(l.weights, case[1])
      local tape = tide.GradientTape()
      local y = tape:run(function() return objective(l, x) end)
      local g = tape:gradient(y, v)
      local at, value = case[2], tide.identity(v)
      -- a one-element step of the variable, at `at`
      local unit = tide.one_hot(tide.tensor(at[1], "int32"), v.shape[1])
      if #at == 2 then
        unit = tide.reshape(unit, { -1, 1 }) * tide.reshape(tide.one_hot(tide.tensor(at[2], "int32"), v.shape[2]), { 1, -1 })
      end
      local eps = 1e-2
      local function f(delta)
        v:assign(value + unit * delta)
        local r = objective(l, x):item()
        v:assign(value)
        return r
      end
      local fd = (f(eps) - f(-eps)) / (2 * eps)
      local got = tide.reduce_sum(g * unit):item()
      assert(math.abs(fd - got) <= 2e-3 + 2e-2 * math.abs(got),
        string.format("%s at %s: tape %.6g, central differences %.6g", case[1], table.concat(at, ","), got, fd))
    end
  end)

  it("fine-tunes: a classifier on the pooled output lowers its loss", function()
    local bert = tide.layers.TFSMLayer { BERT, trainable = true }
    local head = tide.layers.Dense { 2 }
    local x = inputs()
    local labels = tide.tensor({ 0, 1 }, "int32")
    local opt = tide.optimizers.Adam { 1e-3 }
    local loss_fn = tide.losses.SparseCategoricalCrossentropy { from_logits = true }
    local vars_before = tide.identity(by_name(bert.weights, "layers/0/q"))
    local losses = {}
    for step = 1, 8 do
      local tape = tide.GradientTape()
      local loss = tape:run(function() return loss_fn(labels, head(bert(x).pooled_output)) end)
      local vars = {}
      for _, v in ipairs(bert.trainable_variables) do vars[#vars + 1] = v end
      for _, v in ipairs(head.trainable_variables) do vars[#vars + 1] = v end
      opt:apply(tape:gradient(loss, vars), vars)
      losses[step] = loss:item()
    end
    assert(losses[8] < losses[1] * 0.5, string.format("loss %.4f -> %.4f", losses[1], losses[8]))
    -- the encoder's own weights moved
    local moved = tide.reduce_max(tide.abs(by_name(bert.weights, "layers/0/q") - vars_before)):item()
    assert(moved > 0, "the encoder's weights did not change")
  end)

  it("works in a functional model with named Inputs", function()
    local ins = {
      input_word_ids = tide.Input { shape = { tide.None }, dtype = "int32", name = "input_word_ids" },
      input_mask = tide.Input { shape = { tide.None }, dtype = "int32", name = "input_mask" },
      input_type_ids = tide.Input { shape = { tide.None }, dtype = "int32", name = "input_type_ids" },
    }
    local enc = tide.layers.TFSMLayer { BERT, trainable = false }
    local out = enc(ins)
    local logits = tide.layers.Dense { 3 } (out.pooled_output)
    local model = tide.Model { ins, logits }
    assert.are.same({ 2, 3 }, model(inputs()).shape)
    assert.are.equal(2, #model.trainable_weights) -- the head's kernel and bias
  end)

  it("works in a subclassed Model", function()
    local Classifier = tide.Model:extend("BertClassifier")
    function Classifier:init()
      self.encoder = tide.hub.KerasLayer { BERT, trainable = true }
      self.dropout = tide.layers.Dropout { 0.1 }
      self.dense = tide.layers.Dense { 2 }
    end
    function Classifier:call(x, opts)
      local o = self.encoder(x)
      return self.dense(self.dropout(o.pooled_output, opts))
    end
    local m = Classifier()
    local y = m(inputs())
    assert.are.same({ 2, 2 }, y.shape)
    assert.are.equal(41, #m.trainable_weights)
  end)

  it("round-trips its config (Keras's keys)", function()
    local l = tide.layers.TFSMLayer { BERT, call_endpoint = "serving_default", trainable = false, name = "enc" }
    local config = l:get_config()
    assert.are.same({ BERT, "serving_default", "enc", false },
      { config.filepath, config.call_endpoint, config.name, config.trainable })
    local again = tide.layers.deserialize(tide.layers.serialize(l))
    assert.are.equal("serving_default", again.call_endpoint)
    assert.are.equal(0, #again.trainable_weights)
    h.close(again(inputs()).pooled_output, E.pooled_output, 2e-5)
    local k = tide.layers.deserialize(tide.layers.serialize(tide.hub.KerasLayer { BERT, output_key = "pooled_output" }))
    assert.are.same({ "serving_default", "pooled_output", false }, { k.signature, k.output_key, k.trainable })
  end)

  it("says what is wrong", function()
    h.errors("is not a TF SavedModel folder", function() return tide.layers.TFSMLayer { FIX .. "no_such_model" } end)
    h.errors("filepath must be the path", function() return tide.layers.TFSMLayer { 3 } end)
    h.errors("call_endpoint 'predict' is not an endpoint of " .. BERT .. "; it has: serve, serving_default",
      function() return tide.layers.TFSMLayer { BERT, call_endpoint = "predict" } end)
    local l = tide.layers.TFSMLayer { BERT }
    local x = inputs()
    x.input_mask = nil
    h.errors("input 'input_mask' is missing (the model takes input_mask, input_type_ids, input_word_ids)", l, x)
    x = inputs()
    x.token_ids = x.input_word_ids
    h.errors("the model has no input named 'token_ids'", l, x)
    h.errors("takes a table of inputs by name", l, tide.tensor(E.input_word_ids, "int32"))
    x = inputs()
    x.input_mask = tide.tensor(E.input_mask, "float32")
    h.errors("input 'input_mask' is float32 (2, 10), but the model takes int32 (None, None)", l, x)
  end)
end)

describe("tide.hub.KerasLayer", function()
  it("calls serving_default, frozen unless trainable = true, and picks an output_key", function()
    local l = tide.hub.KerasLayer { BERT }
    assert.are.equal(0, #l.trainable_weights)
    h.close(l(inputs()).pooled_output, E.pooled_output, 2e-5)
    local t = tide.hub.KerasLayer { BERT, trainable = true }
    assert.are.equal(39, #t.trainable_weights)
    local p = tide.hub.KerasLayer { BERT, output_key = "pooled_output" }
    h.close(p(inputs()), E.pooled_output, 2e-5)
    h.errors("output_key 'logits' is not an output of signature 'serving_default' (it has: pooled_output, " ..
      "sequence_output)", function() return tide.hub.KerasLayer { BERT, output_key = "logits" } end)
    h.errors("signature 'x' is not an endpoint", function() return tide.hub.KerasLayer { BERT, signature = "x" } end)
  end)
end)
