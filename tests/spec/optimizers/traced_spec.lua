-- tests/spec/optimizers/traced_spec.lua — optimizers inside tide.trace: a train step
-- with Adam traces once for any number of steps, reads a learning rate set between
-- calls, builds slots on its first trace, takes two optimizers, and names a
-- variable met unbuilt while tracing again; the update is a few fused nodes.
local tide = require "tide"
local h = require "helpers"
local O = tide.optimizers

local function close(actual, expected, tol)
  if tide.is_variable(actual) then actual = actual:numpy() end
  return h.close(actual, expected, tol)
end

-- A small regression model and its data.
local function model()
  local w = tide.Variable(tide.tensor({ { 0.5, -0.5 }, { 0.25, 0.75 }, { -1, 1 } }, "float32"), { name = "w" })
  local b = tide.Variable(tide.tensor({ 0.1, -0.1 }, "float32"), { name = "b" })
  local x = tide.tensor({ { 1, 2, 3 }, { -1, 0.5, 2 } }, "float32")
  local y = tide.tensor({ { 1, 0 }, { 0, 1 } }, "float32")
  local function loss() return tide.reduce_mean((x:matmul(w) + b - y) ^ 2) end
  return w, b, loss
end

local function train_step_fn(opt, w, b, loss_fn)
  return function()
    local tape = tide.GradientTape()
    local loss = tape:run(loss_fn)
    local g = tape:gradient(loss, { w, b })
    opt:apply_gradients { { g[1], w }, { g[2], b } }
    return loss
  end
end

describe("optimizers in a traced step", function()
  it("Adam: one trace for every step, the same values as eager steps", function()
    local w1, b1, loss1 = model()
    local w2, b2, loss2 = model()
    local eager_opt, traced_opt = O.Adam { learning_rate = 0.05 }, O.Adam { learning_rate = 0.05 }
    local eager = train_step_fn(eager_opt, w1, b1, loss1)
    local traced = tide.trace(train_step_fn(traced_opt, w2, b2, loss2))
    for _ = 1, 12 do
      close({ traced():item() }, { eager():item() }, 1e-6)
    end
    assert.are.equal(1, traced:trace_count())
    close(w2, w1:numpy(), 1e-6)
    close(b2, b1:numpy(), 1e-6)
    assert.are.equal(12, traced_opt.iterations:item())
    for i, v in ipairs(eager_opt.variables) do close(traced_opt.variables[i], v:numpy(), 1e-6) end
  end)

  it("builds the slots on the first trace, once", function()
    local w, b, loss = model()
    local opt = O.RMSprop { momentum = 0.5, centered = true }
    local step = tide.trace(train_step_fn(opt, w, b, loss))
    assert.is_false(opt.built)
    step()
    assert.is_true(opt.built)
    assert.are.equal(2 + 6, #opt.variables)
    step()
    assert.are.equal(2 + 6, #opt.variables)
    assert.are.equal(2, opt.iterations:item())
  end)

  it("reads the learning rate set between calls without tracing again", function()
    local w = tide.Variable(tide.tensor({ 1, 1 }, "float32"), { name = "w" })
    local opt = O.SGD { learning_rate = 0.5 }
    local step = tide.trace(function(g) opt:apply_gradients { { g, w } } end)
    local g = tide.tensor({ 1, 2 }, "float32")
    step(g)
    close(w, { 0.5, 0 })
    opt.learning_rate = 0.25 -- what ReduceLROnPlateau and LearningRateScheduler do
    step(g)
    close(w, { 0.25, -0.5 })
    assert.are.equal(1, step:trace_count())
  end)

  it("follows a schedule through iterations without tracing again", function()
    local w = tide.Variable(tide.tensor({ 0 }, "float32"), { name = "w" })
    local opt = O.SGD { learning_rate = O.schedules.ExponentialDecay(1, 1, 0.5) }
    local step = tide.trace(function(g) opt:apply_gradients { { g, w } } end)
    local g = tide.tensor({ 1 }, "float32")
    for _ = 1, 4 do step(g) end
    close(w, { -(1 + 0.5 + 0.25 + 0.125) })
    assert.are.equal(1, step:trace_count())
  end)

  it("takes two optimizers in one step, as eager steps do", function()
    local function run(trace)
      local w, b, loss = model()
      local ow, ob = O.Adam { learning_rate = 0.1 }, O.SGD { learning_rate = 0.1, momentum = 0.9, nesterov = true }
      local step = function()
        local tape = tide.GradientTape()
        local l = tape:run(loss)
        local g = tape:gradient(l, { w, b })
        ow:apply_gradients { { g[1], w } }
        ob:apply_gradients { { g[2], b } }
        return l
      end
      if trace then step = tide.trace(step) end
      for _ = 1, 5 do step() end
      return w:numpy(), b:numpy(), ow.iterations:item(), ob.iterations:item(), trace and step:trace_count()
    end
    local ew, eb, ei, ej = run(false)
    local tw, tb, ti, tj, traces = run(true)
    close(tw, ew, 1e-6)
    close(tb, eb, 1e-6)
    assert.are.same({ 5, 5 }, { ei, ej })
    assert.are.same({ 5, 5 }, { ti, tj })
    assert.are.equal(1, traces)
  end)

  it("names a variable met unbuilt while tracing again, and works once built", function()
    local opt = O.Adam()
    local a = tide.Variable(tide.tensor({ 1, 2 }, "float32"), { name = "a" })
    local c = tide.Variable(tide.tensor({ 1, 2, 3 }, "float32"), { name = "c" })
    local step = tide.trace(function(g, v) opt:apply_gradients { { g, v } } end, { name = "step" })
    step(tide.tensor({ 1, 1 }, "float32"), a) -- first trace: builds a's slots
    h.errors("Adam: variable 'c' (float32, shape (3,)) has no optimizer slots yet, and 'step' is being traced " ..
      "again, when no new Variables can be made; call optimizer:build(var_list) with all the variables before " ..
      "the traced function first runs", step, tide.tensor({ 1, 1, 1 }, "float32"), c)
    assert.is_nil(opt:get_slot(c, "momentum"))
    opt:build { c }
    step(tide.tensor({ 1, 1, 1 }, "float32"), c)
    assert.are.equal(2, opt.iterations:item())
    assert.is_true(c:numpy()[1] < 1)
  end)

  it("checks gradient shapes while tracing", function()
    local opt = O.SGD()
    local w = tide.Variable(tide.tensor({ 1, 2 }, "float32"), { name = "w" })
    local step = tide.trace(function(g) opt:apply_gradients { { g, w } } end)
    h.errors("SGD: the gradient for variable 'w' (float32, shape (2,)) (pair 1) has shape (3,)", step,
      tide.tensor({ 1, 2, 3 }, "float32"))
  end)

  it("compiles each variable's Adam update into a few fused nodes", function()
    local w, b, loss = model()
    local step = tide.trace(train_step_fn(O.Adam(), w, b, loss))
    step()
    local text = tostring(step:concrete_functions()[1].graph)
    local _, fused = text:gsub("= fused%[", "")
    local _, assigns = text:gsub("assign", "")
    -- per variable: m and v (one fused node each), the update (one); plus the
    -- shared bias correction and the model's own forward/backward fusions
    assert.is_true(fused <= 2 * 3 + 1 + 3, "fused nodes: " .. fused .. "\n" .. text)
    assert.are.equal(2 * 3 + 1, assigns) -- m, v, w per variable, and iterations
  end)

  it("an eager step (run as the optimizer's own traced update) sees changed arguments", function()
    local w = tide.Variable(tide.tensor({ 0 }, "float32"), { name = "w" })
    local opt = O.SGD { learning_rate = 1, momentum = 0.5 }
    local g = tide.tensor({ 1 }, "float32")
    opt:apply_gradients { { g, w } } -- m = -1, w = -1
    opt.momentum = 0.9
    opt:apply_gradients { { g, w } } -- m = 0.9 * -1 - 1
    close(w, { -2.9 })
    close(opt:get_slot(w, "momentum"), { -1.9 })
  end)

  it("an eager step under a recording tape gives the same values (and is not recorded)", function()
    local function run(under_tape)
      local w, b, loss = model()
      local opt = O.Nadam { learning_rate = 0.1, clipnorm = 0.5 }
      for _ = 1, 3 do
        local tape = tide.GradientTape { persistent = true }
        local g
        tape:run(function()
          local l = loss()
          g = tape:gradient(l, { w, b })
          if under_tape then opt:apply_gradients { { g[1], w }, { g[2], b } } end
        end)
        if not under_tape then opt:apply_gradients { { g[1], w }, { g[2], b } } end
      end
      return w:numpy(), b:numpy()
    end
    local w1, b1 = run(false)
    local w2, b2 = run(true)
    close(w2, w1, 1e-6)
    close(b2, b1, 1e-6)
  end)

  it("lets optimizers that are no longer used be collected, and never warns of their own traces", function()
    local w = tide.Variable(tide.tensor({ 1, 2 }, "float32"), { name = "w" })
    local alive = setmetatable({}, { __mode = "k" })
    local stderr, written = io.stderr, {}
    io.stderr = { write = function(_, s) written[#written + 1] = s end }
    local ok, err = pcall(function()
      for _ = 1, 12 do
        local opt = O.Adam()
        opt:apply_gradients { { tide.tensor({ 1, 1 }, "float32"), w } }
        alive[opt] = true
      end
    end)
    io.stderr = stderr
    assert(ok, err)
    assert.are.equal("", table.concat(written))
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(alive))
  end)
end)
