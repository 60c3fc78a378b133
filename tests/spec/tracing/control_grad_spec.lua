-- tests/spec/tracing/control_grad_spec.lua — gradients through tide.cond and
-- tide.while_loop inside tide.trace (TF 2's: a cond of branch VJPs, a
-- reverse loop of body VJPs) agree with eager gradients and with finite
-- differences: branches and bodies using inputs, captured tensors and
-- variables, nested conds, data-dependent trip counts, maximum_iterations,
-- a TensorArray RNN, unknown dims and second order.
local tide = require "tide"
local h = require "helpers"

local cond, while_loop = tide.cond, tide.while_loop

local function f64(v) return tide.tensor(v, "float64") end

local values = h.values -- a flat Lua list of a tensor's values

-- The function giving loss = sum(f(...)) and its gradients w.r.t. the
-- sources (the first nsrc arguments; Variables listed in vars too).
local function with_grads(f, nsrc, vars)
  return function(...)
    local argv = { ... }
    local tape = tide.GradientTape()
    local srcs = {}
    for i = 1, nsrc do srcs[i] = argv[i] tape:watch(argv[i]) end
    for _, v in ipairs(vars or {}) do srcs[#srcs + 1] = v end
    local loss = tape:run(function() return tide.reduce_sum(f(table.unpack(argv))) end)
    local gs = tape:gradient(loss, srcs, { unconnected_gradients = "zero" })
    return loss, table.unpack(gs, 1, #srcs)
  end
end

-- Central differences of sum(f(...)) w.r.t. argument j (a float64 tensor)
-- or a Variable, as a flat list.
local function numeric(f, argv, target, eps)
  eps = eps or 1e-6
  local is_var = tide.is_variable(target)
  local base = is_var and target:read_value() or argv[target]
  local vals, shape = values(base), base.shape:as_list()
  local out = {}
  local function loss_with(list)
    local t = f64(list):reshape(shape)
    local a = { table.unpack(argv) }
    if is_var then target:assign(t) else a[target] = t end
    return tide.reduce_sum(f(table.unpack(a))):item()
  end
  for k = 1, #vals do
    local up, down = { table.unpack(vals) }, { table.unpack(vals) }
    up[k], down[k] = vals[k] + eps, vals[k] - eps
    out[k] = (loss_with(up) - loss_with(down)) / (2 * eps)
  end
  if is_var then target:assign(base) end
  return out
end

-- Eager and traced gradients of f agree, and match finite differences.
local function check(f, argv, nsrc, vars, tol)
  tol = tol or 1e-6
  local g = with_grads(f, nsrc, vars)
  local e = { g(table.unpack(argv)) }
  local t = { tide.trace(g)(table.unpack(argv)) }
  assert.are.equal(#e, #t)
  for i = 1, #e do h.close(t[i], e[i], tol) end
  for j = 1, nsrc do h.close(t[1 + j], numeric(f, argv, j), 1e-5) end
  for i, v in ipairs(vars or {}) do h.close(t[1 + nsrc + i], numeric(f, argv, v), 1e-5) end
  return table.unpack(t)
end

-- check() traces a new closure per case on purpose: no retracing warning.
local warning
setup(function()
  warning = tide.config.get_retracing_warning()
  tide.config.set_retracing_warning { enabled = false }
end)
teardown(function() tide.config.set_retracing_warning(warning) end)

describe("gradients through a traced tide.cond", function()
  it("differentiate the branch the predicate takes (x^2 or sin x)", function()
    local function f(x, p) return cond(p, function() return x * x end, function() return tide.sin(x) end) end
    local x = f64 { 0.5, -1.25, 2 }
    local _, g = check(f, { x, tide.tensor(true) }, 1)
    h.close(g, { 1, -2.5, 4 })
    _, g = check(f, { x, tide.tensor(false) }, 1)
    h.close(g, { math.cos(0.5), math.cos(-1.25), math.cos(2) })
  end)

  it("reach tensors and variables the branches capture", function()
    local v = tide.Variable(f64 { 1.5, -0.5 })
    local w = tide.Variable(f64(3))
    local function f(x, y, p)
      local z = x * 2 -- an outer tensor the branches capture
      return cond(p, function() return z * v + y end, function() return v * v * w + tide.exp(y) end)
    end
    local x, y = f64 { 0.25, 1 }, f64 { -1, 2 }
    for _, p in ipairs { true, false } do check(f, { x, y, tide.tensor(p) }, 2, { v, w }) end
  end)

  it("work through nested conds and several results", function()
    local function f(x, p, q)
      local a, b = cond(p, function()
        return cond(q, function() return x * x * x, x end, function() return tide.exp(x), 2 * x end)
      end, function() return x * 2, tide.tanh(x) end)
      return a * b
    end
    local x = f64 { 0.3, -0.7 }
    for _, p in ipairs { true, false } do
      for _, q in ipairs { true, false } do check(f, { x, tide.tensor(p), tide.tensor(q) }, 1) end
    end
  end)

  it("handle a branch that does not use the source, and dims known only at run time", function()
    local function f(x, y, p) return cond(p, function() return x * x end, function() return y * 3 end) end
    local g = with_grads(f, 2)
    local vec = tide.TensorSpec({ tide.None }, "float64")
    local tf = tide.trace(g, { input_signature = { vec, vec, tide.TensorSpec({}, "bool") } })
    local _, gx, gy = tf(f64 { 1, 2, 3 }, f64 { 1, 1, 1 }, tide.tensor(true))
    h.close(gx, { 2, 4, 6 })
    h.close(gy, { 0, 0, 0 })
    _, gx, gy = tf(f64 { 1, 2 }, f64 { 5, 5 }, tide.tensor(false))
    h.close(gx, { 0, 0 })
    h.close(gy, { 3, 3 })
  end)

  it("differentiate twice (second order)", function()
    local function f(x, p) return cond(p, function() return x * x * x end, function() return tide.sin(x) end) end
    local function second(x, p)
      local outer = tide.GradientTape()
      outer:watch(x)
      local g = outer:run(function()
        local inner = tide.GradientTape()
        inner:watch(x)
        local y = inner:run(function() return tide.reduce_sum(f(x, p)) end)
        return inner:gradient(y, x)
      end)
      return g, outer:gradient(g, x)
    end
    local x = f64 { 0.5, 2 }
    local g, gg = tide.trace(second)(x, tide.tensor(true))
    h.close(g, { 0.75, 12 })
    h.close(gg, { 3, 12 })
    g, gg = tide.trace(second)(x, tide.tensor(false))
    h.close(gg, { -math.sin(0.5), -math.sin(2) })
    local eg, egg = second(x, tide.tensor(false))
    h.close(g, eg)
    h.close(gg, egg)
  end)
end)

describe("gradients through a traced tide.while_loop", function()
  it("give n*x^(n-1) for x^n by repeated multiplication, n a tensor argument", function()
    local function f(x, n)
      local _, y = while_loop(function(i) return i:lt(n) end, function(i, y) return i + 1, y * x end,
        { 0, tide.ones_like(x) })
      return y
    end
    local x = f64 { 1.5, -0.5, 2 }
    local g = with_grads(f, 1)
    local tf = tide.trace(g)
    for _, n in ipairs { 0, 1, 3, 5 } do
      local _, gt = tf(x, tide.tensor(n))
      local want = {}
      for k, v in ipairs(values(x)) do want[k] = n * v ^ math.max(n - 1, 0) end
      h.close(gt, want)
    end
    check(f, { x, tide.tensor(4) }, 1)
  end)

  it("follow a data-dependent trip count, with loop variables and captured variables", function()
    local v = tide.Variable(f64(1.1))
    local function f(x)
      local y, s = while_loop(function(y) return tide.reduce_sum(y):lt(20) end,
        function(y, s) return y * v + x, s + tide.reduce_sum(tide.sin(y)) end, { x, f64(0) })
      return tide.reduce_sum(y) + s
    end
    check(f, { f64 { 1, 2 } }, 1, { v })
  end)

  it("respect maximum_iterations, a number or a tensor", function()
    local function f(x, m)
      local _, y = while_loop(function() return tide.tensor(true) end, function(i, y) return i + 1, y * x end,
        { 0, tide.ones_like(x) }, { maximum_iterations = m })
      return y
    end
    local x = f64 { 1.5, -0.5 }
    local _, g = check(function(x) return f(x, 4) end, { x }, 1)
    h.close(g, { 4 * 1.5 ^ 3, 4 * (-0.5) ^ 3 })
    local _, g2 = check(f, { x, tide.tensor(3) }, 1)
    h.close(g2, { 3 * 1.5 ^ 2, 3 * 0.25 })
  end)

  it("do not repeat variable updates, and see the upvalues the branches saw (y = cond(..y..))", function()
    local steps = tide.Variable(0, { dtype = "int32", trainable = false })
    local calls = tide.Variable(0, { dtype = "int32", trainable = false })
    local function f(x)
      local tape = tide.GradientTape()
      tape:watch(x)
      local y = tape:run(function()
        local _, y = while_loop(function(i) return i:lt(3) end, function(i, y)
          steps:assign_add(1)
          return i + 1, y * x
        end, { 0, tide.ones_like(x) })
        y = cond(tide.reduce_sum(y):gt(0), function() calls:assign_add(1) return y * 2 end, function() return y end)
        return y
      end)
      return tape:gradient(y, x)
    end
    local g = tide.trace(f)(f64 { 2 })
    h.close(g, { 24 })
    assert.are.equal(3, steps:numpy())
    assert.are.equal(1, calls:numpy())
  end)

  it("run an RNN over a TensorArray (tide.for_range)", function()
    local W = tide.Variable(f64 { { 0.5, -0.3 }, { 0.2, 0.4 } })
    local function f(xs, h0)
      local T = xs.shape[1]
      local ta = tide.TensorArray("float64", { size = T })
      local hT, out = tide.for_range(T, function(i, hh, ta)
        local hn = tide.tanh(tide.matmul(hh, W) + tide.gather(xs, i))
        return hn, ta:write(i, hn)
      end, { h0, ta })
      return tide.reduce_sum(out:stack() * f64 { 1, 2 }) + hT
    end
    local xs = f64 { { { 0.1, 0.2 } }, { { -0.3, 0.5 } }, { { 0.7, -0.1 } } }
    check(f, { xs, f64 { { 0.2, -0.4 } } }, 2, { W })
  end)

  it("run an RNN over a TensorArray of symbolic size (time None when traced)", function()
    local W = tide.Variable(f64 { { 0.5, -0.3 }, { 0.2, 0.4 } })
    -- element_shape: known dims (a buffer of the size's rows from the start), or a None batch with the
    -- buffer given whole by unstack (a gradient needs the loop's buffer to keep one shape)
    local function rnn(x, whole) -- x [batch, time, 2]
      local xt = tide.transpose(x, { 1, 0, 2 })
      local n = tide.shape(xt)[0]
      local ta
      if whole then
        ta = tide.TensorArray("float64", { size = n, element_shape = { tide.None, 2 } })
          :unstack(tide.zeros(tide.stack { n, tide.shape(x)[0], 2 }, { dtype = "float64" }))
      else
        ta = tide.TensorArray("float64", { size = n, element_shape = { 2, 2 } })
      end
      local out = tide.for_range(n, function(i, ta, hh)
        local hn = tide.tanh(tide.matmul(hh, W) + tide.gather(xt, i))
        return ta:write(i, hn), hn
      end, { ta, tide.gather(xt, 0) * 0 })
      return out:stack() * f64 { 1, 2 }
    end
    local x = f64 { { { 0.1, 0.2 }, { -0.3, 0.5 }, { 0.7, -0.1 } }, { { 0.4, -0.6 }, { 0.2, 0.3 }, { -0.5, 0.1 } } }
    for _, case in ipairs { { false, { 2, tide.None, 2 } }, { true, { tide.None, tide.None, 2 } } } do
      local function f(x) return rnn(x, case[1]) end
      local g = with_grads(f, 1, { W })
      local e = { g(x) }
      local tg = tide.trace(g, { input_signature = { tide.TensorSpec(case[2], "float64") } })
      local t = { tg(x) }
      for i = 1, #e do h.close(t[i], e[i], 1e-9) end
      h.close(t[2], numeric(f, { x }, 1), 1e-5)
      h.close(t[3], numeric(f, { x }, W), 1e-5)
      local x1 = x:slice { { 0, 2 }, { 0, 2 } } -- another length, same trace
      local e1, t1 = { g(x1) }, { tg(x1) }
      for i = 1, #e1 do h.close(t1[i], e1[i], 1e-9) end
      assert.are.equal(1, tg:trace_count())
    end
  end)
end)

describe("gradients through a traced tide.while_loop of many iterations", function()
  -- h <- tanh(h W + b), n iterations: the gradient of sum(h) w.r.t. W, b and h0
  local W = tide.Variable(f64 { { 0.5, -0.3, 0.1 }, { 0.2, 0.4, -0.6 }, { -0.1, 0.3, 0.2 } }, { name = "W" })
  local b = tide.Variable(f64 { { 0.05, -0.1, 0.2 } }, { name = "b" })
  local function rnn(h0, n)
    local _, hn = while_loop(function(i) return i:lt(n) end,
      function(i, hh) return i + 1, tide.tanh(tide.matmul(hh, W) + b) end, { 0, h0 })
    return tide.reduce_sum(hn)
  end

  it("agree with the eager tape over 3,000 iterations (the loop keeps its iterations: no replay)", function()
    local h0 = f64 { { 0.3, -0.2, 0.9 } }
    local g = with_grads(rnn, 1, { W, b })
    local n = tide.tensor(3000)
    local e = { g(h0, n) }
    local tg = tide.trace(g)
    local t = { tg(h0, n) }
    for i = 1, #e do h.close(t[i], e[i], 1e-9) end
    -- the gradient's graph runs the forward loop once; only its backward loop applies the body's VJP
    local text = tg:concrete_functions()[1].graph:text()
    local loops = 0
    for _ in text:gmatch("= while_loop%(") do loops = loops + 1 end
    assert.are.equal(2, loops)
    assert.truthy(text:find("keeps: the iteration count and each iteration's loop variables\n", 1, true))
  end)

  it("respect maximum_iterations over 2,000 iterations, and a loop that never runs", function()
    local function f(x, m)
      local _, y = while_loop(function() return tide.tensor(true) end, function(i, y) return i + 1, y * 0.999 + x end,
        { 0, x }, { maximum_iterations = m })
      return y
    end
    local g = tide.trace(with_grads(f, 1))
    local x = f64 { 1, -2 }
    -- y_n = 0.999^n x + x (1 - 0.999^n) / (1 - 0.999): dy/dx = 0.999^n + (1 - 0.999^n) / 0.001
    for _, n in ipairs { 2000, 0 } do
      local _, gx = g(x, tide.tensor(n))
      local want = 0.999 ^ n + (1 - 0.999 ^ n) / 0.001
      h.close(gx, { want, want }, 1e-9)
    end
  end)

  it("keep no stacks when no gradient reads them", function()
    local f = tide.trace(function(x)
      local tape = tide.GradientTape()
      tape:watch(x)
      return tape:run(function()
        local _, y = while_loop(function(i) return i:lt(4) end, function(i, y) return i + 1, y * x end, { 0, x })
        return y
      end)
    end)
    h.close(f(f64 { 2 }), { 32 })
    assert.truthy(f:concrete_functions()[1].graph:text():find("(unread: not kept)", 1, true))
  end)

  it("differentiate nested loops, and twice (second order through the kept iterations)", function()
    -- inner: y <- y * x, m times; outer: s <- s + inner(s), k times
    local function f(x)
      local _, s = while_loop(function(j) return j:lt(3) end, function(j, s)
        local _, y = while_loop(function(i) return i:lt(2) end, function(i, y) return i + 1, y * x end, { 0, s })
        return j + 1, s + y * 0.5
      end, { 0, x })
      return s
    end
    check(f, { f64 { 0.7, -1.2 } }, 1)
    -- d2/dx2 of x^5 (a loop of products) is 20 x^3
    local function power(x)
      local _, y = while_loop(function(i) return i:lt(5) end, function(i, y) return i + 1, y * x end,
        { 0, tide.ones_like(x) })
      return y
    end
    local function second(x)
      local outer = tide.GradientTape()
      outer:watch(x)
      local g = outer:run(function()
        local inner = tide.GradientTape()
        inner:watch(x)
        local y = inner:run(function() return tide.reduce_sum(power(x)) end)
        return inner:gradient(y, x)
      end)
      return g, outer:gradient(g, x)
    end
    local x = f64 { 0.5, -1.5 }
    local g, gg = tide.trace(second)(x)
    h.close(g, { 5 * 0.5 ^ 4, 5 * 1.5 ^ 4 })
    h.close(gg, { 20 * 0.5 ^ 3, -20 * 1.5 ^ 3 })
    local eg, egg = second(x)
    h.close(gg, egg)
  end)

  it("say why at the gradient when the loop cannot keep its iterations (rank 8), and keep those of 32 loop variables", function()
    local function grad_of(make_vars)
      return tide.trace(function(x)
        local tape = tide.GradientTape()
        tape:watch(x)
        local y = tape:run(function()
          local vars = make_vars(x)
          local res = { while_loop(function(i) return i:lt(2) end, function(i, ...)
            local out = { i + 1 }
            for k, v in ipairs { ... } do out[k + 1] = v * x end
            return table.unpack(out)
          end, vars) }
          return tide.reduce_sum(res[2])
        end)
        return tape:gradient(y, x)
      end)
    end
    local rank8 = grad_of(function(x) return { 0, tide.reshape(x, { 1, 1, 1, 1, 1, 1, 1, 1 }) } end)
    h.errors("its stack would need rank 9", rank8, f64 { 2 })
    local wide = grad_of(function(x)
      local vars = { 0 }
      for k = 1, 31 do vars[k + 1] = x * k end
      return vars
    end)
    -- any number of loop variables keep their stacks: two iterations, y = (1 * x) * x * x, dy/dx = 3 x^2
    h.close(wide(f64 { 2 }), { 12 })
  end)

  it("say so when a loop variable's shape changes between iterations", function()
    local f = tide.trace(function(x)
      local tape = tide.GradientTape()
      tape:watch(x)
      local y = tape:run(function()
        local _, y = while_loop(function(i) return i:lt(3) end,
          function(i, y) return i + 1, tide.pad(y * x, { { 0, 1 } }) end, { 0, x },
          { shape_invariants = { {}, { tide.None } } })
        return tide.reduce_sum(y)
      end)
      return tape:gradient(y, x)
    end)
    h.errors("so their shape must not change", f, f64 { 2 })
  end)
end)
