-- bench/embed_model.lua DIR — the models bench/embed_model.c runs through
-- tide_model_run and bench/embed_peers.py through onnxruntime: a 784-256-128-10
-- MLP (relu, relu, softmax; seed 0) saved as DIR/mlp (model:save) with its
-- weights in DIR/mlp.safetensors (w1 b1 w2 b2 w3 b3) and one input with Lua's
-- prediction in DIR/mlp_io.safetensors (x, y); the LSTM cell of bench/trace.lua
-- (batch 1, input and hidden 32) as SavedModels DIR/lstm1 (one step) and
-- DIR/lstm50 (50 steps unrolled), with an input and Lua's results in DIR/lstm*_io.safetensors.
local tide = require "tide"
local dir = assert(arg[1], "usage: embed_model.lua DIR")
tide.random.set_seed(0)

local L = tide.layers
local mlp = tide.Sequential {
  tide.Input { shape = { 784 } },
  L.Dense { 256, activation = "relu" },
  L.Dense { 128, activation = "relu" },
  L.Dense { 10, activation = "softmax" },
}
mlp:save(dir .. "/mlp")
local names, weights = { "w1", "b1", "w2", "b2", "w3", "b3" }, {}
for i, v in ipairs(mlp.weights) do weights[names[i]] = v:value() end
tide.safetensors.save_file(weights, dir .. "/mlp.safetensors")
local x = tide.random.uniform({ 1, 784 })
tide.safetensors.save_file({ x = x, y = mlp:predict(x, { verbose = 0 }) }, dir .. "/mlp_io.safetensors")

-- bench/trace.lua's cell.
local BATCH, INPUT, HIDDEN = 1, 32, 32
local Wx = tide.Variable(tide.random.normal({ INPUT, 4 * HIDDEN }, { stddev = 0.2 }))
local Wh = tide.Variable(tide.random.normal({ HIDDEN, 4 * HIDDEN }, { stddev = 0.2 }))
local bias = tide.Variable(tide.random.normal({ 4 * HIDDEN }, { stddev = 0.1 }))
for _, steps in ipairs { 1, 50 } do
  local function lstm(xs, h, c)
    local xt = tide.unstack(xs)
    for t = 1, steps do
      local gates = tide.matmul(xt[t], Wx) + tide.matmul(h, Wh) + bias
      local parts = tide.split(gates, 4, 1)
      local i, f, g, o = tide.sigmoid(parts[1]), tide.sigmoid(parts[2]), tide.tanh(parts[3]), tide.sigmoid(parts[4])
      c = f * c + i * g
      h = o * tide.tanh(c)
    end
    return h, c
  end
  local spec = tide.TensorSpec
  local traced = tide.trace(lstm, { input_signature = {
    spec({ steps, BATCH, INPUT }, "float32", "xs"), spec({ BATCH, HIDDEN }, "float32", "h"),
    spec({ BATCH, HIDDEN }, "float32", "c") } })
  local name = "lstm" .. steps
  tide.saved_model.save(traced, dir .. "/" .. name)
  local xs, h0, c0 = tide.random.normal({ steps, BATCH, INPUT }), tide.random.normal({ BATCH, HIDDEN }),
      tide.random.normal({ BATCH, HIDDEN })
  local h, c = traced(xs, h0, c0)
  tide.safetensors.save_file({ xs = xs, h0 = h0, c0 = c0, h = h, c = c }, dir .. "/" .. name .. "_io.safetensors")
end
