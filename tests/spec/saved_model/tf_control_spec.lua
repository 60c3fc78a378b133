-- tests/spec/saved_model/tf_control_spec.lua — TF's functional control flow in SavedModels written by TF 2.21
-- (tests/fixtures/tf_saved_model/ctl_gen.py): If on a tensor, While loops, TensorArray accumulation, a Keras LSTM +
-- GRU exported by model.export, string constants; outputs and tape gradients against TF's, and the load error
-- for ops tide does not map inside loop bodies and branches (kernels/io/tf_ops_control.c, tf_ops_list.c).
local tide = require "tide"
local h = require "helpers"

local FIX = "tests/fixtures/tf_saved_model/"
local E = dofile(FIX .. "ctl_expected.lua")

local function x() return tide.tensor(E.x, "float32") end

describe("TF SavedModel control flow", function()
  local m = tide.saved_model.load(FIX .. "ctl")
  local s = m.signatures

  it("maps If on a tensor: one loaded graph takes either branch at run time", function()
    h.close(s.branch { x = x(), s = tide.tensor(-10, "float32") }.y, E.branch_hi, 1e-5)
    h.close(s.branch { x = x(), s = tide.tensor(10, "float32") }.y, E.branch_lo, 1e-5)
  end)

  it("maps While over a tensor range, reading a variable in its body", function()
    local out = s.loop { x = x(), n = tide.tensor(3, "int32") }
    h.close(out.acc, E.loop_acc, 1e-5)
    h.close(out.h, E.loop_h, 1e-5)
    -- the count is read when the graph runs: no iteration at all gives the entry values
    h.close(s.loop { x = x(), n = tide.tensor(0, "int32") }.acc, E.loop0_acc, 0)
  end)

  it("maps a TensorArray written in a loop (TensorListReserve, SetItem, GetItem, Stack, FromTensor)", function()
    local out = s.accumulate { x = tide.tensor(E.x4, "float32") }
    assert.are.same({ 4, 3 }, out.stacked.shape)
    h.close(out.stacked, E.acc_stacked, 1e-5)
    h.close(out.last, E.acc_last, 1e-5)
  end)

  it("fails when the graph runs a TensorArray write past its size, as TF does", function()
    h.close(s.overflow { n = tide.tensor(2, "int32") }.out, E.overflow2, 0)
    local ok, err = pcall(s.overflow, { n = tide.tensor(3, "int32") })
    assert.is_false(ok)
    assert.matches("TensorListSetItem: index out of range for a TensorList of size 2", tostring(err), 1, true)
  end)

  it("imports string constants: a word looked up in a vocabulary and an id's word", function()
    local out = s.lookup { words = tide.tensor(E.words), ids = tide.tensor(E.ids, "int32") }
    assert.are.equal("string", out.word.dtype)
    assert.are.same(E.lookup_word, out.word:totable())
    assert.are.same(E.lookup_index, out.index:totable())
  end)

  it("runs a Keras LSTM and GRU exported by model.export (While + TensorList), any batch", function()
    local r = tide.saved_model.load(FIX .. "ctl_rnn")
    local out = r.signatures.serve { keras_tensor = tide.tensor(E.xr, "float32") }
    local _, y = next(out)
    h.close(y, E.rnn, 1e-5)
    local one = r.signatures.serve { keras_tensor = tide.tensor({ E.xr[2] }, "float32") }
    _, y = next(one)
    h.close(y, { E.rnn[2] }, 1e-5)
  end)

  it("names every op it does not map inside loop bodies and branches, with the function", function()
    local ok, err = pcall(tide.saved_model.load, FIX .. "ctl_unmapped")
    assert.is_false(ok)
    err = tostring(err)
    assert.matches("uses 2 TF ops that tide does not map", err, 1, true)
    assert.matches("Lgamma (node 'while/Lgamma' in function 'while_body_", err, 1, true)
    assert.matches("Digamma (node 'cond/Digamma' in function 'cond_true_", err, 1, true)
  end)
end)

-- sum(y * y) of an endpoint's output under a tape, and its gradients with respect to the input and `wrt`.
local function grads(layer, inputs, key, wrt)
  local xv = tide.Variable(inputs.x)
  local tape = tide.GradientTape()
  local y = tape:run(function()
    local args = {}
    for k, v in pairs(inputs) do args[k] = v end
    args.x = xv:read_value()
    local o = layer(args)[key]
    return tide.reduce_sum(o * o)
  end)
  local list = { xv }
  if wrt then list[2] = wrt end
  return tape:gradient(y, list)
end

local function weight(layer, pred)
  for _, v in ipairs(layer.weights) do if pred(v) then return v end end
  error("no such weight")
end

describe("TF SavedModel control flow under a GradientTape (TFSMLayer)", function()
  local function layer(ep) return tide.layers.TFSMLayer { FIX .. "ctl", call_endpoint = ep } end

  it("gives TF's gradients through If, in either branch", function()
    local l = layer("branch")
    local w = weight(l, function(v) return v.name == "w" end)
    local g = grads(l, { x = x(), s = tide.tensor(-10, "float32") }, "y", w)
    h.close(g[1], E.grad_branch_hi_x, 1e-5)
    h.close(g[2], E.grad_branch_hi_w, 1e-5)
    g = grads(l, { x = x(), s = tide.tensor(10, "float32") }, "y", w)
    h.close(g[1], E.grad_branch_lo_x, 1e-5)
  end)

  it("gives TF's gradients through While, the variable read in every iteration included", function()
    local l = layer("loop")
    local w = weight(l, function(v) return v.name == "w" end)
    local g = grads(l, { x = x(), n = tide.tensor(3, "int32") }, "acc", w)
    h.close(g[1], E.grad_loop_x, 1e-5)
    h.close(g[2], E.grad_loop_w, 1e-5)
  end)

  it("gives TF's gradients through a TensorArray filled in a loop", function()
    local g = grads(layer("accumulate"), { x = tide.tensor(E.x4, "float32") }, "stacked")
    h.close(g[1], E.grad_acc_x, 1e-5)
  end)

  it("gives TF's gradients through a Keras LSTM and GRU (lists of an element dim unknown at load)", function()
    local l = tide.layers.TFSMLayer { FIX .. "ctl_rnn" }
    local kernel = weight(l, function(v) return v.shape[1] == 3 and v.shape[2] == 16 end)
    local xv = tide.Variable(tide.tensor(E.xr, "float32"))
    local tape = tide.GradientTape()
    local y = tape:run(function()
      local _, o = next(l { keras_tensor = xv:read_value() })
      return tide.reduce_sum(o * o)
    end)
    local g = tape:gradient(y, { xv, kernel })
    h.close(g[1], E.grad_rnn_x, 1e-5)
    h.close(g[2], E.grad_rnn_lstm_kernel, 1e-5)
  end)
end)
