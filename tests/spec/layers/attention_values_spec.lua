-- tests/spec/layers/attention_values_spec.lua — EinsumDense, MultiHeadAttention,
-- GroupQueryAttention, Attention and AdditiveAttention against TensorFlow 2.21's Keras 3
-- (tests/fixtures/keras/attention.lua, written by attention_gen.py): outputs, attention
-- scores, output masks, gradients, configs, eagerly and traced; and a masked model with
-- MultiHeadAttention trained one SGD step.
local tide = require "tide"
local h = require "helpers"
local keras_mask = require "tide.keras_mask"
local L = tide.layers
local F = dofile("tests/fixtures/keras/attention.lua")

local function t32(v) return tide.tensor(v, "float32") end

-- "None" in a fixture list is tide.None.
local function nones(v)
  if v == "None" then return tide.None end
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = nones(x) end
  return out
end

-- The call of case c with inputs xs: the layer's output (and scores).
local function call(layer, c, xs, return_scores, opts)
  local o = {}
  for k, v in pairs(c.call or {}) do o[k] = k == "attention_mask" and tide.tensor(v, "bool") or v end
  for k, v in pairs(opts or {}) do o[k] = v end
  o.return_attention_scores = return_scores or nil
  if c.class == "EinsumDense" then return layer(xs.x, o) end
  if c.class == "Attention" or c.class == "AdditiveAttention" then
    local list = { xs.query, xs.value, xs.key }
    if c.masks then o.mask = { xs.query_mask, xs.value_mask } end
    return layer(list, o)
  end
  if xs.key then return layer(xs.query, xs.value, xs.key, o) end
  return layer(xs.query, xs.value, o)
end

-- The case's inputs as tensors (masks riding with multi-head inputs, as Keras's).
local function inputs_of(c)
  local xs = {}
  for k, v in pairs(c.inputs) do if k ~= "self" then xs[k] = t32(v) end end
  if c.inputs.self then xs.value = xs.query end
  for k, m in pairs(c.masks or {}) do
    local mt = tide.tensor(m, "bool")
    xs[k .. "_mask"] = mt
    if c.class ~= "Attention" and c.class ~= "AdditiveAttention" then keras_mask.set(xs[k], mt) end
  end
  return xs
end

local function weights_like(t)
  local w = {}
  for k = 0, t:size() - 1 do w[k + 1] = 1 + (k % 7) * 0.25 end
  return tide.tensor(w, t.dtype):reshape(t.shape)
end

local function output_of(r, return_scores)
  if return_scores then return r[1], r[2] end
  return r, nil
end

local function check_run(layer, c, run, label)
  local xs = inputs_of(c)
  local rs = run.return_attention_scores
  local out, scores = output_of(call(layer, c, xs, rs), rs)
  h.close(out, run.output, 1e-5)
  if run.scores then h.close(scores, run.scores, 1e-5) end
  if run.output_mask then
    local m = keras_mask.get(out)
    assert(m ~= nil, label .. ": the output carries no mask")
    assert.are.same(run.output_mask, m:totable())
  else
    assert.is_nil(keras_mask.get(out), label .. ": the output carries a mask Keras does not give")
  end
  -- gradients of sum(output * w) for the trainable weights and the query
  local x = xs.query or xs.x
  local tape = tide.GradientTape()
  local loss = tape:run(function()
    tape:watch(x)
    local y = output_of(call(layer, c, xs, rs), rs)
    return tide.reduce_sum(y * weights_like(y))
  end)
  local sources = {}
  for i, w in ipairs(layer.trainable_weights) do sources[i] = w end
  sources[#sources + 1] = x
  local gs = tape:gradient(loss, sources, { unconnected_gradients = "zero" })
  assert.are.equal(#run.grads + 1, #gs)
  for i, g in ipairs(run.grads) do h.close(gs[i], g, 2e-5) end
  h.close(gs[#gs], run.query_grad, 2e-5)
  -- traced with the batch and sequence dims unknown: the same output
  local traced = tide.trace(function(q, v, k, x1)
    local ys = { query = q, value = v, key = k, x = x1 }
    for name, m in pairs(xs) do if name:find("_mask$") then ys[name] = m end end
    if c.class ~= "Attention" and c.class ~= "AdditiveAttention" then
      for name in pairs(c.masks or {}) do keras_mask.set(ys[name], xs[name .. "_mask"]) end
    end
    return (output_of(call(layer, c, ys, rs), rs))
  end)
  h.close(traced(xs.query, xs.value, xs.key, xs.x), run.output, 1e-5)
end

describe("attention layers against Keras 3", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  for _, c in ipairs(F.cases) do
    it(c.name, function()
      local layer = L[c.class](nones(c.ctor))
      call(layer, c, inputs_of(c), c.run.return_attention_scores) -- builds
      local names = {}
      for i, w in ipairs(layer.weights) do names[i] = w.name end
      assert.are.equal(#c.weight_names, #names)
      for i, want in ipairs(c.weight_names) do
        assert(names[i]:sub(-#want) == want, string.format("weight %d is %s, Keras's %s", i, names[i], want))
      end
      layer:set_weights(c.weights)
      check_run(layer, c, c.run, c.name)
      if c.scores_run then check_run(layer, c, c.scores_run, c.name .. " (scores)") end
      -- the config as Keras's (its plain entries), and a layer made from it computes the same
      local config = layer:get_config()
      for k, want in pairs(c.config) do
        assert.are.same(nones(want), config[k], c.name .. ": config " .. k)
      end
      local again = L[c.class]:from_config(config)
      call(again, c, inputs_of(c), false)
      again:set_weights(c.weights)
      h.close(output_of(call(again, c, inputs_of(c), c.run.return_attention_scores), c.run.return_attention_scores),
        c.run.output, 1e-5)
    end)
  end

  it("a masked model with MultiHeadAttention: predict, loss, one SGD step", function()
    local T = F.training
    local inp = tide.Input { shape = { 5 }, dtype = "int32" }
    local x = L.Embedding { 8, 6, mask_zero = true }(inp)
    x = L.MultiHeadAttention { num_heads = 2, key_dim = 3 }(x, x)
    local model = tide.Model { inputs = inp, outputs = L.Dense { 3 }(x) }
    model:set_weights(T.weights)
    local ids, y = tide.tensor(T.ids, "int32"), tide.tensor(T.y, "int32")
    h.close(model:predict(ids, { verbose = 0 }), T.predict, 1e-5)
    model:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.5 },
      loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true } }
    h.close(model:evaluate(ids, y, { verbose = 0 }), { T.loss_before }, 1e-5)
    model:train_on_batch(ids, y)
    for i, w in ipairs(model:get_weights()) do h.close(w, T.weights_after[i], 1e-5) end
    h.close(model:evaluate(ids, y, { verbose = 0 }), { T.loss_after }, 1e-5)
  end)
end)
