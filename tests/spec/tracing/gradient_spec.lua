-- Gradients through traced functions: a tape outside a call of tide.trace's
-- Function (one node whose backward is itself a traced function, as in TF),
-- and a tape inside the traced function.
local tide = require "tide"
local h = require "helpers"

local function f32(v) return tide.tensor(v, "float32") end

-- The gradients of `body(...)` w.r.t. `sources` under a fresh tape that
-- watches `watch` (tensors), as a list.
local function grads(body, sources, watch, ...)
  local tape = tide.GradientTape()
  local a = { n = select("#", ...), ... }
  local y = tape:run(function()
    for _, t in ipairs(watch or {}) do tape:watch(t) end
    return body(unpack(a, 1, a.n))
  end)
  return tape:gradient(y, sources), y
end

describe("a tape outside a traced function", function()
  local function loss(x, w) return tide.reduce_sum(tide.tanh(x * w)) end

  it("gets the eager gradients of the tensor arguments", function()
    local f = tide.trace(loss)
    local x, w = f32{1, 2, 3}, f32{0.5, -0.2, 0.1}
    local want, y0 = grads(loss, {x, w}, {x, w}, x, w)
    local got, y = grads(f, {x, w}, {x, w}, x, w)
    h.close(y, y0:totable(), 1e-6)
    h.close(got[1], want[1]:totable(), 1e-6)
    h.close(got[2], want[2]:totable(), 1e-6)
    -- a second call runs the cached forward and backward graphs
    got = grads(f, {x, w}, {x, w}, x, w)
    h.close(got[1], want[1]:totable(), 1e-6)
    assert.are.equal(1, f:trace_count())
  end)

  it("records the call as one node whose backward is one traced function, traced with the forward", function()
    local f = tide.trace(loss)
    local x, w = f32{1, 2, 3}, f32{0.5, -0.2, 0.1}
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return f(x, w)
    end)
    assert.are.equal(1, #tape._nodes)
    local g = tape:gradient(y, x)
    h.close(g, grads(loss, {x}, {x}, x, w)[1]:totable(), 1e-6)
    local pair = f:concrete_functions()[1]._taped.generic
    assert.are.equal(1, pair.backward:trace_count())
    assert.are.equal(1, #pair.backward:concrete_functions())
  end)

  it("gives variables read inside fn (captured or passed) their gradients", function()
    local v = tide.Variable({0.5, -0.2, 0.1}, {name = "v"})
    local b = tide.Variable(0.3, {name = "b"})
    local function body(x, w) return tide.reduce_sum(tide.tanh(x * w + b) * v) end
    local f = tide.trace(body)
    local x, w = f32{1, 2, 3}, tide.Variable({1, -1, 2}, {name = "w"})
    local want = grads(body, {x, w, v, b}, {x}, x, w)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return f(x, w)
    end)
    local got = tape:gradient(y, {x, w, v, b})
    for i = 1, 4 do h.close(got[i], want[i]:totable(), 1e-5) end
    local seen = {}
    for _, var in ipairs(tape:watched_variables()) do seen[var.name] = true end
    assert.is_true(seen.v and seen.b and seen.w)
  end)

  it("respects watch_accessed_variables=false and watches what it is told", function()
    local v = tide.Variable({0.5, -0.2}, {name = "v"})
    local u = tide.Variable({2, 3}, {name = "u", trainable = false})
    local f = tide.trace(function(x) return tide.reduce_sum(x * v * u) end)
    local x = f32{1, 2}
    local tape = tide.GradientTape{watch_accessed_variables = false}
    local y = tape:run(function() return f(x) end)
    local g = tape:gradient(y, {v, u})
    assert.is_nil(g[1])
    assert.is_nil(g[2])
    -- an explicit watch of a non-trainable variable
    tape = tide.GradientTape{watch_accessed_variables = false}
    y = tape:run(function()
      tape:watch(u)
      return f(x)
    end)
    g = tape:gradient(y, {v, u})
    assert.is_nil(g[1])
    h.close(g[2], {0.5, -0.4}, 1e-6)
  end)

  it("differentiates arguments in nested tables, with Lua values and several results", function()
    local function body(p, n)
      local s = tide.reduce_sum(p.a * p.b[1]) * n
      return { loss = s + tide.reduce_sum(p.b[2] ^ 2), count = tide.tensor(n) }, p.b[2] * 2
    end
    local f = tide.trace(body)
    local a, b1, b2 = f32{1, 2}, f32{3, 4}, f32{{0.5}, {1.5}}
    local p = {a = a, b = {b1, b2}}
    local function run(fn)
      local tape = tide.GradientTape()
      local out = tape:run(function()
        tape:watch({a, b1, b2})
        local r = fn(p, 3)
        return r.loss
      end)
      return tape:gradient(out, {a = a, b = {b1, b2}})
    end
    local want, got = run(body), run(f)
    h.close(got.a, want.a:totable(), 1e-6)
    h.close(got.b[1], want.b[1]:totable(), 1e-6)
    h.close(got.b[2], want.b[2]:totable(), 1e-6)
  end)

  it("sums the gradients of several targets (unused results give nothing)", function()
    local function body(x) return x * 2, tide.reduce_sum(x ^ 2), tide.cast(x, "int32") end
    local f = tide.trace(body)
    local x = f32{1, 2, 3}
    for _, fn in ipairs {body, f} do
      local tape = tide.GradientTape{persistent = true}
      local a, s, i = tape:run(function()
        tape:watch(x)
        return fn(x)
      end)
      h.close(tape:gradient({a, s}, x), {4, 6, 8}, 1e-6)
      h.close(tape:gradient(s, x), {2, 4, 6}, 1e-6)
      h.close(tape:gradient(a, x, {output_gradients = f32{1, 0, 2}}), {2, 0, 4}, 1e-6)
      assert.is_nil(tape:gradient(i, x)) -- an int32 target: no gradient, as the eager tape
    end
  end)

  it("works with an input_signature with None dims: one forward trace", function()
    local function body(x) return tide.reduce_sum(tide.tanh(x) * tide.tensor({1, 2, 3}, "float32")) end
    local f = tide.trace(body, {input_signature = {tide.TensorSpec({tide.None, 3}, "float32")}})
    for _, rows in ipairs {2, 4, 1} do
      local data = {}
      for r = 1, rows do data[r] = {0.1 * r, -0.2 * r, 0.3} end
      local x = f32(data)
      local want = grads(body, {x}, {x}, x)
      local got = grads(f, {x}, {x}, x)
      h.close(got[1], want[1]:totable(), 1e-6)
    end
    assert.are.equal(1, f:trace_count())
  end)

  it("with None dims, gives each argument the gradient of its run-time shape, to second order", function()
    -- x [None, 3] and b [None, 3] in the signature; b is [1, 3] at run time and broadcasts
    local v = tide.Variable({ 0.5, -0.2, 0.1 }, { name = "v" })
    local function body(x, b) return tide.reduce_sum(tide.tanh(x * b + v) * tide.reduce_mean(x, 0)) end
    local f = tide.trace(body, { input_signature = { tide.TensorSpec({ tide.None, 3 }, "float32"),
      tide.TensorSpec({ tide.None, 3 }, "float32") } })
    for _, rows in ipairs { 2, 4 } do
      local data = {}
      for r = 1, rows do data[r] = { 0.1 * r, -0.2 * r, 0.3 } end
      local x, b = f32(data), f32 { { 0.7, -0.4, 0.2 } }
      local want = grads(body, { x, b, v }, { x, b }, x, b)
      local got = grads(f, { x, b, v }, { x, b }, x, b)
      assert.are.same({ 1, 3 }, got[2].shape:as_list())
      for i = 1, 3 do h.close(got[i], want[i]:totable(), 1e-5) end
      -- a tape around a tape around f: d/db of sum(d loss/dx)
      local function second(fn)
        local outer = tide.GradientTape()
        local s = outer:run(function()
          outer:watch(b)
          local inner = tide.GradientTape()
          local y = inner:run(function()
            inner:watch(x)
            return fn(x, b)
          end)
          return tide.reduce_sum(inner:gradient(y, x))
        end)
        return outer:gradient(s, b)
      end
      local g2 = second(f)
      assert.are.same({ 1, 3 }, g2.shape:as_list())
      h.close(g2, second(body):totable(), 1e-5)
    end
    assert.are.equal(1, f:trace_count())
  end)

  it("traces the backward of None dims once when its gradients need no static dims", function()
    local function body(x) return tide.tanh(x) * 2 end
    local f = tide.trace(body, {input_signature = {tide.TensorSpec({tide.None}, "float32")}})
    for _, n in ipairs {2, 3, 5} do
      local data = {}
      for i = 1, n do data[i] = 0.1 * i end
      local x = f32(data)
      local tape = tide.GradientTape()
      local y = tape:run(function()
        tape:watch(x)
        return f(x)
      end)
      local want = {}
      for i = 1, n do want[i] = 2 * (1 - math.tanh(data[i]) ^ 2) end
      h.close(tape:gradient(y, x), want, 1e-6)
    end
    local taped = f:concrete_functions()[1]._taped
    assert.is_truthy(taped.generic) -- one forward and backward pair for every shape
    assert.are.equal(1, taped.generic.backward:trace_count())
    assert.is_nil(next(taped.by_shape))
  end)

  it("gives nil for an unconnected source (zeros or an error when asked)", function()
    local f = tide.trace(function(x, y) return tide.reduce_sum(x * 3) end)
    local x, y = f32{1, 2}, f32{5, 6}
    local function run(opts)
      local tape = tide.GradientTape()
      local out = tape:run(function()
        tape:watch({x, y})
        return f(x, y)
      end)
      return tape:gradient(out, {x, y}, opts)
    end
    local g = run()
    h.close(g[1], {3, 3})
    assert.is_nil(g[2])
    h.close(run({unconnected_gradients = "zero"})[2], {0, 0})
    h.errors("not connected", run, {unconnected_gradients = "error"})
  end)

  it("records nothing when no tape tracks the call's tensors or variables", function()
    local f = tide.trace(function(x) return tide.reduce_sum(x * 3) end)
    local x = f32{1, 2}
    local tape = tide.GradientTape()
    local y = tape:run(function() return f(x) end)
    assert.are.equal(0, #tape._nodes)
    assert.is_nil(tape:gradient(y, x))
    tape = tide.GradientTape()
    y = tape:run(function()
      tape:watch(x)
      return tape:stop_recording(function() return f(x) end)
    end)
    assert.is_nil(tape:gradient(y, x))
  end)

  it("differentiates a call of a concrete function", function()
    local f = tide.trace(function(x) return tide.reduce_sum(x ^ 3) end)
    local x = f32{1, 2}
    local cf = f:get_concrete_function(x)
    h.close(grads(cf, {x}, {x}, x)[1], {3, 12}, 1e-6)
  end)

  it("gives second-order gradients (a tape around a tape around f)", function()
    local function body(x) return tide.reduce_sum(x ^ 3) end
    local f = tide.trace(body)
    local x = f32{1, 2}
    for _, fn in ipairs {body, f} do
      local outer = tide.GradientTape()
      local g = outer:run(function()
        outer:watch(x)
        local inner = tide.GradientTape()
        local y = inner:run(function()
          inner:watch(x)
          return fn(x)
        end)
        return inner:gradient(y, x) -- 3x^2
      end)
      h.close(g, {3, 12}, 1e-6)
      h.close(outer:gradient(g, x), {6, 12}, 1e-6) -- 6x
    end
    -- and with a persistent tape recording its own gradient
    local tape = tide.GradientTape{persistent = true}
    local g2 = tape:run(function()
      tape:watch(x)
      local y = f(x)
      return tape:gradient(y, x)
    end)
    h.close(tape:gradient(g2, x), {6, 12}, 1e-6)
  end)

  it("runs fn eagerly under run_functions_eagerly(true): the tape sees every op", function()
    tide.config.run_functions_eagerly(true)
    local ok, err = pcall(function()
      local w = tide.Variable({0.5, -0.2})
      local f = tide.trace(function(x) return tide.reduce_sum(tide.tanh(x * w)) end)
      local x = f32{1, 2}
      local tape = tide.GradientTape()
      local y = tape:run(function() return f(x) end)
      assert.is_true(#tape._nodes > 1)
      local t = {math.tanh(0.5), math.tanh(-0.4)}
      h.close(tape:gradient(y, w), {(1 - t[1] ^ 2) * 1, (1 - t[2] ^ 2) * 2}, 1e-6)
      assert.are.equal(0, f:trace_count())
    end)
    tide.config.run_functions_eagerly(false)
    if not ok then error(err, 0) end
  end)
end)

describe("a tape inside a traced function", function()
  it("computes in the graph the gradients the eager tape gives", function()
    local w = tide.Variable({0.5, -0.2, 0.1})
    local function body(x)
      local tape = tide.GradientTape()
      local y = tape:run(function()
        tape:watch(x)
        return tide.reduce_sum(tide.tanh(x * w))
      end)
      local g = tape:gradient(y, {x, w})
      return y, g[1], g[2]
    end
    local f = tide.trace(body)
    local x = f32{1, 2, 3}
    local y0, gx0, gw0 = body(x)
    local y, gx, gw = f(x)
    h.close(y, y0:totable(), 1e-6)
    h.close(gx, gx0:totable(), 1e-6)
    h.close(gw, gw0:totable(), 1e-6)
    -- a tape outside the call sees the call (it reads w), not the trace's own ops
    local outer = tide.GradientTape()
    outer:run(function() return f(f32{3, 2, 1}) end)
    assert.are.equal(1, #outer._nodes)
  end)
end)

describe("a tape outside a traced function with stateful ops", function()
  it("keeps the call traced: a random draw is the one the gradient uses, an assignment happens once", function()
    local count = tide.Variable(0.0, {trainable = false})
    local f = tide.trace(function(x)
      count:assign_add(1)
      local mask = tide.random.uniform({4}):gt(0.5)
      return tide.reduce_sum(tide.where(mask, x * 3, x * 0)), mask
    end)
    local x = f32{1, 2, 3, 4}
    f(x) -- traced, run once
    assert.are.equal(1, count:numpy())
    local tape = tide.GradientTape()
    local y, mask = tape:run(function()
      tape:watch(x)
      return f(x)
    end)
    assert.are.equal(2, count:numpy())
    assert.are.equal(1, #tape._nodes) -- one node: the call ran as a graph
    local want = {}
    for i, m in ipairs(mask:totable()) do want[i] = m and 3 or 0 end
    h.close(tape:gradient(y, x), want, 1e-6)
    assert.are.equal(2, count:numpy())
  end)
end)
