-- #v on a Variable gives what # gives on its value. A Variable is a userdata
-- for that (LuaJIT's Lua 5.1 semantics ignore __len on tables): this spec
-- checks that it still does everything a Variable did as a table: fields,
-- methods, printing, operators, indexing, op arguments, tapes, traces, and
-- the collection of its handle.
local tide = require "tide"
local h = require "helpers"

describe("#v on a Variable", function()
  it("is the size of dim 0, as for its value (the issue's probe)", function()
    local v = tide.Variable(tide.zeros{4, 2})
    assert.are.equal(4, #v)
    assert.are.equal(#v:read_value(), #v)
    assert.are.equal(3, #tide.Variable{1, 2, 3})
    assert.are.equal(0, #tide.Variable(tide.zeros{0, 5}))
    assert.are.equal(2, #tide.Variable(tide.ones({2, 3, 4}, "int32"), { dtype = "int32" }))
  end)

  it("is an error for a 0-d variable, as for a 0-d tensor", function()
    h.errors("#: a 0-d tensor has no length", function() return #tide.Variable(3) end)
  end)

  it("works inside a traced function and in a loop bound", function()
    local v = tide.Variable(tide.ones{5, 2})
    local f = tide.trace(function(x)
      local s = x
      for _ = 1, #v do s = s + 1 end
      return s
    end)
    assert.are.equal(5, f(tide.tensor(0.0)):item())
    local total = 0
    for i = 0, #v - 1 do total = total + v[i]:sum():item() end
    assert.are.equal(10, total)
  end)
end)

describe("a Variable as a userdata", function()
  it("is a userdata whose metatable is tide.Variable, and not a tensor", function()
    local v = tide.Variable{1, 2}
    assert.are.equal("userdata", type(v))
    assert.is_true(tide.is_variable(v))
    assert.is_false(tide.is_tensor(v))
    assert.are.equal(tide.Variable, getmetatable(v))
    assert.is_false(tide.is_variable({}))
    assert.is_false(tide.is_variable(newproxy(true)))
    assert.is_false(tide.is_variable(tide.ones{2}))
    assert.is_false(tide.is_variable(nil))
    assert.has_error(function() setmetatable(v, {}) end)
  end)

  it("keeps name and trainable, settable; refuses to overwrite methods", function()
    local v = tide.Variable(1.5, { name = "w", trainable = false })
    assert.are.equal("w", v.name)
    assert.is_false(v.trainable)
    v.name = "w2"
    v.trainable = true
    assert.are.equal("w2", v.name)
    assert.is_true(v.trainable)
    h.errors("Variable: trainable must be true or false", function() v.trainable = "yes" end)
    h.errors("Variable: cannot set 'assign'", function() v.assign = 1 end)
    h.errors("Variable: cannot set 'shape'", function() v.shape = { 3 } end)
    assert.are.equal("<tide.Variable 'w2' shape=() dtype=float32, value=1.5>", tostring(v))
  end)

  it("keeps fields of the user's own, in its own table (not the globals)", function()
    local v = tide.Variable{1, 2}
    v.layer = "dense"
    v.tag = { 1, 2 }
    assert.are.equal("dense", v.layer)
    assert.are.same({ 1, 2 }, v.tag)
    assert.is_nil(rawget(_G, "layer"))
    assert.is_nil(rawget(_G, "tag"))
    local w = tide.Variable{3}
    h.errors("Variable has no method or property 'layer'", function() return w.layer end)
    assert.are.same({ 2, 4 }, v:mul(2):totable()) -- tensor methods still reach the value
  end)

  it("reads, indexes and writes rows as before", function()
    local v = tide.Variable{{1, 2}, {3, 4}}
    assert.are.same({ 3, 4 }, v[1]:totable())
    assert.are.same({ 1, 2 }, v[-2]:totable())
    v[0] = { 9, 9 }
    assert.are.same({ { 9, 9 }, { 3, 4 } }, v:numpy())
    v[1] = 0
    assert.are.same({ { 9, 9 }, { 0, 0 } }, v:numpy())
    assert.are.same({ { 9, 9 }, { 0, 0 } }, v:read_value():totable())
    assert.are.same({ 2, 2 }, v.shape)
    assert.are.equal("float32", v.dtype)
    assert.are.equal(2, v.ndim)
    assert.are.equal("cpu", v.device)
  end)

  it("takes part in operators and ops", function()
    local v = tide.Variable{1, 2, 3}
    assert.are.same({ 2, 4, 6 }, (v + v):totable())
    assert.are.same({ 0, 1, 2 }, (v - 1):totable())
    assert.are.same({ 3, 6, 9 }, (3 * v):totable())
    assert.are.same({ 1, 4, 9 }, (v ^ 2):totable())
    assert.are.same({ -1, -2, -3 }, (-v):totable())
    assert.are.same({ 1, 0, 1 }, (v % 2):totable())
    assert.are.same({ 0.5, 1, 1.5 }, (v / 2):totable())
    assert.are.same({ 2, 3, 4 }, tide.add(v, 1):totable())
    assert.are.equal(14, tide.reduce_sum(v * v):item())
    assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, tide.stack{ v, v }:totable())
    assert.are.same({ { 1, 2, 3 }, { 2, 4, 6 } }, tide.tensor{ v, v * 2 }:totable())
    local s = tide.Variable(2.0)
    assert.is_true(s < tide.tensor(3.0, "float32"))
    assert.is_true(tide.tensor(1.0, "float32") < s)
    assert.is_true(s <= tide.Variable(2.0))
    assert.is_true(("x" .. s):find("tide.Variable", 1, true) ~= nil)
    assert.are.same({ { 5, 6 } }, tide.nn.embedding_lookup({ tide.Variable{{5, 6}, {7, 8}} }, { 0 }):totable())
  end)

  it("is watched by tapes and differentiated", function()
    local w = tide.Variable{1.0, 2.0}
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(w * w) end)
    assert.are.same({ 2, 4 }, tape:gradient(y, w):totable())
    local frozen = tide.Variable(3.0, { trainable = false })
    local t2 = tide.GradientTape()
    local z = t2:run(function() return frozen * 2 end)
    assert.is_nil(t2:gradient(z, frozen))
  end)

  it("is read by reference in traces, as an argument or captured", function()
    local v = tide.Variable{1.0, 2.0}
    local f = tide.trace(function(var, x) return var * x end)
    assert.are.same({ 2, 4 }, f(v, tide.tensor(2.0, "float32")):totable())
    v:assign{3, 4}
    assert.are.same({ 6, 8 }, f(v, tide.tensor(2.0, "float32")):totable())
    local g = tide.trace(function(x) v:assign_add(x) return v:read_value() end)
    assert.are.same({ 4, 5 }, g(tide.ones{2}):totable())
    local w = tide.Variable{0.0, 0.0}
    assert.are.same({ 0, 0 }, f(w, tide.tensor(2.0, "float32")):totable()) -- another Variable: its own trace
  end)

  it("carries through control flow", function()
    local v = tide.Variable(0.0)
    local f = tide.trace(function(n)
      return tide.while_loop(function(i) return i:lt(n) end, function(i)
        v:assign_add(1.0)
        return i + 1
      end, { tide.tensor(0) })
    end)
    f(tide.tensor(3))
    assert.are.equal(3, v:item())
  end)

  it("is collected when unused, its handle with it (user fields that point back too)", function()
    local info = tide.config.memory_info
    collectgarbage()
    collectgarbage()
    local base = info().current
    for _ = 1, 50 do
      local v = tide.Variable(tide.zeros{256, 256})
      v.self = v -- a cycle through its own fields
      v[0] = 1
    end
    collectgarbage()
    collectgarbage()
    collectgarbage()
    assert.is_true(info().current <= base, string.format("%d bytes still held (baseline %d)", info().current, base))
  end)
end)
