-- tests/spec/mixed_precision/loss_scale_spec.lua — LossScaleOptimizer: unscaled
-- steps, the skip and halving on inf/NaN gradients, growth after
-- dynamic_growth_steps, the same decisions inside a traced step (one trace),
-- custom loops with scale_loss, compile's wrapping under mixed_float16,
-- checkpoints, configs, model:save, and the errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local O = tide.optimizers
local mp = tide.mixed_precision
local L = tide.layers

local function f32(t) return tide.tensor(t, "float32") end
local inf, nan = math.huge, 0 / 0

-- { dynamic_scale, step_counter, inner iterations } now.
local function state(opt)
  return { opt.dynamic_scale:item(), opt.step_counter:item(), opt.iterations:item() }
end

describe("LossScaleOptimizer", function()
  after_each(function() mp.set_global_policy(nil) end)

  it("has Keras's defaults, and the inner optimizer's learning rate and iterations", function()
    local inner = O.SGD { learning_rate = 0.5, loss_scale_factor = 4 }
    local opt = O.LossScaleOptimizer(inner)
    assert.are.same({ 2 ^ 15, 2000 }, { opt.initial_scale, opt.dynamic_growth_steps })
    assert.are.same({ 2 ^ 15, 0, 0 }, state(opt))
    assert.is_nil(inner.loss_scale_factor) -- scaling twice would be wrong
    assert.are.equal(inner.iterations, opt.iterations)
    h.close(opt.learning_rate:read_value(), 0.5)
    opt.learning_rate = 0.25
    h.close(inner.learning_rate:read_value(), 0.25)
    assert.are.equal(2 + 2, #opt.variables) -- step_counter, dynamic_scale, then the inner's iterations and rate
    assert.are.equal("step_counter", opt.variables[1].name)
    assert.are.equal("dynamic_scale", opt.variables[2].name)
    assert.are.equal("float32", opt.dynamic_scale.dtype)
    -- the positional-and-options form, and all in one table
    local o2 = O.LossScaleOptimizer { O.Adam(), initial_scale = 8, dynamic_growth_steps = 3, name = "lso" }
    assert.are.same({ 8, 3, "lso" }, { o2.initial_scale, o2.dynamic_growth_steps, o2.name })
    h.close(o2:scale_loss(f32 { 1.5, -2 }), { 12, -16 })
    assert.are.equal("float16", o2:scale_loss(tide.tensor({ 1 }, "float16")).dtype)
  end)

  it("unscales the gradients of a scaled loss, then grows the scale after dynamic_growth_steps", function()
    local w, ref = tide.Variable({ 1, 2 }), tide.Variable({ 1, 2 })
    local opt = O.LossScaleOptimizer(O.SGD { learning_rate = 0.1, momentum = 0.5 }, { initial_scale = 8,
      dynamic_growth_steps = 2 })
    local plain = O.SGD { learning_rate = 0.1, momentum = 0.5 }
    local grads = { { 1, -1 }, { 0.5, 2 }, { -3, 1 } }
    local scales = { 8, 8, 16 } -- the scale each step's gradients carry (it doubles after step 2)
    local after = { { 8, 1, 1 }, { 16, 0, 2 }, { 16, 1, 3 } }
    for i, g in ipairs(grads) do
      local scaled = f32(g) * scales[i]
      opt:apply({ scaled }, { w })
      plain:apply({ f32(g) }, { ref })
      assert.are.same(after[i], state(opt))
      h.close(w:read_value(), ref:read_value(), 1e-7)
    end
  end)

  it("skips the step and halves the scale when a gradient is inf or NaN", function()
    local w, b = tide.Variable({ 1, 2 }), tide.Variable({ 3 })
    local opt = O.LossScaleOptimizer(O.Adam { learning_rate = 0.1 }, { initial_scale = 64, dynamic_growth_steps = 2 })
    opt:apply({ f32 { 64, 64 }, f32 { 64 } }, { w, b }) -- one good step: counter 1
    assert.are.same({ 64, 1, 1 }, state(opt))
    local w1, b1 = w:numpy(), b:numpy()
    local m1 = opt:get_slot(w, "momentum"):numpy()
    for _, bad in ipairs { { inf, 1 }, { nan, 1 }, { -inf, 1 } } do
      opt:apply({ f32 { 1, 1 }, f32(bad):slice { { 0, 1 } } }, { w, b }) -- only b's gradient is bad
      assert.are.same(w1, w:numpy())
      assert.are.same(b1, b:numpy())
      assert.are.same(m1, opt:get_slot(w, "momentum"):numpy())
      assert.are.equal(0, opt.step_counter:item())
      assert.are.equal(1, opt.iterations:item()) -- the inner optimizer did not step
    end
    assert.are.equal(8, opt.dynamic_scale:item()) -- 64 halved three times
    -- a nil gradient is no gradient: it neither counts as bad nor stops the step
    local saved, said = io.stderr, {}
    io.stderr = { write = function(_, m) said[#said + 1] = m end }
    local ok, err = pcall(function() opt:apply({ f32 { 8, 8 }, nil }, { w, b }) end)
    io.stderr = saved
    assert(ok, err)
    assert.truthy(table.concat(said):find("gradients do not exist for variables {'Variable'}", 1, true))
    assert.are.same({ 8, 1, 2 }, state(opt))
    opt:apply({ f32 { 8, 8 }, f32 { 8 } }, { w, b })
    assert.are.same({ 16, 0, 3 }, state(opt))
  end)

  it("decides in the graph in a traced step: one trace runs, skips and grows", function()
    local w = tide.Variable({ 1, 1 })
    local opt = O.LossScaleOptimizer(O.SGD { learning_rate = 1 }, { initial_scale = 4, dynamic_growth_steps = 2 })
    opt:build({ w })
    local step = tide.trace(function(g) opt:apply({ g }, { w }) end)
    step(f32 { 4, 8 })
    assert.are.same({ 4, 1, 1 }, state(opt))
    h.close(w:read_value(), { 0, -1 })
    step(f32 { inf, 8 })
    assert.are.same({ 2, 0, 1 }, state(opt))
    h.close(w:read_value(), { 0, -1 })
    step(f32 { 2, 2 })
    step(f32 { 2, 2 })
    assert.are.same({ 4, 0, 3 }, state(opt))
    h.close(w:read_value(), { -2, -3 })
    step(f32 { nan, 0 })
    assert.are.same({ 2, 0, 3 }, state(opt))
    assert.are.equal(1, step:trace_count())
    local text = step:get_concrete_function(f32 { 1, 1 }):graph_text()
    assert.truthy(text:find("cond", 1, true))
    -- not built before the trace: the slots are made on its first call, outside the cond
    local v = tide.Variable({ 1, 1 })
    local adam = O.LossScaleOptimizer(O.Adam { learning_rate = 0.1 }, { initial_scale = 4 })
    local first = tide.trace(function(g) adam:apply({ g }, { v }) end)
    first(f32 { 4, 8 })
    first(f32 { 4, -8 })
    assert.are.same({ 4, 2, 2 }, state(adam))
    local u, plain = tide.Variable({ 1, 1 }), O.Adam { learning_rate = 0.1 }
    plain:apply({ f32 { 1, 2 } }, { u })
    plain:apply({ f32 { 1, -2 } }, { u })
    h.close(v:read_value(), u:read_value(), 1e-5)
  end)

  it("trains in a custom loop with GradientTape and scale_loss, and through minimize", function()
    local x, y = f32 { { 1, 2 }, { 3, 4 } }, f32 { { 1 }, { 2 } }
    local d = L.Dense { 1, dtype = "mixed_float16", kernel_initializer = "ones" }
    d(x)
    local opt = O.LossScaleOptimizer(O.SGD { learning_rate = 0.01 })
    local losses, skipped = {}, 0
    while opt.iterations:item() < 3 and skipped < 20 do
      local scale = opt.dynamic_scale:item()
      local tape = tide.GradientTape()
      local loss, scaled = tape:run(function()
        local l = tide.reduce_mean((d(x):cast("float32") - y) ^ 2)
        return l, opt:scale_loss(l)
      end)
      assert.are.equal(loss:item() * scale, scaled:item())
      local vars = d.trainable_variables
      local g = tape:gradient(scaled, vars)
      local it = opt.iterations:item()
      opt:apply_gradients { { g[1], vars[1] }, { g[2], vars[2] } }
      if opt.iterations:item() == it then
        skipped = skipped + 1 -- float16 gradients overflowed: the scale halved instead
        assert.are.equal(scale / 2, opt.dynamic_scale:item())
      else
        losses[#losses + 1] = loss:item()
      end
    end
    -- 2^15 * this loss overflows float16's gradients (65504 at most): the scale came down, then it trained
    assert.is_true(skipped >= 1)
    assert.are.equal(2 ^ 15 / 2 ^ skipped, opt.dynamic_scale:item())
    assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    local w = tide.Variable({ 3 })
    local o2 = O.LossScaleOptimizer(O.SGD { learning_rate = 0.25 }, { initial_scale = 2 })
    o2:minimize(function() return tide.reduce_sum(w * w) end, { w })
    h.close(w:read_value(), { 1.5 }) -- 3 - 0.25 * 6
  end)

  it("is what compile uses under mixed_float16 (not under mixed_bfloat16), and is not wrapped twice", function()
    local function model()
      return tide.Sequential { tide.Input { shape = { 2 } }, L.Dense { 3 }, L.Activation { "softmax", dtype = "float32" } }
    end
    mp.set_global_policy("mixed_float16")
    local m = model()
    m:compile { optimizer = "sgd", loss = "sparse_categorical_crossentropy" }
    assert.is_true(getmetatable(m.optimizer) == O.LossScaleOptimizer)
    assert.are.equal("SGD", m.optimizer.inner_optimizer.__name)
    local mine = O.LossScaleOptimizer(O.Adam(), { initial_scale = 4 })
    m:compile { optimizer = mine, loss = "sparse_categorical_crossentropy" }
    assert.are.equal(mine, m.optimizer)
    m:compile { optimizer = "adam", loss = "sparse_categorical_crossentropy", auto_scale_loss = false }
    assert.are.equal("Adam", m.optimizer.__name)
    mp.set_global_policy("mixed_bfloat16")
    local b = model()
    b:compile { optimizer = "adam", loss = "sparse_categorical_crossentropy" }
    assert.are.equal("Adam", b.optimizer.__name)
  end)

  it("keeps fit's loss unscaled in the logs while the step uses the scaled one", function()
    local x = f32 { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 0, 0 } }
    local y = tide.tensor { 0, 1, 1, 0 }
    mp.set_global_policy("mixed_float16")
    local m = tide.Sequential { tide.Input { shape = { 2 } }, L.Dense { 2, kernel_initializer = "ones" },
      L.Activation { "softmax", dtype = "float32" } }
    m:compile { optimizer = O.SGD { learning_rate = 0.1 }, loss = "sparse_categorical_crossentropy" }
    local before = m:evaluate(x, y, { verbose = 0 })
    local hist = m:fit(x, y, { epochs = 1, batch_size = 4, verbose = 0 })
    h.close(hist.history.loss[1], before, 1e-3) -- the first batch's loss, before the step
    assert.are.equal(1, m.optimizer.iterations:item())
    -- an optimizer's loss_scale_factor scales fit's loss too (the update divides it out)
    mp.set_global_policy(nil)
    local function run(factor)
      tide.random.set_seed(3)
      local f = tide.Sequential { tide.Input { shape = { 2 } }, L.Dense { 2 }, L.Activation { "softmax" } }
      f:compile { optimizer = O.SGD { learning_rate = 0.1, loss_scale_factor = factor },
        loss = "sparse_categorical_crossentropy" }
      f:fit(x, y, { epochs = 2, batch_size = 2, verbose = 0 })
      return f.layers[1].kernel:read_value()
    end
    h.close(run(1024), run(nil), 1e-6)
  end)

  it("saves its scale, counter and the inner slots in checkpoints", function()
    local w = tide.Variable({ 1, 2 }, { name = "w" })
    local opt = O.LossScaleOptimizer(O.Adam { learning_rate = 0.1 }, { initial_scale = 32, dynamic_growth_steps = 5 })
    opt:apply({ f32 { 32, 32 } }, { w })
    opt:apply({ f32 { inf, 32 } }, { w })
    opt:apply({ f32 { 16, 0 } }, { w })
    local dir = tmp.dir("loss_scale")
    local path = tide.train.Checkpoint { w = w, optimizer = opt }:write(dir .. "/ckpt")
    local w2 = tide.Variable({ 0, 0 }, { name = "w" })
    local opt2 = O.LossScaleOptimizer(O.Adam { learning_rate = 0.1 }, { initial_scale = 32, dynamic_growth_steps = 5 })
    opt2:build({ w2 })
    tide.train.Checkpoint { w = w2, optimizer = opt2 }:restore(path)
    assert.are.same(state(opt), state(opt2))
    assert.are.same({ 16, 1, 2 }, state(opt2))
    assert.are.same(opt:get_slot(w, "velocity"):numpy(), opt2:get_slot(w2, "velocity"):numpy())
    -- both continue alike
    opt:apply({ f32 { 1, 1 } }, { w })
    opt2:apply({ f32 { 1, 1 } }, { w2 })
    assert.are.same(w:numpy(), w2:numpy())
    tmp.remove(dir)
  end)

  it("round-trips its config and a saved model", function()
    local opt = O.LossScaleOptimizer(O.RMSprop { learning_rate = 0.02 }, { initial_scale = 128, dynamic_growth_steps = 7,
      name = "scaled" })
    local c = O.serialize(opt)
    assert.are.equal("LossScaleOptimizer", c.class_name)
    assert.are.same({ "scaled", 128, 7, "RMSprop" }, { c.config.name, c.config.initial_scale,
      c.config.dynamic_growth_steps, c.config.inner_optimizer.class_name })
    local back = O.deserialize(c)
    assert.are.same({ "scaled", 128, 7, "RMSprop" }, { back.name, back.initial_scale, back.dynamic_growth_steps,
      back.inner_optimizer.__name })
    h.close(back.learning_rate:read_value(), 0.02)
    assert.are.equal(128, O.LossScaleOptimizer:from_config(opt:get_config()).dynamic_scale:item())
    -- a mixed_float16 model saved with its optimizer state, loaded in a float32 session
    mp.set_global_policy("mixed_float16")
    local m = tide.Sequential { tide.Input { shape = { 2 } }, L.Dense { 3 }, L.Activation { "softmax", dtype = "float32" } }
    m:compile { optimizer = O.Adam { learning_rate = 0.01 }, loss = "sparse_categorical_crossentropy" }
    m:fit(f32 { { 1, 2 }, { 3, 4 } }, tide.tensor { 0, 2 }, { epochs = 2, verbose = 0 })
    mp.set_global_policy(nil)
    local dir = tmp.dir("loss_scale")
    m:save(dir .. "/m")
    local m2 = tide.models.load_model(dir .. "/m")
    assert.are.equal("mixed_float16", m2.layers[1].dtype_policy.name)
    assert.are.equal("LossScaleOptimizer", m2.optimizer.__name)
    assert.are.same(state(m.optimizer), state(m2.optimizer))
    h.close(m2(f32 { { 1, 2 } }), m(f32 { { 1, 2 } }), 0)
    tmp.remove(dir)
  end)

  it("names what is wrong", function()
    h.errors("LossScaleOptimizer: inner_optimizer must be an optimizer", O.LossScaleOptimizer, "adam")
    h.errors("inner_optimizer is already a LossScaleOptimizer", O.LossScaleOptimizer, O.LossScaleOptimizer(O.SGD()))
    h.errors("initial_scale must be a positive finite number", O.LossScaleOptimizer, O.SGD(), { initial_scale = 0 })
    h.errors("initial_scale must be a positive finite number", O.LossScaleOptimizer, O.SGD(), { initial_scale = inf })
    h.errors("dynamic_growth_steps must be a positive integer", O.LossScaleOptimizer, O.SGD(),
      { dynamic_growth_steps = 1.5 })
    h.errors("unknown option 'dynamic'", O.LossScaleOptimizer, O.SGD(), { dynamic = false })
    local opt = O.LossScaleOptimizer(O.SGD())
    h.errors("scale_loss expects a tensor, got 3", function() return opt:scale_loss(3) end)
    h.errors("scale_loss expects a float loss, got int32", function() return opt:scale_loss(tide.tensor { 1 }) end)
    local w = tide.Variable({ 1 })
    h.errors("apply without variables needs a built optimizer", function() opt:apply({ f32 { 1 } }) end)
    h.errors("gradients must be float", function() opt:apply({ tide.tensor { 1 } }, { w }) end)
    h.errors("apply expects a list of gradients", function() opt:apply(f32 { 1 }, { w }) end)
    h.errors("'iterations' cannot be set", function() opt.iterations = 3 end)
  end)
end)
