-- tests/spec/layers/regularization_spec.lua — the random regularization
-- layers (SpatialDropout1D/2D/3D, GaussianDropout, GaussianNoise,
-- AlphaDropout): the input itself when inferring, Keras's statistics and
-- sharing when training, seeds, traced functions with None dims (new draws
-- at each run), fit; ActivityRegularization's loss; Identity; masks kept.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local keras_mask = require "tide.keras_mask"

local function mean_std(t)
  local v = h.values(t)
  local s, s2 = 0, 0
  for _, x in ipairs(v) do s, s2 = s + x, s2 + x * x end
  local m = s / #v
  return m, math.sqrt(s2 / #v - m * m)
end

local function all_none(rank)
  local d = {}
  for i = 1, rank do d[i] = tide.None end
  return { input_signature = { tide.TensorSpec(d) } }
end

describe("regularization layers", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(13)
    tide.config.set_retracing_warning(false) -- a Function per layer, on purpose
  end)
  after_each(function() tide.config.set_retracing_warning(true) end)

  local function random_layers()
    return { L.GaussianNoise { 0.3 }, L.GaussianDropout { 0.3 }, L.AlphaDropout { 0.3 }, L.SpatialDropout1D { 0.3 },
             L.Dropout { 0.3 } }
  end

  it("infer as the identity (the input itself), also with rate 0 in training", function()
    local x = tide.random.normal { 4, 3, 5 }
    for _, layer in ipairs(random_layers()) do
      assert.are.equal(x, layer(x))
      assert.are.equal(x, layer(x, { training = false }))
    end
    for _, layer in ipairs { L.GaussianNoise { 0 }, L.GaussianDropout { 0 }, L.AlphaDropout { 0 },
                             L.SpatialDropout2D { 0 } } do
      local x4 = tide.ones { 1, 2, 2, 3 }
      assert.are.equal(x4, layer(x4, { training = true }))
    end
  end)

  it("GaussianNoise adds N(0, stddev), GaussianDropout multiplies by N(1, sqrt(rate / (1 - rate)))", function()
    local x = tide.ones { 200, 100 }
    local m, s = mean_std(L.GaussianNoise { 0.3 }(x, { training = true }))
    assert.is_true(math.abs(m - 1) < 0.01 and math.abs(s - 0.3) < 0.01, m .. " " .. s)
    m, s = mean_std(L.GaussianDropout { 0.3 }(x, { training = true }))
    assert.is_true(math.abs(m - 1) < 0.01 and math.abs(s - math.sqrt(0.3 / 0.7)) < 0.02, m .. " " .. s)
  end)

  it("AlphaDropout: kept elements a*x + b, dropped ones a*alpha' + b; mean and variance of N(0, 1) kept", function()
    local rate, alpha_p = 0.3, -1.6732632423543772 * 1.0507009873554805
    local a = ((1 - rate) * (1 + rate * alpha_p ^ 2)) ^ -0.5
    local b = -a * alpha_p * rate
    local x = tide.random.normal { 300, 100 }
    local y = L.AlphaDropout { rate }(x, { training = true })
    local xs, ys = h.values(x), h.values(y)
    local dropped = 0
    for i = 1, #xs do
      local kept = math.abs(ys[i] - (a * xs[i] + b)) < 1e-5
      local gone = math.abs(ys[i] - (a * alpha_p + b)) < 1e-5
      assert(kept or gone, "element " .. i)
      if gone and not kept then dropped = dropped + 1 end
    end
    assert.is_true(math.abs(dropped / #xs - rate) < 0.01)
    local m, s = mean_std(y)
    assert.is_true(math.abs(m) < 0.02 and math.abs(s - 1) < 0.02, m .. " " .. s)
    -- noise_shape with None dims: one draw per row
    local shared = L.AlphaDropout { 0.5, noise_shape = { tide.None, 1 } }(tide.ones { 8, 6 }, { training = true })
    for _, row in ipairs(shared:totable()) do
      for _, v in ipairs(row) do assert.are.equal(row[1], v) end
    end
  end)

  it("SpatialDropout drops whole channels: one draw per (sample, channel), shared along the spatial dims", function()
    local y1 = L.SpatialDropout1D { 0.5 }(tide.ones { 10, 3, 10 }, { training = true }):totable()
    local y2 = L.SpatialDropout2D { 0.5 }(tide.ones { 10, 3, 3, 10 }, { training = true }):totable()
    local y2f = L.SpatialDropout2D { 0.5, data_format = "channels_first" }(tide.ones { 10, 10, 3, 3 },
      { training = true }):totable()
    local y3 = L.SpatialDropout3D { 0.5 }(tide.ones { 4, 2, 2, 2, 10 }, { training = true }):totable()
    local zeros, n = 0, 0
    for b = 1, 10 do
      for c = 1, 10 do
        for t = 2, 3 do assert.are.equal(y1[b][1][c], y1[b][t][c]) end
        assert.are.equal(y2[b][1][1][c], y2[b][3][2][c])
        assert.are.equal(y2f[b][c][1][1], y2f[b][c][2][3])
        assert.is_true(y1[b][1][c] == 0 or y1[b][1][c] == 2)
        if y1[b][1][c] == 0 then zeros = zeros + 1 end
        n = n + 1
      end
    end
    assert.is_true(zeros > 25 and zeros < 75)
    for b = 1, 4 do for c = 1, 10 do assert.are.equal(y3[b][1][1][1][c], y3[b][2][2][2][c]) end end
  end)

  it("a seed repeats after set_seed, as Keras's seed generators", function()
    local x = tide.ones { 6, 5, 4 }
    for _, make in ipairs {
      function() return L.GaussianNoise { 0.5, seed = 4 } end, function() return L.GaussianDropout { 0.5, seed = 4 } end,
      function() return L.AlphaDropout { 0.5, seed = 4 } end, function() return L.SpatialDropout1D { 0.5, seed = 4 } end,
    } do
      tide.random.set_seed(7)
      local a = make()(x, { training = true })
      tide.random.set_seed(7)
      local b = make()(x, { training = true })
      h.close(a, b:totable(), 0)
    end
  end)

  it("run in traced functions with None dims, drawing anew at each run", function()
    local x = tide.ones { 6, 5, 4 }
    for _, layer in ipairs(random_layers()) do
      local f = tide.trace(function(v) return layer(v, { training = true }) end, all_none(3))
      local a, b = f(x), f(x)
      assert.are.same({ 6, 5, 4 }, a.shape:as_list())
      local differ = false
      for i, v in ipairs(h.values(a)) do if v ~= h.values(b)[i] then differ = true end end
      assert.is_true(differ, layer.name)
    end
    -- noise shapes that follow unknown dims (Dropout's too) are sized when the graph runs
    for _, layer in ipairs { L.SpatialDropout1D { 0.5 }, L.Dropout { 0.5, noise_shape = { tide.None, 1, tide.None } } } do
      local f = tide.trace(function(v) return layer(v, { training = true }) end, all_none(3))
      local y = f(tide.ones { 10, 3, 10 }):totable()
      for bi = 1, 10 do for c = 1, 10 do assert.are.equal(y[bi][1][c], y[bi][3][c]) end end
    end
  end)

  it("are active in fit and not in predict", function()
    local model = tide.Sequential { tide.Input { shape = { 4 } }, L.GaussianNoise { 0.5 }, L.AlphaDropout { 0.2 },
      L.Dense { 2 } }
    model:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.01 }, loss = "mse" }
    local x, y = tide.random.normal { 16, 4 }, tide.random.normal { 16, 2 }
    local dense = model.layers[#model.layers]
    h.close(model:predict(x), dense(x):totable(), 1e-6)
    local before = model:evaluate(x, y, { verbose = 0 })
    local hist = model:fit(x, y, { epochs = 1, batch_size = 16, verbose = 0, shuffle = false })
    -- the training loss saw the noise: it is not the clean loss of the weights it started from
    assert.is_true(math.abs(before - hist.history.loss[1]) > 1e-3 * before, before .. " " .. hist.history.loss[1])
  end)

  it("ActivityRegularization adds l1 * sum|x| + l2 * sum x^2 over the batch size to the losses", function()
    local x = tide.tensor({ { 1, -2 }, { 3, 0 } }, "float32")
    local ar = L.ActivityRegularization { l1 = 0.1, l2 = 0.01 }
    assert.are.equal(x, ar(x))
    h.close(ar.losses[1], { (0.1 * 6 + 0.01 * 14) / 2 }, 1e-6)
    local inp = tide.Input { shape = { 2 } }
    local model = tide.Model { inputs = inp, outputs = L.ActivityRegularization { l2 = 1 }(L.Dense { 2 }(inp)) }
    model(x)
    assert.are.equal(1, #model.losses)
    local c = ar:get_config()
    assert.is_nil(c.activity_regularizer)
    assert.are.same({ 0.1, 0.01 }, { c.l1, c.l2 })
    h.errors("ActivityRegularization: l1 must be a number >= 0, got -1", L.ActivityRegularization, { l1 = -1 })
  end)

  it("keep the input's mask; Identity passes anything on", function()
    local ids = tide.tensor({ { 1, 2, 0 } }, "int32")
    local e = L.Embedding { 4, 3, mask_zero = true }(ids)
    for _, layer in ipairs { L.GaussianNoise { 0.2 }, L.GaussianDropout { 0.2 }, L.AlphaDropout { 0.2 },
                             L.SpatialDropout1D { 0.2 }, L.ActivityRegularization { l1 = 0.1 }, L.Identity() } do
      h.close(keras_mask.get(layer(e, { training = true })), { { true, true, false } }, 0)
    end
    local pair = { tide.ones { 2 }, tide.zeros { 3 } }
    local out = L.Identity()(pair)
    assert.are.equal(pair[1], out[1])
  end)

  it("check their options", function()
    h.errors("GaussianDropout: rate must be a number in [0, 1)", L.GaussianDropout, { 1 })
    h.errors("AlphaDropout: rate must be a number in [0, 1)", L.AlphaDropout, { -0.1 })
    h.errors("SpatialDropout2D: rate must be a number in [0, 1)", L.SpatialDropout2D, {})
    h.errors("GaussianNoise: stddev must be a number in [0, 1]", L.GaussianNoise, { 1.5 })
    h.errors("GaussianNoise: seed must be an integer", L.GaussianNoise, { 0.1, seed = 0.5 })
    h.errors("SpatialDropout1D: unknown option 'noise_shape'", L.SpatialDropout1D, { 0.1, noise_shape = { 1 } })
    h.errors("expected an input of rank 4", L.SpatialDropout2D { 0.5 }, tide.ones { 2, 3, 4 }, { training = true })
    h.errors("noise_shape (1, 1) must have the input's rank (3)", L.AlphaDropout { 0.5, noise_shape = { 1, 1 } },
      tide.ones { 2, 3, 4 }, { training = true })
  end)
end)
