-- tests/spec/ops/nn_forms_spec.lua — tf.nn's other forms of convolution and pooling (stdlib/tide/ops/nn_forms.lua)
-- against TensorFlow's own results (tests/fixtures/math/tf_nn_forms.lua, made by gen_nn_forms.py there), eagerly and
-- traced, with TF's gradients, float64 finite differences and errors.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_nn_forms.lua")
local nn = tide.nn

local CALLS = {
  max_pool3d = function(i, a) return nn.max_pool3d(i[1], a.ksize, a.strides, a.padding) end,
  avg_pool3d = function(i, a) return nn.avg_pool3d(i[1], a.ksize, a.strides, a.padding) end,
  max_pool = function(i, a) return nn.max_pool(i[1], a.ksize, a.strides, a.padding) end,
  pool = function(i, a)
    return nn.pool(i[1], a.window_shape, a.pooling_type, { strides = a.strides, padding = a.padding })
  end,
  convolution = function(i, a)
    return nn.convolution(i[1], i[2], { strides = a.strides, padding = a.padding, dilations = a.dilations })
  end,
  conv_transpose = function(i, a) return nn.conv_transpose(i[1], i[2], a.output_shape, a.strides, a.padding) end,
  atrous_conv2d = function(i, a) return nn.atrous_conv2d(i[1], i[2], a.rate, a.padding) end,
  atrous_conv2d_transpose = function(i, a) return nn.atrous_conv2d_transpose(i[1], i[2], a.output_shape, a.rate, a.padding) end,
  separable_conv2d = function(i, a) return nn.separable_conv2d(i[1], i[2], i[3], a.strides, a.padding) end,
  space_to_batch = function(i, a) return nn.space_to_batch(i[1], a.block_shape, a.paddings) end,
}
-- sums of products in another order than TF's (oneDNN, Eigen): float32 outputs near 0 keep the error of their
-- O(1) terms, so those compare loosely; the float64 gradient cases stay tight
local differs = {}
for _, c in ipairs(F.cases) do
  local f64 = c.out and c.out[1] and c.out[1].dtype == "float64"
  differs[c.name] = f64 and { loose = 1e-10, grad_loose = 1e-10 } or { loose = 1e-3, grad_loose = 1e-3 }
end
local SPEC = { calls = CALLS, errors = {}, differs = differs }

describe("tf.nn's other conv and pool forms against TensorFlow " .. F.tf_version, function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has the fixture's cases, each known to the spec", function()
    assert.is_true(#F.cases > 25)
    fx.check_known(F, SPEC)
  end)

  for _, g in ipairs(fx.by_op(F)) do
    it(g.op .. " (" .. #g.cases .. " cases)", function()
      for _, c in ipairs(g.cases) do
        fx.check_case(c, false, SPEC)
        fx.check_case(c, true, SPEC)
      end
    end)
  end

  it("differentiates in float64 by finite differences (and traced with None dims)", function()
    local R = gc.random
    -- (the 3-D pools need the depth and channels known: no None-dims trace)
    gc.check(function(x) return nn.avg_pool3d(x, 2, 1, "SAME") end, { R({ 1, 3, 3, 2, 2 }, -1, 1, 1) }, { none = false })
    gc.check(function(x) return nn.max_pool3d(x, { 2, 1, 2 }, 2, "VALID") end, { R({ 1, 4, 2, 4, 1 }, -1, 1, 2) },
      { none = false })
    gc.check(function(x, f) return nn.atrous_conv2d(x, f, 2, "VALID") end, { R({ 1, 5, 5, 1 }, -1, 1, 3), R({ 2, 2, 1, 2 }, -1, 1, 4) })
    gc.check(function(x, d, p) return nn.separable_conv2d(x, d, p, 1, "SAME") end,
      { R({ 1, 3, 3, 2 }, -1, 1, 5), R({ 2, 2, 2, 1 }, -1, 1, 6), R({ 1, 1, 2, 2 }, -1, 1, 7) })
    gc.check(function(x) return nn.space_to_batch(x, { 2 }, { { 1, 1 } }) end, { R({ 2, 4, 2 }, -1, 1, 8) }, { none = false })
    gc.check(function(x) return nn.pool(x, { 2 }, "AVG", { padding = "SAME" }) end, { R({ 1, 5, 2 }, -1, 1, 9) })
  end)

  it("refuses bad arguments with errors naming the op and argument", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("avg_pool3d: the depth and channels must be known", err(tide.trace(function(x) return nn.avg_pool3d(x, 2) end,
      { input_signature = { tide.TensorSpec({ 1, tide.None, 2, 2, 1 }, "float32") } }), tide.zeros { 1, 2, 2, 2, 1 }))
    assert.matches("max_pool3d: input must be 5%-D", err(nn.max_pool3d, tide.zeros { 1, 2, 2, 1 }, 2))
    assert.matches("avg_pool3d: ksize in the batch and channel dimensions must be 1",
      err(nn.avg_pool3d, tide.zeros { 1, 2, 2, 2, 1 }, { 2, 2, 2, 2, 1 }))
    assert.matches("avg_pool3d: ksize is required", err(nn.avg_pool3d, tide.zeros { 1, 2, 2, 2, 1 }))
    assert.matches("pool: pooling_type must be", err(nn.pool, tide.zeros { 1, 4, 1 }, { 2 }, "MIN"))
    assert.matches("pool: dilations other than 1", err(nn.pool, tide.zeros { 1, 4, 1 }, { 2 }, "MAX", { dilations = 2 }))
    assert.matches("pool: input must be 3%-D to 5%-D", err(nn.pool, tide.zeros { 4, 1 }, { 2 }, "MAX"))
    assert.matches("convolution: filters must be 3%-D to 5%-D", err(nn.convolution, tide.zeros { 1, 4, 1 }, tide.zeros { 2, 1 }))
    assert.matches("conv_transpose: strides is required", err(nn.conv_transpose, tide.zeros { 1, 4, 1 }, tide.zeros { 2, 1, 1 }, { 1, 4, 1 }))
    assert.matches("atrous_conv2d: rate must be at least 1", err(nn.atrous_conv2d, tide.zeros { 1, 4, 4, 1 }, tide.zeros { 2, 2, 1, 1 }, 0, "SAME"))
    assert.matches("separable_conv2d: pointwise_filter must be %[1, 1, in %* multiplier, out%]",
      err(nn.separable_conv2d, tide.zeros { 1, 4, 4, 1 }, tide.zeros { 2, 2, 1, 1 }, tide.zeros { 2, 2, 1, 1 }, 1, "SAME"))
    assert.matches("space_to_batch: padded dim 1 %(5%) is not divisible by block_shape%[0%] = 2",
      err(nn.space_to_batch, tide.zeros { 1, 5, 1 }, { 2 }, { { 0, 0 } }))
    assert.matches("space_to_batch: paddings must be %[1, 2%]", err(nn.space_to_batch, tide.zeros { 1, 4, 1 }, { 2 }, {}))
  end)
end)
