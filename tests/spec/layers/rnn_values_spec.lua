-- tests/spec/layers/rnn_values_spec.lua — SimpleRNN, LSTM, GRU, their cells,
-- RNN and Bidirectional against TensorFlow 2.21's tf.keras with the same
-- weights (set_weights), from tests/fixtures/keras/layers_rnn.lua (written by
-- layers_rnn_gen.py): outputs, sequences and states, 1e-5 for float32.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/layers_rnn.lua")

local TOL = 1e-5

local function copy(t, extra)
  local out = {}
  for k, v in pairs(t or {}) do out[k] = v end
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

-- Build layer for x, set the fixture's weights, return layer(x, opts).
local function run(layer, x, weights, opts)
  layer:build(x.shape:as_list())
  rawset(layer, "built", true)
  layer:set_weights(weights)
  return layer(x, opts)
end

-- y (a tensor, or a list) against the fixture's value (a list when several).
local function same(y, want, tol)
  if tide.is_tensor(y) then return h.close(y, want, tol) end
  assert.are.equal(#want, #y)
  for i = 1, #want do h.close(y[i], want[i], tol) end
end

describe("recurrent layers against tf.keras", function()
  local x = tide.tensor(F.x, "float32")

  for _, cls in ipairs { "SimpleRNN", "LSTM", "GRU" } do
    it(cls .. " with each option (sequences, states, go_backwards, no bias, activations)", function()
      for key, c in pairs(F.rnn[cls]) do
        local y = run(L[cls](copy(c.opts, { 4 })), x, c.weights)
        local ok, err = pcall(same, y, c.y, TOL)
        assert(ok, cls .. " " .. key .. ": " .. tostring(err))
      end
    end)
  end

  it("float64 LSTM and GRU (sequences and states) agree to 1e-12", function()
    local x64 = tide.tensor(F.x64, "float64")
    for cls, c in pairs(F.f64) do
      local y = run(L[cls](copy(c.opts, { 3, dtype = "float64" })), x64, c.weights)
      assert.are.equal("float64", y[1].dtype)
      same(y, c.y, 1e-12)
    end
  end)

  it("initial_state", function()
    local c = F.lstm_initial_state
    same(run(L.LSTM { 4, return_state = true }, x, c.weights, { initial_state = c.initial_state }), c.y, TOL)
    c = F.gru_initial_state
    same(run(L.GRU { 4, return_sequences = true }, x, c.weights, { initial_state = c.initial_state }), c.y, TOL)
    -- one tensor for a one-state cell
    same(run(L.GRU { 4, return_sequences = true }, x, c.weights, { initial_state = tide.tensor(c.initial_state[1]) }),
      c.y, TOL)
  end)

  it("weights have Keras's shapes and order; LSTM's bias starts with ones for the forget gate", function()
    for cls, shapes in pairs(F.weight_shapes) do
      local l = L[cls] { 4 }
      l:build { tide.None, 5, 3 }
      local got = {}
      for i, w in ipairs(l.weights) do got[i] = w.shape:as_list() end
      assert.are.same(shapes, got)
      assert.are.equal(4, l.units)
    end
    local l = L.LSTM { 3 }
    l(x)
    h.close(l.weights[3]:read_value(), F.lstm_initial_bias, 0)
    l = L.LSTM { 3, unit_forget_bias = false, bias_initializer = "ones" }
    l(x)
    h.close(l.weights[3]:read_value(), F.lstm_initial_bias_no_forget, 0)
    assert.is_true(l.weights[1].name:find("lstm_cell/kernel", 1, true) ~= nil)
  end)

  it("cells: one step with states, and RNN{cell} over the sequence", function()
    local x0 = x:slice { {}, 0 }
    for cls, c in pairs(F.cells) do
      local cell = L[cls] { 4 }
      cell:build { 2, 3 }
      rawset(cell, "built", true)
      cell:set_weights(c.weights)
      local out, states = cell(x0, { states = c.states })
      h.close(out, c.out, TOL)
      same(states, c.new_states, TOL)
      local rnn = L.RNN { cell, return_sequences = true, return_state = true }
      same(rnn(x), c.rnn, TOL)
      assert.are.equal(#c.weights, #rnn.weights) -- the cell's weights are the RNN's
    end
  end)

  it("Bidirectional: concat, sum, mul, ave, none (false), with states; Keras's weight order", function()
    local inner = {
      concat_seq = function() return L.LSTM { 3, return_sequences = true } end,
      sum = function() return L.GRU { 3 } end,
      mul_seq = function() return L.SimpleRNN { 3, return_sequences = true } end,
      ave = function() return L.LSTM { 3 } end,
      none_seq = function() return L.GRU { 3, return_sequences = true } end,
      concat_state = function() return L.LSTM { 3, return_state = true } end,
      none_state_seq = function() return L.GRU { 3, return_state = true, return_sequences = true } end,
    }
    for key, c in pairs(F.bidirectional) do
      local b = L.Bidirectional { inner[key](), merge_mode = c.opts.merge_mode }
      local ok, err = pcall(function() same(run(b, x, c.weights), c.y, TOL) end)
      assert(ok, key .. ": " .. tostring(err))
    end
    local b = L.Bidirectional { L.LSTM { 3, name = "enc" } }
    b(x)
    local names = {}
    for i, w in ipairs(b.weights) do names[i] = w.name end
    assert.are.same({ "lstm_cell/kernel", "lstm_cell/recurrent_kernel", "lstm_cell/bias", "lstm_cell/kernel",
      "lstm_cell/recurrent_kernel", "lstm_cell/bias" }, names)
    assert.are.equal("forward_enc", b.forward_layer.name)
    assert.are.equal("backward_enc", b.backward_layer.name)
    assert.is_true(b.backward_layer.go_backwards)
    assert.are.same({ 2, 6 }, b(x).shape:as_list())
  end)
end)
