-- tests/spec/layers/rnn_dropout_spec.lua — dropout and recurrent_dropout of
-- SimpleRNN, LSTM and GRU: Keras 3's outputs for given masks
-- (tests/fixtures/keras/rnn_dropout.lua), the masks' behaviour (one per call,
-- the same at every step, none at inference), traced and under a tape.
local tide = require "tide"
local h = require "helpers"
local F = dofile("tests/fixtures/keras/rnn_dropout.lua")

local function label(c)
  local keys = {}
  for k, v in pairs(c.config) do keys[#keys + 1] = k .. "=" .. tostring(v) end
  table.sort(keys)
  return c.class .. "{" .. table.concat(keys, ", ") .. "}"
end

local function as_tensors(list)
  if not list then return nil end
  local out = {}
  for i, m in ipairs(list) do out[i] = tide.tensor(m, "float32") end
  return out
end

local function layer_for(c)
  local opts = { 3, return_sequences = true, return_state = true }
  for k, v in pairs(c.config) do opts[k] = v end
  local l = tide.layers[c.class](opts)
  local x = tide.tensor(F.x, "float32")
  l(x)
  local ws = {}
  for i, w in ipairs(c.weights) do ws[i] = tide.tensor(w, "float32") end
  l:set_weights(ws)
  return l, x
end

describe("recurrent dropout against Keras 3 (given masks)", function()
  for _, c in ipairs(F.cases) do
    it(label(c) .. ": training output and states, inference unchanged", function()
      local l, x = layer_for(c)
      if c.implementation then assert.are.equal(c.implementation, l.cell.implementation) end
      local given = { input = as_tensors(c.masks.input), recurrent = as_tensors(c.masks.recurrent) }
      local real = l.cell.dropout_masks
      -- the cell draws its masks through dropout_masks: hand it Keras's
      l.cell.dropout_masks = function(self, xs, s, training)
        local drawn = real(self, xs, s, training)
        assert.is_not_nil(drawn)
        assert.are.equal(given.input and #given.input, drawn.input and #drawn.input)
        assert.are.equal(given.recurrent and #given.recurrent, drawn.recurrent and #drawn.recurrent)
        return given
      end
      local out = l(x, { training = true })
      for i = 1, #c.outputs do h.close(out[i], c.outputs[i], 1e-5) end
      local traced = tide.trace(function(v) return l(v, { training = true }) end)(x)
      for i = 1, #c.outputs do h.close(traced[i], c.outputs[i], 1e-5) end
      l.cell.dropout_masks = real
      h.close(l(x)[1], c.inference, 1e-5)
      h.close(l(x, { training = false })[1], c.inference, 1e-5)
    end)
  end
end)

describe("recurrent dropout", function()
  -- x @ I with no recurrence: each output step is x_t times the input mask.
  local function linear_rnn(opts)
    local o = { 4, activation = "linear", use_bias = false, return_sequences = true }
    for k, v in pairs(opts) do o[k] = v end
    local l = tide.layers.SimpleRNN(o)
    l(tide.ones { 1, 1, 4 })
    return l
  end

  it("draws one input mask per call, the same at every time step, scaled by 1/(1 - rate)", function()
    local l = linear_rnn { dropout = 0.5 }
    l:set_weights { tide.eye(4), tide.zeros { 4, 4 } }
    local x = tide.ones { 64, 6, 4 }
    local y = l(x, { training = true }):totable()
    local kept, n = 0, 0
    for b = 1, 64 do
      for t = 2, 6 do assert.are.same(y[b][1], y[b][t]) end
      for f = 1, 4 do
        assert.is_true(y[b][1][f] == 0 or y[b][1][f] == 2)
        if y[b][1][f] == 2 then kept = kept + 1 end
        n = n + 1
      end
    end
    assert.is_true(kept > 0.3 * n and kept < 0.7 * n, "kept " .. kept .. " of " .. n)
    local y2 = l(x, { training = true }):totable()
    assert.are_not.same(y, y2) -- a new mask at each call
    h.close(l(x), tide.ones { 64, 6, 4 }, 0)
  end)

  it("draws one recurrent mask per call: h_t = h_0 * mask^t through an identity recurrence", function()
    local l = linear_rnn { recurrent_dropout = 0.5 }
    l:set_weights { tide.zeros { 4, 4 }, tide.eye(4) }
    local y = l(tide.zeros { 8, 3, 4 }, { training = true, initial_state = { tide.ones { 8, 4 } } }):totable()
    for b = 1, 8 do
      for f = 1, 4 do
        local m = y[b][1][f]
        assert.is_true(m == 0 or m == 2)
        assert.are.equal(m * m, y[b][2][f])
        assert.are.equal(m * m * m, y[b][3][f])
      end
    end
  end)

  it("trains with fit (traced) and differentiates under a tape", function()
    tide.random.set_seed(3)
    local model = tide.Sequential { tide.Input { shape = { 5, 3 } },
      tide.layers.LSTM { 4, dropout = 0.2, recurrent_dropout = 0.2 }, tide.layers.Dense { 1 } }
    model:compile { optimizer = "adam", loss = "mse" }
    local x, y = tide.random.normal { 32, 5, 3 }, tide.random.normal { 32, 1 }
    local h1 = model:fit(x, y, { epochs = 3, batch_size = 8, verbose = 0 })
    assert.are.equal(3, #h1.history.loss)
    local gru = tide.layers.GRU { 2, dropout = 0.3, recurrent_dropout = 0.3 }
    local tape = tide.GradientTape()
    local loss = tape:run(function() return gru(x, { training = true }):sum() end)
    local grads = tape:gradient(loss, gru.trainable_weights)
    -- by index over the weights: ipairs over the gradients would stop at the first nil
    for i, w in ipairs(gru.trainable_weights) do
      assert.is_not_nil(grads[i], w.name .. " got no gradient")
      assert.are.same(w.shape, grads[i].shape)
    end
  end)

  it("applies none at rate 0 or 1 (Keras clips the rate to [0, 1])", function()
    for _, rate in ipairs { 0, 1, 1.5 } do
      local l = linear_rnn { dropout = rate }
      l:set_weights { tide.eye(4), tide.zeros { 4, 4 } }
      h.close(l(tide.ones { 2, 3, 4 }, { training = true }), tide.ones { 2, 3, 4 }, 0)
    end
  end)

  it("a cell called alone drops its step's inputs while training", function()
    local cell = tide.layers.SimpleRNNCell { 4, activation = "linear", use_bias = false, dropout = 0.5 }
    cell(tide.ones { 1, 4 }, { states = { tide.zeros { 1, 4 } } })
    cell:set_weights { tide.eye(4), tide.zeros { 4, 4 } }
    local out = cell(tide.ones { 16, 4 }, { states = { tide.zeros { 16, 4 } }, training = true })
    for _, row in ipairs(out:totable()) do
      for _, v in ipairs(row) do assert.is_true(v == 0 or v == 2) end
    end
  end)

  it("keeps the options in configs and sets implementation 1 with recurrent_dropout, as Keras", function()
    local l = tide.layers.LSTM { 2, dropout = 0.1, recurrent_dropout = 0.2, seed = 5 }
    local c = l:get_config()
    assert.are.equal(0.1, c.dropout)
    assert.are.equal(0.2, c.recurrent_dropout)
    assert.are.equal(5, c.seed)
    assert.are.equal(1, l.cell.implementation)
    assert.are.equal(2, tide.layers.LSTM { 2, dropout = 0.1 }.cell.implementation)
    h.errors("implementation must be 1 or 2, got 3", tide.layers.GRUCell, { 2, implementation = 3 })
    h.errors("LSTM: dropout must be a number, got string", tide.layers.LSTM, { 2, dropout = "high" })
  end)
end)
