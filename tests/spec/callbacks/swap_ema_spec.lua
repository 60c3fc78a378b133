-- tests/spec/callbacks/swap_ema_spec.lua — SwapEMAWeights: evaluate and predict run on the optimizer's moving
-- averages (use_ema) and the trained weights come back after; swap_on_epoch leaves the averages in the model
-- after fit; errors without use_ema or an optimizer.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local C = tide.callbacks

local function setup(use_ema)
  tide.random.set_seed(77)
  local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 4, activation = "tanh" }, L.Dense { 1 } }
  m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1, use_ema = use_ema, ema_momentum = 0.5 },
    loss = "mse" }
  local x = tide.random.normal({ 16, 3 }, { seed = 3 })
  local y = tide.matmul(x, tide.tensor({ { 1 }, { -1 }, { 0.5 } }, "float32"))
  return m, x, y
end

local function flat(list)
  local out = {}
  for _, w in ipairs(list) do
    for _, v in ipairs(tide.reshape(w, { -1 }):totable()) do out[#out + 1] = v end
  end
  return out
end

-- The model's weights and the optimizer's averages of them, as flat lists.
local function weights_and_averages(m)
  local opt = m.optimizer
  local avgs = {}
  for _, v in ipairs(m.trainable_weights) do avgs[#avgs + 1] = opt:get_slot(v, "average"):read_value() end
  return flat(m:get_weights()), flat(avgs)
end

describe("SwapEMAWeights", function()
  it("evaluates and predicts with the moving averages, and puts the weights back", function()
    local m, x, y = setup(true)
    m:fit(x, y, { epochs = 2, batch_size = 4, verbose = 0 })
    -- fit ends with the averages as the weights (finalize_variable_values): one more step parts them
    m:train_on_batch(x, y)
    local w, avg = weights_and_averages(m)
    local plain = m:evaluate(x, y, { verbose = 0 })
    local cb = C.SwapEMAWeights()
    local swapped = m:evaluate(x, y, { verbose = 0, callbacks = { cb } })
    -- the loss on the averages, by hand: the averages set as the weights
    local m2 = setup(true)
    local shapes = {}
    for i, t in ipairs(m:get_weights()) do shapes[i] = t.shape:as_list() end
    local k, list = 0, {}
    for i, shape in ipairs(shapes) do
      local n = 1
      for _, d in ipairs(shape) do n = n * d end
      local vals = {}
      for j = 1, n do vals[j] = avg[k + j] end
      k = k + n
      list[i] = tide.reshape(tide.tensor(vals, "float32"), shape)
    end
    m2:set_weights(list)
    h.close({ swapped }, { m2:evaluate(x, y, { verbose = 0 }) }, 1e-6)
    assert.is_true(math.abs(swapped - plain) > 1e-6)
    local w_after, avg_after = weights_and_averages(m)
    h.close(w_after, w, 0)
    h.close(avg_after, avg, 0)
    m:predict(x, { verbose = 0, callbacks = { cb } })
    w_after, avg_after = weights_and_averages(m)
    h.close(w_after, w, 0)
    h.close(avg_after, avg, 0)
  end)

  it("with swap_on_epoch, holds the averages in the model between epochs and after fit", function()
    -- a probe after the swap records the weights and averages at each epoch's end
    local function probe(store)
      return C.LambdaCallback { on_epoch_end = function(epoch)
        local model = store.model
        local w, avg = weights_and_averages(model)
        store[epoch] = { w = w, avg = avg }
      end }
    end
    local m, x, y = setup(true)
    local seen_m, seen_twin = { model = m }, {}
    local twin = setup(true)
    seen_twin.model = twin
    twin:fit(x, y, { epochs = 2, batch_size = 4, verbose = 0, shuffle = false, callbacks = { probe(seen_twin) } })
    m:fit(x, y, { epochs = 2, batch_size = 4, verbose = 0, shuffle = false,
      callbacks = { C.SwapEMAWeights { swap_on_epoch = true }, probe(seen_m) } })
    -- after epoch 0 the model holds the averages and the slots the trained weights (training goes on alike)
    h.close(seen_m[0].w, seen_twin[0].avg, 1e-6)
    h.close(seen_m[0].avg, seen_twin[0].w, 1e-6)
    assert.is_true(math.abs(seen_twin[0].w[1] - seen_twin[0].avg[1]) > 1e-6)
    -- the last epoch: the averages in the model and in the slots
    h.close(seen_m[1].w, seen_twin[1].avg, 1e-6)
    h.close(seen_m[1].avg, seen_twin[1].avg, 1e-6)
    h.close((weights_and_averages(m)), seen_twin[1].avg, 1e-6)
  end)

  it("names what is wrong", function()
    h.errors("swap_on_epoch must be true or false", C.SwapEMAWeights, { swap_on_epoch = 1 })
    local m, x, y = setup(false)
    m:fit(x, y, { epochs = 1, batch_size = 8, verbose = 0 })
    h.errors("the optimizer must be made with use_ema = true", function()
      m:evaluate(x, y, { verbose = 0, callbacks = { C.SwapEMAWeights() } })
    end)
  end)
end)
