-- tests/spec/layers/conv_nd_spec.lua — Conv1D's groups, Conv3D, Conv1D/3DTranspose,
-- DepthwiseConv1D and SeparableConv1D beyond their Keras values (keras_more_values_spec):
-- weights' shapes and names, traced with a None batch equal to eager, float64
-- finite differences of input and weights, a model saved and loaded, errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local tmp = require "tmp"
local L = tide.layers

-- Each layer with an input of its rank (float64 where `dt` says).
local function cases(dt)
  dt = dt or "float32"
  return {
    { L.Conv1D { 4, 3, groups = 2, padding = "same", dtype = dt }, { 2, 5, 4 } },
    { L.Conv1D { 2, 2, padding = "causal", dilation_rate = 2, dtype = dt }, { 2, 5, 3 } },
    { L.Conv3D { 2, { 2, 3, 2 }, strides = { 2, 1, 1 }, padding = "same", dtype = dt }, { 2, 3, 4, 3, 2 } },
    { L.Conv3D { 4, 2, groups = 2, dilation_rate = { 2, 1, 1 }, dtype = dt }, { 1, 4, 3, 3, 2 } },
    { L.Conv1DTranspose { 2, 3, strides = 2, padding = "same", output_padding = 1, dtype = dt }, { 2, 4, 3 } },
    { L.Conv1DTranspose { 3, 2, dilation_rate = 2, dtype = dt }, { 2, 4, 2 } },
    { L.Conv3DTranspose { 2, 2, strides = { 2, 1, 2 }, dtype = dt }, { 1, 2, 3, 2, 2 } },
    { L.Conv3DTranspose { 2, 3, strides = 2, padding = "same", output_padding = { 1, 0, 1 }, dtype = dt },
      { 1, 2, 2, 2, 1 } },
    { L.DepthwiseConv1D { 3, depth_multiplier = 2, padding = "same", dtype = dt }, { 2, 5, 2 } },
    { L.SeparableConv1D { 3, 2, strides = 2, depth_multiplier = 2, dtype = dt }, { 2, 6, 2 } },
  }
end

local function name(l) return getmetatable(l).__name .. " " .. l.name end

describe("Conv1D groups, Conv3D, Conv1D/3DTranspose, DepthwiseConv1D, SeparableConv1D", function()
  before_each(function() L.clear_session() end)

  it("weights: Keras's shapes and names", function()
    local function shapes(l)
      local out = {}
      for i, w in ipairs(l.weights) do out[i] = { w.name:match("[^/]+$"), w.shape:as_list() } end
      return out
    end
    local function built(l, s) l(tide.zeros(s)); return shapes(l) end
    assert.are.same({ { "kernel", { 3, 2, 4 } }, { "bias", { 4 } } }, built(L.Conv1D { 4, 3, groups = 2 }, { 1, 5, 4 }))
    assert.are.same({ { "kernel", { 2, 3, 2, 3, 5 } }, { "bias", { 5 } } },
      built(L.Conv3D { 5, { 2, 3, 2 } }, { 1, 3, 4, 3, 3 }))
    assert.are.same({ { "kernel", { 3, 5, 2 } }, { "bias", { 5 } } }, built(L.Conv1DTranspose { 5, 3 }, { 1, 4, 2 }))
    assert.are.same({ { "kernel", { 1, 2, 3, 5, 2 } } },
      built(L.Conv3DTranspose { 5, { 1, 2, 3 }, use_bias = false }, { 1, 2, 2, 2, 2 }))
    assert.are.same({ { "kernel", { 3, 2, 3 } }, { "bias", { 6 } } },
      built(L.DepthwiseConv1D { 3, depth_multiplier = 3 }, { 1, 5, 2 }))
    assert.are.same({ { "depthwise_kernel", { 2, 3, 2 } }, { "pointwise_kernel", { 1, 6, 4 } }, { "bias", { 4 } } },
      built(L.SeparableConv1D { 4, 2, depth_multiplier = 2 }, { 1, 5, 3 }))
  end)

  it("traced with a None batch equals eager; only the batch is unknown while tracing", function()
    tide.config.set_retracing_warning(false)
    finally(function() tide.config.set_retracing_warning(true) end)
    for _, c in ipairs(cases()) do
      local l, s = c[1], c[2]
      local x = tide.random.normal(s)
      local eager = l(x)
      local sig = { unpack(s) }
      sig[1] = tide.None
      local traced_shape
      local f = tide.trace(function(v)
        local y = l(v)
        traced_shape = y.shape:as_list()
        return y
      end, { input_signature = { tide.TensorSpec(sig, "float32") } })
      local ok, err = pcall(function()
        h.close(f(x), eager:totable(), 1e-5)
        local want = eager.shape:as_list()
        want[1] = tide.None
        assert.are.same(want, traced_shape)
      end)
      assert(ok, name(l) .. ": " .. tostring(err))
    end
  end)

  it("float64 finite differences of the input and every weight", function()
    tide.random.set_seed(11)
    for _, c in ipairs(cases("float64")) do
      local l = c[1]
      local ok, err = pcall(gc.check_layer, l, tide.random.normal(c[2], { dtype = "float64" }))
      assert(ok, name(l) .. ": " .. tostring(err))
    end
  end)

  it("a model of them saved and loaded predicts the same, its config round trips", function()
    local x = tide.Input { shape = { 6, 4 } }
    local y = L.Conv1D { 4, 3, groups = 2, padding = "causal" }(x)
    y = L.SeparableConv1D { 4, 2, padding = "same", depth_multiplier = 2 }(y)
    y = L.DepthwiseConv1D { 3, padding = "same" }(y)
    y = L.Conv1DTranspose { 2, 3, strides = 2 }(y)
    local v = tide.Input { shape = { 3, 4, 4, 2 } }
    local z = L.Conv3D { 3, 2, padding = "same", activation = "relu" }(v)
    z = L.Conv3DTranspose { 2, 2, strides = 2 }(z)
    local m = tide.Model { { x, v }, { y, z } }
    local xs = { tide.random.normal { 2, 6, 4 }, tide.random.normal { 2, 3, 4, 4, 2 } }
    local want = m:predict(xs, { verbose = 0 })
    local dir = tmp.dir("conv_nd")
    finally(function() tmp.remove(dir) end)
    m:save(dir .. "/m")
    local again = tide.models.load_model(dir .. "/m")
    local got = again:predict(xs, { verbose = 0 })
    h.close(got[1], want[1]:totable(), 1e-6)
    h.close(got[2], want[2]:totable(), 1e-6)
    local clone = tide.Model:from_config(m:get_config())
    assert.are.same(m:get_config(), clone:get_config())
    assert.are.equal(m:count_params(), clone:count_params())
  end)

  it("errors name the layer and what to change", function()
    h.errors("Conv1D: the number of filters must be evenly divisible by the number of groups; got groups=3, filters=4",
      function() L.Conv1D { 4, 3, groups = 3 } end)
    h.errors("the number of input channels must be evenly divisible by the number of groups; got groups=2, but " ..
      "the input has 3 channels", function() L.Conv1D { 4, 3, groups = 2 }(tide.zeros { 1, 5, 3 }) end)
    h.errors("Conv3D: groups must be a positive integer, got 0", function() L.Conv3D { 4, 3, groups = 0 } end)
    h.errors("Conv3D: padding must be \"valid\" or \"same\", got causal",
      function() L.Conv3D { 4, 3, padding = "causal" } end)
    h.errors("Conv3D: kernel_size must be an integer or a list of 3 integers",
      function() L.Conv3D { 4, { 3, 3 } } end)
    h.errors("Conv3D: only data_format=\"channels_last\" is supported",
      function() L.Conv3D { 4, 3, data_format = "channels_first" } end)
    h.errors("expected an input of rank 5", function() L.Conv3D { 2, 2 }(tide.zeros { 1, 4, 4, 2 }) end)
    h.errors("Conv1DTranspose: output_padding must be strictly less than strides; at index 0 output_padding is 1 " ..
      "but strides is 1", function() L.Conv1DTranspose { 2, 3, output_padding = 1 } end)
    h.errors("Conv3DTranspose: output_padding must be an integer or a list of 3 integers",
      function() L.Conv3DTranspose { 2, 3, strides = 2, output_padding = { 1, 1 } } end)
    h.errors("SeparableConv1D: padding must be \"valid\" or \"same\", got causal",
      function() L.SeparableConv1D { 2, 3, padding = "causal" } end)
    h.errors("DepthwiseConv1D: depth_multiplier must be a positive integer, got 0",
      function() L.DepthwiseConv1D { 3, depth_multiplier = 0 } end)
    local t = L.Conv3DTranspose { 2, 2 }
    local f = tide.trace(function(v) return t(v) end,
      { input_signature = { tide.TensorSpec({ 1, tide.None, 2, 2, 1 }, "float32") } })
    h.errors("the depth, height and width of the input must be known", f, tide.zeros { 1, 2, 2, 2, 1 })
    local c = L.Conv3D { 2, 2 }
    local g = tide.trace(function(v) return c(v) end,
      { input_signature = { tide.TensorSpec({ 1, tide.None, 3, 3, 1 }, "float32") } })
    h.errors("conv3d: the input's depth (dim 1) must be known while tracing", g, tide.zeros { 1, 3, 3, 3, 1 })
  end)
end)
