-- tests/spec/layers/rnn_grad_spec.lua — recurrent layers inside tide.trace
-- (known and None batch and time dims: the unrolled loop and the while loop)
-- equal eager, and their gradients: float64 finite differences for LSTM, GRU,
-- SimpleRNN and Bidirectional (input and every weight), and a tape inside a
-- trace giving the eager gradients through both loops.
local lcg_step = require "lcg"
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers

-- Fixed weights in [0.5, 1.5) shaped like t.
local function weights_like(t)
  local vals, s = {}, 4321
  for i = 1, t:size() do
    s = lcg_step(s)
    vals[i] = 0.5 + s / 2147483648
  end
  return tide.tensor(vals, t.dtype):reshape(t.shape)
end

-- The output tensor of a layer call (the first of a list).
local function first(y) return tide.is_tensor(y) and y or y[1] end

-- Every output of a layer call, flattened and concatenated (sequences and states).
local function joined(y)
  if tide.is_tensor(y) then return tide.reshape(y, { -1 }) end
  local parts = {}
  for i, v in ipairs(y) do parts[i] = tide.reshape(v, { -1 }) end
  return tide.concat(parts, 0)
end

-- Central differences against the tape for sum(joined(layer(x)) * w) with
-- respect to x and every trainable weight (float64).
local function gradcheck(layer, x, tol)
  local eps = 1e-6
  tol = tol or 1e-6
  local w = weights_like(joined(layer(x)))
  local function loss() return tide.reduce_sum(joined(layer(x)) * w) end
  local tape = tide.GradientTape()
  local l = tape:run(function() tape:watch(x); return loss() end)
  local sources = { x }
  for _, v in ipairs(layer.trainable_weights) do sources[#sources + 1] = v end
  assert.is_true(#sources > 1)
  local grads = tape:gradient(l, sources)
  for j, src in ipairs(sources) do
    assert.is_not_nil(grads[j], "no gradient for source " .. j)
    local analytic = h.values(grads[j])
    local flat = h.values(tide.is_variable(src) and src:read_value() or src)
    local shape = src.shape:as_list()
    local function set(vals)
      local t = tide.tensor(vals, "float64"):reshape(shape)
      if tide.is_variable(src) then src:assign(t) else src:copy_(t) end
    end
    for k = 1, #flat do
      local keep = flat[k]
      flat[k] = keep + eps; set(flat); local up = loss():item()
      flat[k] = keep - eps; set(flat); local down = loss():item()
      flat[k] = keep; set(flat)
      local numeric = (up - down) / (2 * eps)
      assert(math.abs(analytic[k] - numeric) <= tol + tol * math.abs(numeric),
        string.format("%s, source %d, element %d: analytic %.10g vs numeric %.10g", layer.name, j, k, analytic[k],
          numeric))
    end
  end
end

describe("recurrent layers traced and differentiated", function()
  before_each(function() tide.random.set_seed(7) end)

  it("traced equals eager: known dims (unrolled), None batch, None time (while loop)", function()
    tide.config.set_retracing_warning(false)
    finally(function() tide.config.set_retracing_warning(true) end)
    local x = tide.random.normal { 3, 5, 4 }
    local layers = {
      L.LSTM { 6 }, L.LSTM { 6, return_sequences = true, return_state = true, go_backwards = true },
      L.GRU { 5, return_sequences = true }, L.GRU { 5, reset_after = false, return_state = true, go_backwards = true },
      L.SimpleRNN { 3, return_sequences = true, go_backwards = true }, L.RNN { L.LSTMCell { 2 }, return_sequences = true },
      L.Bidirectional { L.LSTM { 3, return_sequences = true, return_state = true } },
      L.Bidirectional { L.GRU { 3 }, merge_mode = false },
    }
    local sigs = {
      {},
      { input_signature = { tide.TensorSpec { tide.None, 5, 4 } } },
      { input_signature = { tide.TensorSpec { tide.None, tide.None, 4 } } },
      { input_signature = { tide.TensorSpec { 3, tide.None, 4 } } },
    }
    for _, layer in ipairs(layers) do
      local eager = layer(x)
      for si, sig in ipairs(sigs) do
        local f = tide.trace(function(v) return layer(v) end, sig)
        local got = f(x)
        local ok, err = pcall(function()
          if tide.is_tensor(eager) then h.close(got, eager:totable(), 1e-5)
          else
            assert.are.equal(#eager, #got)
            for i = 1, #eager do h.close(got[i], eager[i]:totable(), 1e-5) end
          end
        end)
        assert(ok, string.format("%s, signature %d: %s", layer.name, si, tostring(err)))
      end
    end
    -- a None time dim and different lengths: one trace, each length right
    local l = L.GRU { 4, return_sequences = true }
    local f = tide.trace(function(v) return l(v) end, { input_signature = { tide.TensorSpec { tide.None, tide.None, 4 } } })
    for _, T in ipairs { 1, 3, 7 } do
      local xs = tide.random.normal { 2, T, 4 }
      local y = f(xs)
      assert.are.same({ 2, T, 4 }, y.shape:as_list())
      h.close(y, l(xs):totable(), 1e-5)
    end
    assert.are.equal(1, f:trace_count())
  end)

  it("float64 finite differences: LSTM, GRU (both resets), SimpleRNN, Bidirectional, RNN{cell}", function()
    local x = tide.random.normal({ 2, 3, 3 }, { dtype = "float64" })
    gradcheck(L.LSTM { 2, return_sequences = true, return_state = true, dtype = "float64" }, x)
    gradcheck(L.GRU { 2, return_sequences = true, dtype = "float64" }, x)
    gradcheck(L.GRU { 2, reset_after = false, go_backwards = true, return_state = true, dtype = "float64" }, x)
    gradcheck(L.SimpleRNN { 2, go_backwards = true, dtype = "float64" }, x)
    gradcheck(L.Bidirectional { L.LSTM { 2, return_sequences = true, dtype = "float64" }, dtype = "float64" }, x)
    gradcheck(L.RNN { L.GRUCell { 2, dtype = "float64" }, dtype = "float64" }, x)
  end)

  it("float64 finite differences of the input through the while loop (None dims, gradcheck)", function()
    local lstm = L.LSTM { 2, return_sequences = true, dtype = "float64" }
    local gru = L.GRU { 2, go_backwards = true, dtype = "float64" }
    local x = tide.random.normal({ 2, 3, 3 }, { dtype = "float64" })
    gc.check(function(v) return lstm(v) end, { x })
    gc.check(function(v) return gru(v) end, { x })
  end)

  it("a tape inside a trace gives the eager gradients through the unrolled and the while loop", function()
    tide.config.set_retracing_warning(false)
    finally(function() tide.config.set_retracing_warning(true) end)
    local x = tide.random.normal { 4, 6, 3 }
    for _, layer in ipairs { L.LSTM { 5, return_sequences = true }, L.GRU { 5 },
                             L.Bidirectional { L.SimpleRNN { 2 }, merge_mode = "sum" } } do
      local w = weights_like(first(layer(x)))
      local function grads(v)
        local tape = tide.GradientTape()
        local l = tape:run(function() return tide.reduce_sum(first(layer(v)) * w) end)
        return tape:gradient(l, layer.trainable_weights)
      end
      local eager = grads(x)
      for _, sig in ipairs { {}, { input_signature = { tide.TensorSpec { tide.None, tide.None, 3 } } } } do
        local f = tide.trace(function(v) return grads(v) end, sig)
        local got = f(x)
        assert.are.equal(#eager, #got)
        for i = 1, #eager do h.close(got[i], eager[i]:totable(), 1e-4) end
      end
    end
  end)

  it("the unrolled loop's gradient takes each time step's and gate block's gradient as one node", function()
    -- per step, a slice's own gradient writes it into zeros of the whole sequence: T of those
    -- made the gradient O(T^2); now one stack (time) and one concat (gates) per step
    local layer = L.LSTM { 3, return_sequences = true }
    local x = tide.random.normal({ 2, 6, 4 }, { seed = 5 })
    layer(x)
    local function grads(v)
      local tape = tide.GradientTape()
      tape:watch(v)
      local l = tape:run(function() return tide.reduce_sum(layer(v) ^ 2) end)
      local g = tape:gradient(l, { v, layer.cell.kernel, layer.cell.recurrent_kernel })
      return g[1], g[2], g[3]
    end
    local f = tide.trace(grads)
    local got, eager = { f(x) }, { grads(x) }
    for i = 1, 3 do h.close(got[i], eager[i], 1e-5) end
    local text = f:concrete_functions()[1].graph:text()
    local updates = 0
    for _ in text:gmatch("= slice_update%(") do updates = updates + 1 end
    assert.are.equal(0, updates)
  end)
end)
