-- tests/spec/ops/nn_more_tf_fixtures_spec.lua — the rest of tf.nn's common names (stdlib/tide/ops/nn_more.lua:
-- compositions) against TensorFlow's own results (tests/fixtures/math/tf_nn_more.lua, made by gen_nn_more.py
-- there), eagerly and traced, with TF's gradients and float64 finite differences.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_nn_more.lua")
local nn = tide.nn

local CALLS = {
  silu = function(i, a) return nn.silu(i[1], { beta = a.beta }) end,
  swish = function(i) return nn.swish(i[1]) end,
  crelu = function(i, a) return nn.crelu(i[1], { axis = a.axis }) end,
  log_poisson_loss = function(i, a) return nn.log_poisson_loss(i[1], i[2], { compute_full_loss = a.compute_full_loss }) end,
  weighted_cross_entropy_with_logits = function(i, a) return nn.weighted_cross_entropy_with_logits(i[1], i[2], a.pos_weight) end,
  sufficient_statistics = function(i, a)
    local shift = a.shift and tide.tensor(a.shift, i[1].dtype) or nil
    local n, ms, vs = nn.sufficient_statistics(i[1], { axes = a.axes, shift = shift, keepdims = a.keepdims })
    return n, ms, vs
  end,
  normalize_moments = function(i, a) return nn.normalize_moments(i[1], i[2], i[3], a.shift) end,
  weighted_moments = function(i, a)
    local mean, var = nn.weighted_moments(i[1], { axes = a.axes, frequency_weights = i[2], keepdims = a.keepdims })
    if a.variance then return var end
    return mean, var
  end,
  local_response_normalization = function(i, a)
    return nn.local_response_normalization(i[1], { depth_radius = a.depth_radius, bias = a.bias, alpha = a.alpha,
      beta = a.beta })
  end,
  compute_average_loss = function(i, a)
    return nn.compute_average_loss(i[1], { sample_weight = i[2], global_batch_size = a.global_batch_size })
  end,
  scale_regularization_loss = function(i) return nn.scale_regularization_loss(i[1]) end,
  max_pool1d = function(i, a) return nn.max_pool1d(i[1], a.ksize, a.strides, a.padding) end,
  avg_pool1d = function(i, a) return nn.avg_pool1d(i[1], a.ksize, a.strides, a.padding) end,
  max_pool = function(i, a) return nn.max_pool(i[1], a.ksize, a.strides, a.padding) end,
  avg_pool = function(i, a) return nn.avg_pool(i[1], a.ksize, a.strides, a.padding) end,
  depth_to_space = function(i, a) return nn.depth_to_space(i[1], a.block_size) end,
  space_to_depth = function(i, a) return nn.space_to_depth(i[1], a.block_size) end,
  ctc_greedy_decoder = function(i, a)
    local decoded, lp = nn.ctc_greedy_decoder(i[1], i[2], { merge_repeated = a.merge_repeated, blank_index = a.blank_index })
    local d = decoded[1]
    return d.indices, d.values, d.dense_shape, lp
  end,
  dilation2d = function(i, a) return nn.dilation2d(i[1], i[2], a.strides, a.padding, "NHWC", a.dilations) end,
  erosion2d = function(i, a) return nn.erosion2d(i[1], i[2], a.strides, a.padding, "NHWC", a.dilations) end,
  -- (main's conv1d_transpose, ops/nn_conv_nd.lua, checked here against these TF cases too)
  conv1d_transpose = function(i, a) return nn.conv1d_transpose(i[1], i[2], a.output_shape, a.strides, a.padding) end,
  batch_norm_with_global_normalization = function(i, a)
    return nn.batch_norm_with_global_normalization(i[1], i[2], i[3], i[4], i[5], 0.001, a.scale_after_normalization)
  end,
}

local SPEC = { calls = CALLS, errors = {}, differs = {} }
-- Ops that need values to size their result: eager only.
local EAGER_ONLY = { ctc_greedy_decoder = true }

describe("the rest of tf.nn against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_nn_more.lua)", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has the fixture's cases, each known to the spec", function()
    assert.is_true(#F.cases > 20)
    fx.check_known(F, SPEC)
  end)

  for _, g in ipairs(fx.by_op(F)) do
    it(g.op .. " (" .. #g.cases .. " cases)", function()
      for _, c in ipairs(g.cases) do
        fx.check_case(c, false, SPEC)
        if not EAGER_ONLY[c.op] then fx.check_case(c, true, SPEC) end
      end
    end)
  end

  it("differentiates in float64 by finite differences (and traced with None dims)", function()
    local R = gc.random
    gc.check(function(x) return nn.silu(x, { beta = 1.5 }) end, { R({ 2, 3 }, -2, 2, 1) })
    gc.check(nn.crelu, { R({ 2, 3 }, -2, 2, 2) })
    gc.check(function(z, c) return nn.log_poisson_loss(z, c, { compute_full_loss = true }) end,
      { R({ 2, 3 }, 1.5, 4, 3), R({ 2, 3 }, -1, 1, 4) })
    gc.check(function(z, x) return nn.weighted_cross_entropy_with_logits(z, x, 2.5) end,
      { R({ 2, 3 }, 0, 1, 5), R({ 2, 3 }, -2, 2, 6) })
    gc.check(function(x, w) return select(2, nn.weighted_moments(x, { axes = { 1 }, frequency_weights = w })) end,
      { R({ 2, 3 }, -1, 1, 7), R({ 3 }, 0.5, 2, 8) })
    gc.check(function(x) return nn.local_response_normalization(x, { depth_radius = 1, alpha = 0.5 }) end,
      { R({ 1, 2, 1, 4 }, -1, 1, 9) })
    gc.check(function(x)
      local n, ms, vs = nn.sufficient_statistics(x, { axes = { 0 } })
      local mean, var = nn.normalize_moments(n, ms, vs)
      return tide.add(mean, var)
    end, { R({ 3, 2 }, -1, 1, 10) })
    gc.check(function(l) return nn.compute_average_loss(l, { global_batch_size = 4 }) end, { R({ 3 }, -1, 1, 11) })
    gc.check(function(x) return nn.max_pool1d(x, 2, 1, "SAME") end, { R({ 1, 5, 2 }, -1, 1, 12) })
    gc.check(function(x, f) return nn.conv1d_transpose(x, f, { 1, 6, 2 }, 2, "SAME") end,
      { R({ 1, 3, 2 }, -1, 1, 14), R({ 2, 2, 2 }, -1, 1, 15) })
    gc.check(function(x, f) return nn.dilation2d(x, f, { 1, 1, 1, 1 }, "SAME", "NHWC", { 1, 1, 1, 1 }) end,
      { R({ 1, 3, 4, 1 }, -1, 1, 16), R({ 2, 2, 1 }, -1, 1, 17) }, { none = false }) -- (height and width must be known)
    -- (space_to_depth needs its height, width and depth known: no None-dims trace)
    gc.check(function(x) return nn.space_to_depth(x, 2) end, { R({ 1, 2, 4, 1 }, -1, 1, 13) }, { none = false })
  end)

  it("refuses bad arguments with errors naming the op and argument", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("silu: features must be a float tensor", err(nn.silu, tide.tensor { 1 }))
    assert.matches("log_poisson_loss: targets is float64 but log_input is float32",
      err(nn.log_poisson_loss, tide.zeros({ 2 }, "float64"), tide.zeros { 2 }))
    assert.matches("weighted_cross_entropy_with_logits: pos_weight is required",
      err(nn.weighted_cross_entropy_with_logits, tide.zeros { 2 }, tide.zeros { 2 }))
    assert.matches("weighted_moments: frequency_weights is required", err(nn.weighted_moments, tide.zeros { 2 }, { 0 }))
    assert.matches("sufficient_statistics: axes%[1%] = 3 is out of range for rank 2",
      err(nn.sufficient_statistics, tide.zeros { 2, 2 }, { 3 }))
    assert.matches("local_response_normalization: input must be 4%-D",
      err(nn.local_response_normalization, tide.zeros { 2, 3 }))
    assert.matches("local_response_normalization: depth_radius must be >= 0",
      err(nn.lrn, tide.zeros { 1, 1, 1, 2 }, { depth_radius = -1 }))
    assert.matches("compute_average_loss: global_batch_size must be positive",
      err(nn.compute_average_loss, tide.zeros { 2 }, { global_batch_size = 0 }))
    assert.matches("max_pool1d: input must be 3%-D", err(nn.max_pool1d, tide.zeros { 2, 3 }, 2))
    assert.matches("max_pool1d: ksize is required", err(nn.max_pool1d, tide.zeros { 1, 2, 3 }))
    assert.matches("avg_pool1d: ksize in the batch and channel dimensions must be 1",
      err(nn.avg_pool1d, tide.zeros { 1, 4, 3 }, { 2, 2, 1 }))
    assert.matches("max_pool: input must be 3%-D to 5%-D", err(nn.max_pool, tide.zeros { 1, 2, 2, 2, 1, 1 }, 2))
    assert.matches("depth_to_space: the depth 6 must be divisible by block_size%^2 = 4",
      err(nn.depth_to_space, tide.zeros { 1, 1, 1, 6 }, 2))
    assert.matches("space_to_depth: height 3 and width 4 must be divisible by block_size 2",
      err(nn.space_to_depth, tide.zeros { 1, 3, 4, 1 }, 2))
    assert.matches("depth_to_space: block_size must be at least 2", err(nn.depth_to_space, tide.zeros { 1, 1, 1, 4 }, 1))
    local x = tide.random.uniform({ 2, 2, 4, 3 }, { seed = 1 })
    assert.are.same(x:totable(), nn.depth_to_space(nn.space_to_depth(x, 2), 2):totable())
    assert.matches("batch_norm_with_global_normalization: variance_epsilon is required",
      err(nn.batch_norm_with_global_normalization, tide.zeros { 2 }, tide.zeros { 2 }, tide.ones { 2 }, tide.zeros { 2 },
        tide.ones { 2 }))
    assert.matches("ctc_greedy_decoder: inputs must be 3%-D", err(nn.ctc_greedy_decoder, tide.zeros { 2, 3 }, tide.tensor { 2 }))
    assert.matches("ctc_greedy_decoder: sequence_length must be a 1%-D integer tensor of the batch size 1",
      err(nn.ctc_greedy_decoder, tide.zeros { 2, 1, 3 }, tide.tensor { 2, 2 }))
    assert.matches("ctc_greedy_decoder: sequence_length%[0%] = 3 is not in %[0, 2%]",
      err(nn.ctc_greedy_decoder, tide.zeros { 2, 1, 3 }, tide.tensor { 3 }))
    assert.matches("ctc_greedy_decoder: blank_index must be in", err(nn.ctc_greedy_decoder, tide.zeros { 2, 1, 3 },
      tide.tensor { 2 }, { blank_index = 3 }))
    assert.matches("dilation2d: filters have depth 1 but input 2",
      err(nn.dilation2d, tide.zeros { 1, 3, 3, 2 }, tide.zeros { 2, 2, 1 }, { 1, 1, 1, 1 }, "SAME", "NHWC", { 1, 1, 1, 1 }))
    assert.matches("dilation2d: strides must be %[1, rows, cols, 1%]",
      err(nn.dilation2d, tide.zeros { 1, 3, 3, 1 }, tide.zeros { 2, 2, 1 }, { 2, 2 }, "SAME"))
    assert.matches("dilation2d: padding must be",
      err(nn.dilation2d, tide.zeros { 1, 3, 3, 1 }, tide.zeros { 2, 2, 1 }, { 1, 1, 1, 1 }, "FULL"))
    assert.are.equal(nn.swish, nn.silu)
    assert.are.equal(nn.lrn, nn.local_response_normalization)
  end)
end)
