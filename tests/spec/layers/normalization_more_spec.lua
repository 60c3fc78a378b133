-- tests/spec/layers/normalization_more_spec.lua — GroupNormalization,
-- UnitNormalization, RMSNormalization and SpectralNormalization beyond
-- Keras's values (keras_more_values_spec): agreement with LayerNormalization
-- and instance normalization, options and errors, None dims in traces,
-- float64 gradient checks, and SpectralNormalization's power iteration in
-- training (the kernel's spectral norm goes to 1), inference, fit and configs.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers
local keras_mask = require "tide.keras_mask"

local function f64(shape) return tide.random.normal(shape, { dtype = "float64" }) end

local function all_none(rank)
  local d = {}
  for i = 1, rank do d[i] = tide.None end
  return { input_signature = { tide.TensorSpec(d) } }
end

-- The largest singular value of a 2-D table m: the square root of m^T m's
-- largest eigenvalue, by power iteration on unit vectors v (|m^T m v| -> sigma^2).
local function spectral_norm(m)
  local rows, cols = #m, #m[1]
  local v = {}
  for j = 1, cols do v[j] = 1 / j end
  local sigma2 = 0
  for _ = 1, 200 do
    local u = {}
    for i = 1, rows do
      u[i] = 0
      for j = 1, cols do u[i] = u[i] + m[i][j] * v[j] end
    end
    local w, norm = {}, 0
    for j = 1, cols do
      w[j] = 0
      for i = 1, rows do w[j] = w[j] + m[i][j] * u[i] end
      norm = norm + w[j] ^ 2
    end
    sigma2 = math.sqrt(norm)
    for j = 1, cols do v[j] = w[j] / sigma2 end
  end
  return math.sqrt(sigma2)
end

describe("GroupNormalization, UnitNormalization, RMSNormalization", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(17)
    tide.config.set_retracing_warning(false) -- a Function per layer, on purpose
  end)
  after_each(function() tide.config.set_retracing_warning(true) end)

  it("GroupNormalization with one group is LayerNormalization over every non-batch axis; groups=-1 is instance norm",
    function()
      local x = tide.random.normal { 3, 4, 6 }
      h.close(L.GroupNormalization { groups = 1 }(x), L.LayerNormalization { axis = { 1, 2 } }(x):totable(), 1e-5)
      local img = tide.random.normal { 2, 3, 5, 4 }
      local inst = L.GroupNormalization { groups = -1, epsilon = 1e-5 }
      local want = (img - tide.reduce_mean(img, { 1, 2 }, true)) /
        tide.sqrt(tide.reduce_variance(img, { 1, 2 }, true) + 1e-5)
      h.close(inst(img), want:totable(), 1e-5)
      assert.are.equal(-1, inst:get_config().groups)
      -- channels on axis 1 (channels_first)
      local cf = L.GroupNormalization { groups = 2, axis = 1 }
      local xt = tide.transpose(img, { 0, 3, 1, 2 })
      local last = L.GroupNormalization { groups = 2 }
      h.close(tide.transpose(cf(xt), { 0, 2, 3, 1 }), last(img):totable(), 1e-5)
    end)

  it("GroupNormalization's checks", function()
    h.errors("GroupNormalization: groups must be a positive integer (or -1", L.GroupNormalization, { groups = 0 })
    h.errors("the channels (6, axis -1) must be a multiple of groups (4)", L.GroupNormalization { groups = 4 },
      tide.ones { 2, 6 })
    h.errors("the channels (2, axis -1) must be a multiple of groups (32)", L.GroupNormalization(), tide.ones { 2, 2 })
    h.errors("axis must not be the batch axis 0", L.GroupNormalization { groups = 1, axis = 0 }, tide.ones { 2, 2 })
    h.errors("axis 1 of the input must be known to build", function()
      L.GroupNormalization { groups = 1, axis = 1 }(L.Input { shape = { tide.None, 3 } })
    end)
    local g = L.GroupNormalization { groups = 2 }
    g(tide.ones { 1, 4 })
    h.errors("expected axis -1 of the input to have size 4", g, tide.ones { 1, 6 })
  end)

  it("UnitNormalization gives unit l2 norms over its axes; RMSNormalization with a non-trailing axis", function()
    local x = tide.random.normal { 3, 4, 5 }
    h.close(tide.reduce_sum(L.UnitNormalization()(x) ^ 2, -1), tide.ones({ 3, 4 }):totable(), 1e-5)
    h.close(tide.reduce_sum(L.UnitNormalization { axis = { 1, 2 } }(x) ^ 2, { 1, 2 }), { 1, 1, 1 }, 1e-5)
    h.close(L.UnitNormalization()(tide.zeros { 1, 3 }), { { 0, 0, 0 } }, 0) -- no NaN at zero
    local r = L.RMSNormalization { axis = 1 }
    local y = r(x)
    assert.are.same({ 4 }, r.scale.shape:as_list())
    local want = x * tide.rsqrt(tide.reduce_mean(x * x, 1, true) + 1e-6)
    h.close(y, want:totable(), 1e-5)
    h.errors("axis 3 is out of range for an input of rank 3", L.UnitNormalization { axis = 3 }, x)
    h.errors("RMSNormalization: axis must be an integer or a list of integers", L.RMSNormalization, { axis = "last" })
  end)

  it("float64 gradients with respect to the input and the weights", function()
    local g = L.GroupNormalization { groups = 2, dtype = "float64" }
    g(tide.zeros({ 1, 2, 4 }, "float64"))
    g:set_weights({ gc.layer_weights(tide.zeros({ 4 }, "float64")), f64 { 4 } })
    gc.check_layer(g, f64 { 3, 2, 4 })
    gc.check_layer(L.GroupNormalization { groups = 3, axis = 1, dtype = "float64" }, f64 { 2, 6, 2 })
    local g2 = L.GroupNormalization { groups = 2, dtype = "float64" }
    local u = L.UnitNormalization { axis = { 1, 2 }, dtype = "float64" }
    local x = f64 { 2, 3, 4 }
    g2(x)
    gc.check(function(v) return g2(v) end, { x }) -- (also traced with None dims: the group shape from tide.shape)
    gc.check(function(v) return u(v) end, { x })
    local r = L.RMSNormalization { dtype = "float64" }
    r(tide.zeros({ 1, 5 }, "float64"))
    r:set_weights({ gc.layer_weights(tide.zeros({ 5 }, "float64")) })
    gc.check_layer(r, f64 { 3, 5 })
    gc.check_layer(L.RMSNormalization { axis = { 1, 2 }, dtype = "float64" }, f64 { 2, 3, 2 })
  end)

  it("run traced with None dims, in float16 (normalized in float32), and keep masks", function()
    local x = tide.random.normal { 3, 4, 6 }
    local makers = {
      function(dt) return L.GroupNormalization { groups = 3, dtype = dt } end,
      function(dt) return L.UnitNormalization { dtype = dt } end,
      function(dt) return L.RMSNormalization { dtype = dt } end,
      function(dt) return L.GroupNormalization { groups = 2, axis = 1, dtype = dt } end,
    }
    for _, make in ipairs(makers) do
      local layer = make()
      local want = layer(x):totable()
      h.close(tide.trace(function(v) return layer(v) end, all_none(3))(x), want, 1e-5)
      local half = make("float16")(x:cast("float16"))
      assert.are.equal("float16", half.dtype)
      h.close(half:cast("float32"), want, 1e-2)
    end
    local m = tide.tensor({ { true, false, true, true }, { true, true, false, false }, { true, true, true, true } },
      "bool")
    local xm = tide.identity(x)
    keras_mask.set(xm, m)
    h.close(keras_mask.get(L.GroupNormalization { groups = 2 }(xm)), m:totable(), 0)
    h.close(keras_mask.get(L.UnitNormalization()(xm)), m:totable(), 0)
  end)
end)

describe("SpectralNormalization", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(19)
  end)

  it("in training divides the kernel by its largest singular value (power iteration); inference leaves it", function()
    local sn = L.SpectralNormalization { L.Dense { 3 }, power_iterations = 3 }
    local x = tide.random.normal { 4, 5 }
    sn(x)
    assert.are.same({ "dense/kernel", "spectral_normalization/vector_u", "dense/bias" },
      (function()
        local names = {}
        for i, w in ipairs(sn.weights) do names[i] = w.name end
        return names
      end)())
    assert.are.same({ 1, 3 }, sn.vector_u.shape:as_list())
    assert.are.equal(2, #sn.trainable_weights)
    local k0 = sn.layer.kernel:read_value():totable()
    sn(x)
    sn(x, { training = false })
    h.close(sn.layer.kernel:read_value(), k0, 0)
    local y
    for _ = 1, 20 do y = sn(x, { training = true }) end
    h.close(spectral_norm(sn.layer.kernel:read_value():totable()), { 1 }, 1e-4)
    h.close(y, sn.layer(x):totable(), 1e-6) -- the output uses the normalized kernel
    -- a kernel of zeros stays (no division by 0)
    sn.layer.kernel:assign(tide.zeros { 5, 3 })
    sn(x, { training = true })
    h.close(sn.layer.kernel:read_value(), tide.zeros({ 5, 3 }):totable(), 0)
  end)

  it("wraps convolutions and embeddings; refuses layers without a kernel and bad options", function()
    local conv = L.SpectralNormalization { L.Conv2D { 2, 3 } }
    conv(tide.random.normal { 1, 5, 5, 2 }, { training = true })
    assert.are.same({ 1, 2 }, conv.vector_u.shape:as_list())
    local emb = L.SpectralNormalization { L.Embedding { 10, 4 } }
    emb(tide.tensor({ { 1, 2 } }, "int32"), { training = true })
    assert.are.same({ 1, 4 }, emb.vector_u.shape:as_list())
    h.errors("has no kernel nor embeddings to normalize", L.SpectralNormalization { L.LayerNormalization() },
      tide.ones { 2, 3 })
    h.errors("SpectralNormalization: power_iterations must be a positive integer", L.SpectralNormalization,
      { L.Dense { 2 }, power_iterations = 0 })
    h.errors("SpectralNormalization: layer must be a layer instance", L.SpectralNormalization, { 3 })
  end)

  it("trains in fit (its assignments inside the traced step) and comes back from its config", function()
    local inp = tide.Input { shape = { 5 } }
    local sn = L.SpectralNormalization { L.Dense { 2 } }
    local model = tide.Model { inputs = inp, outputs = sn(inp) }
    model:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.01 }, loss = "mse" }
    local u0 = sn.vector_u:read_value():totable()
    model:fit(tide.random.normal { 8, 5 }, tide.random.normal { 8, 2 }, { epochs = 2, batch_size = 4, verbose = 0 })
    local u1 = sn.vector_u:read_value():totable()
    assert.are_not.same(u0, u1)
    local c = sn:get_config()
    assert.are.equal("Dense", c.layer.class_name)
    assert.are.equal(1, c.power_iterations)
    local again = L.SpectralNormalization:from_config(c)
    assert.are.equal("Dense", getmetatable(again.layer).__name)
    assert.are.equal(2, again.layer.units)
    local clone = tide.models.clone_model(model)
    assert.are.same({ 3, 2 }, clone:predict(tide.ones { 3, 5 }, { verbose = 0 }).shape:as_list())
  end)
end)
