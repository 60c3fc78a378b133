-- tests/spec/layers/conv_more_spec.lua — Conv2DTranspose, DepthwiseConv2D and
-- SeparableConv2D against TensorFlow 2.21's tf.keras (fixtures in
-- tests/fixtures/keras/layers_rnn.lua), traced (known and None batch: the
-- transposed convolution's second path) equal eager, gradients, errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers
local F = dofile("tests/fixtures/keras/layers_rnn.lua")

local function copy(t, extra)
  local out = {}
  for k, v in pairs(t or {}) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

local function run(layer, x, weights)
  layer:build(x.shape:as_list())
  rawset(layer, "built", true)
  layer:set_weights(weights)
  return layer(x)
end

local CLASSES = { conv2d_transpose = "Conv2DTranspose", depthwise = "DepthwiseConv2D", separable = "SeparableConv2D" }

describe("Conv2DTranspose, DepthwiseConv2D, SeparableConv2D", function()
  local x = tide.tensor(F.xi, "float32")

  it("agree with tf.keras for each option (strides, padding, output_padding, depth_multiplier, dilation)", function()
    for group, cls in pairs(CLASSES) do
      for key, c in pairs(F[group]) do
        local layer = L[cls](copy(c.opts))
        local ok, err = pcall(function() h.close(run(layer, x, c.weights), c.y, 1e-5) end)
        assert(ok, cls .. " " .. key .. ": " .. tostring(err))
      end
    end
  end)

  it("traced equals eager, with a known and a None batch", function()
    tide.config.set_retracing_warning(false)
    finally(function() tide.config.set_retracing_warning(true) end)
    for group, cls in pairs(CLASSES) do
      for key, c in pairs(F[group]) do
        local layer = L[cls](copy(c.opts))
        local eager = run(layer, x, c.weights)
        for _, sig in ipairs { {}, { input_signature = { tide.TensorSpec { tide.None, 5, 4, 3 } } } } do
          local traced_shape
          local f = tide.trace(function(v)
            local y = layer(v)
            traced_shape = y.shape:as_list()
            return y
          end, sig)
          local ok, err = pcall(function() h.close(f(x), eager:totable(), 1e-5) end)
          assert(ok, cls .. " " .. key .. ": " .. tostring(err))
          -- only the batch is unknown while tracing (the transposed conv's shape tensor keeps the rest)
          local want = eager.shape:as_list()
          if sig.input_signature then want[1] = tide.None end
          assert.are.same(want, traced_shape, cls .. " " .. key)
        end
      end
    end
  end)

  it("float64 finite differences (input; the None-batch path of Conv2DTranspose too)", function()
    tide.random.set_seed(3)
    local xd = tide.random.normal({ 2, 3, 3, 2 }, { dtype = "float64" })
    local layers = {
      L.Conv2DTranspose { 2, 3, strides = 2, padding = "same", dtype = "float64" },
      L.Conv2DTranspose { 1, 2, strides = { 2, 1 }, output_padding = { 1, 0 }, dtype = "float64" },
      L.DepthwiseConv2D { 2, depth_multiplier = 2, dtype = "float64" },
      L.SeparableConv2D { 2, 2, padding = "same", dtype = "float64" },
    }
    for _, layer in ipairs(layers) do
      -- gc.check also runs the tape in a trace with every dim None: the
      -- spatial dims must be known for Conv2DTranspose, so only its eager check
      gc.check(function(v) return layer(v) end, { xd }, { none = false })
      local tape = tide.GradientTape()
      local y = tape:run(function() return tide.reduce_sum(layer(xd) ^ 2) end)
      local grads = tape:gradient(y, layer.trainable_weights)
      assert.are.equal(#layer.trainable_weights, #grads)
      -- by index over the weights: #grads and ipairs stop at (or before) the first nil
      for i = 1, #layer.trainable_weights do assert.is_true(tide.is_tensor(grads[i])) end
    end
    -- through the None-batch path: the tape in a trace gives the eager gradients
    local t = layers[2]
    local function grads(v)
      local tape = tide.GradientTape()
      local l = tape:run(function() tape:watch(v); return tide.reduce_sum(t(v) ^ 2) end)
      local g = tape:gradient(l, { v, t.kernel, t.bias })
      return g[1], g[2], g[3]
    end
    local e1, e2, e3 = grads(xd)
    local f = tide.trace(grads, { input_signature = { tide.TensorSpec({ tide.None, 3, 3, 2 }, "float64") } })
    local g1, g2, g3 = f(xd)
    h.close(g1, e1:totable(), 1e-10)
    h.close(g2, e2:totable(), 1e-10)
    h.close(g3, e3:totable(), 1e-10)
  end)

  it("weights: Keras's shapes and names", function()
    local t = L.Conv2DTranspose { 5, { 3, 2 } }
    t(x)
    assert.are.same({ 3, 2, 5, 3 }, t.kernel.shape:as_list())
    local d = L.DepthwiseConv2D { 3, depth_multiplier = 2 }
    d(x)
    assert.are.same({ 3, 3, 3, 2 }, d.weights[1].shape:as_list())
    assert.are.same({ 6 }, d.weights[2].shape:as_list())
    local s = L.SeparableConv2D { 4, 2 }
    s(x)
    local names = {}
    for i, w in ipairs(s.weights) do names[i] = w.name:match("[^/]+$") end
    assert.are.same({ "depthwise_kernel", "pointwise_kernel", "bias" }, names)
    assert.are.same({ 1, 1, 3, 4 }, s.weights[2].shape:as_list())
    local c = L.SeparableConv2D:from_config(s:get_config())
    assert.are.equal(4, c.filters)
  end)

  it("errors name what to change", function()
    h.errors("output_padding must be strictly less than strides", function() L.Conv2DTranspose { 2, 3, output_padding = 1 } end)
    h.errors("filters must be a positive integer", function() L.Conv2DTranspose { 0, 3 } end)
    h.errors("kernel_size is required", function() L.DepthwiseConv2D {} end)
    h.errors("depth_multiplier must be a positive integer", function() L.DepthwiseConv2D { 3, depth_multiplier = 0 } end)
    h.errors("padding must be", function() L.SeparableConv2D { 2, 3, padding = "causal" } end)
    h.errors("expected an input of rank 4", function() L.SeparableConv2D { 2, 3 }(tide.zeros { 2, 5, 3 }) end)
    h.errors("channels_last", function() L.DepthwiseConv2D { 3, data_format = "channels_first" } end)
    local t = L.Conv2DTranspose { 2, 3 }
    local f = tide.trace(function(v) return t(v) end, { input_signature = { tide.TensorSpec { 2, tide.None, 4, 3 } } })
    h.errors("height and width of the input must be known", f, x)
  end)
end)
