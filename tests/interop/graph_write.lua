-- tests/interop/graph_write.lua — writes the graphs that tests/interop/summary_check.py
-- reads with TensorBoard: a trace_export of a traced function (DIR/trace) and
-- the TensorBoard callback's train graph (DIR/fit/train):
--   build/tide tests/interop/graph_write.lua DIR
local tide = require "tide"
local S = tide.summary

local dir = assert(arg[1], "usage: graph_write.lua DIR")
local w = tide.Variable(tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), { name = "dense/kernel" })
local step = tide.trace(function(x)
  local y = tide.matmul(x, w)
  w:assign_add(tide.fill({ 2, 2 }, 0.5))
  local z = tide.cond(tide.reduce_sum(y):gt(0), function() return tide.relu(y) end, function() return y * 2 end)
  return tide.reduce_mean(z)
end)
local writer = S.create_file_writer(dir .. "/trace")
S.trace_on { graph = true }
step(tide.tensor({ { 1, 0 }, { 0, 1 } }, "float32"))
writer:as_default(function() assert(S.trace_export { name = "step_trace", step = 7 } == 1) end)
writer:close()

local model = tide.Sequential { tide.layers.Dense { 3, activation = "relu", name = "hidden" }, tide.layers.Dense { 1, name = "out" } }
model:compile { optimizer = "sgd", loss = "mse" }
local x = tide.random.uniform({ 8, 4 }, { seed = 1 })
local y = tide.random.uniform({ 8, 1 }, { seed = 2 })
model:fit(x, y, { epochs = 1, batch_size = 4, verbose = 0, callbacks = { tide.callbacks.TensorBoard { log_dir = dir .. "/fit" } } })
