-- tests/spec/optimizers/accumulation_spec.lua — optimizers' gradient_accumulation_steps
-- against TF 2.21's Keras 3 (tests/fixtures/keras/examples.lua, from examples_gen.py):
-- the variables after each apply and iterations (the updates made), eagerly and
-- inside a traced step; and fit with it.
local tide = require "tide"
local h = require "helpers"

local F = dofile("tests/fixtures/keras/examples.lua").gradient_accumulation
local O = tide.optimizers

local MAKE = {
  sgd_2 = function() return O.SGD { learning_rate = 0.1, gradient_accumulation_steps = 2 } end,
  sgd_momentum_3 = function() return O.SGD { learning_rate = 0.1, momentum = 0.9, gradient_accumulation_steps = 3 } end,
  adam_2 = function() return O.Adam { learning_rate = 0.01, gradient_accumulation_steps = 2 } end,
  adamw_clip_2 = function()
    return O.AdamW { learning_rate = 0.01, weight_decay = 0.1, clipnorm = 0.5, gradient_accumulation_steps = 2 }
  end,
  rmsprop_schedule_2 = function()
    local lr = O.schedules.ExponentialDecay { 0.01, decay_steps = 1, decay_rate = 0.5 }
    return O.RMSprop { learning_rate = lr, gradient_accumulation_steps = 2 }
  end,
}

local function t32(v) return tide.tensor(v, "float32") end

describe("gradient_accumulation_steps (Keras 3's)", function()
  for key, make in pairs(MAKE) do
    for _, traced in ipairs { false, true } do
      it(key .. (traced and ", in a traced step" or ", eagerly"), function()
        local w, b = tide.Variable(t32(F.w0), { name = "w" }), tide.Variable(t32(F.b0), { name = "b" })
        local opt = make()
        local step = function(gw, gb) opt:apply({ gw, gb }, { w, b }) end
        if traced then
          opt:build { w, b }
          step = tide.trace(step)
        end
        for s, gs in ipairs(F.grads) do
          step(t32(gs[1]), t32(gs[2]))
          local want = F.runs[key][s]
          h.close(w:read_value(), want.w, 1e-5)
          h.close(b:read_value(), want.b, 1e-5)
          assert.are.equal(want.iterations, opt.iterations:item(), "iterations after step " .. s)
        end
      end)
    end
  end

  it("fit: two batches of two accumulated are one batch of four (SGD, a mean loss)", function()
    local L = tide.layers
    local x = tide.random.normal { 8, 3 }
    local y = tide.random.normal { 8, 1 }
    local function run(batch_size, steps)
      L.clear_session()
      local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 1, kernel_initializer = "ones" } }
      m:compile { optimizer = O.SGD { learning_rate = 0.1, gradient_accumulation_steps = steps }, loss = "mse" }
      m:fit(x, y, { batch_size = batch_size, epochs = 2, shuffle = false, verbose = 0 })
      return m
    end
    local acc, plain = run(2, 2), run(4, nil)
    for i, wv in ipairs(acc:get_weights()) do h.close(wv, plain:get_weights()[i]:totable(), 1e-6) end
    assert.are.equal(4, acc.optimizer.iterations:item())
    assert.are.equal(8, acc.optimizer.variables[1]:item()) -- the applies made
    h.errors("gradient_accumulation_steps must be an integer >= 2", O.SGD, { gradient_accumulation_steps = 1 })
  end)

  it("keeps the accumulators as slots after the averages, and in checkpoints", function()
    local w = tide.Variable(t32(F.w0), { name = "w" })
    local opt = O.Adam { learning_rate = 0.01, use_ema = true, gradient_accumulation_steps = 2 }
    opt:build { w }
    local names = {}
    for i, v in ipairs(opt.variables) do names[i] = v.name end
    assert.are.same({ "iteration", "learning_rate", "w_average", "w_gradient_accumulator", "w_momentum", "w_velocity" },
      names)
    opt:apply({ t32(F.grads[1][1]) }, { w })
    local tmp = require "tmp"
    local dir = tmp.dir("accumulation")
    local ckpt = tide.train.Checkpoint { optimizer = opt, w = w }
    local path = ckpt:save(dir .. "/ckpt")
    local opt2 = O.Adam { learning_rate = 0.01, use_ema = true, gradient_accumulation_steps = 2 }
    local w2 = tide.Variable(tide.zeros { 3, 2 }, { name = "w" })
    opt2:build { w2 }
    tide.train.Checkpoint { optimizer = opt2, w = w2 }:restore(path)
    h.close(opt2:get_slot(w2, "gradient_accumulator"):read_value(), opt:get_slot(w, "gradient_accumulator"):read_value(), 0)
    assert.are.equal(1, opt2.variables[1]:item())
    tmp.remove(dir)
  end)
end)
