-- tests/spec/layers/attention_spec.lua — the attention layers beyond Keras's values
-- (attention_values_spec.lua): the call forms, dropout in training, functional models
-- (an attention_mask Input, known dims through EinsumDense, fit, save and load), LoRA,
-- mixed precision, serialization and the errors that name what is wrong.
local tide = require "tide"
local h = require "helpers"
local keras_mask = require "tide.keras_mask"
local L = tide.layers

local function rand(shape, seed) return tide.random.normal(shape, { seed = seed }) end

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("attention layers", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  describe("MultiHeadAttention", function()
    it("takes query, value and key as Keras writes them, or as one list or table", function()
      local q, v, k = rand({ 2, 4, 6 }, 1), rand({ 2, 5, 6 }, 2), rand({ 2, 5, 4 }, 3)
      local mha = L.MultiHeadAttention { num_heads = 2, key_dim = 3 }
      local want = mha(q, v, k)
      h.close(mha({ q, v, k }), want, 1e-6)
      h.close(mha({ query = q, value = v, key = k }), want, 1e-6)
      h.close(mha(q, v, k, { training = false }), want, 1e-6)
      local r = mha(q, v, k, { return_attention_scores = true })
      h.close(r[1], want, 1e-5)
      assert.are.same({ 2, 2, 4, 5 }, r[2].shape:as_list())
      h.close(tide.reduce_sum(r[2], -1), tide.ones { 2, 2, 4 }, 1e-5)
      -- without a key, the value is the key too
      local self_kv = L.MultiHeadAttention { num_heads = 2, key_dim = 3 }
      h.close(self_kv(q, v), self_kv(q, v, v), 1e-6)
    end)

    it("drops attention weights only in training", function()
      local x = rand({ 2, 6, 8 }, 4)
      local mha = L.MultiHeadAttention { num_heads = 2, key_dim = 4, dropout = 0.5, seed = 7 }
      local a, b = mha(x, x), mha(x, x)
      h.close(a, b, 0)                                          -- inference: no dropout
      local t = mha(x, x, { training = true })
      assert.is_true(tide.reduce_max(tide.abs(t - a)):item() > 1e-3)
      local r = mha(x, x, { training = true, return_attention_scores = true })
      h.close(tide.reduce_sum(r[2], -1), tide.ones { 2, 2, 6 }, 1e-5) -- the scores before dropout, as Keras's
    end)

    it("gives its output the query's Keras mask and leaves the inputs' masks alone", function()
      local x = rand({ 2, 4, 6 }, 5)
      local m = tide.tensor({ { true, true, false, false }, { true, true, true, false } }, "bool")
      keras_mask.set(x, m)
      local out = L.MultiHeadAttention { num_heads = 2, key_dim = 3 }(x, x)
      assert.are.same(m:totable(), keras_mask.get(out):totable())
      assert.are.equal(m, keras_mask.get(x))
    end)

    it("takes an attention_mask Input in a functional model, and saves and loads", function()
      local q = tide.Input { shape = { 4, 6 } }
      local m = tide.Input { shape = { 4, 4 }, dtype = "bool" }
      local mha = L.MultiHeadAttention { num_heads = 2, key_dim = 3 }
      local model = tide.Model { inputs = { q, m }, outputs = mha(q, q, { attention_mask = m }) }
      local x = rand({ 2, 4, 6 }, 6)
      local mask = tide.tensor({ { { true, false, false, false }, { true, true, false, false },
        { true, true, true, false }, { true, true, true, true } } }, "bool")
      mask = tide.broadcast_to(mask, { 2, 4, 4 })
      h.close(model:predict({ x, mask }, { verbose = 0 }), mha(x, x, { attention_mask = mask }), 1e-6)
      h.close(model:predict({ x, mask }, { verbose = 0 }), mha(x, x, { use_causal_mask = true }), 1e-5)
      local clone = tide.Model:from_config(model:get_config())
      clone:set_weights(model:get_weights())
      h.close(clone:predict({ x, mask }, { verbose = 0 }), mha(x, x, { attention_mask = mask }), 1e-6)
    end)

    it("trains in a masked model and comes back from a SavedModel", function()
      local inp = tide.Input { shape = { 5 }, dtype = "int32" }
      local x = L.Embedding { 8, 6, mask_zero = true }(inp)
      x = L.MultiHeadAttention { num_heads = 2, key_dim = 3, dropout = 0.1 }(x, x)
      x = L.Attention { use_scale = true } { x, x }
      x = L.GroupQueryAttention { head_dim = 2, num_query_heads = 2, num_key_value_heads = 1 }(x, x)
      local model = tide.Model { inputs = inp, outputs = L.Dense { 3 }(x) }
      model:compile { optimizer = "adam", loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true } }
      local ids = tide.tensor({ { 3, 1, 4, 0, 0 }, { 2, 5, 6, 7, 0 } }, "int32")
      local y = tide.tensor({ { 1, 0, 2, 0, 0 }, { 2, 1, 0, 1, 0 } }, "int32")
      local hist = model:fit(ids, y, { epochs = 3, verbose = 0 })
      assert.are.equal(3, #hist.history.loss)
      local tmp = require "tmp"
      local dir = tmp.dir("attention")
      model:save(dir .. "/m")
      local back = tide.models.load_model(dir .. "/m")
      h.close(back:predict(ids, { verbose = 0 }), model:predict(ids, { verbose = 0 }), 1e-6)
      tmp.remove(dir)
    end)

    it("is serialized and deserialized by name", function()
      local mha = L.MultiHeadAttention { num_heads = 3, key_dim = 2, value_dim = 5, output_shape = 4, dropout = 0.25,
        attention_axes = -2, kernel_regularizer = tide.regularizers.L2(0.01) }
      local s = L.serialize(mha)
      assert.are.equal("MultiHeadAttention", s.class_name)
      local back = L.deserialize(s)
      assert.are.same(mha:get_config().output_shape, back:get_config().output_shape)
      assert.are.equal(5, back.value_dim)
      assert.are.same({ -2 }, back.attention_axes)
      assert.are.equal(L.GroupQueryAttention, L.GroupedQueryAttention)
      assert.are.equal("GroupQueryAttention",
        L.serialize(L.GroupQueryAttention { head_dim = 2, num_query_heads = 2, num_key_value_heads = 1 }).class_name)
    end)

    it("computes in float16 under mixed_float16, with float32 weights", function()
      tide.mixed_precision.set_global_policy("mixed_float16")
      local ok, e = pcall(function()
        local mha = L.MultiHeadAttention { num_heads = 2, key_dim = 3 }
        local r = mha(rand({ 2, 4, 6 }, 8), rand({ 2, 4, 6 }, 9), { return_attention_scores = true })
        assert.are.equal("float16", r[1].dtype)
        assert.are.equal("float16", r[2].dtype)
        assert.are.equal("float32", mha.weights[1].dtype)
      end)
      tide.mixed_precision.set_global_policy("float32")
      assert(ok, e)
    end)

    it("names what is wrong", function()
      assert.truthy(err(L.MultiHeadAttention, { num_heads = 0, key_dim = 2 }):find("num_heads must be a positive", 1,
        true))
      assert.truthy(err(L.MultiHeadAttention, { num_heads = 2 }):find("key_dim must be a positive", 1, true))
      assert.truthy(err(L.MultiHeadAttention, { num_heads = 2, key_dim = 2, dropout = 1 }):find("dropout must be", 1,
        true))
      assert.truthy(err(L.MultiHeadAttention, { num_heads = 2, key_dim = 2, flash_attention = true })
        :find("flash_attention is not supported", 1, true))
      local mha = L.MultiHeadAttention { num_heads = 2, key_dim = 2 }
      assert.truthy(err(mha, rand({ 2, 3, 4 }, 1)):find("expects a query and a value", 1, true))
      assert.truthy(err(mha, rand({ 2, 3, 4 }, 1), rand({ 2, 5, 4 }, 2), rand({ 2, 4, 4 }, 3))
        :find("all dimensions of value and key, except the last one, must be equal", 1, true))
      assert.truthy(err(L.GroupQueryAttention, { head_dim = 2, num_query_heads = 3, num_key_value_heads = 2 })
        :find("must be divisible by num_key_value_heads", 1, true))
    end)
  end)

  describe("EinsumDense", function()
    it("keeps the known dims in a functional model", function()
      local inp = tide.Input { shape = { tide.None, 8 } }
      local y = L.EinsumDense { "abc,cde->abde", output_shape = { tide.None, 2, 4 }, bias_axes = "de" }(inp)
      assert.are.same({ tide.None, tide.None, 2, 4 }, y.shape:as_list())
      y = L.EinsumDense { "abcd,cde->abe", output_shape = { tide.None, 5 } }(y)
      assert.are.same({ tide.None, tide.None, 3 }, L.Dense { 3 }(y).shape:as_list())
    end)

    it("gives a variance-scaling initializer the kernel's own fans (Keras's input and output axes)", function()
      local e = L.EinsumDense { "abc,cde->abde", output_shape = { tide.None, 4, 8 },
        kernel_initializer = tide.initializers.GlorotUniform { seed = 3 } }
      e(tide.ones { 1, 2, 32 })
      -- fan_in 32, fan_out 32: limit sqrt(6 / 64); a convolution's fans would give sqrt(6 / (4 * 40))
      local m = tide.reduce_max(tide.abs(e.kernel:read_value())):item()
      assert.is_true(m <= math.sqrt(6 / 64) and m > 0.8 * math.sqrt(6 / 64), tostring(m))
    end)

    it("enables LoRA: the kernel frozen, a low-rank delta trained", function()
      local e = L.EinsumDense { "ab,bc->ac", output_shape = 4, bias_axes = "c" }
      local x = rand({ 3, 5 }, 10)
      local before = e(x)
      e:enable_lora(2)
      h.close(e(x), before, 1e-6) -- b starts at zero
      assert.are.equal(4, #e.weights)
      assert.are.equal(3, #e.trainable_weights)
      assert.is_false(e.kernel.trainable)
      assert.truthy(err(e.enable_lora, e, 2):find("already enabled", 1, true))
      local c = L.EinsumDense { "ab,bc->ac", output_shape = 4, kernel_constraint = "non_neg" }
      c(x)
      assert.truthy(err(c.enable_lora, c, 2):find("incompatible with kernel constraints", 1, true))
    end)

    it("names what is wrong", function()
      local function build(eq, out, bias, shape)
        local e = L.EinsumDense { eq, output_shape = out, bias_axes = bias }
        return err(e, tide.ones(shape))
      end
      assert.truthy(build("ab,bc", 4, nil, { 2, 3 }):find("invalid einsum equation 'ab,bc'", 1, true))
      assert.truthy(build("ab,bc->ac", 4, "d", { 2, 3 }):find("bias dimension 'd' was requested", 1, true))
      assert.truthy(build("abc,cd->abd", { 5, 4 }, nil, { 2, 3, 6 })
        :find("do not match at shared dimension 'b'", 1, true))
      assert.truthy(build("ab,bc->ad", 4, nil, { 2, 3 }):find("dimension 'd' was specified in the output", 1, true))
      assert.truthy(err(L.EinsumDense, { "ab,bc->ac" }):find("output_shape is required", 1, true))
    end)
  end)

  describe("Attention and AdditiveAttention", function()
    it("zero the output where the query is masked, and pass the query's mask on", function()
      local q, v = rand({ 2, 3, 4 }, 11), rand({ 2, 5, 4 }, 12)
      local qm = tide.tensor({ { true, false, true }, { true, true, false } }, "bool")
      local vm = tide.tensor({ { true, true, false, false, true }, { true, false, false, false, false } }, "bool")
      for _, layer in ipairs { L.Attention {}, L.AdditiveAttention {} } do
        local r = layer({ q, v }, { mask = { qm, vm }, return_attention_scores = true })
        assert.are.same({ 0, 0, 0, 0 }, r[1][0][1]:totable())
        assert.are.same(qm:totable(), keras_mask.get(r[1]):totable())
        assert.are.same({ 0, 0 }, { r[2][0][0][2]:item(), r[2][0][0][3]:item() })
      end
    end)

    it("drop attention weights only in training", function()
      local q = rand({ 2, 6, 4 }, 13)
      local a = L.Attention { dropout = 0.5, seed = 1 }
      h.close(a { q, q }, a { q, q }, 0)
      assert.is_true(tide.reduce_max(tide.abs(a({ q, q }, { training = true }) - a { q, q })):item() > 1e-3)
    end)

    it("name what is wrong", function()
      assert.truthy(err(L.Attention, { score_mode = "sum" }):find("invalid value for score_mode", 1, true))
      local a = L.Attention {}
      assert.truthy(err(a, rand({ 2, 3, 4 }, 1)):find("must be called on a list of inputs", 1, true))
      assert.truthy(err(a, { rand({ 2, 3, 4 }, 1) }):find("accepts inputs list of length 2 or 3", 1, true))
      assert.truthy(err(L.AdditiveAttention, { score_mode = "dot" }):find("unknown option", 1, true))
    end)
  end)
end)
