-- A tape outside a traced call keeps what the forward saved (TF's forward
-- and backward functions): the forward graph runs once per call and gives
-- the values the backward needs; the gradient runs the backward graph on
-- them. Side effects, variable reads and random draws happen once, at the
-- call; second and third orders, persistent tapes, unconnected and integer
-- sources, partial watching, the saved values' lifetime.
local tide = require "tide"
local h = require "helpers"
local program = require "tide_program"

local function f32(v) return tide.tensor(v, "float32") end
local function f64(v) return tide.tensor(v, "float64") end

-- The gradients of fn(...) w.r.t. sources under a fresh tape that watches
-- `watch`, and fn's first result.
local function grads(fn, sources, watch, ...)
  local tape = tide.GradientTape()
  local a = { n = select("#", ...), ... }
  local y = tape:run(function()
    tape:watch(watch)
    return fn(unpack(a, 1, a.n))
  end)
  return tape:gradient(y, sources), y
end

local warning
setup(function()
  warning = tide.config.get_retracing_warning()
  tide.config.set_retracing_warning { enabled = false }
end)
teardown(function() tide.config.set_retracing_warning(warning) end)

describe("a tape outside a traced call", function()
  it("runs the forward once per call; the gradient runs only the backward", function()
    local runs = tide.Variable(0, { dtype = "int32", name = "runs" })
    local lua_runs = 0
    local w = tide.Variable({ 0.5, -1, 2 }, { name = "w" })
    local f = tide.trace(function(x)
      lua_runs = lua_runs + 1 -- Lua: once per trace
      runs:assign_add(1)      -- a graph node: once per run of the forward
      return tide.reduce_sum(tide.tanh(x * w) ^ 2)
    end)
    local x = f32 { 1, 2, 3 }
    f(x)
    assert.are.equal(1, runs:numpy())
    assert.are.equal(1, lua_runs)
    local tape = tide.GradientTape { persistent = true }
    local y = tape:run(function()
      tape:watch(x)
      return f(x)
    end)
    assert.are.equal(2, runs:numpy())
    assert.are.equal(2, lua_runs) -- the first call under a tape traced fn with its gradient
    assert.are.equal(1, #tape._nodes)
    local g1 = tape:gradient(y, { x, w })
    local g2 = tape:gradient(y, { x, w }) -- a persistent tape: the backward runs again on the same saved values
    assert.are.equal(2, runs:numpy())
    assert.are.equal(2, lua_runs)
    local want = grads(function(x) return tide.reduce_sum(tide.tanh(x * w) ^ 2) end, { x, w }, { x }, x)
    for i = 1, 2 do
      h.close(g1[i], want[i]:totable(), 1e-5)
      h.close(g2[i], want[i]:totable(), 1e-5)
    end
    -- later calls under a tape: traced no more
    for _ = 1, 3 do grads(f, { x }, { x }, x) end
    assert.are.equal(5, runs:numpy())
    assert.are.equal(2, lua_runs)
    assert.are.equal(1, f:trace_count())
  end)

  it("uses the variables' values at the call: an assignment before tape:gradient changes nothing", function()
    local w = tide.Variable({ 0.5, -1, 2 }, { name = "w" })
    local function body(x) return tide.reduce_sum(tide.sin(x * w)) end
    local f = tide.trace(body)
    local x = f32 { 1, 2, 3 }
    local want = grads(body, { x, w }, { x }, x)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return f(x)
    end)
    w:assign { 7, 7, 7 }
    local g = tape:gradient(y, { x, w })
    h.close(g[1], want[1]:totable(), 1e-5)
    h.close(g[2], want[2]:totable(), 1e-5)
  end)

  it("uses the variables' values at the call inside while_loop bodies and cond branches too", function()
    local w = tide.Variable(f64 { 0.5, -0.25 }, { name = "w" })
    local function body(x, p)
      local _, y = tide.while_loop(function(i) return i:lt(3) end,
        function(i, y) return i + 1, tide.sin(y * w) + x end, { 0, x })
      return tide.reduce_sum(tide.cond(p, function() return y * w end, function() return y / w end))
    end
    local f = tide.trace(body)
    local x = f64 { 0.3, -0.7 }
    for _, p in ipairs { true, false } do
      local pt = tide.tensor(p)
      local want = grads(body, { x, w }, { x }, x, pt)
      local tape = tide.GradientTape()
      local y = tape:run(function()
        tape:watch(x)
        return f(x, pt)
      end)
      local before = w:read_value()
      w:assign(f64 { 3, 3 })
      local g = tape:gradient(y, { x, w })
      w:assign(before)
      h.close(g[1], want[1]:totable(), 1e-10)
      h.close(g[2], want[2]:totable(), 1e-10)
    end
  end)

  it("draws random numbers once: the gradient uses the forward's draws (dropout)", function()
    local f = tide.trace(function(x)
      local keep = tide.random.uniform(x.shape:as_list()):gt(0.5)
      return tide.reduce_sum(tide.where(keep, x * 2, x * 0)), keep
    end)
    local x = f32 { 1, 2, 3, 4, 5, 6, 7, 8 }
    local masks = {}
    for call = 1, 4 do
      local tape = tide.GradientTape { persistent = true }
      local y, keep = tape:run(function()
        tape:watch(x)
        return f(x)
      end)
      local want = {}
      for i, k in ipairs(keep:totable()) do want[i] = k and 2 or 0 end
      h.close(tape:gradient(y, x), want)
      h.close(tape:gradient(y, x), want)
      masks[call] = table.concat(want, ",")
    end
    assert.is_true(masks[1] ~= masks[2] or masks[2] ~= masks[3] or masks[3] ~= masks[4]) -- new draws per call
  end)

  it("keeps assignments and tide.print traced: they run once per call, not at the gradient", function()
    local dir = program.make_tmpdir("gradient_saved_spec")
    local script = dir .. "/print.lua"
    program.write_file(script, [[
local tide = require "tide"
local calls = tide.Variable(0, {dtype = "int32"})
local f = tide.trace(function(x)
  calls:assign_add(1)
  tide.print("forward", calls)
  return tide.reduce_sum(x * x)
end)
local x = tide.tensor({1, 2}, "float32")
for _ = 1, 2 do
  local tape = tide.GradientTape()
  local y = tape:run(function() tape:watch(x); return f(x) end)
  io.stdout:flush()
  print("gradient", tape:gradient(y, x))
end
]])
    local rc, out, err = program.sh(dir, program.quote(program.path) .. " " .. program.quote(script))
    program.remove_tmpdir(dir)
    assert.are.equal(0, rc, err)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal("forward 1", lines[1])
    assert.truthy(lines[2]:find("^gradient"))
    assert.truthy(lines[2]:find("2%.%s+4%."))
    assert.are.equal("forward 2", lines[3])
    assert.truthy(lines[4]:find("^gradient"))
    assert.are.equal(4, #lines)
  end)

  it("keeps the saved values as long as the tape node: a non-persistent tape lets go at gradient", function()
    local f = tide.trace(function(x) return tide.reduce_sum(tide.tanh(x) * tide.exp(x)) end)
    local x = f32 { 0.1, 0.2, 0.3 }
    local function saved_of(tape)
      local node = tape._nodes[1]
      local weak = setmetatable({}, { __mode = "k" })
      local n = 0
      for k = 2, #node.outputs do -- after fn's one result: the saved values
        weak[node.outputs[k]] = true
        n = n + 1
      end
      return weak, n
    end
    local function count(weak)
      collectgarbage()
      collectgarbage()
      local n = 0
      for _ in pairs(weak) do n = n + 1 end
      return n
    end
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return f(x)
    end)
    local weak, n = saved_of(tape)
    assert.is_true(n > 0)
    assert.are.equal(n, count(weak))
    tape:gradient(y, x)
    assert.are.equal(0, count(weak))
    local kept = tide.GradientTape { persistent = true }
    y = kept:run(function()
      kept:watch(x)
      return f(x)
    end)
    weak, n = saved_of(kept)
    kept:gradient(y, x)
    kept:gradient(y, x)
    assert.are.equal(n, count(weak))
    kept, y = nil, nil
    assert.are.equal(0, count(weak))
  end)

  it("gives second and third order gradients through the saved values", function()
    local w = tide.Variable(f64 { { 0.5, -0.3 }, { 0.2, 0.4 } }, { name = "w" })
    local function body(x) return tide.reduce_sum(tide.tanh(tide.matmul(x, w)) ^ 2) end
    local f = tide.trace(body)
    local x = f64 { { 0.3, -0.8 } }
    local function second(fn)
      local outer = tide.GradientTape()
      local gw = outer:run(function()
        outer:watch(x)
        local inner = tide.GradientTape()
        local y = inner:run(function() return fn(x) end)
        return tide.reduce_sum(inner:gradient(y, w) * f64 { { 1, 2 }, { -1, 0.5 } })
      end)
      return outer:gradient(gw, { x, w })
    end
    local want, got = second(body), second(f)
    h.close(got[1], want[1]:totable(), 1e-10)
    h.close(got[2], want[2]:totable(), 1e-10)

    -- d^3/dx^3 of x^4 = 24x, each order through the traced call
    local quartic = tide.trace(function(v) return tide.reduce_sum(v ^ 4) end)
    local v = f64 { 0.5, -2 }
    local t1, t2, t3 = tide.GradientTape(), tide.GradientTape(), tide.GradientTape()
    local d3
    t3:run(function()
      t3:watch(v)
      local d2 = t2:run(function()
        t2:watch(v)
        local d1 = t1:run(function()
          t1:watch(v)
          return t1:gradient(quartic(v), v) -- 4v^3, recorded by t2 and t3
        end)
        return t2:gradient(tide.reduce_sum(d1), v) -- 12v^2
      end)
      d3 = t3:gradient(tide.reduce_sum(d2), v) -- 24v
    end)
    h.close(d3, { 12, -48 }, 1e-10)
  end)

  it("gives a second order through a traced while_loop, with the variables' values at the call", function()
    local w = tide.Variable(f64(1.3), { name = "w" })
    local f = tide.trace(function(x)
      local _, y = tide.while_loop(function(i) return i:lt(5) end, function(i, y) return i + 1, y * x * w end,
        { 0, tide.ones_like(x) })
      return tide.reduce_sum(y)
    end)
    local x = f64 { 0.5, -1.5 }
    local outer = tide.GradientTape()
    outer:watch(x)
    local g = outer:run(function()
      local inner = tide.GradientTape()
      inner:watch(x)
      local y = inner:run(function() return f(x) end)
      return inner:gradient(y, x)
    end)
    w:assign(f64(7))
    local gg = outer:gradient(g, { x, w })
    -- y = w^5 x^5: dy/dx = 5 w^5 x^4, d2y/dx2 = 20 w^5 x^3, d(dy/dx)/dw = 25 w^4 x^4
    local W = 1.3
    h.close(g, { 5 * W ^ 5 * 0.5 ^ 4, 5 * W ^ 5 * 1.5 ^ 4 }, 1e-10)
    h.close(gg[1], { 20 * W ^ 5 * 0.5 ^ 3, -20 * W ^ 5 * 1.5 ^ 3 }, 1e-10)
    h.close(gg[2], { 25 * W ^ 4 * (0.5 ^ 4 + 1.5 ^ 4) }, 1e-10)
  end)

  it("gives nil for unconnected and integer sources, and what a partial watch asks", function()
    local w = tide.Variable({ 1, 2, 3, 4 }, { name = "w" })
    local f = tide.trace(function(idx, x, y)
      return tide.reduce_sum(tide.gather(w, idx) * x), x * 3 -- y is not used
    end)
    local idx, x, y = tide.tensor { 3, 0 }, f32 { 0.5, -1 }, f32 { 1, 1 }
    local tape = tide.GradientTape { persistent = true }
    local s = tape:run(function()
      tape:watch { idx, x, y }
      return f(idx, x, y)
    end)
    local g = tape:gradient(s, { idx, x, y, w })
    assert.is_nil(g[1])
    h.close(g[2], { 4, 1 })
    assert.is_nil(g[3])
    h.close(g[4], { -1, 0, 0, 0.5 })
    h.close(tape:gradient(s, y, { unconnected_gradients = "zero" }), { 0, 0 })
    -- a tape that watches only x: w is not its source
    local only = tide.GradientTape { watch_accessed_variables = false }
    s = only:run(function()
      only:watch(x)
      return f(idx, x, y)
    end)
    g = only:gradient(s, { x, w })
    h.close(g[1], { 4, 1 })
    assert.is_nil(g[2])
  end)

  it("computes only the gradients the tape needs (the data's is skipped when only variables are watched)", function()
    local w = tide.Variable({ { 0.5, -1 }, { 2, 0.25 } }, { name = "w" })
    local function body(x) return tide.reduce_sum(tide.tanh(tide.matmul(x, w))) end
    local f = tide.trace(body)
    local x = f32 { { 1, 2 } }
    local want = grads(body, { w }, {}, x)
    local got = grads(f, { w }, {}, x) -- x is not watched
    h.close(got[1], want[1]:totable(), 1e-6)
    local pair = f:concrete_functions()[1]._taped.generic
    local count, text = 0, nil
    for key, bwd in pairs(pair.by_need) do
      count = count + 1
      assert.are.equal("01", key)
      text = bwd:concrete_functions()[1].graph:text()
    end
    assert.are.equal(1, count)
    local matmuls = 0
    for _ in text:gmatch("= matmul%(") do matmuls = matmuls + 1 end
    assert.are.equal(1, matmuls) -- dW = x^T dz; no dx = dz W^T
    -- watching both: the backward made with the forward (both gradients)
    local both = grads(f, { x, w }, { x }, x)
    h.close(both[2], want[1]:totable(), 1e-6)
    assert.are.equal(2, #both[1].shape:as_list())
  end)

  it("raises at the gradient, not at the call, when the gradient cannot be traced", function()
    local broken = tide.custom_gradient(function(x)
      return x * 2, function() error("this gradient is broken") end
    end)
    local f = tide.trace(function(x) return tide.reduce_sum(broken(x)) end)
    local x = f32 { 1, 2 }
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return f(x)
    end)
    h.close(y, { 6 })
    h.errors("this gradient is broken", tape.gradient, tape, y, x)
  end)

  it("differentiates a traced while_loop and cond, running the loop once", function()
    local w = tide.Variable(f64(0.9), { name = "w" })
    local function body(x)
      local _, y = tide.while_loop(function(i) return i:lt(5) end,
        function(i, y) return i + 1, tide.tanh(y * w) + x end, { 0, x })
      return tide.reduce_sum(y)
    end
    local f = tide.trace(body)
    local x = f64 { 0.2, -0.4, 1.5 }
    local want = grads(body, { x, w }, { x }, x)
    local got = grads(f, { x, w }, { x }, x)
    h.close(got[1], want[1]:totable(), 1e-10)
    h.close(got[2], want[2]:totable(), 1e-10)
    local pair = f:concrete_functions()[1]._taped.generic
    -- the loop keeps its iterations in the forward: the backward graph has no loop that runs the body forward
    local text = pair.backward_cf.graph:text()
    assert.is_nil(text:find("keeps: the iteration count"))
    assert.truthy(require("tide.binding").ffi.string(require("tide.binding").C.tide_graph_text(pair.forward))
      :find("keeps: the iteration count and each iteration's loop variables\n"))
  end)
end)
