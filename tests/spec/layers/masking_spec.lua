-- tests/spec/layers/masking_spec.lua — Keras's masks against Keras 3's values
-- (tests/fixtures/keras/masking.lua): Embedding{mask_zero=true} and Masking
-- feeding RNN layers, a mask through Dense and merge layers, the masked loss
-- and accuracy of a sequence model, the classifier whose LSTM passes no mask on
-- (tests/fixtures/keras/masking_classifier.lua); eager and traced; the mask's rules.
local tide = require "tide"
local h = require "helpers"
local F = dofile("tests/fixtures/keras/masking.lua")
local L = tide.layers

local function tensors(list)
  local out = {}
  for i, w in ipairs(list) do out[i] = tide.tensor(w, "float32") end
  return out
end

local function build(kind, cfg)
  local inp, x, data
  if kind == "ids" then
    inp = tide.Input { shape = { 5 }, dtype = "int32" }
    x = L.Embedding { 7, 3, mask_zero = true }(inp)
    data = tide.tensor(F.ids, "int32")
  else
    inp = tide.Input { shape = { 5, 3 } }
    x = L.Masking { 0.0 }(inp)
    data = tide.tensor(F.seq, "float32")
  end
  if cfg.dense then x = L.Dense { 3 }(x) end
  local opts = {}
  for k, v in pairs(cfg.opts or {}) do opts[k] = v end
  if cfg.rnn == "Bidirectional" then
    local rs = opts.return_sequences or false
    opts.return_sequences = nil
    opts[1] = L.LSTM { 2, return_sequences = rs }
    x = L.Bidirectional(opts)(x)
  elseif cfg.rnn == "RNN" then
    opts[1] = L.SimpleRNNCell { 2 }
    x = L.RNN(opts)(x)
  else
    opts[1] = 2
    x = L[cfg.rnn](opts)(x)
  end
  return tide.Model { inputs = inp, outputs = x }, data
end

describe("masks against Keras 3", function()
  for _, c in ipairs(F.cases) do
    it(c.name .. ": the model's output, eagerly and traced", function()
      local model, data = build(c.kind, c.config)
      model:set_weights(tensors(c.weights))
      h.close(model(data), c.output, 1e-5)
      h.close(model:predict(data, { verbose = 0 }), c.output, 1e-5)
    end)
  end

  it("a sequence model's loss and accuracy count only the unmasked steps, and train", function()
    local inp = tide.Input { shape = { 5 }, dtype = "int32" }
    local x = L.Embedding { 7, 4, mask_zero = true }(inp)
    x = L.LSTM { 4, return_sequences = true }(x)
    local model = tide.Model { inputs = inp, outputs = L.Dense { 3 }(x) }
    model:set_weights(tensors(F.loss.weights))
    model:compile { optimizer = tide.optimizers.SGD(0.5),
      loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
    local ids, y = tide.tensor(F.ids, "int32"), tide.tensor(F.y, "int32")
    local ev = model:evaluate(ids, y, { verbose = 0, return_dict = true })
    h.close({ ev.loss, ev.accuracy }, { F.loss.before.loss, F.loss.before.accuracy }, 1e-5)
    model:train_on_batch(ids, y)
    local after = model:evaluate(ids, y, { verbose = 0, return_dict = true })
    h.close({ after.loss, after.accuracy }, { F.loss.after.loss, F.loss.after.accuracy }, 1e-5)
  end)

  it("the standard classifier Embedding{mask_zero} -> LSTM -> Dense: no mask leaves the LSTM; fit as Keras", function()
    local FC = dofile("tests/fixtures/keras/masking_classifier.lua")
    local embedding, lstm, dense = L.Embedding { 7, 4, mask_zero = true }, L.LSTM { 4 }, L.Dense { 3 }
    local inp = tide.Input { shape = { 5 }, dtype = "int32" }
    local model = tide.Model { inputs = inp, outputs = dense(lstm(embedding(inp))) }
    model:set_weights(tensors(FC.weights))
    model:compile { optimizer = tide.optimizers.SGD(0.5),
      loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
    local ids, y = tide.tensor(FC.ids, "int32"), tide.tensor(FC.y, "int32")
    -- the LSTM returns its last output only: the [batch, time] mask stops there
    local e = embedding(ids)
    assert.is_not_nil(tide.keras_mask.get(e))
    assert.is_nil(lstm:compute_mask(e, tide.keras_mask.get(e)))
    assert.is_nil(tide.keras_mask.get(lstm(e)))
    local out = model(ids)
    assert.is_nil(tide.keras_mask.get(out))
    h.close(out, FC.output, 1e-5)
    local before = model:evaluate(ids, y, { verbose = 0, return_dict = true })
    h.close({ before.loss, before.accuracy }, { FC.before.loss, FC.before.accuracy }, 1e-5)
    local hist = model:fit(ids, y, { batch_size = 4, epochs = 2, shuffle = false, verbose = 0 })
    h.close(hist.history.loss, FC.history.loss, 1e-5)
    h.close(hist.history.accuracy, FC.history.accuracy, 0)
    local after = model:evaluate(ids, y, { verbose = 0, return_dict = true })
    h.close({ after.loss, after.accuracy }, { FC.after.loss, FC.after.accuracy }, 1e-5)
    for i, w in ipairs(model:get_weights()) do h.close(w, FC.trained_weights[i], 1e-5) end
  end)

  it("masks of merged inputs: Add and-s them, Concatenate joins them", function()
    local a, b = tide.Input { shape = { 5 }, dtype = "int32" }, tide.Input { shape = { 5 }, dtype = "int32" }
    local emb = L.Embedding { 7, 3, mask_zero = true }
    local ea, eb = emb(a), emb(b)
    local added = L.LSTM { 2, return_sequences = true }(L.Add() { ea, eb })
    local joined = L.LSTM { 2 }(L.Concatenate() { ea, eb })
    local model = tide.Model { inputs = { a, b }, outputs = { added, joined } }
    model:set_weights(tensors(F.merge.weights))
    local out = model { tide.tensor(F.ids, "int32"), tide.tensor(F.merge.b_ids, "int32") }
    h.close(out[1], F.merge.outputs[1], 1e-5)
    h.close(out[2], F.merge.outputs[2], 1e-5)
  end)
end)

describe("masks", function()
  it("ride with a layer's output and reach the next layer's call as opts.mask", function()
    local emb = L.Embedding { 5, 2, mask_zero = true }
    local ids = tide.tensor { { 1, 2, 0 }, { 0, 3, 0 } }
    local y = emb(ids)
    assert.are.same({ { true, true, false }, { false, true, false } }, tide.keras_mask.get(y):totable())
    assert.are.same(emb:compute_mask(ids):totable(), tide.keras_mask.get(y):totable())
    local seen
    local Probe = L.Layer:extend("Probe")
    Probe.supports_masking = true
    function Probe:call(x, opts) seen = opts.mask; return x end
    local z = Probe()(L.Dense { 2 }(y))
    assert.are.same(tide.keras_mask.get(y):totable(), seen:totable())
    assert.are.same(seen:totable(), tide.keras_mask.get(z):totable())
    assert.is_nil(tide.keras_mask.get(L.Embedding { 5, 2 }(ids)))
  end)

  it("Masking zeroes the masked steps and masks them", function()
    local x = tide.tensor({ { { 1, 2 }, { 0, 0 }, { 3, 0 } } }, "float32")
    local y = L.Masking { 0 }(x)
    h.close(y, { { { 1, 2 }, { 0, 0 }, { 3, 0 } } }, 0)
    assert.are.same({ { true, false, true } }, tide.keras_mask.get(y):totable())
    local m = L.Masking { mask_value = 3 }
    assert.are.same({ { true, true, true } }, tide.keras_mask.get(m(x)):totable())
    assert.are.equal(3, m:get_config().mask_value)
  end)

  it("a layer that does not support masking drops the mask, and says so once", function()
    local y = L.Embedding { 5, 2, mask_zero = true }(tide.tensor { { 1, 0 } })
    local flat = L.Flatten()
    local z = flat(y)
    assert.is_nil(tide.keras_mask.get(z))
  end)

  it("an RNN skips masked steps in a while loop (a None time dim) as in a Lua loop", function()
    tide.random.set_seed(9)
    local gru = L.GRU { 3, return_sequences = true }
    local x = tide.random.normal { 2, 4, 2 }
    local mask = tide.tensor { { true, true, false, false }, { true, false, true, true } }
    local eager = gru(x, { mask = mask })
    local f = tide.trace(function(v, m) return gru(v, { mask = m }) end, {
      input_signature = { tide.TensorSpec { 2, tide.None, 2 }, tide.TensorSpec({ 2, tide.None }, "bool") } })
    h.close(f(x, mask), eager, 1e-6)
    -- a masked step repeats the previous output
    local e = eager:totable()
    assert.are.same(e[1][2], e[1][3])
    assert.are.same(e[1][2], e[1][4])
    -- and is differentiable
    local tape = tide.GradientTape()
    local loss = tape:run(function() return gru(x, { mask = mask }):sum() end)
    -- by index over the weights: ipairs over the gradients would stop at the first nil
    local grads = tape:gradient(loss, gru.trainable_weights)
    for i, w in ipairs(gru.trainable_weights) do
      assert.is_not_nil(grads[i], w.name .. " got no gradient")
      assert.are.same(w.shape, grads[i].shape)
    end
  end)
end)
