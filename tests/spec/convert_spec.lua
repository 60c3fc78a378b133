-- Lua tables to tensors (tide.convert) and the list arguments of ops: a table
-- stands for values only when its keys are exactly 1..n and it is a tree of
-- at most 8 levels. Holes, sparse or foreign keys, tables that contain
-- themselves, ragged nesting and mixed kinds are errors naming the position,
-- never a hang or a silently different tensor.
local tide = require "tide"
local h = require "helpers"

-- Runs fn(...) with a time limit (a hang is a failure, not a stuck test run).
local function within(seconds, fn, ...)
  local deadline = os.clock() + seconds
  debug.sethook(function()
    if os.clock() > deadline then debug.sethook(); error("timed out: the call hung", 2) end
  end, "", 1e5)
  local r = { pcall(fn, ...) }
  debug.sethook()
  return unpack(r)
end

-- Assert fn raises an error containing needle, within a time limit.
local function refuses(needle, fn, ...)
  local ok, err = within(5, fn, ...)
  assert(not ok, "expected an error containing '" .. needle .. "', but the call succeeded")
  err = tostring(err)
  assert(not err:find("timed out", 1, true), "the call hung: " .. err)
  assert(err:find(needle, 1, true), "expected an error containing '" .. needle .. "', got: " .. err)
end

describe("tide.tensor from tables", function()
  it("refuses a table that contains itself instead of hanging", function()
    local t = {}
    t[1] = t
    refuses("tensor: the table contains itself (its entry [1] leads back to it)", tide.tensor, t)
    local u = { {} }
    u[1][1] = u
    refuses("the table contains itself (its entry [1][1] leads back to it)", tide.tensor, u)
    local w = { 1 }
    w[2] = w
    refuses("tensor: element [2] is a table, expected a number, a boolean or a string", tide.tensor, w)
    local many = {} -- many references to itself: no blow-up of the search
    for i = 1, 100 do many[i] = many end
    refuses("the table contains itself", tide.tensor, many)
    local deep2 = { { 1, 2 }, { 3, 4 } }
    deep2[2][2] = deep2
    refuses("tensor: element [2][2] is a table", tide.tensor, deep2)
  end)

  it("refuses a table that contains itself next to tensors (the packing path)", function()
    local c = { tide.ones{2} }
    c[2] = c
    refuses("nested more than 8 levels deep (or contains itself)", tide.tensor, c)
    local d = { tide.ones{2}, tide.ones{2} }
    d[1] = d
    refuses("the table contains itself", tide.tensor, d)
  end)

  it("refuses nesting deeper than a tensor's 8 dims, and takes 8", function()
    local deep = 1
    for _ = 1, 8 do deep = { deep } end
    assert.are.same({1, 1, 1, 1, 1, 1, 1, 1}, tide.tensor(deep).shape)
    refuses("tensor: the table is nested more than 8 levels deep; a tensor has at most 8 dims", tide.tensor,
      { deep })
  end)

  it("refuses holes, naming them (the issue's {1, nil, 3})", function()
    refuses("tensor: the table has a hole at [2] (nil)", tide.tensor, { 1, nil, 3 })
    -- a trailing nil is no entry at all in Lua: {3, nil} is {3}, so this is ragged
    refuses("ragged nested table: the table at [2] has 1 entries", tide.tensor, { { 1, 2 }, { 3, nil } })
    refuses("tensor: the table at [1] has a hole at [2] (nil)", tide.tensor, { { 1, nil, 3 }, { 4, 5, 6 } })
    refuses("has a hole at [1] (nil)", tide.tensor, { nil, 2 })
    refuses("tensor: the table has a hole at [2] (nil)", tide.tensor, { { 1 }, nil, { 3 } })
    refuses("tensor: the table has a hole at [2]", tide.tensor, { true, nil, false })
  end)

  it("refuses keys other than 1..n, naming them (the issue's {a = 1, b = 2})", function()
    local ok, err = pcall(tide.tensor, { a = 1, b = 2 })
    assert.is_false(ok)
    assert.is_truthy(err:find('the table has the key "[ab]"'))
    refuses('tensor: the table at [2] has the key "x"', tide.tensor, { { 1, 2 }, { 3, 4, x = 1 } })
    refuses("tensor: the table has the key 1.5", tide.tensor, { [1.5] = 1 })
    refuses("tensor: the table has the key 0", tide.tensor, { [0] = 1, 2 })
    refuses("tensor: the table has the key -1", tide.tensor, { 1, [-1] = 2 })
    refuses("tensor: the table has the key true", tide.tensor, { 1, [true] = 2 })
    refuses('the table has the key "n"', tide.tensor, { 1, 2, n = 2 })
  end)

  it("refuses sparse lists, naming the hole (the issue's {1, 2, [5] = 3})", function()
    refuses("tensor: the table has a hole at [3] (nil) before its entry [5]", tide.tensor, { 1, 2, [5] = 3 })
    refuses("the table at [1] has a hole at [2] (nil) before its entry [9]", tide.tensor, { { 1, [9] = 2 } })
    refuses("has a hole", tide.tensor, { [2] = 1 })
  end)

  it("refuses ragged nesting, naming the position", function()
    refuses("ragged nested table: the table at [2] has 1 entries, expected 2", tide.tensor, { { 1, 2 }, { 3 } })
    refuses("ragged nested table: element [2] should be a list of 2, got a number", tide.tensor, { { 1, 2 }, 3 })
    refuses("tensor: element [1][2] is a table", tide.tensor, { { 1, { 2 } } })
    refuses("ragged nested table: the table at [2][1] has 3 entries, expected 2", tide.tensor,
      { { { 1, 2 } }, { { 1, 2, 3 } } })
  end)

  it("refuses mixed kinds and values that are not numbers, naming where", function()
    refuses("cannot mix booleans and numbers in one tensor (a number at [1], a boolean at [2])", tide.tensor,
      { 1, true })
    refuses("(a number at [1][1], a boolean at [2][1])", tide.tensor, { { 1, 2 }, { true, false } })
    refuses("tensor: cannot mix strings and numbers in one tensor (a string at [2], a number at [1])", tide.tensor, { 1, "a" })
    refuses("tensor: element [1][2] is a function", tide.tensor, { { 1, print } })
    refuses("element [1] is a userdata", tide.tensor, { newproxy() })
    refuses("tensor: cannot convert 1.5 to int32 (element [1][1])", tide.tensor, { { 1.5, 2 } }, "int32")
    refuses("tensor: 300 is out of range for int8 (element [2][2])", tide.tensor, { { 1, 2 }, { 3, 300 } }, "int8")
    refuses("expected true or false for a bool tensor, got 1 (element [1])", tide.tensor, { 1 }, "bool")
    refuses("cannot put a boolean in a float32 tensor (element [1][1])", tide.tensor, { { true } }, "float32")
  end)

  it("still converts well-formed tables, of every shape and kind", function()
    assert.are.same({ 1, 2, 3 }, tide.tensor{ 1, 2, 3 }:totable())
    assert.are.same({ { 1, 2 }, { 3, 4 } }, tide.tensor{ { 1, 2 }, { 3, 4 } }:totable())
    assert.are.same({ 0 }, tide.tensor{}.shape)
    assert.are.same({ 2, 0 }, tide.tensor{ {}, {} }.shape)
    assert.are.equal("int64", tide.tensor{ 1, 2 ^ 40 }.dtype)
    assert.are.equal("float32", tide.tensor{ 1, 0.5 }.dtype)
    assert.are.same({ true, false }, tide.tensor{ true, false }:totable())
    local t = {}
    for i = 1, 1000 do t[i] = i end
    assert.are.equal(500500, tide.tensor(t):sum():item())
    local built = {} -- filled out of order: still a list
    built[3], built[1], built[2] = 3, 1, 2
    assert.are.same({ 1, 2, 3 }, tide.tensor(built):totable())
    -- tables of tensors are packed, as TF's convert_to_tensor
    assert.are.same({ { 1, 1 }, { 1, 1 } }, tide.tensor{ tide.ones{2}, tide.ones{2} }:totable())
    assert.are.same({ { 1, 2 }, { 3, 4 } }, tide.tensor{ { 1, 2 }, { tide.tensor(3), 4 } }:totable())
  end)

  it("refuses holes and sparse keys in tables of tensors", function()
    local a = tide.ones{2}
    refuses("tensor: the table has a hole at [2] (nil)", tide.tensor, { a, nil, a })
    refuses("tensor: the table has a hole at [3] (nil) before its entry [4]", tide.tensor, { a, a, [4] = a })
    refuses('tensor: the table has the key "k"', tide.tensor, { a, a, k = a })
  end)

  it("applies to every op argument made from a table", function()
    local x = tide.ones{3}
    refuses("add: the table has a hole at [2] (nil)", tide.add, x, { 1, nil, 3 })
    refuses("add: the table has a hole at [3] (nil) before its entry [5]", function() return x + { 1, 2, [5] = 3 } end)
    refuses("mul: the table has the key", tide.mul, x, { 1, 2, 3, z = 1 })
    local self_ref = {}
    self_ref[1] = self_ref
    refuses("add: the table contains itself", tide.add, x, self_ref)
    refuses("Variable: the table contains itself", tide.Variable, self_ref)
    refuses("Variable: the table has a hole at [2]", tide.Variable, { 1, nil, 3 })
    local v = tide.Variable{ 1, 2, 3 }
    refuses("assign: the table has a hole at [2]", function() return v:assign{ 1, nil, 3 } end)
  end)

  it("applies to integer-list arguments: shapes, axes, perms", function()
    local x = tide.ones{ 2, 3 }
    refuses("reshape: shape has a hole at [3] (nil) before its entry [5]", tide.reshape, x, { 2, 3, [5] = 1 })
    refuses("reshape: shape has a hole at [2] (nil)", tide.reshape, x, { 2, nil, 3 })
    refuses("transpose: perm has a hole", tide.transpose, x, { 1, [3] = 0 })
    refuses("reduce_sum: axis has a hole at [2] (nil) before its entry [3]", tide.reduce_sum, x, { 0, [3] = 1 })
    refuses("zeros: shape has a hole at [2] (nil)", tide.zeros, { 2, [4] = 3 })
    refuses("tile: multiples has", tide.tile, x, { 1, 2, [4] = 3 })
    assert.are.same({ 3, 2 }, tide.reshape(x, { 3, 2 }).shape)
  end)

  it("applies to lists of tensors: concat and stack", function()
    local a = tide.ones{2}
    refuses("concat: values has a hole at [3] (nil) before its entry [4]", tide.concat, { a, a, [4] = a })
    refuses("concat: values has a hole at [2] (nil)", tide.concat, { a, nil, a })
    refuses("stack: values has a hole at [2]", tide.stack, { a, nil, a })
    refuses('stack: values has the key "axis"', tide.stack, { a, a, axis = 1 })
    assert.are.same({ 4 }, tide.concat({ a, a }, 0).shape)
  end)
end)
