-- tests/spec/layers/rnn_spec.lua — the recurrent layers' API: options and
-- their errors (rank, stateful, merge_mode, dropout, initial_state, cells),
-- configs that round-trip, custom cells in RNN, get_initial_state.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

describe("recurrent layers: API and errors", function()
  before_each(function() tide.random.set_seed(3) end)
  local x = tide.random.normal { 2, 4, 3 }

  it("refuse bad options with errors that name the fix", function()
    h.errors("units must be a positive integer", function() L.LSTM { 0 } end)
    h.errors("LSTM: units must be a positive integer", function() L.LSTM { "four" } end)
    h.errors("return_sequences must be true or false", function() L.SimpleRNN { 4, return_sequences = 1 } end)
    h.errors("unknown activation", function() L.LSTM { 4, recurrent_activation = "nope" } end)
    h.errors("reset_after is an option of GRUCell", function() L.LSTM { 4, reset_after = false } end)
    h.errors("unit_forget_bias is an option of LSTMCell", function() L.GRU { 4, unit_forget_bias = true } end)
    h.errors("merge_mode must be one of", function() L.Bidirectional { L.LSTM { 2 }, merge_mode = "max" } end)
    h.errors("layer must be an RNN layer", function() L.Bidirectional { L.Dense { 2 } } end)
    h.errors("must differ in go_backwards", function()
      L.Bidirectional { L.LSTM { 2 }, backward_layer = L.LSTM { 2 } }
    end)
    h.errors("must agree on return_sequences", function()
      L.Bidirectional { L.LSTM { 2 }, backward_layer = L.LSTM { 2, go_backwards = true, return_sequences = true } }
    end)
    h.errors("cell must be a layer", function() L.RNN { 3 } end)
    -- a list of cells is stacked (StackedRNNCells), and its entries must be cells
    assert.are.equal("StackedRNNCells", getmetatable(L.RNN { { L.LSTMCell { 2 }, L.LSTMCell { 2 } } }.cell).__name)
    h.errors("StackedRNNCells", function() L.RNN { { L.LSTMCell { 2 }, 3 } } end)
  end)

  it("refuse bad inputs: rank, initial_state, masks, unroll over a None time dim", function()
    h.errors("expected an input of rank 3", function() L.LSTM { 2 }(tide.zeros { 2, 3 }) end)
    h.errors("expected an input of rank 3", function() L.Bidirectional { L.GRU { 2 } }(tide.zeros { 2, 3, 4, 5 }) end)
    h.errors("expected axis -1 of the input to have size 3", function()
      local l = L.GRU { 2 }
      l(x)
      l(tide.zeros { 2, 4, 5 })
    end)
    h.errors("initial_state must hold 2 tensor(s)", function() L.LSTM { 2 }(x, { initial_state = { tide.zeros { 2, 2 } } }) end)
    h.errors("initial_state 1 must have shape [batch, 2]", function()
      L.GRU { 2 }(x, { initial_state = { tide.zeros { 2, 3 } } })
    end)
    h.errors("the mask must be [batch, time] for an input of shape (2, 4, 3), got shape (2, 4, 1)", function()
      L.GRU { 2 }(x, { mask = tide.ones { 2, 4, 1 } })
    end)
    h.errors("no time steps", function() L.GRU { 2 }(tide.zeros { 2, 0, 3 }) end)
    local l = L.LSTM { 2, unroll = true }
    local f = tide.trace(function(v) return l(v) end, { input_signature = { tide.TensorSpec { 2, tide.None, 3 } } })
    h.errors("unroll=true needs a known time dim", f, x)
    local cell = L.LSTMCell { 2 }
    h.errors("states are required", function() cell(x:slice { {}, 0 }) end)
    h.errors("expected 2 state tensor(s), got 1", function() cell(x:slice { {}, 0 }, { states = { tide.zeros { 2, 2 } } }) end)
    h.errors("a cell takes one time step", function() cell(x, { states = { tide.zeros { 2, 2 }, tide.zeros { 2, 2 } } }) end)
  end)

  it("configs round-trip (LSTM, GRU, RNN over a cell, Bidirectional) and rebuild the same function", function()
    local layers = {
      L.LSTM { 3, return_sequences = true, go_backwards = true, unit_forget_bias = false, activation = "relu" },
      L.GRU { 3, reset_after = false, return_state = true },
      L.RNN { L.SimpleRNNCell { 3 }, return_sequences = true },
      L.Bidirectional { L.LSTM { 2, return_sequences = true }, merge_mode = "ave" },
      L.Bidirectional { L.GRU { 2 }, merge_mode = false },
    }
    for _, l in ipairs(layers) do
      local y = l(x)
      local cls = getmetatable(l)
      local c = cls:from_config(l:get_config())
      c(x)
      c:set_weights(l:get_weights())
      local y2 = c(x)
      if tide.is_tensor(y) then h.close(y2, y:totable(), 1e-6)
      else for i = 1, #y do h.close(y2[i], y[i]:totable(), 1e-6) end end
    end
    local conf = L.LSTM { 5, recurrent_activation = "hard_sigmoid" }:get_config()
    assert.are.equal(5, conf.units)
    assert.are.equal("hard_sigmoid", conf.recurrent_activation)
    assert.are.equal(false, conf.stateful)
    assert.are.equal(true, conf.unit_forget_bias)
  end)

  it("RNN runs a custom cell (any layer with state_size and call)", function()
    local Acc = L.Layer:extend("Acc")
    function Acc:init() self.state_size = 3; self.output_size = 3 end
    function Acc:build(shape) self.w = self:add_weight { name = "w", shape = { shape[2], 3 }, initializer = "ones" } end
    function Acc:call(v, opts)
      local s = opts.states[1] + tide.matmul(v, self.w)
      return s, { s }
    end
    local r = L.RNN { Acc(), return_sequences = true, return_state = true }
    local y = r(x)
    -- a running sum of the features' sums
    local sums = tide.reduce_sum(x, 2)
    local want = tide.stack({ sums:slice { {}, 0 }, sums:slice { {}, { 0, 2 } }:sum(1), sums:slice { {}, { 0, 3 } }:sum(1),
      sums:sum(1) }, { axis = 1 })
    h.close(y[1]:slice { {}, {}, 0 }, want:totable(), 1e-5)
    h.close(y[2], y[1]:slice { {}, -1 }:totable(), 0)
    assert.are.equal(1, #r.weights)
    local f = tide.trace(function(v) return r(v) end, { input_signature = { tide.TensorSpec { tide.None, tide.None, 3 } } })
    h.close(f(x)[1], y[1]:totable(), 1e-6)
  end)

  it("get_initial_state gives zeros of the states' shapes; training reaches the cell", function()
    local l = L.LSTM { 4 }
    local s = l:get_initial_state(3)
    assert.are.equal(2, #s)
    assert.are.same({ 3, 4 }, s[1].shape:as_list())
    h.close(s[2], tide.zeros({ 3, 4 }):totable(), 0)
    local seen
    local Probe = L.Layer:extend("Probe")
    function Probe:init() self.state_size = 1 end
    function Probe:call(v, opts) seen = opts.training; return opts.states[1], opts.states end
    L.RNN { Probe() }(x, { training = true })
    assert.is_true(seen)
  end)
end)

describe("recurrent layers over a time dim of None", function()
  local F = dofile("tests/fixtures/keras/examples.lua").rnn_shapes
  local function dims(kt) -- tide.None as -1, as the fixture writes Keras's None
    local out = {}
    for i, d in ipairs(kt.shape:as_list()) do out[i] = d == tide.None and -1 or d end
    return out
  end

  it("keep the feature dim known with return_sequences, as Keras 3, so recurrent layers stack", function()
    local makers = {
      lstm_seq = function() return L.LSTM { 5, return_sequences = true } end,
      gru_seq = function() return L.GRU { 5, return_sequences = true } end,
      simple_rnn_seq = function() return L.SimpleRNN { 5, return_sequences = true } end,
      lstm_seq_state = function() return L.LSTM { 5, return_sequences = true, return_state = true } end,
      bidirectional_seq = function() return L.Bidirectional { L.LSTM { 5, return_sequences = true } } end,
      gru_last = function() return L.GRU { 5 } end,
    }
    for name, make in pairs(makers) do
      local y = make()(tide.Input { shape = { tide.None, 3 } })
      local ys = tide.is_tensor(y) and { y } or (y.shape and { y } or y)
      local got = {}
      for i, t in ipairs(ys) do got[i] = dims(t) end
      assert.are.same(F[name], got, name)
    end
    local x = tide.Input { shape = { tide.None, 3 } }
    local stacked = L.GRU { 2 }(L.LSTM { 4, return_sequences = true }(x))
    assert.are.same(F.stacked, { dims(stacked) })
    local m = tide.Model { inputs = x, outputs = stacked }
    assert.are.same({ 2, 2 }, m(tide.random.normal { 2, 7, 3 }).shape:as_list())
    assert.are.same({ 1, 2 }, m(tide.random.normal { 1, 3, 3 }).shape:as_list())
  end)
end)
