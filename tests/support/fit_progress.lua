-- tests/support/fit_progress.lua — a small fit for the progress-bar spec:
--   build/tide tests/support/fit_progress.lua VERBOSE
-- fits 2 epochs of 50 batches (verbose from the argument), then evaluates.
local tide = require "tide"
local verbose = tonumber(arg[1] or "1")
local x = tide.random.normal({ 400, 4 }, { seed = 1 })
local y = tide.cast(tide.reduce_sum(x, 1):gt(0), "int32")
local m = tide.Sequential { tide.Input { shape = { 4 } }, tide.layers.Dense { 2 } }
m:compile { optimizer = "adam", loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true },
  metrics = { "accuracy" } }
local Slow = tide.callbacks.Callback:extend("Slow") -- batches slow enough for the bar to redraw
function Slow:on_train_batch_end()
  local t = os.clock()
  while os.clock() - t < 0.002 do end
end
m:fit(x, y, { epochs = 2, batch_size = 8, verbose = verbose, validation_split = 0.0, callbacks = { Slow() } })
io.stdout:write("done\n")
