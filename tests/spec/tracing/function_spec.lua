-- tide.trace, the Function object: TF 2's tf.function (the tf.function guide,
-- "Better performance with tf.function", and the tf.function API doc)
-- translated to Lua: trace types and retracing, input_signature,
-- reduce_retracing, concrete functions, run_functions_eagerly.
local tide = require "tide"
local h = require "helpers"

local function f32(v) return tide.tensor(v, "float32") end
local function i32(v) return tide.tensor(v, "int32") end
local None = tide.None

-- Retracing warnings have their own spec (tracing/retracing_spec.lua); keep this one's output clean.
local saved_warning
setup(function()
  saved_warning = tide.config.get_retracing_warning()
  tide.config.set_retracing_warning(false)
end)
teardown(function() tide.config.set_retracing_warning(saved_warning) end)

-- tide.trace(fn, opts) as c.f, with c.n its trace count.
local function counted(fn, opts)
  local f = tide.trace(fn, opts)
  return setmetatable({ f = f }, { __index = function(_, k) if k == "n" then return f:trace_count() end end })
end

describe("tracing rules (the tf.function guide)", function()
  it("traces once per dtype and reuses a trace on repeat", function()
    -- @tf.function def double(a): print("Tracing with", a); return a + a
    local traced = {}
    local double = tide.trace(function(a)
      traced[#traced + 1] = a.dtype
      return a + a
    end)
    assert.are.equal(2, double(i32(1)):item())
    h.close(double(f32(1.1)), { 2.2 })
    h.close(double(f32(1.1)), { 2.2 })
    assert.are.equal(2, double(i32(1)):item())
    assert.are.same({ "int32", "float32" }, traced)
    assert.are.equal(2, double:trace_count())
    assert.are.equal(2, double:experimental_get_tracing_count())
  end)

  it("retraces for a new shape and reuses the trace for the same shape", function()
    local c = counted(function(x) return x * 2 end)
    h.close(c.f(f32{ 1, 2 }), { 2, 4 })
    h.close(c.f(f32{ 3, 4 }), { 6, 8 })
    assert.are.equal(1, c.n)
    h.close(c.f(f32{ 1, 2, 3 }), { 2, 4, 6 })
    h.close(c.f(f32{ { 1 }, { 2 } }), { 2, 4 })
    assert.are.equal(3, c.n)
  end)

  it("retraces for each Lua number but not for tensors (train(num_steps))", function()
    local c = counted(function(x, num_steps) return x * num_steps end)
    local x = f32{ 1 }
    c.f(x, 10)
    c.f(x, 20)
    assert.are.equal(2, c.n)
    c.f(x, 10)
    assert.are.equal(2, c.n)
    local d = counted(function(x, num_steps) return x * num_steps end)
    h.close(d.f(x, f32(10)), { 10 })
    h.close(d.f(x, f32(20)), { 20 })
    assert.are.equal(1, d.n)
  end)

  it("keys strings and booleans by value", function()
    local c = counted(function(x, mode, training)
      if mode == "double" then x = x * 2 end
      if training then x = x + 1 end
      return x
    end)
    local x = f32{ 1 }
    h.close(c.f(x, "double", true), { 3 })
    h.close(c.f(x, "double", false), { 2 })
    h.close(c.f(x, "same", false), { 1 })
    h.close(c.f(x, "double", true), { 3 })
    assert.are.equal(3, c.n)
  end)

  it("accepts nil arguments, and a missing argument is nil", function()
    local c = counted(function(x, scale)
      if scale == nil then return x end
      return x * scale
    end)
    local x = f32{ 2 }
    h.close(c.f(x), { 2 })
    h.close(c.f(x, nil), { 2 })
    h.close(c.f(x, 3), { 6 })
    assert.are.equal(2, c.n)
    h.close(c.f(x, nil, "ignored extra"), { 2 })
    assert.are.equal(2, c.n)
  end)

  it("treats NaN as one Lua value", function()
    local c = counted(function(x, v) return x + 0 * x end)
    c.f(f32{ 1 }, 0 / 0)
    c.f(f32{ 1 }, 0 / 0)
    assert.are.equal(1, c.n)
  end)

  it("keys a Lua list by its elements in order, tensors inside included", function()
    local c = counted(function(t) return t[1] + t[2] end)
    h.close(c.f({ f32{ 1 }, f32{ 2 } }), { 3 })
    h.close(c.f({ f32{ 10 }, f32{ 20 } }), { 30 }) -- tensors inside are inputs, not constants
    assert.are.equal(1, c.n)
    c.f({ f32{ 1 }, f32{ 1, 2 } })
    assert.are.equal(2, c.n)
    c.f({ f32{ 1 }, f32{ 2 }, f32{ 3 } })
    assert.are.equal(3, c.n)
  end)

  it("keys a Lua map by keys and values regardless of order", function()
    local c = counted(function(t) return t.w * t.x + t.b end)
    local a = { w = f32{ 2 }, x = f32{ 3 }, b = f32{ 1 } }
    local b = {}
    b.b = f32{ 10 }; b.x = f32{ 1 }; b.w = f32{ 5 }
    h.close(c.f(a), { 7 })
    h.close(c.f(b), { 15 })
    assert.are.equal(1, c.n)
    c.f({ w = f32{ 2 }, x = f32{ 3 }, b = f32{ 1 }, extra = 1 })
    assert.are.equal(2, c.n)
    -- nested tables: a map of lists, the tensors deep inside are inputs
    local d = counted(function(t) return t.layers[2].w * t.scale end)
    h.close(d.f({ layers = { { w = f32{ 1 } }, { w = f32{ 2 } } }, scale = 3 }), { 6 })
    h.close(d.f({ scale = 3, layers = { { w = f32{ 1 } }, { w = f32{ 7 } } } }), { 21 })
    assert.are.equal(1, d.n)
    d.f({ layers = { { w = f32{ 1 } }, { w = f32{ 2 } } }, scale = 4 })
    assert.are.equal(2, d.n)
  end)

  it("keys Variables and other objects by identity", function()
    local c = counted(function(v, x) return v * x end)
    local v1, v2 = tide.Variable(2.0), tide.Variable(2.0)
    local x = f32{ 1 }
    h.close(c.f(v1, x), { 2 })
    h.close(c.f(v1, x), { 2 })
    assert.are.equal(1, c.n)
    v1:assign(5)
    h.close(c.f(v1, x), { 5 }) -- read at each run, not a constant
    assert.are.equal(1, c.n)
    c.f(v2, x)
    assert.are.equal(2, c.n)

    -- a model table (an object with a metatable): by identity; its tensors are captured
    local Model = {}
    Model.__index = Model
    local function new_model(w) return setmetatable({ w = f32(w) }, Model) end
    local m1, m2 = new_model{ 2 }, new_model{ 3 }
    local d = counted(function(model, x) return model.w * x end)
    h.close(d.f(m1, x), { 2 })
    h.close(d.f(m1, x), { 2 })
    h.close(d.f(m2, x), { 3 })
    assert.are.equal(2, d.n)

    -- functions are objects too
    local e = counted(function(act, x) return act(x) end)
    local relu = function(t) return tide.relu(t) end
    e.f(relu, x)
    e.f(relu, x)
    e.f(function(t) return t end, x)
    assert.are.equal(2, e.n)
  end)

  it("keys an object by its __tracing_type when it defines one", function()
    -- TF's TraceType example: every Apple traces alike, a Mango differently
    local Fruit = {}
    Fruit.__index = Fruit
    function Fruit:__tracing_type() return self.kind end
    local function fruit(kind, flavor) return setmetatable({ kind = kind, flavor = i32(flavor) }, Fruit) end
    local c = counted(function(a, b) return a.flavor + b.flavor end)
    h.close(c.f(fruit("apple", { 1, 2 }), fruit("mango", { 3, 4 })), { 4, 6 })
    h.close(c.f(fruit("apple", { 1, 2 }), fruit("mango", { 3, 4 })), { 4, 6 })
    assert.are.equal(1, c.n)
    c.f(fruit("mango", { 3, 4 }), fruit("mango", { 3, 4 }))
    assert.are.equal(2, c.n)
    -- a tracing type may be a table: it is keyed by value
    local Point = {}
    Point.__index = Point
    function Point:__tracing_type() return { self.dim, tag = "point" } end
    local d = counted(function(p) return p.dim end)
    d.f(setmetatable({ dim = 2 }, Point))
    d.f(setmetatable({ dim = 2 }, Point))
    d.f(setmetatable({ dim = 3 }, Point))
    assert.are.equal(2, d.n)
  end)

  it("carries a composite value (__tracing_composite) as its fields, in and out", function()
    local Pair = { __tracing_composite = true }
    Pair.__index = Pair
    local function pair(a, b) return setmetatable({ a = a, b = b, tag = "p" }, Pair) end
    local c = counted(function(p) return pair(p.b * 2, p.a), p.tag end)
    local r, tag = c.f(pair(f32{ 1, 2 }, f32{ 3 }))
    assert.are.equal(Pair, getmetatable(r))
    h.close(r.a, { 6 })
    h.close(r.b, { 1, 2 })
    assert.are.equal("p", tag)
    r = c.f(pair(f32{ 5, 6 }, f32{ 7 })) -- new tensors, same trace type: no retrace
    h.close(r.a, { 14 })
    h.close(r.b, { 5, 6 })
    assert.are.equal(1, c.n)
    c.f(pair(f32{ 5 }, f32{ 7 })) -- another shape traces again
    assert.are.equal(2, c.n)
    c.f(setmetatable({ a = f32{ 5 }, b = f32{ 7 }, tag = "p" }, { __tracing_composite = true, __index = Pair }))
    assert.are.equal(3, c.n) -- another class
  end)

  it("keys a tide.Shape by value", function()
    local c = counted(function(x, shape) return tide.reshape(x, shape) end)
    local x = f32{ 1, 2, 3, 4 }
    assert.are.same({ 2, 2 }, c.f(x, f32{ { 0, 0 }, { 0, 0 } }.shape).shape)
    assert.are.same({ 2, 2 }, c.f(x, f32{ { 1, 1 }, { 1, 1 } }.shape).shape)
    assert.are.equal(1, c.n)
  end)

  it("never shares traces between separate tide.trace objects", function()
    local n = 0
    local function body(x) n = n + 1 return x + 1 end
    local f, g = tide.trace(body), tide.trace(body)
    f(f32{ 1 })
    g(f32{ 1 })
    f(f32{ 1 })
    assert.are.equal(2, n)
    assert.are.equal(1, f:trace_count())
    assert.are.equal(1, g:trace_count())
  end)

  it("returns multiple results, tables of results and Lua values", function()
    local f = tide.trace(function(x)
      return x + 1, { sum = tide.reduce_sum(x), parts = { x * 2, 7 } }, "done"
    end)
    local a, t, s = f(f32{ 1, 2 })
    h.close(a, { 2, 3 })
    h.close(t.sum, { 3 })
    h.close(t.parts[1], { 2, 4 })
    assert.are.equal(7, t.parts[2])
    assert.are.equal("done", s)
    local none = tide.trace(function(x) end)
    assert.are.equal(0, select("#", none(f32{ 1 })))
  end)

  it("gives the most specific concrete function", function()
    -- the Lua upvalue is read at trace time, so each graph shows which trace ran
    local offset = 1
    local f = tide.trace(function(x) return x + offset end)
    h.close(f(f32{ { 0, 0 } }), { 1, 1 })         -- traces (1, 2) with offset 1
    offset = 2
    f:get_concrete_function(tide.TensorSpec({ None, 2 }, "float32")) -- traces (None, 2) with offset 2
    assert.are.equal(2, f:trace_count())
    h.close(f(f32{ { 0, 0 } }), { 1, 1 })         -- (1, 2) fits both: the exact one wins
    h.close(f(f32{ { 0, 0 }, { 0, 0 } }), { 2, 2, 2, 2 })
    offset = 3
    assert.are.equal(f:get_concrete_function(tide.TensorSpec({ None, 2 }, "float32")),
      f:get_concrete_function(f32{ { 0, 0 }, { 0, 0 } })) -- a supertype serves: no new trace
    assert.are.equal(2, f:trace_count())
  end)
end)

describe("input_signature", function()
  local function collatz_sig()
    local c = counted(function(x) return tide.where(x:mod(2):equal(0), x:floordiv(2), 3 * x + 1) end,
      { input_signature = { tide.TensorSpec({ None }, "int32") } })
    return c
  end

  it("traces once for every length of a [None] int32 vector", function()
    local c = collatz_sig()
    assert.are.same({ 4, 1 }, c.f(i32{ 1, 2 }):totable())
    assert.are.same({ 10, 2, 16, 4, 22 }, c.f(i32{ 3, 4, 5, 8, 7 }):totable())
    assert.are.equal(1, c.n)
    assert.are.equal(1, c.f:trace_count())
  end)

  it("rejects a 2-D input, showing the inputs and the signature", function()
    local c = collatz_sig()
    c.f(i32{ 1, 2 })
    local err = h.errors("do not match its input_signature", function()
      local r = c.f(i32{ { 1, 2 }, { 3, 4 } }) -- not a tail call: the error names this line
      return r
    end)
    assert.truthy(err:find("argument 1 (x) is an int32 tensor of shape (2, 2) where the signature has rank 1",
      1, true), err)
    assert.truthy(err:find("inputs: (tide.Tensor(shape=(2, 2), dtype=int32))", 1, true), err)
    assert.truthy(err:find("input_signature: (x: TensorSpec(shape=(None,), dtype=tide.int32, name=None))", 1,
      true), err)
    assert.truthy(err:find("^[^\n]*function_spec.lua:%d+: trace: the arguments of"), err) -- at the caller's line
    assert.are.equal(1, c.n)
  end)

  it("rejects a float input", function()
    local c = collatz_sig()
    local err = h.errors("do not match its input_signature", c.f, f32{ 1, 2 })
    assert.truthy(err:find("is a float32 tensor of shape (2,) where the signature has dtype int32", 1, true), err)
    assert.are.equal(0, c.n)
  end)

  it("rejects a wrong known dim, a missing argument and an extra one", function()
    local f = tide.trace(function(x) return x end, { input_signature = { tide.TensorSpec({ 2, None }) } })
    h.close(f(f32{ { 1 }, { 2 } }), { 1, 2 })
    h.errors("where the signature has 2 at dimension 0", f, f32{ { 1, 2, 3 } })
    h.errors("argument 1 (x) is nil where the signature has a tensor", f)
    h.errors("argument 2 is a float32 tensor of shape (1, 1), but the signature has 1 entry", f, f32{ { 1 }, { 2 } },
      f32{ { 1 } })
  end)

  it("converts Lua numbers and lists to the signature's dtype (TF's dtype hint)", function()
    local c = counted(function(x) return x * 2 end, { input_signature = { tide.TensorSpec({}, "float32") } })
    h.close(c.f(3), { 6 })
    h.close(c.f(2.5), { 5 })
    assert.are.equal(1, c.n)
    local v = counted(function(x) return x + 1 end, { input_signature = { tide.TensorSpec({ None }, "int32") } })
    assert.are.same({ 2, 3 }, v.f({ 1, 2 }):totable())
    h.errors("argument 1 (x) is the Lua number 2.5 where the signature has a tensor", v.f, 2.5)
    h.errors("argument 1 (x) is a Lua list of 2 values", v.f, { 1.5, 2 })
    assert.are.equal(1, v.n)
  end)

  it("takes nested tables of TensorSpecs", function()
    local c = counted(function(p) return p.w * p.x end, {
      input_signature = { { w = tide.TensorSpec({ None }), x = tide.TensorSpec({ None }) } },
    })
    h.close(c.f({ w = f32{ 2 }, x = f32{ 3 } }), { 6 })
    h.close(c.f({ w = f32{ 1, 2 }, x = f32{ 3, 4 } }), { 3, 8 })
    assert.are.equal(1, c.n)
    h.errors("argument 1 (p) at p.x is an int32 tensor", c.f, { w = f32{ 2 }, x = i32{ 3 } })
    h.errors("has the key \"y\", which the signature lacks", c.f, { w = f32{ 2 }, y = f32{ 3 } })
  end)

  it("traces once for every rank for a TensorSpec of unknown rank (nil shape)", function()
    local c = counted(function(x) return x + 1 end, { input_signature = { tide.TensorSpec(nil, "float32") } })
    h.close(c.f(f32{ 1, 2 }), { 2, 3 })
    h.close(c.f(f32{ 1, 2, 3 }), { 2, 3, 4 })
    h.close(c.f(f32{ { 1 }, { 2 } }), { { 2 }, { 3 } })
    h.close(c.f(f32{ { 1, 2 } }), { { 2, 3 } })
    h.close(c.f(tide.tensor(1.5, "float32")), 2.5)
    assert.are.equal(1, c.n)
    assert.truthy(c.f:pretty_printed_concrete_signatures():find("x: float32 Tensor, shape=<unknown>", 1, true))
    assert.are.equal(c.f:concrete_functions()[1], c.f:get_concrete_function())
    assert.are.equal(1, c.n)
    h.errors("dtype float32", c.f, i32{ 1 })
  end)

  it("checks its arguments at tide.trace", function()
    local id = function(x) return x end
    h.errors("input_signature entry 1 is 3", tide.trace, id, { input_signature = { 3 } })
    h.errors("input_signature must be a list", tide.trace, id, { input_signature = "x" })
    h.errors("input_signature has 2 specs but the function takes 1 argument", tide.trace, id,
      { input_signature = { tide.TensorSpec({}), tide.TensorSpec({}) } })
    h.errors("trace: expected a function, got nil", tide.trace, nil)
    h.errors("trace: expected a function, got number", tide.trace, 3)
    h.errors("unknown option 'reduce_retrace'", tide.trace, id, { reduce_retrace = true })
    h.errors("reduce_retracing", tide.trace, id, { reduce_retracing = "yes" })
    h.errors("trace: jit_compile must be true or false, got yes", tide.trace, id, { jit_compile = "yes" })
  end)

  it("accepts TF's jit_compile and traces as without it (tide fuses every graph)", function()
    local c = counted(function(x) return x * 2 + 1 end, { jit_compile = true })
    assert.is_true(c.f.jit_compile)
    h.close(c.f(tide.tensor({ 1, 2 }, "float32")), { 3, 5 })
    h.close(c.f(tide.tensor({ 3, 4 }, "float32")), { 7, 9 })
    assert.are.equal(1, c.n)
    local wrap = tide.trace { jit_compile = false }
    assert.is_false(wrap(function(x) return x end).jit_compile)
  end)
end)

describe("reduce_retracing", function()
  it("generalizes the dims that changed to None on the second trace", function()
    local c = counted(function(x) return x end, { reduce_retracing = true })
    c.f(i32{ 1, 2, 3 })
    c.f(i32{ 1, 2, 3, 4, 5 })
    assert.are.equal(2, c.n)
    assert.are.same({ 1, 2, 3, 4, 5, 6, 7 }, c.f(i32{ 1, 2, 3, 4, 5, 6, 7 }):totable())
    assert.are.equal(2, c.n)
    local sigs = c.f:pretty_printed_concrete_signatures()
    assert.truthy(sigs:find("x: int32 Tensor, shape=(3,)", 1, true), sigs)
    assert.truthy(sigs:find("x: int32 Tensor, shape=(None,)", 1, true), sigs)
  end)

  it("keeps dims that agree, and the common supertype spans every earlier trace", function()
    local c = counted(function(x) return x * 2 end, { reduce_retracing = true })
    c.f(f32{ { 1, 2, 3 }, { 4, 5, 6 } })   -- (2, 3)
    c.f(f32{ { 1, 2, 3 } })                -- (None, 3)
    assert.are.equal(2, c.n)
    c.f(f32{ { 1, 2, 3 }, { 1, 2, 3 }, { 1, 2, 3 } })
    assert.are.equal(2, c.n)
    c.f(f32{ { 1, 2 } })                   -- (None, None)
    assert.are.equal(3, c.n)
    c.f(f32{ { 1, 2, 3, 4 } })
    assert.are.equal(3, c.n)
    assert.truthy(c.f:pretty_printed_concrete_signatures():find("shape=(None, None)", 1, true))
  end)

  it("does not merge dtypes, ranks or Lua values", function()
    local c = counted(function(x, n) return x end, { reduce_retracing = true })
    c.f(f32{ 1 }, 1)
    c.f(i32{ 1, 2 }, 1)
    c.f(f32{ { 1 } }, 1)
    c.f(f32{ 1, 2 }, 2)
    assert.are.equal(4, c.n)
  end)
end)

describe("concrete functions", function()
  it("get_concrete_function(tensor or TensorSpec) traces without running", function()
    local runs = 0
    local double = tide.trace(function(a) runs = runs + 1 return a + a end)
    local cf = double:get_concrete_function(i32(1))
    assert.are.equal(1, double:trace_count())
    assert.are.equal(cf, double:get_concrete_function(tide.TensorSpec({}, "int32")))
    assert.are.equal(1, double:trace_count())
    assert.are.equal(4, cf(i32(2)):item())
    assert.are.equal(1, runs)
  end)

  it("has TF's structured_input_signature and structured_outputs", function()
    local f = tide.trace(function(x, n, cfg) return x * n, { total = tide.reduce_sum(x) } end)
    local cf = f:get_concrete_function(tide.TensorSpec({ None, 2 }, "float32", "x"), 3, { mode = "a" })
    local sig = cf.structured_input_signature
    assert.are.equal(3, sig.n)
    assert.are.equal(tide.TensorSpec({ None, 2 }, "float32", "x"), sig[1])
    assert.are.equal("TensorSpec(shape=(None, 2), dtype=tide.float32, name='x')", tostring(sig[1]))
    assert.are.equal(3, sig[2])
    assert.are.same({ mode = "a" }, sig[3])
    local out = cf.structured_outputs
    assert.are.equal(2, out.n)
    assert.are.same({ None, 2 }, out[1].shape)
    assert.are.equal("float32", out[1].dtype)
    assert.are.same({}, out[2].total.shape)
  end)

  it("names the Lua line of each op, and the function's first line for a tail call", function()
    local here = debug.getinfo(1, "l").currentline
    local f = tide.trace(function(x)
      local y = tide.exp(x):matmul(tide.ones{3, 3})   -- here + 2
      return tide.reduce_sum(tide.sin(y))               -- a tail call: LuaJIT keeps no frame for it
    end)
    local text = tostring(f:get_concrete_function(tide.TensorSpec({ 2, 3 })).graph)
    assert.truthy(text:find("matmul%([^\n]*function_spec.lua:" .. (here + 2) .. "\n"), text)
    assert.truthy(text:find("sum%([^\n]*function_spec.lua:" .. (here + 1) .. " %(a tail call"), text)
  end)

  it("prints its graph one node a line, as dot, with node count and planned bytes", function()
    local f = tide.trace(function(x, y) return tide.matmul(x, y) + 1 end)
    local cf = f:get_concrete_function(tide.TensorSpec({ None, 3 }), tide.TensorSpec({ 3, 4 }))
    local text = tostring(cf.graph)
    assert.truthy(text:find("matmul(%0, %1) : float32[None, 4]", 1, true), text)
    assert.truthy(text:find("add(", 1, true), text)
    assert.truthy(text:find("function_spec.lua:", 1, true), text) -- the Lua line that recorded each op
    assert.are.equal(text, cf.graph:text())
    assert.are.equal(text, cf:graph_text())
    local lines = 0
    for _ in text:gmatch("\n") do lines = lines + 1 end
    assert.truthy(lines >= cf.graph:num_nodes())
    assert.truthy(cf.graph:num_nodes() >= 4)
    assert.are.equal(2, cf.graph:num_inputs())
    assert.are.equal(1, cf.graph:num_outputs())
    assert.truthy(cf.graph:to_dot():find("digraph", 1, true))
    h.close(cf(tide.ones({ 2, 3 }), tide.ones({ 3, 4 })), { 4, 4, 4, 4, 4, 4, 4, 4 })
    assert.are.equal("number", type(cf.graph:planned_bytes()))
    assert.truthy(cf.graph:planned_bytes() >= 0)
  end)

  it("rejects an incompatible tensor", function()
    local double = tide.trace(function(a) return a + a end)
    local cf = double:get_concrete_function(tide.TensorSpec({ None }, "float32"))
    h.close(cf(f32{ 1, 2, 3 }), { 2, 4, 6 })
    h.errors("argument 1 (a) is an int32 tensor of shape (2,) but the graph takes a float32 tensor of shape (None,)",
      cf, i32{ 1, 2 })
    h.errors("argument 1 (a) is a float32 tensor of shape (1, 1) but the graph takes", cf, f32{ { 1 } })
    h.errors("argument 1 (a) is the Lua number 2 but it was traced with a float32 tensor", cf, 2)
    h.errors("argument 1 (a) is nil but it was traced with", cf)
    h.errors("argument 1 (a) is the object TensorSpec(shape=(2,)", cf, tide.TensorSpec({ 2 }))
  end)

  it("bakes Lua scalars in: another value is an error naming both (pow / square)", function()
    local pow = tide.trace(function(a, b) return a ^ b end)
    local square = pow:get_concrete_function(tide.TensorSpec({}, "float32"), 2)
    assert.are.equal(100, square(f32(10)):item())
    assert.are.equal(100, square(f32(10), 2):item())
    assert.are.equal(100, square(f32(10)):item()) -- an omitted Lua argument takes the traced value, as in TF
    h.errors("argument 2 (b) was traced with the Lua number 2 but is called with the Lua number 3",
      square, f32(10), 3)
    assert.are.equal(
      "ConcreteFunction pow(a, b=2)\n  Args:\n    a: float32 Tensor, shape=()\n  Returns:\n" ..
      "    float32 Tensor, shape=()", tostring(square))
  end)

  it("pretty-prints every concrete signature as TF does", function()
    local double = tide.trace(function(a) return a + a end)
    double(i32(1))
    double(f32(1.1))
    assert.are.equal(
      "double(a)\n  Args:\n    a: int32 Tensor, shape=()\n  Returns:\n    int32 Tensor, shape=()\n\n" ..
      "double(a)\n  Args:\n    a: float32 Tensor, shape=()\n  Returns:\n    float32 Tensor, shape=()",
      double:pretty_printed_concrete_signatures())
    assert.are.equal("double(a)\n\ndouble(a)", double:pretty_printed_concrete_signatures(false))
    local f = tide.trace(function(x, opts) return x, { y = x * opts.k } end, { name = "scaled" })
    f(f32{ 1, 2 }, { k = 2 })
    assert.are.equal(
      "scaled(x, opts={k = 2})\n  Args:\n    x: float32 Tensor, shape=(2,)\n  Returns:\n    (<1>, {y = <2>})\n" ..
      "      <1>: float32 Tensor, shape=(2,)\n      <2>: float32 Tensor, shape=(2,)",
      f:pretty_printed_concrete_signatures())
    local g = tide.trace(function(p) return p.a end)
    g({ a = f32{ 1 }, b = 2 })
    assert.truthy(g:pretty_printed_concrete_signatures():find(
      "p: {a = <1>, b = 2}\n      <1>: float32 Tensor, shape=(1,)", 1, true))
  end)

  it("get_concrete_function checks its arguments", function()
    local f = tide.trace(function(a) return a end)
    h.errors("is the Lua number 3 but it was traced with a float32 tensor of shape <unknown>",
      function() f:get_concrete_function(tide.TensorSpec(nil, "float32"))(3) end)
    local s = tide.trace(function(a) return a end, { input_signature = { tide.TensorSpec({ None }, "int32") } })
    local cf = s:get_concrete_function()
    assert.are.equal(cf, s:get_concrete_function(i32{ 1, 2 }))
    assert.are.equal(cf, s:get_concrete_function(tide.TensorSpec({ 5 }, "int32")))
    h.errors("do not match its input_signature", function() s:get_concrete_function(f32{ 1 }) end)
    assert.are.equal(1, s:trace_count())
  end)
end)

describe("nested and leaked", function()
  it("runs a Function called inside another trace inline", function()
    local inner = counted(function(x) return x * 2 end)
    local outer = counted(function(x) return inner.f(x) + 1 end)
    h.close(outer.f(f32{ 1, 2 }), { 3, 5 })
    h.close(outer.f(f32{ 3, 4 }), { 7, 9 })
    assert.are.equal(1, outer.n)
    assert.are.equal(0, inner.f:trace_count())
    h.close(inner.f(f32{ 1 }), { 2 })
  end)

  it("runs a concrete function called inside another trace inline, checking its signature", function()
    local scale = tide.trace(function(x, k) return x * k end)
    local by3 = scale:get_concrete_function(tide.TensorSpec({ None }), 3)
    local outer = tide.trace(function(x) return by3(x) + by3(x, 3) end)
    h.close(outer(f32{ 1, 2 }), { 6, 12 })
    local bad = tide.trace(function(x) return by3(x, 4) end)
    h.errors("argument 2 (k) was traced with the Lua number 3 but is called with the Lua number 4", bad, f32{ 1 })
    local bad_dtype = tide.trace(function(x) return by3(x) end)
    h.errors("argument 1 (x) is a symbolic int32 tensor of shape (1,) but the graph takes a float32 tensor",
      bad_dtype, i32{ 1 })
  end)

  it("recursion on Lua values works; on tensors it is a clear error", function()
    local pow
    pow = tide.trace(function(x, n)
      if n == 0 then return tide.ones_like(x) end
      return x * pow(x, n - 1)
    end)
    h.close(pow(f32{ 2, 3 }, 3), { 8, 27 })
    local loop
    loop = tide.trace(function(x) return loop(x - 1) end)
    h.errors("calls itself with the same argument types", loop, f32{ 1 })
    -- the Function still works afterwards
    local ok = tide.trace(function(x) return x end)
    h.close(ok(f32{ 1 }), { 1 })
  end)

  it("a symbolic tensor kept from a trace cannot be passed to a Function", function()
    local leak
    local g = tide.trace(function(x) leak = x * 2 return x end)
    g(f32{ 1 })
    local f = tide.trace(function(x) return x end)
    h.errors("argument 1 (x) is a symbolic tensor of a traced function, used outside its trace", f, leak)
    h.errors("argument 1 (t) at t.a is a symbolic tensor", tide.trace(function(t) return t.a end), { a = leak })
  end)

  it("an error while tracing leaves the Function usable", function()
    local fail = true
    local f = tide.trace(function(x)
      if fail then error("boom") end
      return x + 1
    end)
    h.errors("boom", f, f32{ 1 })
    assert.are.equal(0, f:trace_count())
    fail = false
    h.close(f(f32{ 1 }), { 2 })
  end)
end)

describe("more of the Function object", function()
  it("takes its options first, as TF's @tf.function(...) decorator", function()
    local decorate = tide.trace{ input_signature = { tide.TensorSpec({ None }, "int32") } }
    local f = decorate(function(x) return x + 1 end)
    assert.are.same({ 2, 3 }, f(i32{ 1, 2 }):totable())
    h.errors("dtype int32", f, f32{ 1 })
  end)

  it("lists the Variables a concrete function uses", function()
    local w = tide.Variable({ 1, 2 }, { name = "w" })
    local frozen = tide.Variable(1.0, { name = "frozen", trainable = false })
    local f = tide.trace(function(x) return x * w + frozen end)
    local cf = f:get_concrete_function(f32{ 1, 1 })
    assert.are.equal(2, #cf.variables)
    assert.are.same({ w }, cf.trainable_variables)
    local g = tide.trace(function(v, x) return v * x end)
    g(w, f32{ 1, 1 })
    assert.truthy(g:pretty_printed_concrete_signatures():find("g(v=<tide.Variable 'w'>, x)", 1, true))
  end)

  it("names itself from its source line, or from the name option", function()
    local double = tide.trace(function(a) return a + a end)
    assert.are.equal("double", double.name)
    local function step(x) return x end
    assert.are.equal("step", tide.trace(step).name)
    assert.are.equal("mine", tide.trace(step, { name = "mine" }).name)
    assert.are.equal("<tide.Function mine>", tostring(tide.trace(step, { name = "mine" })))
    h.errors("name must be a string", tide.trace, step, { name = 3 })
  end)
end)

describe("tide.config.run_functions_eagerly", function()
  after_each(function() tide.config.run_functions_eagerly(false) end)

  it("runs fn eagerly at every call, and traces again when switched off", function()
    local n, readable = 0, {}
    local f = tide.trace(function(x)
      n = n + 1
      readable[n] = pcall(x.item, x) -- eager: values are readable; traced: symbolic
      return x * 2
    end)
    tide.config.run_functions_eagerly(true)
    assert.is_true(tide.config.functions_run_eagerly())
    assert.are.equal(4, f(f32(2)):item())
    assert.are.equal(6, f(f32(3)):item())
    assert.are.equal(2, n)
    assert.are.equal(0, f:trace_count())
    tide.config.run_functions_eagerly(false)
    assert.is_false(tide.config.functions_run_eagerly())
    f(f32(2))
    f(f32(3))
    assert.are.equal(3, n)
    assert.are.same({ true, true, false }, readable)
    assert.are.equal(1, f:trace_count())
  end)
end)

describe("tide.TensorSpec", function()
  it("prints, compares and describes tensors as TF's TensorSpec", function()
    assert.are.equal("TensorSpec(shape=(2, None), dtype=tide.int32, name='x')",
      tostring(tide.TensorSpec({ 2, None }, "int32", "x")))
    assert.are.equal("TensorSpec(shape=(3,), dtype=tide.float32, name=None)", tostring(tide.TensorSpec({ 3 })))
    assert.are.equal("TensorSpec(shape=(), dtype=tide.float32, name=None)", tostring(tide.TensorSpec({})))
    assert.are.equal("TensorSpec(shape=<unknown>, dtype=tide.float32, name=None)", tostring(tide.TensorSpec()))
    assert.are.equal(tide.TensorSpec({ 2, 3 }, "int32"), tide.TensorSpec.from_tensor(i32{ { 1, 2, 3 }, { 4, 5, 6 } }))
    assert.are.equal(tide.TensorSpec({ None }, "int32", "v"), tide.TensorSpec{ shape = { -1 }, dtype = "int32", name = "v" })
    assert.are_not.equal(tide.TensorSpec({ 2 }), tide.TensorSpec({ 3 }))
    local s = tide.TensorSpec({ None, 3 })
    assert.is_true(s:is_compatible_with(f32{ { 1, 2, 3 } }))
    assert.is_false(s:is_compatible_with(f32{ 1, 2, 3 }))
    assert.is_false(s:is_compatible_with(i32{ { 1, 2, 3 } }))
    assert.is_true(s:is_compatible_with(tide.TensorSpec({ 5, None })))
    assert.is_true(tide.TensorSpec(nil):is_compatible_with(f32{ 1 }))
  end)

  it("rejects bad shapes, dtypes and names", function()
    h.errors("dimension 2 must be a size or tide.None, got -3", tide.TensorSpec, { 1, -3 })
    h.errors("dimension 1 must be a size or tide.None, got 1.5", tide.TensorSpec, { 1.5 })
    h.errors("shape must be a list", tide.TensorSpec, 3)
    h.errors("unknown dtype 'float33'", tide.TensorSpec, { 1 }, "float33")
    h.errors("name must be a string", tide.TensorSpec, { 1 }, "float32", 5)
    h.errors("unknown option 'dtpe'", tide.TensorSpec, { shape = { 1 }, dtpe = "int32" })
  end)
end)
