-- tests/spec/layers/wrapper_merge_spec.lua — TimeDistributed and Dot (with
-- the merge functions) beyond Keras's values (keras_more_values_spec): the
-- wrapped layer per step, weights, masks in and out, training reaching the
-- wrapped layer, models inside, None dims in traces, configs, float64
-- gradients of batch_dot, and their errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers
local keras_mask = require "tide.keras_mask"

-- An input_signature of all-None dims for tensors like these.
local function all_none(...)
  local sig = {}
  for i, x in ipairs { ... } do
    local d = {}
    for k = 1, x.ndim do d[k] = tide.None end
    sig[i] = tide.TensorSpec(d, x.dtype)
  end
  return { input_signature = sig }
end

describe("TimeDistributed", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(23)
    tide.config.set_retracing_warning(false) -- a Function per layer, on purpose
  end)
  after_each(function() tide.config.set_retracing_warning(true) end)

  it("applies the layer to each time step; its weights are the layer's", function()
    local d = L.Dense { 3, activation = "tanh" }
    local td = L.TimeDistributed { d }
    local x = tide.random.normal { 2, 4, 5 }
    local y = td(x)
    assert.are.same({ 2, 4, 3 }, y.shape:as_list())
    for t = 0, 3 do h.close(y:slice { {}, t }, d(x:slice { {}, t }):totable(), 1e-6) end
    assert.are.equal(2, #td.weights)
    assert.are.equal(d.kernel, td.trainable_weights[1])
    -- built by a KerasTensor, the wrapped layer sees one step's shape
    local video = L.Input { shape = { 5, 8, 8, 3 } }
    local conv = L.TimeDistributed { L.Conv2D { 2, 3 } }
    assert.are.equal("(None, 5, 6, 6, 2)", tostring(conv(video).shape))
    assert.are.equal(3 * 3 * 3 * 2 + 2, conv:count_params())
    local built = L.TimeDistributed { L.Dense { 4 } }
    built:build({ tide.None, 7, 2 })
    assert.are.same({ 2, 4 }, built.layer.kernel.shape:as_list())
  end)

  it("passes training on, wraps models, and runs traced with None batch and time", function()
    local drop = L.TimeDistributed { L.Dropout { 0.5 } }
    local x = tide.ones { 4, 6, 10 }
    assert.are.equal(0, tide.count_nonzero(drop(x) - x):item())
    local zeros = tide.reduce_sum(tide.cast(tide.equal(drop(x, { training = true }), 0), "float32")):item()
    assert.is_true(zeros > 60 and zeros < 180)
    local inner = tide.Sequential { tide.Input { shape = { 10 } }, L.Dense { 4, activation = "relu" }, L.Dense { 2 } }
    local td = L.TimeDistributed { inner }
    local y = td(x)
    assert.are.same({ 4, 6, 2 }, y.shape:as_list())
    h.close(y:slice { {}, 2 }, inner(x:slice { {}, 2 }):totable(), 1e-6)
    local f = tide.trace(function(v) return td(v) end, all_none(x))
    h.close(f(x), y:totable(), 1e-6)
    local conv = L.TimeDistributed { L.Conv2D { 2, 2, padding = "same" } }
    local video = tide.random.normal { 2, 3, 4, 4, 2 }
    local want = conv(video):totable() -- (built eagerly: its channels are unknown in the trace)
    h.close(tide.trace(function(v) return conv(v) end, all_none(video))(video), want, 1e-5)
  end)

  it("masks: the output keeps the input's, a layer that supports masks gets it per step", function()
    local Probe = L.Layer:extend("MaskProbe")
    Probe.supports_masking = true
    function Probe:call(v, opts)
      self.seen = opts.mask
      return v * 2
    end
    local ids = tide.tensor({ { 1, 2, 0 }, { 3, 0, 0 } }, "int32")
    local e = L.Embedding { 5, 4, mask_zero = true }(ids)
    local probe = Probe()
    local y = L.TimeDistributed { probe }(e)
    h.close(keras_mask.get(y), { { true, true, false }, { true, false, false } }, 0)
    h.close(probe.seen, { true, true, false, true, false, false }, 0)
    local td = L.TimeDistributed { L.Dense { 2 } }
    h.close(keras_mask.get(td(e)), { { true, true, false }, { true, false, false } }, 0)
    h.errors("the mask must be at least 2-D", td, e, { mask = tide.ones({ 2 }, "bool") })
    h.errors("does not start with the input's batch and time dims", td, e, { mask = tide.ones({ 2, 5 }, "bool") })
  end)

  it("trains in fit, comes back from its config, and checks its arguments", function()
    local inp = L.Input { shape = { 4, 3 } }
    local td = L.TimeDistributed { L.Dense { 2 } }
    local model = tide.Model { inputs = inp, outputs = td(inp) }
    model:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 }, loss = "mse" }
    local x, y = tide.random.normal { 8, 4, 3 }, tide.random.normal { 8, 4, 2 }
    local hist = model:fit(x, y, { epochs = 3, batch_size = 8, verbose = 0 })
    assert.is_true(hist.history.loss[3] < hist.history.loss[1])
    local c = td:get_config()
    assert.are.equal("Dense", c.layer.class_name)
    local again = L.TimeDistributed:from_config(c)
    assert.are.equal(2, again.layer.units)
    local clone = tide.models.clone_model(model)
    assert.are.same({ 8, 4, 2 }, clone:predict(x, { verbose = 0 }).shape:as_list())
    h.errors("TimeDistributed: layer must be a layer instance", L.TimeDistributed, { "dense" })
    h.errors("expects an input of rank >= 3, [batch, time, ...], got (2, 3)", L.TimeDistributed { L.Dense { 2 } },
      tide.ones { 2, 3 })
    h.errors("expects one tensor [batch, time, ...], got a list", L.TimeDistributed { L.Add() },
      { tide.ones { 2, 3, 1 }, tide.ones { 2, 3, 1 } })
  end)
end)

describe("Dot and the merge functions", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(29)
    tide.config.set_retracing_warning(false)
  end)
  after_each(function() tide.config.set_retracing_warning(true) end)

  it("Dot of two [B, n] is [B, 1]; normalize gives cosines; no mask comes out", function()
    local a = tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    local b = tide.tensor({ { 2, 0 }, { 1, 1 } }, "float32")
    h.close(L.Dot { 1 } { a, b }, { { 2 }, { 7 } }, 1e-6)
    h.close(L.Dot { -1, normalize = true } { a, b }, { { 1 / math.sqrt(5) }, { 7 / (5 * math.sqrt(2)) } }, 1e-6)
    local am = tide.identity(a)
    keras_mask.set(am, tide.tensor({ true, false }, "bool"))
    local bm = tide.identity(b)
    keras_mask.set(bm, tide.tensor({ true, true }, "bool"))
    assert.is_nil(keras_mask.get(L.Dot { 1 } { am, bm }))
  end)

  it("Dot traced with None dims, and its gradients (float64), for ranks 2 to 4", function()
    local cases = {
      { { 1, 2 }, { 3, 4 }, { 3, 5, 4 } },
      { { 3, 1 }, { 2, 2, 3, 4 }, { 2, 4, 2, 3 } },
      { { 2, 3 }, { 2, 3, 4 }, { 2, 2, 3, 4 } },
      { { 1, 1 }, { 2, 3, 2 }, { 2, 3 } },
    }
    for _, c in ipairs(cases) do
      local x = tide.random.normal(c[2], { dtype = "float64" })
      local y = tide.random.normal(c[3], { dtype = "float64" })
      for _, normalize in ipairs { false, true } do
        local dot = L.Dot { c[1], normalize = normalize, dtype = "float64" }
        local want = dot { x, y }
        local f = tide.trace(function(p, q) return dot { p, q } end, all_none(x, y))
        h.close(f(x, y), want:totable(), 1e-12)
        gc.check(function(p, q) return dot { p, q } end, { x, y })
      end
    end
  end)

  it("Dot checks its axes and inputs", function()
    h.errors("Dot: axes must be an integer or a list of two integers", L.Dot, {})
    h.errors("Dot: axes must be an integer or a list of two integers", L.Dot, { { 1, 2, 3 } })
    h.errors("cannot take the dot product over the batch axis 0", L.Dot { 0 }, { tide.ones { 2, 3 }, tide.ones { 2, 3 } })
    h.errors("axes 3 is out of range for input 1 of rank 2", L.Dot { 3 }, { tide.ones { 2, 3 }, tide.ones { 2, 3 } })
    h.errors("incompatible input shapes: axis 1 of (2, 3) (3) differs from axis 1 of (2, 4) (4)", L.Dot { 1 },
      { tide.ones { 2, 3 }, tide.ones { 2, 4 } })
    h.errors("is called on a list of 2 tensors", L.Dot { 1 }, { tide.ones { 2, 3 }, tide.ones { 2, 3 }, tide.ones { 2, 3 } })
    h.errors("inputs must have rank >= 2", L.Dot { 1 }, { tide.ones { 3 }, tide.ones { 3 } })
  end)

  it("the functions make a layer per call: on KerasTensors they build a model, with the layer options", function()
    local a, b = L.Input { shape = { 3 } }, L.Input { shape = { 3 } }
    local sum = L.add({ a, b }, { name = "the_sum" })
    assert.are.equal("the_sum", sum.node.layer.name)
    local cat = L.concatenate({ sum, L.subtract { a, b }, L.multiply { a, b }, L.maximum { a, b }, L.minimum { a, b },
      L.average { a, b } }, 1)
    local out = L.concatenate { cat, L.dot({ a, b }, { axes = 1, normalize = true }) }
    assert.are.equal("(None, 19)", tostring(out.shape))
    local model = tide.Model { inputs = { a, b }, outputs = out }
    local x, y = tide.random.normal { 2, 3 }, tide.random.normal { 2, 3 }
    local r = model:predict({ x, y }, { verbose = 0 })
    h.close(r:slice { {}, { 0, 3 } }, (x + y):totable(), 1e-6)
    assert.are.equal("Concatenate", getmetatable(cat.node.layer).__name)
    assert.are.equal(1, cat.node.layer.axis)
  end)
end)

describe("a model of the Keras 3 layers", function()
  it("saves and loads as a SavedModel (config and weights), with an unknown time dim", function()
    local tmp = require "tmp"
    L.clear_session()
    tide.random.set_seed(31)
    local inp = L.Input { shape = { tide.None, 3 } }
    local x = L.UpSampling1D { 2 }(L.ZeroPadding1D { { 1, 0 } }(inp))
    x = L.TimeDistributed { L.Dense { 4 } }(x)
    x = L.PReLU { shared_axes = { 1 } }(L.GroupNormalization { groups = 2 }(x))
    x = L.SpatialDropout1D { 0.2 }(L.MaxPooling1D { 2, padding = "same" }(x))
    x = L.Dot { { 2, 2 } } { x, L.LeakyReLU()(x) }
    x = L.RepeatVector { 2 }(L.GlobalAveragePooling1D()(L.Softmax()(x)))
    local model = tide.Model { inputs = inp, outputs = x }
    local dir = tmp.dir("keras3_layers")
    finally(function() tmp.remove(dir) end)
    model:save(dir)
    local again = tide.models.load_model(dir)
    local v = tide.random.normal { 2, 5, 3 }
    local want = model:predict(v, { verbose = 0 })
    assert.are.same({ 2, 2, 6 }, want.shape:as_list())
    h.close(again:predict(v, { verbose = 0 }), want:totable(), 1e-6)
    local served = tide.saved_model.load(dir).signatures.serving_default(v)
    h.close(served.output_0, want:totable(), 1e-6)
  end)
end)
