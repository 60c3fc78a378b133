-- tests/spec/layers/rnn_stateful_spec.lua — stateful=true as Keras 3: the
-- states carried from call to call in non-trainable Variables (not weights),
-- reset_state, a static batch size, eager, traced and in fit.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

local function halves(x)
  return x:slice { {}, { 0, 3 } }, x:slice { {}, { 3, 6 } }
end

describe("stateful recurrent layers", function()
  for _, cls in ipairs { "SimpleRNN", "LSTM", "GRU" } do
    it(cls .. ": two calls on the halves of a sequence give the whole sequence's outputs, eagerly and traced",
      function()
        tide.random.set_seed(1)
        local x = tide.random.normal { 2, 6, 3 }
        local plain = L[cls] { 4, return_sequences = true }
        local whole = plain(x)
        local stateful = L[cls] { 4, return_sequences = true, stateful = true }
        stateful(x) -- build, then the same weights as plain's
        stateful:set_weights(plain:get_weights())
        stateful:reset_state()
        local a, b = halves(x)
        local ya, yb = stateful(a), stateful(b)
        h.close(tide.concat({ ya, yb }, 1), whole, 1e-5)
        stateful:reset_states()
        local f = tide.trace(function(v) return stateful(v) end)
        local ta, tb = f(a), f(b)
        h.close(tide.concat({ ta, tb }, 1), whole, 1e-5)
        assert.are.equal(1, f:trace_count())
        -- reset: the next call starts from zeros again
        stateful:reset_state()
        h.close(stateful(a), ya, 1e-6)
      end)
  end

  it("keeps its states out of the weights, and gives the final states with return_state", function()
    local l = L.LSTM { 3, stateful = true, return_state = true }
    local out = l(tide.ones { 2, 4, 5 })
    assert.are.equal(3, #l.weights)
    assert.are.equal(2, #l.states)
    assert.is_false(l.states[1].trainable)
    h.close(l.states[1]:read_value(), out[2], 0)
    h.close(l.states[2]:read_value(), out[3], 0)
    assert.is_true(l:get_config().stateful)
    assert.is_nil(L.LSTM { 3 }.states)
  end)

  it("trains with fit on a fixed batch size, its states carried across batches", function()
    tide.random.set_seed(2)
    local model = tide.Sequential { tide.Input { shape = { 5, 2 }, batch_size = 4 },
      L.GRU { 3, stateful = true }, L.Dense { 1 } }
    model:compile { optimizer = "sgd", loss = "mse" }
    local x, y = tide.random.normal { 8, 5, 2 }, tide.random.normal { 8, 1 }
    local hist = model:fit(x, y, { batch_size = 4, epochs = 2, shuffle = false, verbose = 0 })
    assert.are.equal(2, #hist.history.loss)
    local gru = model.layers[1]
    assert.is_true(gru.states[1]:read_value():abs():sum():item() > 0)
    gru:reset_state()
    h.close(gru.states[1]:read_value(), tide.zeros { 4, 3 }, 0)
  end)

  it("names what is wrong: a dynamic batch, another batch size", function()
    local l = L.SimpleRNN { 2, stateful = true }
    local f = tide.trace(function(v) return l(v) end, { input_signature = { tide.TensorSpec { tide.None, 3, 2 } } })
    h.errors("with stateful=true the batch size must be static", f, tide.ones { 2, 3, 2 })
    local m = L.SimpleRNN { 2, stateful = true }
    m(tide.ones { 2, 3, 2 })
    h.errors("a stateful RNN's batch size is fixed at 2 (its states), got an input of shape (3, 3, 2)", m,
      tide.ones { 3, 3, 2 })
    h.errors("stateful must be true or false", L.LSTM, { 2, stateful = "yes" })
  end)
end)
