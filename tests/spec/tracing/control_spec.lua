-- tests/spec/tracing/control_spec.lua — control flow (TF 2's tf.cond, tf.while_loop,
-- tf.TensorArray, AutoGraph's `for i in tf.range`): eager and traced give the
-- same results; examples translated from TF's guides (dynamic RNN, fizzbuzz,
-- collatz); traced structure, shapes, side effects and errors.
local tide = require "tide"
local h = require "helpers"

local cond, while_loop, for_range, TensorArray = tide.cond, tide.while_loop, tide.for_range, tide.TensorArray

local function f32(v) return tide.tensor(v, "float32") end
local function i32(v) return tide.tensor(v, "int32") end

-- Results of fn(...) eagerly and through tide.trace, compared value by value.
local function same_eager_and_traced(fn, ...)
  local e = { fn(...) }
  local t = { tide.trace(fn)(...) }
  assert.are.equal(#e, #t)
  for i = 1, #e do
    assert.are.equal(e[i].dtype, t[i].dtype)
    assert.are.same(e[i].shape:as_list(), t[i].shape:as_list())
    h.close(t[i], e[i])
  end
  return unpack(t)
end

describe("tide.cond", function()
  it("eagerly runs only the branch pred chooses", function()
    local ran = {}
    local function yes() ran[#ran + 1] = "true" return f32(1) end
    local function no() ran[#ran + 1] = "false" return f32(2) end
    assert.are.equal(1, cond(tide.tensor(true), yes, no):item())
    assert.are.equal(2, cond(tide.tensor({ false }), yes, no):item())
    assert.are.equal(2, cond(false, yes, no):item())
    assert.are.equal(1, cond(f32(3):gt(0), yes, no):item())
    assert.are.same({ "true", "false", "false", "true" }, ran)
    -- several results and nested tables come back as the branch returned them
    local a, b = cond(true, function() return 1, { x = 2 } end, function() return 3, { x = 4 } end)
    assert.are.equal(1, a)
    assert.are.same({ x = 2 }, b)
  end)

  it("traces both branches once and runs the chosen one at each call", function()
    local traced = { t = 0, f = 0 }
    local f = tide.trace(function(x)
      return cond(tide.reduce_sum(x):gt(0),
        function() traced.t = traced.t + 1 return x * 2 end,
        function() traced.f = traced.f + 1 return x - 1 end)
    end)
    h.close(f(f32 { 1, 2 }), { 2, 4 })
    h.close(f(f32 { -1, -2 }), { -2, -3 })
    h.close(f(f32 { 3, -1 }), { 6, -2 })
    assert.are.same({ t = 1, f = 1 }, traced) -- Lua code in each branch ran once, at trace time
    assert.are.equal(1, f:trace_count())
    local text = f:get_concrete_function(f32 { 1, 2 }):graph_text()
    assert.truthy(text:find("cond(", 1, true))
    assert.truthy(text:find("true: graph cond_true", 1, true))
    assert.truthy(text:find("false: graph cond_false", 1, true))
  end)

  it("gives the same results eagerly and traced, with structures of results", function()
    local function f(p, x, y)
      return cond(p, function() return { sum = x + y, n = 1 }, x end,
        function() return { sum = x - y, n = 2 }, y end)
    end
    for _, p in ipairs { true, false } do
      local e1, e2 = f(tide.tensor(p), f32 { 1, 2 }, f32 { 10, 20 })
      local t1, t2 = tide.trace(f)(tide.tensor(p), f32 { 1, 2 }, f32 { 10, 20 })
      h.close(t1.sum, e1.sum:totable())
      assert.are.equal(p and 1 or 2, t1.n:item())       -- a Lua number became an int32 tensor
      assert.are.equal("int32", t1.n.dtype)
      h.close(t2, e2:totable())
    end
  end)

  it("lets a Lua number in one branch take the dtype of the other's tensor", function()
    local f = tide.trace(function(p, x)
      return cond(p, function() return x end, function() return 0 end)
    end)
    local y = f(tide.tensor(false), f32(1.5))
    assert.are.equal("float32", y.dtype)
    h.close(y, { 0 })
  end)

  it("makes a dim the branches disagree on unknown, and ops after it still run", function()
    local f = tide.trace(function(p, x)
      local y = cond(p, function() return tide.concat({ x, x }, 0) end, function() return x end)
      return y * 2, tide.reduce_sum(y)
    end)
    local a, s = f(tide.tensor(true), i32 { 1, 2 })
    assert.are.same({ 2, 4, 2, 4 }, a:totable())
    assert.are.equal(6, s:item())
    a, s = f(tide.tensor(false), i32 { 1, 2 })
    assert.are.same({ 2, 4 }, a:totable())
    assert.are.equal(3, s:item())
    local text = f:get_concrete_function(tide.tensor(true), i32 { 1, 2 }):graph_text()
    assert.truthy(text:find("cond(%0, %1, %1) : int32[None]", 1, true))
  end)

  it("captures outer values, strided views included", function()
    local m = f32 { { 1, 2, 3 }, { 4, 5, 6 } }
    local f = tide.trace(function(p, x)
      local xt = tide.transpose(x) -- a strided view inside the graph
      return cond(p, function() return xt[0] + 1 end, function() return xt[2] * 10 end)
    end)
    h.close(f(tide.tensor(true), m), { 2, 5 })
    h.close(f(tide.tensor(false), m), { 30, 60 })
    -- an eager strided view passed in
    local g = tide.trace(function(p, x) return cond(p, function() return x + 0 end, function() return -x end) end)
    h.close(g(tide.tensor(false), tide.transpose(m)), { { -1, -4 }, { -2, -5 }, { -3, -6 } })
  end)

  it("runs a branch's side effects only when it is taken, at every call", function()
    local v = tide.Variable(0, { dtype = "int32" })
    local f = tide.trace(function(p)
      local before = v + 0 -- a read before the cond: the read after it must see the update
      cond(p, function() v:assign_add(1) end, function() v:assign_sub(10) end)
      return v + 0, before
    end)
    local after, before = f(tide.tensor(true))
    assert.are.equal(1, after:item())
    assert.are.equal(0, before:item())
    assert.are.equal(2, f(tide.tensor(true)):item())
    assert.are.equal(-8, f(tide.tensor(false)):item())
    assert.are.equal(-8, v:read_value():item())
  end)

  it("works with unknown dims from an input_signature", function()
    local f = tide.trace(function(x)
      return cond(tide.reduce_sum(x):gt(0), function() return x end, function() return -x end)
    end, { input_signature = { tide.TensorSpec({ tide.None }, "float32") } })
    h.close(f(f32 { 1, -3 }), { -1, 3 })
    h.close(f(f32 { 1, 2, 3 }), { 1, 2, 3 })
    assert.are.equal(1, f:trace_count())
  end)

  it("nests inside a loop and a loop nests inside it", function()
    local function f(n)
      local _, evens, odds = while_loop(function(i) return i:lt(n) end, function(i, e, o)
        return i + 1, cond(tide.equal(i % 2, 0), function() return e + i, o end, function() return e, o + i end)
      end, { 0, 0, 0 })
      return evens, odds
    end
    local e, o = same_eager_and_traced(f, i32(7))
    assert.are.equal(0 + 2 + 4 + 6, e:item())
    assert.are.equal(1 + 3 + 5, o:item())
    local g = function(p, n)
      return cond(p, function() return while_loop(function(i) return i:lt(n) end, function(i) return i * 2 end, { 1 }) end,
        function() return i32(-1) end)
    end
    assert.are.equal(16, tide.trace(g)(tide.tensor(true), i32(10)):item())
    assert.are.equal(-1, tide.trace(g)(tide.tensor(false), i32(10)):item())
  end)

  it("rejects branches whose results differ in structure or dtype, naming both", function()
    local function traced(t, f) return tide.trace(function(p) return cond(p, t, f) end) end
    local p = tide.tensor(true)
    local err = h.errors("true_fn and false_fn must return the same structure", traced(
      function() return f32(1), f32(2) end, function() return f32(1) end), p)
    assert.truthy(err:find("true_fn returned (tensor float32[], tensor float32[])", 1, true))
    assert.truthy(err:find("false_fn returned (tensor float32[])", 1, true))
    h.errors("result 1: the dtypes differ (int32 and float32)", traced(
      function() return i32(1) end, function() return f32(1) end), p)
    -- ranks that differ give a result of unknown rank, as TF's cond
    local ranks = traced(function() return f32 { 1, 2 } end, function() return f32(1) end)
    h.close(ranks(p), { 1, 2 })
    h.close(ranks(tide.tensor(false)), 1)
    assert.are.equal("<unknown>", tostring(ranks:get_concrete_function(p).structured_outputs[1].shape))
    h.errors("result 1: the keys differ (a, b and a, c)", traced(
      function() return { a = f32(1), b = f32(2) } end, function() return { a = f32(1), c = f32(2) } end), p)
    h.errors("result 1: the structure differs", traced(
      function() return { f32(1) } end, function() return f32(1) end), p)
  end)

  it("checks its arguments", function()
    local yes, no = function() return 1 end, function() return 2 end
    h.errors("cond: pred is nil", cond, nil, yes, no)
    h.errors("cond: true_fn must be a function, got nil", cond, true, nil, no)
    h.errors("cond: false_fn must be a function, got number", cond, true, yes, 3)
    h.errors("cond: pred must be a bool tensor, got int32[]", cond, i32(1), yes, no)
    h.errors("cond: pred must have one element, got shape [2]", cond, tide.tensor { true, false }, yes, no)
    h.errors("cond: pred must be a bool tensor or a Lua boolean, got number", cond, 1, yes, no)
    h.errors("cond: pred must be a one-element bool tensor", tide.trace(function(p) return cond(p, yes, no) end),
      tide.tensor { true, true })
    h.errors("cond: pred must be a bool tensor", tide.trace(function(x) return cond(x, yes, no) end), f32(1))
  end)

  it("differentiates through cond eagerly and traced alike (more in control_grad_spec)", function()
    local x = tide.Variable(3.0)
    local function f()
      local tape = tide.GradientTape()
      local y = tape:run(function() return cond(tide.tensor(true), function() return x * x end, function() return x end) end)
      return y, tape:gradient(y, x)
    end
    local y, g = f()
    h.close(y, { 9 })
    h.close(g, { 6 })
    local ty, tg = tide.trace(f)()
    h.close(ty, { 9 })
    h.close(tg, { 6 })
  end)
end)

describe("tide.while_loop", function()
  local function sum_below(n)
    return while_loop(function(i, s) return i:lt(n) end, function(i, s) return i + 1, s + i end, { 0, 0 })
  end

  it("sums eagerly and traced, the loop running in the graph", function()
    local i, s = sum_below(i32(10))
    assert.are.equal(10, i:item())
    assert.are.equal(45, s:item())
    local f = tide.trace(sum_below)
    i, s = f(i32(10))
    assert.are.equal(45, s:item())
    assert.are.equal(4950, select(2, f(i32(100))):item())
    assert.are.equal(0, select(2, f(i32(-3))):item()) -- no iteration
    assert.are.equal(1, f:trace_count())
    local text = f:get_concrete_function(i32(1)):graph_text()
    assert.truthy(text:find("while_loop(", 1, true))
    assert.truthy(text:find("body: graph while_body", 1, true))
  end)

  it("takes one loop variable as itself, and a body that returns a list", function()
    local function f(x)
      return while_loop(function(x) return tide.reduce_sum(x):lt(100) end, function(x) return x * 2 end, x)
    end
    local y = same_eager_and_traced(f, f32 { 1, 2 })
    h.close(y, { 64, 128 })
    local function g(n)
      local a, b = while_loop(function(a, b) return a:lt(n) end, function(a, b) return { a + 1, b * 2 } end, { 0, 1 })
      return a, b
    end
    local _, b = same_eager_and_traced(g, i32(5))
    assert.are.equal(32, b:item())
  end)

  it("carries nested tables of loop variables", function()
    local function f(n)
      local _, st = while_loop(function(i, st) return i:lt(n) end,
        function(i, st) return i + 1, { h = st.h + 1, c = { st.c[1] * 2 } } end, { 0, { h = f32(0), c = { f32(1) } } })
      return st.h, st.c[1]
    end
    local hh, c = same_eager_and_traced(f, i32(4))
    h.close(hh, { 4 })
    h.close(c, { 16 })
  end)

  it("stops at maximum_iterations, a number or a tensor", function()
    local function f(m)
      return while_loop(function(i) return i:lt(100) end, function(i) return i + 1 end, { 0 }, { maximum_iterations = m })
    end
    assert.are.equal(7, f(7):item())
    assert.are.equal(7, f(i32(7)):item())
    assert.are.equal(0, f(0):item())
    assert.are.equal(7, tide.trace(f)(i32(7)):item())  -- a symbolic bound
    assert.are.equal(100, tide.trace(f)(i32(500)):item())
    assert.are.equal(7, tide.trace(function() return f(7) end)():item())
    -- the bound reaches a loop whose condition never ends
    local forever = tide.trace(function(m)
      return while_loop(function() return true end, function(i) return i + 2 end, { 0 }, { maximum_iterations = m })
    end)
    assert.are.equal(10, forever(i32(5)):item())
    h.errors("maximum_iterations must be at least 0", f, -1)
  end)

  it("nests loops", function()
    local function f(n)
      local _, total = while_loop(function(i) return i:lt(n) end, function(i, t)
        local _, t2 = while_loop(function(j) return j:lt(i) end, function(j, t) return j + 1, t + j end, { 0, t })
        return i + 1, t2
      end, { 0, 0 })
      return total
    end
    -- sum over i < 6 of sum over j < i of j = 0 + 0 + 1 + 3 + 6 + 10
    assert.are.equal(20, same_eager_and_traced(f, i32(6)):item())
  end)

  it("lets a tensor grow along a dim, which becomes unknown (None)", function()
    local traces = 0
    local function f(n)
      local _, v = while_loop(function(i) return i:lt(n) end, function(i, v)
        traces = traces + 1
        return i + 1, tide.concat({ v, tide.reshape(i:cast("float32"), { 1 }) }, 0)
      end, { 0, tide.zeros({ 0 }) })
      return v, tide.reduce_sum(v)
    end
    local e = { f(i32(5)) }
    assert.are.same({ 0, 1, 2, 3, 4 }, e[1]:totable())
    local g = tide.trace(f)
    traces = 0
    local v, s = g(i32(5))
    assert.are.same({ 0, 1, 2, 3, 4 }, v:totable())
    assert.are.equal(10, s:item())
    assert.are.equal(2, traces) -- traced again once the dim was relaxed
    v = g(i32(3))
    assert.are.same({ 0, 1, 2 }, v:totable())
    assert.truthy(g:get_concrete_function(i32(1)):graph_text():find("float32[None]", 1, true))
  end)

  it("takes shape_invariants up front and rejects a body that breaks one", function()
    local traces = 0
    local f = tide.trace(function(n)
      local _, v = while_loop(function(i) return i:lt(n) end, function(i, v)
        traces = traces + 1
        return i + 1, tide.concat({ v, v }, 0)
      end, { 0, f32 { 1 } }, { shape_invariants = { nil, { tide.None } } })
      return v
    end)
    assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1 }, f(i32(3)):totable())
    assert.are.equal(1, traces)
    local g = tide.trace(function(n)
      return while_loop(function(v) return tide.reduce_sum(v):lt(n) end, function(v) return tide.concat({ v, v }, 0) end,
        { f32 { 1 } }, { shape_invariants = { { 1 } } })
    end)
    h.errors("loop variable 1 has shape [2] after an iteration, which does not fit its shape invariant [1]", g, f32(4))
    h.errors("loop variable 1 enters the loop with shape [1], which does not fit its shape invariant [2]",
      tide.trace(function() return while_loop(function() return false end, function(v) return v end, { f32 { 1 } },
        { shape_invariants = { { 2 } } }) end))
  end)

  it("runs side effects in the body at every iteration", function()
    local counter = tide.Variable(0, { dtype = "int32" })
    local f = tide.trace(function(n)
      while_loop(function(i) return i:lt(n) end, function(i)
        counter:assign_add(1)
        return i + 1
      end, { 0 })
      return counter:read_value()
    end)
    assert.are.equal(5, f(i32(5)):item())
    assert.are.equal(8, f(i32(3)):item())
    -- random ops draw new numbers in each iteration
    local g = tide.trace(function(n)
      local _, ta = while_loop(function(i) return i:lt(n) end, function(i, ta)
        return i + 1, ta:write(i, tide.random.uniform({}))
      end, { 0, TensorArray("float32", { size = 4 }) })
      return ta:stack()
    end)
    local r = g(i32(4)):totable()
    assert.are_not.equal(r[1], r[2])
    assert.are_not.equal(r[2], r[3])
  end)

  it("takes strided loop variables", function()
    local m = tide.transpose(f32 { { 1, 2 }, { 3, 4 }, { 5, 6 } }) -- [[1, 3, 5], [2, 4, 6]], a strided view
    local function f(x, n)
      local _, y = while_loop(function(i) return i:lt(n) end, function(i, y) return i + 1, y + x end, { 0, x })
      return y
    end
    h.close(same_eager_and_traced(f, m, i32(2)), { { 3, 9, 15 }, { 6, 12, 18 } })
  end)

  it("counts collatz steps with tide.where (AutoGraph's guide)", function()
    local function collatz(x)
      local _, steps = while_loop(function(x) return tide.reduce_any(x:gt(1)) end, function(x, steps)
        local active = x:gt(1)
        local nxt = tide.where(tide.equal(x % 2, 0), tide.floordiv(x, 2), x * 3 + 1)
        return tide.where(active, nxt, x), steps + tide.cast(active, "int32")
      end, { x, tide.zeros_like(x) })
      return steps
    end
    local steps = same_eager_and_traced(collatz, tide.range(1, 11))
    assert.are.same({ 0, 1, 7, 2, 5, 8, 16, 3, 19, 6 }, steps:totable())
  end)

  it("rejects loops whose variables change dtype, rank or structure", function()
    local function traced(body, vars)
      return tide.trace(function() return while_loop(function() return false end, body, vars) end)
    end
    h.errors("loop variable 1 enters the loop as int32 but the body returns float32",
      traced(function(i) return i:cast("float32") end, { 0 }))
    h.errors("loop variable 2 enters the loop with shape [2] but the body returns shape [1, 2] (its rank must not change: give it the shape invariant tide.Shape.unknown() to let it)",
      traced(function(i, v) return i, tide.expand_dims(v, 0) end, { 0, f32 { 1, 2 } }))
    h.errors("body returned 1 value(s) but there are 2 loop variables",
      traced(function(i, v) return i end, { 0, f32 { 1, 2 } }))
    h.errors("loop variable 1: the keys differ (a, b and a, c)",
      traced(function(t) return { a = t.a, c = t.b } end, { { a = f32(1), b = f32(2) } }))
    h.errors("while_loop: cond must give a bool tensor or a Lua boolean, got int32[]",
      tide.trace(function() return while_loop(function(i) return i end, function(i) return i end, { 0 }) end))
    -- eagerly too
    h.errors("body returned 1 value(s) but there are 2 loop variables",
      while_loop, function(i) return i:lt(1) end, function(i, v) return i + 1 end, { 0, 1 })
    h.errors("while_loop: cond must be a bool tensor, got int32[]",
      while_loop, function(i) return i end, function(i) return i end, { 1 })
  end)

  it("checks its arguments", function()
    local c, b = function() return false end, function(i) return i end
    h.errors("while_loop: cond must be a function, got nil", while_loop, nil, b, { 0 })
    h.errors("while_loop: body must be a function, got string", while_loop, c, "x", { 0 })
    h.errors("while_loop: loop_vars is nil", while_loop, c, b, nil)
    h.errors("while_loop: loop_vars is empty", while_loop, c, b, {})
    h.errors("while_loop: unknown option 'max_iterations'", while_loop, c, b, { 0 }, { max_iterations = 3 })
  end)

  it("differentiates through while_loop eagerly and traced alike (more in control_grad_spec)", function()
    local x = tide.Variable(2.0)
    local function f()
      local tape = tide.GradientTape()
      local y = tape:run(function()
        local _, y = while_loop(function(i) return i:lt(3) end, function(i, y) return i + 1, y * x end, { 0, f32(1) })
        return y
      end)
      return y, tape:gradient(y, x)
    end
    local y, g = f()
    h.close(y, { 8 })
    h.close(g, { 12 })
    local ty, tg = tide.trace(f)()
    h.close(ty, { 8 })
    h.close(tg, { 12 })
  end)
end)

describe("tide.for_range", function()
  it("loops over a range eagerly and traced, with 1 to 3 bounds", function()
    local function total(...)
      local a = { ... }
      a[#a + 1] = function(i, s) return s + i end
      a[#a + 1] = { 0 }
      return for_range(unpack(a))
    end
    assert.are.equal(10, same_eager_and_traced(function(n) return total(n) end, i32(5)):item())
    assert.are.equal(3 + 4 + 5 + 6, same_eager_and_traced(function(a, b) return total(a, b) end, i32(3), i32(7)):item())
    -- negative steps
    assert.are.equal(10 + 7 + 4 + 1, same_eager_and_traced(function(d) return total(10, 0, d) end, i32(-3)):item())
    -- Lua bounds inside a trace still make one loop, not an unrolled one
    local f = tide.trace(function() return total(1, 1001) end)
    assert.are.equal(500500, f():item())
    assert.is_nil(f:get_concrete_function():graph_text():find("add.*\n.*add.*\n.*add.*\n.*add"))
    -- float ranges, as tf.range(0, 1, 0.25)
    h.close(same_eager_and_traced(function(x)
      return for_range(0, 1, 0.25, function(i, s) return s + i end, { x })
    end, f32(0)), { 1.5 })
    -- a delta known only at run time, either sign
    local g = tide.trace(function(a, b, d) return total(a, b, d) end)
    assert.are.equal(0 + 2 + 4, g(i32(0), i32(5), i32(2)):item())
    assert.are.equal(5 + 3 + 1, g(i32(5), i32(0), i32(-2)):item())
    assert.are.equal(0, g(i32(5), i32(0), i32(2)):item())
  end)

  it("runs a body without loop variables for its side effects", function()
    local v = tide.Variable(0, { dtype = "int32" })
    local f = tide.trace(function(n) for_range(n, function(i) v:assign_add(i) end) return v:read_value() end)
    assert.are.equal(0 + 1 + 2 + 3, f(i32(4)):item())
    assert.are.equal(12, f(i32(4)):item())
    for_range(3, function(i) v:assign_add(i) end)
    assert.are.equal(15, v:read_value():item())
  end)

  it("plays fizzbuzz with tide.cond (AutoGraph's guide), counted through a TensorArray and a Variable", function()
    -- -1 fizzbuzz, -2 fizz, -3 buzz, else the number
    local fizzes = tide.Variable(0, { dtype = "int32" })
    local function fizzbuzz(n)
      local out = TensorArray("int32", { size = 0, dynamic_size = true })
      out = for_range(1, n + 1, function(i, out)
        local code = cond(tide.equal(i % 15, 0), function() return -1 end, function()
          return cond(tide.equal(i % 3, 0), function()
            fizzes:assign_add(1)
            return -2
          end, function()
            return cond(tide.equal(i % 5, 0), function() return -3 end, function() return i end)
          end)
        end)
        return out:write(i - 1, code)
      end, { out })
      return out:stack()
    end
    local want = { 1, 2, -2, 4, -3, -2, 7, 8, -2, -3, 11, -2, 13, 14, -1, 16 }
    assert.are.same(want, fizzbuzz(i32(16)):totable())
    assert.are.equal(4, fizzes:read_value():item())
    local f = tide.trace(fizzbuzz)
    assert.are.same(want, f(i32(16)):totable())
    assert.are.equal(8, fizzes:read_value():item())
    assert.are.same({ 1, 2, -2, 4, -3 }, f(i32(5)):totable())
    assert.are.equal(9, fizzes:read_value():item())
    assert.are.equal(1, f:trace_count())
  end)

  it("checks its arguments", function()
    local b = function(i) end
    h.errors("for_range: expected a body function after the range bounds", for_range, 3)
    h.errors("for_range: expected 1 to 3 range bounds before the body function", for_range, b)
    h.errors("for_range: expected 1 to 3 range bounds before the body function", for_range, 1, 2, 3, 4, b)
    h.errors("for_range: delta must not be 0", for_range, 0, 3, 0, b)
    h.errors("for_range: start must be a number or a scalar tensor, got string", for_range, "a", 3, b)
    h.errors("for_range: limit must be a scalar, got shape [2]", for_range, i32 { 1, 2 }, b)
    h.errors("for_range: limit is float32 but the range is int32", for_range, i32(0), f32(3), b)
    h.errors("for_range: loop_vars must be a Lua list", for_range, 3, b, f32(1))
    h.errors("for_range: body returned 0 value(s) but there are 1 loop variables", for_range, 3, b, { 0 })
  end)
end)

describe("tide.TensorArray", function()
  it("writes, reads, stacks and sizes eagerly, functionally as TF 2", function()
    local ta = TensorArray("float32", { size = 3 })
    assert.are.equal(3, ta:size():item())
    local ta2 = ta:write(0, f32 { 1, 2 }):write(2, { 5, 6 })
    h.close(ta2:read(0), { 1, 2 })
    h.close(ta2:read(1), { 0, 0 }) -- unwritten elements are zeros
    h.close(ta2:read(i32(2)), { 5, 6 })
    assert.are.same({ { 1, 2 }, { 0, 0 }, { 5, 6 } }, ta2:stack():totable())
    assert.are.same({ 2 }, ta2.element_shape:as_list())
    assert.is_nil(ta.element_shape)                                   -- the first array is unchanged
    h.errors("nothing was written", function() return ta:stack() end)
    assert.are.same({ { 5, 6 }, { 1, 2 } }, ta2:gather({ 2, 0 }):totable())
    assert.are.same({ 1, 2, 0, 0, 5, 6 }, ta2:concat():totable())
    assert.truthy(tostring(ta2):find("TensorArray float32 size=3", 1, true))
  end)

  it("knows its elements from element_shape before any write", function()
    local ta = TensorArray("int32", { size = 2, element_shape = { 3 } })
    assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, ta:stack():totable())
    assert.are.same({ 0, 0, 0 }, ta:read(1):totable())
    h.errors("the value has shape [2] but the TensorArray's elements have shape [3]", function()
      return ta:write(0, i32 { 1, 2 })
    end)
    local empty = TensorArray("float32", { size = 0, element_shape = { 2 } })
    assert.are.same({ 0, 2 }, empty:stack().shape:as_list())
  end)

  it("grows with dynamic_size, eagerly and traced", function()
    local ta = TensorArray("float32", { size = 0, dynamic_size = true })
    ta = ta:write(0, 1):write(3, 4)
    assert.are.same({ 1, 0, 0, 4 }, ta:stack():totable())
    assert.are.equal(4, ta:size():item())
    local function squares(n)
      local _, out = while_loop(function(i) return i:lt(n) end, function(i, out)
        return i + 1, out:write(i, i * i)
      end, { 0, TensorArray("int32", { size = 0, dynamic_size = true }) })
      return out:stack(), out:size()
    end
    local s, n = same_eager_and_traced(squares, i32(5))
    assert.are.same({ 0, 1, 4, 9, 16 }, s:totable())
    assert.are.equal(5, n:item())
    local f = tide.trace(squares)
    assert.are.same({ 0, 1, 4 }, f(i32(3)):totable())
    assert.are.equal(0, select(2, f(i32(0))):item())
  end)

  it("unstacks a tensor into a new array", function()
    local ta = TensorArray("float32", { size = 3 }):unstack(f32 { { 1, 2 }, { 3, 4 } })
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 0, 0 } }, ta:stack():totable())
    h.close(ta:read(1), { 3, 4 })
    local function rev(x)
      local n = x.shape[1]
      local inp = TensorArray("float32", { size = n }):unstack(x)
      local out = TensorArray("float32", { size = n })
      out = for_range(n, function(i, out) return out:write(n - 1 - i, inp:read(i) * 10) end, { out })
      return out:stack()
    end
    local r = same_eager_and_traced(rev, f32 { { 1, 2 }, { 3, 4 }, { 5, 6 } })
    assert.are.same({ { 50, 60 }, { 30, 40 }, { 10, 20 } }, r:totable())
    h.errors("value has 3 rows but the TensorArray has size 2", function()
      return TensorArray("float32", { size = 2 }):unstack(f32 { 1, 2, 3 })
    end)
    local sc = TensorArray("int32", { size = 4 }):scatter({ 3, 0 }, i32 { { 7 }, { 8 } })
    assert.are.same({ { 8 }, { 0 }, { 0 }, { 7 } }, sc:stack():totable())
  end)

  it("runs TF's dynamic RNN (a while loop over time writing a TensorArray)", function()
    -- TF's guide, "Accumulating values in a loop"
    local function rnn_step(inp, state) return inp + state end
    local function dynamic_rnn(input_data, initial_state)
      input_data = tide.transpose(input_data, { 1, 0, 2 }) -- [batch, time, features] -> [time, batch, features]
      local max_seq_len = input_data.shape[1]
      local states = TensorArray("float32", { size = max_seq_len })
      local state = initial_state
      states, state = for_range(max_seq_len, function(i, states, state)
        state = rnn_step(tide.gather(input_data, i), state)
        return states:write(i, state), state
      end, { states, state })
      return tide.transpose(states:stack(), { 1, 0, 2 }), state
    end
    local x = tide.reshape(tide.range(24), { 2, 3, 4 }):cast("float32")
    local out, last = same_eager_and_traced(dynamic_rnn, x, tide.zeros({ 2, 4 }))
    assert.are.same({ 2, 3, 4 }, out.shape:as_list())
    -- state after t steps = sum of the first t inputs
    assert.are.same({ { 0, 1, 2, 3 }, { 4, 6, 8, 10 }, { 12, 15, 18, 21 } }, out[0]:totable())
    assert.are.same({ { 12, 13, 14, 15 }, { 28, 30, 32, 34 }, { 48, 51, 54, 57 } }, out[1]:totable())
    h.close(last, { { 12, 15, 18, 21 }, { 48, 51, 54, 57 } })
    -- the same with a cell of weights, tanh and matmul, and a batch of any size
    local w = tide.Variable(f32 { { 0.5, -0.25 }, { 0.125, 0.5 } })
    local function cell(inp, state) return tide.tanh(tide.matmul(inp, w) + state) end
    local function rnn2(x)
      local xt = tide.transpose(x, { 1, 0, 2 })
      local n = xt.shape[1]
      local states = TensorArray("float32", { size = n, element_shape = { tide.None, 2 } })
      local st = for_range(n, function(i, st, s) local s2 = cell(tide.gather(xt, i), s) return st:write(i, s2), s2 end,
        { states, tide.gather(xt, 0) * 0 })
      return tide.transpose(st:stack(), { 1, 0, 2 })
    end
    local x2 = tide.reshape(tide.range(12), { 2, 3, 2 }):cast("float32") * 0.1
    local e = rnn2(x2)
    h.close(tide.trace(rnn2)(x2), e:totable(), 1e-5)
    local g = tide.trace(rnn2, { input_signature = { tide.TensorSpec({ tide.None, 3, 2 }, "float32") } })
    h.close(g(x2), e:totable(), 1e-5)
    h.close(g(x2:slice { { 0, 1 } }), e:slice { { 0, 1 } }:totable(), 1e-5)
    assert.are.equal(1, g:trace_count())
  end)

  it("grows an array of symbolic size whose elements have a None dim (batch and time unknown when traced)", function()
    -- the loop starts the buffer as zeros [0, 1, 4]; growing it must broadcast those rows to the value's [2, 4]
    local function rnn(x) -- x [batch, time, 4]
      local xt = tide.transpose(x, { 1, 0, 2 })
      local n = tide.shape(xt)[0]
      local ta = TensorArray("float32", { size = n, element_shape = { tide.None, 4 } })
      local st = for_range(n, function(i, ta, s)
        local s2 = tide.tanh(tide.gather(xt, i) + s * 0.5)
        return ta:write(i, s2), s2
      end, { ta, tide.gather(xt, 0) * 0 })
      return tide.transpose(st:stack(), { 1, 0, 2 })
    end
    local x = tide.reshape(tide.range(24), { 2, 3, 4 }):cast("float32") * 0.1
    local e = same_eager_and_traced(rnn, x)
    local g = tide.trace(rnn, { input_signature = { tide.TensorSpec({ tide.None, tide.None, 4 }, "float32") } })
    local t = g(x)
    assert.are.same({ 2, 3, 4 }, t.shape:as_list())
    h.close(t, e, 1e-6)
    h.close(g(x:slice { { 0, 1 }, { 0, 2 } }), rnn(x:slice { { 0, 1 }, { 0, 2 } }), 1e-6)
    -- a known index inside the loop too (written as a number): its dims are not sure, so it broadcasts
    local known = tide.trace(function(x)
      local ta = TensorArray("float32", { size = 2, element_shape = { tide.None, 4 } })
      local out = for_range(1, function(_, ta) return ta:write(1, x) end, { ta })
      return out:stack()
    end, { input_signature = { tide.TensorSpec({ tide.None, 4 }, "float32") } })
    local r = known(x[0])
    assert.are.same({ 2, 3, 4 }, r.shape:as_list())
    h.close(r[1], x[0])
    h.close(r[0], tide.zeros({ 3, 4 }))
    assert.are.equal(1, g:trace_count())
  end)

  it("reads at an index known only at run time, checked when the graph runs", function()
    local f = tide.trace(function(i)
      local ta = TensorArray("float32", { size = 3 }):unstack(f32 { 10, 20, 30 })
      return ta:read(i), ta:write(i, -1):stack()
    end)
    local r, s = f(i32(1))
    h.close(r, { 20 })
    h.close(s, { 10, -1, 30 })
    h.errors("3", f, i32(3))
  end)

  it("checks its arguments", function()
    h.errors("TensorArray: dtype is required", TensorArray)
    h.errors("TensorArray: size is required", TensorArray, "float32")
    h.errors("TensorArray: size must be at least 0", TensorArray, "float32", -1)
    h.errors("unknown dtype", TensorArray, "float99", 2)
    local ta = TensorArray("float32", 2)
    h.errors("TensorArray.write: the TensorArray holds float32 but the value is int32", function() return ta:write(0, i32(1)) end)
    h.errors("TensorArray.write: index 2 is out of range: the TensorArray has size 2 and is not dynamic_size",
      function() return ta:write(2, 1) end)
    h.errors("TensorArray.write: index -1 is negative", function() return ta:write(-1, 1) end)
    h.errors("TensorArray.write: index is nil", function() return ta:write(nil, 1) end)
    h.errors("TensorArray.write: value is nil", function() return ta:write(0, nil) end)
    h.errors("TensorArray.write: index must be an integer, got a float32 tensor", function() return ta:write(f32(0), 1) end)
    local ta1 = ta:write(0, f32 { 1, 2 })
    h.errors("the value has shape [3] but the TensorArray's elements have shape [2]", function() return ta1:write(1, f32 { 1, 2, 3 }) end)
    h.errors("TensorArray.read: index 5 is out of range: the TensorArray has size 2", function() return ta1:read(5) end)
    h.errors("TensorArray.unstack: value must have rank at least 1", function() return ta:unstack(f32(1)) end)
    h.errors("TensorArray has no method or property 'push'", function() return ta.push end)
  end)
end)
