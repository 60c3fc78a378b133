-- tests/spec/layers/conv_lstm_spec.lua — ConvLSTM1D/2D/3D beyond their Keras values
-- (keras_more_values_spec): weights, states, traced with None batch and time (the
-- while-loop path) equal to eager, masks there too, stateful, initial_state, dropout,
-- float64 finite differences, a model saved and loaded, errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local tmp = require "tmp"
local L = tide.layers

describe("ConvLSTM1D, ConvLSTM2D, ConvLSTM3D", function()
  before_each(function() L.clear_session() end)

  it("weights in Keras's shapes; return_state gives the output and both states", function()
    local l = L.ConvLSTM2D { 3, { 2, 3 }, strides = { 2, 1 }, return_state = true }
    local r = l(tide.random.normal { 2, 4, 5, 6, 2 })
    local names = {}
    for i, w in ipairs(l.weights) do names[i] = { w.name:match("[^/]+$"), w.shape:as_list() } end
    assert.are.same({ { "kernel", { 2, 3, 2, 12 } }, { "recurrent_kernel", { 2, 3, 3, 12 } }, { "bias", { 12 } } },
      names)
    assert.are.equal(3, #r)
    for i = 1, 3 do assert.are.same({ 2, 2, 4, 3 }, r[i].shape:as_list()) end
    h.close(r[1], r[2]:totable(), 0) -- the output is the last h
    -- unit_forget_bias: the forget gate's block of the bias starts at one
    h.close(l.weights[3]:read_value(), { 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0 }, 0)
  end)

  it("traced with the batch and the time None (a while loop) equals eager, masks and go_backwards too", function()
    tide.config.set_retracing_warning(false)
    finally(function() tide.config.set_retracing_warning(true) end)
    local x = tide.random.normal { 2, 4, 5, 2 }
    local mask = tide.tensor({ { true, true, false, true }, { true, false, false, true } })
    for _, opts in ipairs {
      { 2, 3, padding = "same", return_sequences = true },
      { 3, 2, go_backwards = true },
      { 2, 2, strides = 2, return_sequences = true, go_backwards = true },
    } do
      L.clear_session()
      local l = L.ConvLSTM1D(opts)
      for _, m in ipairs { false, true } do
        local eager = l(x, { mask = m and mask or nil })
        local f = tide.trace(function(v, mm) return l(v, { mask = m and mm or nil }) end, { input_signature = {
          tide.TensorSpec({ tide.None, tide.None, 5, 2 }, "float32"),
          tide.TensorSpec({ tide.None, tide.None }, "bool") } })
        local got = f(x, mask)
        h.close(got, eager:totable(), 1e-5)
      end
    end
  end)

  it("stateful keeps its states across calls; initial_state starts from given states", function()
    local x = tide.random.normal { 2, 3, 4, 1 }
    local l = L.ConvLSTM1D { 2, 2, padding = "same", stateful = true }
    local y1 = l(x)
    local y2 = l(x)
    assert.is_true(tide.reduce_max(tide.abs(y1 - y2)):item() > 0)
    l:reset_state()
    h.close(l(x), y1:totable(), 1e-6)
    local plain = L.ConvLSTM1D { 2, 2, padding = "same", return_state = true }
    local r = plain(x)
    local z = tide.zeros { 2, 4, 2 }
    h.close(plain(x, { initial_state = { z, z } })[1], r[1]:totable(), 1e-6)
    local again = plain(x, { initial_state = { r[2], r[3] } })[1]
    assert.is_true(tide.reduce_max(tide.abs(again - r[1])):item() > 0)
    h.errors("initial_state 1 must have shape [batch, 4, 2], got (2, 2)",
      function() plain(x, { initial_state = { tide.zeros { 2, 2 }, z } }) end)
  end)

  it("dropout and recurrent_dropout act only in training", function()
    tide.random.set_seed(5)
    local x = tide.random.normal { 2, 3, 6, 2 }
    local l = L.ConvLSTM1D { 2, 2, dropout = 0.5, recurrent_dropout = 0.5, seed = 3 }
    local a, b = l(x), l(x)
    h.close(a, b:totable(), 0)
    local t = l(x, { training = true })
    assert.is_true(tide.reduce_max(tide.abs(t - a)):item() > 0)
  end)

  it("float64 finite differences of the input and every weight (1D, 2D, 3D)", function()
    tide.random.set_seed(9)
    for _, c in ipairs {
      { L.ConvLSTM1D { 2, 2, padding = "same", return_sequences = true, dtype = "float64" }, { 2, 3, 4, 2 } },
      { L.ConvLSTM2D { 2, 2, strides = { 1, 2 }, dtype = "float64" }, { 1, 2, 3, 4, 1 } },
      { L.ConvLSTM3D { 1, 2, padding = "same", dtype = "float64" }, { 1, 2, 2, 2, 2, 1 } },
    } do
      local ok, err = pcall(gc.check_layer, c[1], tide.random.normal(c[2], { dtype = "float64" }) * 0.5)
      assert(ok, getmetatable(c[1]).__name .. ": " .. tostring(err))
    end
  end)

  it("a model saved and loaded predicts the same; the config round trips", function()
    local x = tide.Input { shape = { 3, 5, 5, 1 } }
    local y = L.ConvLSTM2D { 2, 3, padding = "same", return_sequences = true }(x)
    y = L.ConvLSTM2D { 2, 2 }(y)
    local m = tide.Model { x, L.Flatten {}(y) }
    local xs = tide.random.normal { 2, 3, 5, 5, 1 }
    local want = m:predict(xs, { verbose = 0 })
    local dir = tmp.dir("conv_lstm")
    finally(function() tmp.remove(dir) end)
    m:save(dir .. "/m")
    h.close(tide.models.load_model(dir .. "/m"):predict(xs, { verbose = 0 }), want:totable(), 1e-6)
    local clone = tide.Model:from_config(m:get_config())
    assert.are.same(m:get_config(), clone:get_config())
  end)

  it("errors name the layer and what to change", function()
    h.errors("ConvLSTM2D: filters must be a positive integer, got 0", function() L.ConvLSTM2D { 0, 3 } end)
    h.errors("ConvLSTM1D: kernel_size must be an integer or a list of 1 integers",
      function() L.ConvLSTM1D { 2, { 2, 2 } } end)
    h.errors("ConvLSTM3D: padding must be \"valid\" or \"same\", got causal",
      function() L.ConvLSTM3D { 2, 2, padding = "causal" } end)
    h.errors("ConvLSTM2D: only data_format=\"channels_last\" is supported",
      function() L.ConvLSTM2D { 2, 2, data_format = "channels_first" } end)
    h.errors("ConvLSTM2D: unit_forget_bias must be true or false",
      function() L.ConvLSTM2D { 2, 2, unit_forget_bias = 1 } end)
    h.errors("expected an input of rank 5", function() L.ConvLSTM2D { 2, 2 }(tide.zeros { 1, 3, 4, 2 }) end)
    h.errors("the spatial and channel dims of the input must be known", function()
      L.ConvLSTM1D { 2, 2 }(tide.Input { shape = { 3, tide.None, 2 } })
    end)
    h.errors("are smaller than the dilated kernel", function() L.ConvLSTM1D { 2, 3 }(tide.zeros { 1, 2, 2, 1 }) end)
  end)
end)
