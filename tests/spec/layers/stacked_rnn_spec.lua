-- tests/spec/layers/stacked_rnn_spec.lua — tide.layers.StackedRNNCells (and RNN given a list of cells) against
-- TF 2.21's Keras (tests/fixtures/keras/stacked_rnn.lua): sequences and final states with Keras's weights,
-- eager and traced; float64 gradients; config round trip; errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers

local F = dofile("tests/fixtures/keras/stacked_rnn.lua")

local function make(id)
  if id == "lstm_gru" then return L.StackedRNNCells { { L.LSTMCell { 4 }, L.GRUCell { 3 } } } end
  return { L.SimpleRNNCell { 3 }, L.SimpleRNNCell { 2 } }
end

describe("StackedRNNCells", function()
  for _, case in ipairs(F.cases) do
    it(case.id .. " gives Keras's sequences and states, eager and traced", function()
      local rnn = L.RNN { make(case.id), return_sequences = true, return_state = true }
      local x = tide.tensor(F.x, "float32")
      rnn(x)
      local ws = {}
      for i, w in ipairs(case.weights) do ws[i] = tide.tensor(w, "float32") end
      rnn:set_weights(ws)
      for _, run in ipairs { function(v) return rnn(v) end, tide.trace(function(v) return rnn(v) end) } do
        local res = run(x)
        h.close(res[1], case.output, 1e-5)
        assert.are.equal(#case.states, #res - 1)
        for i, s in ipairs(case.states) do h.close(res[i + 1], s, 1e-5) end
      end
    end)
  end

  it("differentiates (float64 finite differences)", function()
    tide.random.set_seed(5)
    local rnn = L.RNN { L.StackedRNNCells { { L.SimpleRNNCell { 3, dtype = "float64" },
      L.GRUCell { 2, dtype = "float64" } } }, dtype = "float64" }
    gc.check(function(v) return rnn(v) end, { gc.random({ 2, 3, 4 }, -1, 1, 501) }, { none = false })
  end)

  it("round-trips its config and gives zero initial states", function()
    local cells = L.StackedRNNCells { { L.LSTMCell { 4 }, L.GRUCell { 3 } } }
    assert.are.same({ 4, 4, 3 }, cells.state_size)
    assert.are.equal(3, cells.output_size)
    local again = L.StackedRNNCells:from_config(cells:get_config())
    assert.are.same(cells.state_size, again.state_size)
    local s = cells:get_initial_state(2)
    assert.are.equal(3, #s)
    assert.are.same({ 2, 3 }, s[3].shape:as_list())
    assert.are.equal("StackedRNNCells", L.serialize(L.RNN { cells }).config.cell.class_name)
  end)

  it("names what is wrong", function()
    h.errors("expects a non-empty list of cells", L.StackedRNNCells, {})
    h.errors("entry 2 of the list is not a cell layer", L.StackedRNNCells, { { L.LSTMCell { 2 }, 5 } })
    h.errors("has no state_size", L.StackedRNNCells, { { L.Dense { 2 } } })
    local cells = L.StackedRNNCells { { L.SimpleRNNCell { 2 } } }
    h.errors("expected 1 state tensor(s)", function() cells:call(tide.ones({ 1, 3 }), { states = {} }) end)
    h.errors("call as cell(x, {states = {...}})", function() cells:call(tide.ones({ 1, 3 })) end)
    h.errors("the config must hold cells", L.StackedRNNCells.from_config, L.StackedRNNCells, {})
  end)
end)
