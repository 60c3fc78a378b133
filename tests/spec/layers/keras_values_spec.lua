-- tests/spec/layers/keras_values_spec.lua — each layer's forward output
-- against TensorFlow 2.21's tf.keras with the same weights (set_weights),
-- from tests/fixtures/keras/layers.lua (written by layers_gen.py):
-- 1e-5 relative for float32, tighter for float64; BatchNormalization in
-- training and inference, with its moving statistics after training calls.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/layers.lua")

local function t32(v) return tide.tensor(v, "float32") end

-- Build layer for x, set the fixture's weights, return layer(x, opts).
local function run(layer, x, weights, opts)
  layer:build(L.Layer and require("tide.layers.layer").shapes_of(x))
  rawset(layer, "built", true)
  if weights then layer:set_weights(weights) end
  return layer(x, opts)
end

describe("layers against tf.keras", function()
  it("Dense (relu; rank 3 without bias; float64 sigmoid)", function()
    local c = F.dense_relu
    h.close(run(L.Dense { 3, activation = "relu" }, t32(c.x), c.weights), c.y, 1e-5)
    c = F.dense_rank3
    h.close(run(L.Dense { 4, use_bias = false, activation = "tanh" }, t32(c.x), c.weights), c.y, 1e-5)
    c = F.dense_f64
    local y = run(L.Dense { 2, activation = "sigmoid", dtype = "float64" }, tide.tensor(c.x, "float64"), c.weights)
    assert.are.equal("float64", y.dtype)
    h.close(y, c.y, 1e-12)
  end)

  it("Dense's losses: kernel l2, bias l1 and the activity l1_l2 over the batch", function()
    local c = F.dense_losses
    local d = L.Dense { 3, kernel_regularizer = tide.regularizers.L2(0.01), bias_regularizer = tide.regularizers.L1(0.1),
      activity_regularizer = tide.regularizers.L1L2 { l1 = 0.001, l2 = 0.002 } }
    h.close(run(d, t32(c.x), c.weights), c.y, 1e-5)
    local losses = d.losses
    assert.are.equal(#c.losses, #losses)
    -- Keras lists the activity loss (added by the call) first, then the weight penalties
    for i, want in ipairs(c.losses) do h.close(losses[i], { want }, 1e-5) end
  end)

  it("Activation", function()
    h.close(L.Activation { "gelu" }(t32(F.activation_layer.x)), F.activation_layer.y, 1e-5)
  end)

  it("Flatten, Reshape, Permute", function()
    local x = t32(F.flatten.x)
    h.close(L.Flatten()(x), F.flatten.y, 0)
    assert.are.same({ 2, 24 }, L.Flatten()(x).shape:as_list())
    h.close(L.Reshape { { 4, -1 } }(x), F.reshape.y, 0)
    assert.are.same({ 2, 4, 6 }, L.Reshape { { 4, -1 } }(x).shape:as_list())
    h.close(L.Permute { { 3, 1, 2 } }(x), F.permute.y, 0)
    assert.are.same({ 2, 2, 3, 4 }, L.Permute { { 3, 1, 2 } }(x).shape:as_list())
  end)

  it("Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate", function()
    local m = F.merge
    local a, b, c = t32(m.a), t32(m.b), t32(m.c)
    h.close(L.Add() { a, b, c }, m.add, 1e-6)
    h.close(L.Subtract() { a, b }, m.subtract, 1e-6)
    h.close(L.Multiply() { a, b, c }, m.multiply, 1e-6)
    h.close(L.Average() { a, b, c }, m.average, 1e-6)
    h.close(L.Maximum() { a, b, c }, m.maximum, 0)
    h.close(L.Minimum() { a, b, c }, m.minimum, 0)
    h.close(L.Concatenate { axis = 1 } { a, b }, m.concatenate, 0)
    h.close(L.Concatenate { axis = 0 } { a, b, c }, m.concatenate0, 0)
  end)

  it("Embedding", function()
    local c = F.embedding
    local e = L.Embedding { 10, 4 }
    e(tide.tensor(c.ids, "int32"))
    e:set_weights(c.weights)
    h.close(e(tide.tensor(c.ids, "int32")), c.y, 0)
    h.close(e(c.ids), c.y, 0)                            -- a Lua table of ids
    h.close(e(tide.tensor(c.ids, "float32")), c.y, 0)    -- float ids are cast, as Keras
  end)

  it("LayerNormalization (last axis; axes {1, 2} with epsilon 1e-5)", function()
    local c = F.layer_norm
    h.close(run(L.LayerNormalization(), t32(c.x), c.weights), c.y, 1e-5)
    c = F.layer_norm_axes
    h.close(run(L.LayerNormalization { axis = { 1, 2 }, epsilon = 1e-5 }, t32(c.x), c.weights), c.y, 1e-5)
  end)

  it("BatchNormalization: inference, training, moving statistics after two training calls", function()
    local c = F.batch_norm
    local bn = L.BatchNormalization()
    local x = t32(c.x)
    h.close(run(bn, x, c.weights, { training = false }), c.infer, 1e-5)
    h.close(bn(x, { training = true }), c.train1, 1e-5)
    h.close(bn.moving_mean:read_value(), c.moving1[1], 1e-5)
    h.close(bn.moving_variance:read_value(), c.moving1[2], 1e-5)
    h.close(bn(t32(c.x2), { training = true }), c.train2, 1e-5)
    h.close(bn.moving_mean:read_value(), c.moving2[1], 1e-5)
    h.close(bn.moving_variance:read_value(), c.moving2[2], 1e-5)
    h.close(bn(x), c.infer2, 1e-5) -- a direct call infers
    c = F.batch_norm_axis1
    local bn1 = L.BatchNormalization { axis = 1, momentum = 0.9, epsilon = 0.01, center = false }
    h.close(run(bn1, t32(c.x), c.weights, { training = true }), c.train, 1e-5)
    h.close(bn1.moving_mean:read_value(), c.moving[1], 1e-5)
    h.close(bn1.moving_variance:read_value(), c.moving[2], 1e-5)
  end)

  it("BatchNormalization with trainable = false runs in inference mode even in training (Keras 3)", function()
    local c = F.batch_norm
    local bn = L.BatchNormalization { trainable = false }
    h.close(run(bn, t32(c.x), c.weights, { training = true }), c.infer, 1e-5)
    h.close(bn.moving_mean:read_value(), c.weights[3], 0)
  end)
end)

describe("convolution and pooling layers against tf.keras", function()
  it("Conv2D (same + relu, valid with strides, dilated without bias)", function()
    local x = t32(F.conv2d.x)
    local opts = {
      same_relu = { 4, 3, padding = "same", activation = "relu" },
      valid_stride = { 2, { 3, 2 }, strides = 2 },
      dilated = { 3, 2, dilation_rate = 2, use_bias = false },
    }
    for key, c in pairs(F.conv2d.cases) do
      h.close(run(L.Conv2D(opts[key]), x, c.weights), c.y, 1e-5)
    end
  end)

  it("Conv1D (causal with dilation, valid with strides)", function()
    local x = t32(F.conv1d.x)
    local opts = {
      causal = { 4, 3, padding = "causal", dilation_rate = 2 },
      valid_stride = { 2, 2, strides = 3, activation = "tanh" },
    }
    for key, c in pairs(F.conv1d.cases) do
      h.close(run(L.Conv1D(opts[key]), x, c.weights), c.y, 1e-5)
    end
  end)

  it("MaxPooling2D, AveragePooling2D, the global poolings, ZeroPadding2D, UpSampling2D", function()
    local p = F.pooling
    local x = t32(p.x)
    h.close(L.MaxPooling2D()(x), p.max, 0)
    h.close(L.MaxPooling2D { pool_size = 3, strides = 2, padding = "same" }(x), p.max_same, 0)
    h.close(L.AveragePooling2D { pool_size = { 2, 3 } }(x), p.avg, 1e-6)
    h.close(L.AveragePooling2D { 3, strides = 1, padding = "same" }(x), p.avg_same, 1e-6)
    h.close(L.GlobalAveragePooling2D()(x), p.gavg, 1e-6)
    h.close(L.GlobalMaxPooling2D { keepdims = true }(x), p.gmax, 0)
    h.close(L.ZeroPadding2D { { { 1, 0 }, { 2, 1 } } }(x), p.zero_pad, 0)
    h.close(L.UpSampling2D { { 2, 3 } }(x), p.upsample, 0)
  end)
end)
