-- GradientTape and Variables: TF 2's behaviour, translated to Lua.
local tide = require "tide"
local h = require "helpers"

local function f32(v) return tide.tensor(v, "float32") end

describe("the seed examples", function()
  it("differentiates x^2 + 2x - 5 at x = 3 to 8", function()
    local x = tide.Variable(3.0)
    local tape = tide.GradientTape()
    local y = tape:run(function() return x ^ 2 + 2 * x - 5 end)
    assert.are.equal(10, y:item())
    assert.are.equal(8, tape:gradient(y, x):item())
  end)

  it("differentiates reduce_sum(x^2) of a watched tensor to 2x", function()
    local x = f32{{1, 2}, {3, 4}}
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return tide.reduce_sum(x ^ 2)
    end)
    assert.are.same({{2, 4}, {6, 8}}, tape:gradient(y, x):totable())
  end)
end)

describe("Variable", function()
  it("has a fixed dtype and shape, a name and trainability", function()
    local v = tide.Variable(3.0)
    assert.are.equal("float32", v.dtype)
    assert.are.same({}, v.shape)
    assert.are.equal("Variable", v.name)
    assert.is_true(v.trainable)
    local w = tide.Variable({{1, 2}, {3, 4}}, {name = "w", trainable = false})
    assert.are.equal("float32", w.dtype)
    assert.are.same({2, 2}, w.shape)
    assert.are.equal("w", w.name)
    assert.is_false(w.trainable)
    assert.are.equal("int32", tide.Variable(5, {dtype = "int32"}).dtype)
    assert.are.equal("int32", tide.Variable(tide.tensor{1, 2}).dtype) -- a tensor keeps its dtype
    assert.are.equal("bool", tide.Variable{true, false}.dtype)
    assert.are.same({0, 0, 0}, tide.Variable(function() return tide.zeros({3}) end):numpy())
  end)

  it("assigns and returns itself", function()
    local v = tide.Variable{1, 2}
    assert.are.equal(v, v:assign{5, 6})
    assert.are.same({5, 6}, v:numpy())
    assert.are.equal(v, v:assign_add(1))
    assert.are.same({6, 7}, v:numpy())
    v:assign_sub(f32{1, 2})
    assert.are.same({5, 5}, v:numpy())
    v:assign_add(tide.Variable{1, 1})
    assert.are.same({6, 6}, v:numpy())
  end)

  it("keeps earlier reads unchanged when assigned (copy-on-write)", function()
    local v = tide.Variable{1, 2}
    local before = v:read_value()
    local view = v[0]
    v:assign{7, 8}
    assert.are.same({1, 2}, before:totable())
    assert.are.equal(1, view:item())
    assert.are.same({7, 8}, v:read_value():totable())
  end)

  it("works where a tensor does: operators, ops and methods", function()
    local v = tide.Variable{1, 2, 3}
    assert.are.same({2, 4, 6}, (v * 2):totable())
    assert.are.same({2, 4, 6}, (v + v):totable())
    assert.are.same({0, 1, 2}, (v - 1):totable())
    assert.are.same({-1, -2, -3}, (-v):totable())
    assert.are.equal(6, tide.reduce_sum(v):item())
    assert.are.equal(6, v:sum():item())
    assert.are.same({3, 1}, v:reshape{3, 1}.shape)
    assert.are.same({2, 3, 4}, tide.add(1, v):totable())
    assert.are.same({2, 3, 4}, tide.add(v, 1):totable())
    assert.are.equal(2, v[1]:item())
    -- (#v is 0: LuaJIT ignores __len on tables; v.shape[1] is the first dim)
    assert.are.equal(3, v.shape[1])
    assert.is_true(tide.Variable(1.0) < tide.Variable(2.0))
  end)

  it("writes elements in place through v[i] = x", function()
    local v = tide.Variable{{1, 2}, {3, 4}}
    local before = v:read_value()
    v[0] = 9
    assert.are.same({{9, 9}, {3, 4}}, v:numpy())
    assert.are.same({{1, 2}, {3, 4}}, before:totable())
  end)

  it("prints its name, shape, dtype and value", function()
    local v = tide.Variable(3.0, {name = "x"})
    assert.are.equal("<tide.Variable 'x' shape=() dtype=float32, value=3.>", tostring(v))
    local w = tide.Variable{1, 2}
    assert.are.equal("<tide.Variable 'Variable' shape=(2,) dtype=float32, value=[1. 2.]>", tostring(w))
  end)

  it("rejects a wrong shape or dtype, naming both", function()
    local v = tide.Variable{1, 2}
    local err = h.errors("assign: the variable has shape [2] but the value has shape [3]",
      function() v:assign{1, 2, 3} end)
    assert.truthy(err:find("tape_spec.lua", 1, true))
    h.errors("the variable is float32 but the value is int32", function() v:assign(tide.tensor{1, 2}) end)
    h.errors("cannot convert 1.5 to int32", function() tide.Variable(1, {dtype = "int32"}):assign(1.5) end)
    h.errors("an initial value is required", function() tide.Variable(nil) end)
    h.errors("unknown dtype", function() tide.Variable(1, {dtype = "float31"}) end)
    h.errors("no method or property 'frobnicate'", function() return v:frobnicate() end)
  end)
end)

describe("GradientTape", function()
  it("watches trainable variables automatically, not others", function()
    local a, b = tide.Variable(2.0), tide.Variable(3.0, {trainable = false})
    local tape = tide.GradientTape()
    local y = tape:run(function() return a * b end)
    local ga, gb = unpack(tape:gradient(y, {a, b}))
    assert.are.equal(3, ga:item())
    assert.is_nil(gb)
  end)

  it("watches only what it is told with watch_accessed_variables=false", function()
    local a, b = tide.Variable(2.0), tide.Variable(3.0)
    local tape = tide.GradientTape{watch_accessed_variables = false}
    local y = tape:run(function()
      tape:watch(b)
      return a * b
    end)
    local g = tape:gradient(y, {a, b})
    assert.is_nil(g[1])
    assert.are.equal(2, g[2]:item())
  end)

  it("returns gradients shaped like the sources, nested", function()
    local w, b = tide.Variable{{1, 2}}, tide.Variable{0.5}
    local x = f32{{3}, {4}}
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(tide.matmul(x, w) + b) end)
    local g = tape:gradient(y, {params = {w = w, b = b}, inputs = {x}})
    assert.are.same({{7, 7}}, g.params.w:totable())
    assert.are.same({4}, g.params.b:totable())
    assert.is_nil(g.inputs[1]) -- x was not watched
  end)

  it("gives nil, zeros or an error for unconnected sources", function()
    local x, z = tide.Variable(1.0), tide.Variable{1.0, 2.0}
    local tape = tide.GradientTape{persistent = true}
    local y = tape:run(function() return x * 2 end)
    assert.is_nil(tape:gradient(y, z))
    assert.are.same({0, 0}, tape:gradient(y, z, {unconnected_gradients = "zero"}):totable())
    local err = h.errors("is not connected to the target", function()
      tape:gradient(y, {x, z}, {unconnected_gradients = "error"})
    end)
    assert.truthy(err:find("Variable 'Variable'", 1, true) and err:find("(2,)", 1, true))
    h.errors("unconnected_gradients must be", function() tape:gradient(y, x, {unconnected_gradients = "maybe"}) end)
  end)

  it("gives nil for integer sources", function()
    local i = tide.tensor{1, 2}
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(i)
      return tide.reduce_sum(i:cast("float32") * 2)
    end)
    assert.is_nil(tape:gradient(y, i))
  end)

  it("computes gradients once unless persistent", function()
    local x = tide.Variable(2.0)
    local tape = tide.GradientTape()
    local y = tape:run(function() return x * x end)
    assert.are.equal(4, tape:gradient(y, x):item())
    h.errors("can compute gradients only once", function() tape:gradient(y, x) end)
    h.errors("already computed its gradients", function() tape:run(function() end) end)

    local p = tide.GradientTape{persistent = true}
    local y2, z2 = p:run(function() return x * x, x * x * x end)
    assert.are.equal(4, p:gradient(y2, x):item())
    assert.are.equal(12, p:gradient(z2, x):item())
    assert.are.equal(4, p:gradient(y2, x):item())
  end)

  it("differentiates twice with nested tapes: (x^3)'' = 6x", function()
    local x = tide.Variable(2.0)
    local outer, inner = tide.GradientTape(), tide.GradientTape()
    local dy
    outer:run(function()
      local y = inner:run(function() return x ^ 3 end)
      dy = inner:gradient(y, x)
    end)
    assert.are.equal(12, dy:item())
    assert.are.equal(12, outer:gradient(dy, x):item())
    -- and a third time
    local t1, t2, t3 = tide.GradientTape(), tide.GradientTape(), tide.GradientTape()
    local d1, d2
    t1:run(function()
      t2:run(function()
        local y = t3:run(function() return x * x * x * x end)
        d1 = t3:gradient(y, x)   -- 4x^3 = 32
      end)
      d2 = t2:gradient(d1, x)    -- 12x^2 = 48
    end)
    assert.are.equal(32, d1:item())
    assert.are.equal(48, d2:item())
    assert.are.equal(48, t1:gradient(d2, x):item()) -- 24x
  end)

  it("stops recording inside stop_recording and through stop_gradient", function()
    local x = tide.Variable(3.0)
    local tape = tide.GradientTape{persistent = true}
    local y, z = tape:run(function()
      local a = x * x
      local b = tape:stop_recording(function() return x * x end)
      return a + b, x * tide.stop_gradient(x)
    end)
    assert.are.equal(6, tape:gradient(y, x):item())
    assert.are.equal(3, tape:gradient(z, x):item())
  end)

  it("takes output_gradients and lists of targets", function()
    local x = tide.Variable{1, 2}
    local tape = tide.GradientTape{persistent = true}
    local y, z = tape:run(function() return x * 3, x * x end)
    assert.are.same({6, 30}, tape:gradient(y, x, {output_gradients = f32{2, 10}}):totable())
    assert.are.same({5, 7}, tape:gradient({y, z}, x):totable()) -- sum of both targets
  end)

  it("reports which variables it watched", function()
    local a, b = tide.Variable(1.0, {name = "a"}), tide.Variable(2.0, {name = "b"})
    local tape = tide.GradientTape()
    tape:run(function() return b * a + b end)
    local vs = tape:watched_variables()
    assert.are.equal(2, #vs)
    assert.are.equal("b", vs[1].name)
    assert.are.equal("a", vs[2].name)
  end)

  -- TF: gradient() on a persistent tape inside its context records the
  -- gradient ops on that tape (TF warns it is slower), so the same tape
  -- differentiates its own gradient.
  it("records its own gradient work when persistent and called inside run", function()
    local x = tide.Variable(2.0)
    local tape = tide.GradientTape{persistent = true}
    local dy
    tape:run(function()
      local y = x * x * x
      dy = tape:gradient(y, x)        -- 3x^2 = 12
    end)
    assert.are.equal(12, dy:item())
    assert.are.equal(12, tape:gradient(dy, x):item()) -- 6x
  end)

  -- TF pops a non-persistent tape when gradient() is called inside its
  -- context: it records nothing more, so it holds nothing more.
  it("stops recording after gradient() inside run when not persistent", function()
    local x = tide.Variable{1.0, 2.0}
    local tape = tide.GradientTape()
    local weak = setmetatable({}, {__mode = "v"})
    tape:run(function()
      local y = tide.reduce_sum(x * x)
      assert.are.same({2, 4}, tape:gradient(y, x):totable())
      weak[1] = tide.exp(x * 3)            -- not recorded now
    end)
    collectgarbage()
    collectgarbage()
    assert.is_nil(weak[1])
  end)

  it("releases each node's tensors during the backward walk when not persistent", function()
    local x = tide.Variable(tide.ones{1000})
    local weak = setmetatable({}, {__mode = "v"})
    local seen
    -- An identity whose gradient runs last in the walk (it is the first node):
    -- by then the later nodes, and the big intermediate they saved, are gone.
    local probe = tide.custom_gradient(function(v)
      return v * 1, function(dy)
        collectgarbage()
        collectgarbage()
        seen = weak[1] == nil
        return dy
      end
    end)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      local big = probe(x) * 2
      weak[1] = big
      return tide.reduce_sum(tide.sin(big))
    end)
    local g = tape:gradient(y, x)
    assert.are.equal(1000, g.shape[1])
    assert.is_true(seen)
  end)

  it("lists explicitly watched variables even when they are not read (as TF)", function()
    local a, b = tide.Variable(1.0, {name = "a"}), tide.Variable(2.0, {name = "b"})
    local tape = tide.GradientTape{watch_accessed_variables = false}
    tape:run(function()
      tape:watch(a)
      return b * 2
    end)
    local vs = tape:watched_variables()
    assert.are.equal(1, #vs)
    assert.are.equal("a", vs[1].name)
  end)

  it("checks output_gradients against each target's shape and dtype", function()
    local x = tide.Variable{1, 2, 3}
    local tape = tide.GradientTape{persistent = true}
    local y = tape:run(function() return x * 2 end)
    h.errors("output_gradients[1] has shape (2,) but target 1 has shape (3,)", function()
      tape:gradient(y, x, {output_gradients = f32{1, 2}})
    end)
    h.errors("output_gradients[1] is float64 but target 1 is float32", function()
      tape:gradient(y, x, {output_gradients = tide.tensor({1, 2, 3}, "float64")})
    end)
    assert.are.same({4, 4, 4}, tape:gradient(y, x, {output_gradients = 2}):totable()) -- a number broadcasts
  end)

  it("takes one target's output_gradients as g, {g}, a Lua value or a Variable", function()
    local x = tide.Variable{1, 2}
    local tape = tide.GradientTape{persistent = true}
    local y, z = tape:run(function() return x * x, x * 3 end)
    local g = f32{1.5, 10}
    for _, og in ipairs { g, {g}, {1.5, 10}, {{1.5, 10}}, tide.Variable{1.5, 10}, {tide.Variable{1.5, 10}} } do
      assert.are.same({3, 40}, tape:gradient(y, x, {output_gradients = og}):totable())
    end
    assert.are.same({3, 40}, tape:gradient(y, {x}, {output_gradients = {g}})[1]:totable())
    -- a list for a list of targets; a wrong shape or count names them
    assert.are.same({6, 70}, tape:gradient({y, z}, x, {output_gradients = {g, f32{1, 10}}}):totable())
    h.errors("output_gradients[1] has shape (3,) but target 1 has shape (2,)", function()
      tape:gradient(y, x, {output_gradients = {f32{1, 2, 3}}})
    end)
    h.errors("output_gradients[1] has shape (3,) but target 1 has shape (2,)", function()
      tape:gradient(y, x, {output_gradients = {1, 2, 3}})
    end)
    h.errors("output_gradients[2] has shape (3,) but target 2 has shape (2,)", function()
      tape:gradient({y, z}, x, {output_gradients = {g, f32{1, 2, 3}}})
    end)
    h.errors("output_gradients has 3 entries but there are 2 targets", function()
      tape:gradient({y, z}, x, {output_gradients = {g, g, g}})
    end)
  end)

  -- TF's tensors are immutable; tide's x[i] = v and x:copy_(v) write in place,
  -- which would silently corrupt what the tape saved for the gradient.
  it("refuses in-place writes to tensors it tracks while recording", function()
    local x = f32{1, 2, 3}
    local tape = tide.GradientTape()
    tape:run(function()
      tape:watch(x)
      local y = x * x
      h.errors("in-place write to a tensor a recording GradientTape tracks", function() x[0] = 10 end)
      h.errors("tide.slice_update", function() y:copy_(f32{0, 0, 0}) end)
      h.errors("in-place write", function() y[1] = 5 end) -- through a view
      local free = f32{0, 0}
      free[0] = 1                                           -- untracked tensors stay writable
      assert.are.same({1, 0}, free:totable())
    end)
    x[0] = 10 -- after recording, fine
    assert.are.same({10, 2, 3}, x:totable())
  end)

  -- TF reads a variable into a tensor (ReadVariableOp): an assign after the
  -- read leaves what the tape saved alone, whether or not it watches the variable.
  it("keeps the value a variable had when an op read it, through later assigns", function()
    local x = f32{3}
    local cases = { -- not trainable; trainable but not watched
      { {trainable = false}, {} }, { {}, {watch_accessed_variables = false} },
    }
    for _, c in ipairs(cases) do
      local w = tide.Variable(2.0, c[1])
      local tape = tide.GradientTape(c[2])
      local y = tape:run(function()
        tape:watch(x)
        local y = x * w
        w:assign(10)
        return y
      end)
      assert.are.same({2}, tape:gradient(y, x):totable())
    end
  end)

  -- TF's reset() inside the context starts over on a fresh record; the tape
  -- still stops recording when the context ends.
  it("resets inside run and still stops recording at the end", function()
    local x = f32{2}
    local tape = tide.GradientTape()
    local z = tape:run(function()
      tape:watch(x)
      local _ = x * x
      tape:reset()
      tape:watch(x)
      return x * 3
    end)
    assert.is_false(require("tide.tape_recorder").active)
    assert.are.same({3}, tape:gradient(z, x):totable())
  end)

  it("stops recording when fn raises, and re-raises", function()
    local tape = tide.GradientTape()
    local err = h.errors("boom", function() tape:run(function() error("boom") end) end)
    assert.truthy(err)
    local x = tide.Variable(1.0)
    local y = x * 2 -- not recorded
    h.errors("is not connected", function() tape:gradient(y, x, {unconnected_gradients = "error"}) end)
  end)

  it("rejects bad arguments", function()
    local tape = tide.GradientTape{persistent = true}
    h.errors("expected a function", function() tape:run(42) end)
    h.errors("expected a tensor or a Variable, got string", function() tape:watch("x") end)
    h.errors("sources are required", function() tape:gradient(f32{1}, nil) end)
    h.errors("must be a tensor or a Variable", function() tape:gradient(f32{1}, {"x"}) end)
    h.errors("target must be a tensor", function() tape:gradient("y", f32{1}) end)
    h.errors("unknown option 'persistant'", function() tide.GradientTape{persistant = true} end)
  end)
end)

describe("custom_gradient", function()
  -- TF's example: log(1 + e^x) with a gradient that stays finite for large x.
  local log1pexp = tide.custom_gradient(function(x)
    local e = tide.exp(x)
    return tide.log(1 + e), function(dy) return dy * (1 - 1 / (1 + e)) end
  end)

  it("uses the given gradient instead of the recorded ops", function()
    local x = tide.tensor(100.0, "float32")
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return log1pexp(x)
    end)
    assert.are.equal(1, tape:gradient(y, x):item())
  end)

  it("runs as a plain function outside tapes", function()
    assert.is_true(math.abs(log1pexp(tide.tensor(0.0, "float32")):item() - math.log(2)) < 1e-6)
  end)

  it("differentiates its gradient function again", function()
    local square = tide.custom_gradient(function(x)
      return x * x, function(dy) return dy * 2 * x end
    end)
    local x = tide.Variable(3.0)
    local outer, inner = tide.GradientTape(), tide.GradientTape()
    local g
    outer:run(function()
      local y = inner:run(function() return square(x) end)
      g = inner:gradient(y, x)
    end)
    assert.are.equal(6, g:item())
    assert.are.equal(2, outer:gradient(g, x):item())
  end)

  -- TF: variables f reads get their gradients from grad_fn, which is told
  -- them (variables=) and returns their gradients after the inputs' ones.
  it("gives variables read inside f the gradients grad_fn returns for them", function()
    local w = tide.Variable(3.0, {name = "w"})
    local told
    local f = tide.custom_gradient(function(x)
      return x * w, function(dy, o)
        told = o and o.variables
        return dy * 100, { tide.reduce_sum(dy) * 7 }   -- made-up values, to see they are the ones used
      end
    end)
    local x = f32{2}
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return f(x)
    end)
    local g = tape:gradient(y, {x, w})
    assert.are.same({100}, g[1]:totable())
    assert.are.equal(7, g[2]:item())
    assert.are.equal(1, #told)
    assert.are.equal(w, told[1])
    local lazy = tide.custom_gradient(function(x) return x * w, function(dy) return dy end end)
    local tape2 = tide.GradientTape()
    local y2 = tape2:run(function() return lazy(x) end)
    h.errors("custom_gradient: f reads variable 'w', so its gradient function must return their gradients",
      function() tape2:gradient(y2, w) end)
  end)

  -- TF checks the gradients grad_fn returns against the inputs.
  it("checks each gradient's shape and dtype against its input; nil is no gradient", function()
    local function grad_of(gf, ...)
      local f = tide.custom_gradient(function(a, b) return a * 2 + tide.reduce_sum(b), gf end)
      local x, z = f32{1, 2}, f32{{1, 2, 3}}
      local tape = tide.GradientTape()
      local y = tape:run(function()
        tape:watch(x); tape:watch(z)
        return f(x, z)
      end)
      return tape:gradient(y, {x, z}, ...)
    end
    local g = grad_of(function(dy) return dy * 2, nil end)
    assert.are.same({2, 2}, g[1]:totable())
    assert.is_nil(g[2])
    g = grad_of(function(dy) return nil, f32{{1, 1, 1}} end)
    assert.is_nil(g[1])
    assert.are.same({{1, 1, 1}}, g[2]:totable())
    assert.are.same({1.5, 2}, grad_of(function() return {1.5, 2} end)[1]:totable()) -- a Lua value converts
    h.errors("custom_gradient: the gradient for input 2 has shape [3] but the input has shape [1, 3]", function()
      grad_of(function(dy) return dy, f32{1, 2, 3} end)
    end)
    h.errors("custom_gradient: the gradient for input 1 has shape [] but the input has shape [2]", function()
      grad_of(function() return f32(1) end)
    end)
    h.errors("custom_gradient: the gradient for input 1 is float64 but the input is float32 ([2])", function()
      grad_of(function(dy) return dy:cast("float64") end)
    end)
    h.errors("custom_gradient: the gradient function returned a string for input 1", function()
      grad_of(function() return "x" end)
    end)
    h.errors("custom_gradient: the gradient function returned 3 gradients for 2 tensor input(s)", function()
      grad_of(function(dy) return dy, nil, dy end)
    end)
    local w = tide.Variable(3.0, {name = "w"})
    local f = tide.custom_gradient(function(x) return x * w, function(dy) return dy, { dy } end end)
    local tape = tide.GradientTape()
    local y = tape:run(function() return f(f32{1, 2}) end)
    h.errors("custom_gradient: the gradient for variable 'w' has shape [2] but the input has shape []",
      function() tape:gradient(y, w) end)
  end)

  it("requires a gradient function", function()
    local bad = tide.custom_gradient(function(x) return x end)
    h.errors("must return its outputs and then a gradient function", function() bad(f32{1}) end)
    h.errors("expected a function", function() tide.custom_gradient(3) end)
  end)
end)

describe("recompute_grad", function()
  it("gives the same gradients as the plain function, variables included", function()
    local w = tide.Variable({{0.5, -1}, {2, 0.25}}, {name = "w"})
    local function block(x) return tide.tanh(tide.matmul(x, w)) * 2 end
    local checkpointed = tide.recompute_grad(block)
    local x = f32{{1, 2}, {3, -1}}
    local function grads(f)
      local tape = tide.GradientTape()
      local y = tape:run(function()
        tape:watch(x)
        return tide.reduce_sum(f(f(x)))
      end)
      return tape:gradient(y, {x, w})
    end
    local plain, saved = grads(block), grads(checkpointed)
    h.close(saved[1], plain[1]:totable(), 1e-6)
    h.close(saved[2], plain[2]:totable(), 1e-6)
  end)

  it("runs as a plain function outside tapes", function()
    local f = tide.recompute_grad(function(x) return x * 2 end)
    assert.are.same({2, 4}, f(f32{1, 2}):totable())
  end)

  it("runs f again in the backward pass, and only then (a count of the calls)", function()
    local w = tide.Variable({{0.5, -1}, {2, 0.25}}, {name = "w"})
    local calls = 0
    local f = tide.recompute_grad(function(x) calls = calls + 1; return tide.tanh(tide.matmul(x, w)) end)
    local x = f32{{1, 2}}
    f(x)
    assert.are.equal(1, calls) -- no tape: once
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(f(x)) end)
    assert.are.equal(2, calls)  -- the forward pass keeps nothing ...
    tape:gradient(y, {w})
    assert.are.equal(3, calls)  -- ... so the backward pass runs f again
  end)

  it("takes a layer, as tf.recompute_grad takes a Keras layer", function()
    local d = tide.layers.Dense {3, activation = "tanh"}
    local x = f32{{1, 2}, {0.5, -1}}
    d(x)
    local ck = tide.recompute_grad(d)
    local function grads(f)
      local tape = tide.GradientTape()
      local y = tape:run(function() return tide.reduce_sum(tide.square(f(x))) end)
      return tape:gradient(y, d.trainable_weights)
    end
    local plain, saved = grads(d), grads(ck)
    h.close(saved[1], plain[1]:totable(), 1e-6)
    h.close(saved[2], plain[2]:totable(), 1e-6)
    h.errors("recompute_grad: expected a function or a layer, got number", tide.recompute_grad, 3)
  end)

  it("in a traced step: the same gradients, the blocks recomputed in the backward pass, less memory planned",
    function()
      local ws = {}
      for i = 1, 6 do
        ws[i] = {tide.Variable(tide.random.normal{16, 256} * 0.1), tide.Variable(tide.random.normal{256, 16} * 0.1)}
      end
      local function block(i)
        return function(x) return x + tide.matmul(tide.tanh(tide.matmul(x, ws[i][1])), ws[i][2]) end
      end
      local function step(checkpointed)
        local blocks = {}
        for i = 1, 6 do blocks[i] = checkpointed and tide.recompute_grad(block(i)) or block(i) end
        return tide.trace(function(x)
          local vars = {}
          for i = 1, 6 do vars[#vars + 1], vars[#vars + 2] = ws[i][1], ws[i][2] end
          local tape = tide.GradientTape()
          local y = tape:run(function()
            local z = x
            for i = 1, 6 do z = blocks[i](z) end
            return tide.reduce_sum(tide.square(z))
          end)
          return tape:gradient(y, vars)
        end)
      end
      local x = tide.random.normal{64, 16}
      local plain, saved = step(false), step(true)
      local gp, gs = plain(x), saved(x)
      for i = 1, 12 do h.close(gs[i], gp[i]:totable(), 1e-5) end
      local cp, cs = plain:get_concrete_function(x), saved:get_concrete_function(x)
      local function count(text, op)
        local n = 0
        for _ in text:gmatch("= " .. op .. "%(") do n = n + 1 end
        return n
      end
      -- each block's first matmul runs once more in the backward pass (CSE must not merge it with the forward
      -- pass's; the second's output the backward pass does not need, so DCE drops its rerun)
      assert.are.equal(count(cp:graph_text(), "matmul") + 6, count(cs:graph_text(), "matmul"))
      assert.is_true(cs.graph:planned_bytes() < 0.6 * cp.graph:planned_bytes(),
        string.format("planned %d bytes checkpointed, %d plain", cs.graph:planned_bytes(), cp.graph:planned_bytes()))
    end)
end)
