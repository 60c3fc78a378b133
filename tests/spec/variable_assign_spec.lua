-- Variable updates (assign, assign_add, assign_sub) take a value of exactly the
-- variable's shape and dtype, as TF's assign ops do, eager and traced alike:
-- no broadcasting. A Lua number (or boolean) stands for the variable's shape
-- filled with it.
local tide = require "tide"
local h = require "helpers"

local MODES = { "assign", "assign_add", "assign_sub" }

-- Run `fn(v, x)` eagerly and inside a traced function; returns the two errors.
local function eager_and_traced(v, x, mode)
  local ok1, e1 = pcall(function() return v[mode](v, x) end)
  local f = tide.trace(function(value) v[mode](v, value) return v:read_value() end)
  local ok2, e2 = pcall(f, x)
  return ok1, tostring(e1), ok2, tostring(e2)
end

describe("Variable updates", function()
  it("refuse a value that would broadcast, eager and traced, naming both shapes", function()
    for _, mode in ipairs(MODES) do
      local v = tide.Variable(tide.zeros{2, 3})
      local ok1, e1, ok2, e2 = eager_and_traced(v, tide.ones{3}, mode)
      assert.is_false(ok1)
      assert.is_false(ok2)
      local msg = mode .. ": the variable has shape [2, 3] but the value has shape [3]"
      assert.is_truthy(e1:find(msg, 1, true), e1)
      assert.is_truthy(e2:find(msg, 1, true), e2)
      assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, v:numpy()) -- unchanged
    end
  end)

  it("refuse a [1] value for a [3] variable (the issue's second probe)", function()
    for _, mode in ipairs(MODES) do
      local v = tide.Variable(tide.zeros{3})
      local ok1, e1, ok2, e2 = eager_and_traced(v, tide.ones{1}, mode)
      assert.is_false(ok1)
      assert.is_false(ok2)
      local msg = mode .. ": the variable has shape [3] but the value has shape [1]"
      assert.is_truthy(e1:find(msg, 1, true), e1)
      assert.is_truthy(e2:find(msg, 1, true), e2)
      assert.are.same({ 0, 0, 0 }, v:numpy())
    end
  end)

  it("refuse a [1, 3] value for a [2, 3] variable and a [3] for a [3, 1]", function()
    local v = tide.Variable(tide.zeros{2, 3})
    h.errors("assign_sub: the variable has shape [2, 3] but the value has shape [1, 3]", function()
      v:assign_sub(tide.ones{1, 3})
    end)
    local w = tide.Variable(tide.zeros{3, 1})
    h.errors("assign_add: the variable has shape [3, 1] but the value has shape [3]", function()
      w:assign_add(tide.ones{3})
    end)
    h.errors("assign_add: the variable has shape [3, 1] but the value has shape [3]", function()
      w:assign_add{ 1, 2, 3 }
    end)
    h.errors("assign_add: the variable has shape [] but the value has shape [1]", function()
      tide.Variable(1):assign_add(tide.ones{1})
    end)
  end)

  it("refuse another dtype, naming both", function()
    local v = tide.Variable(tide.zeros{3})
    for _, mode in ipairs(MODES) do
      local ok1, e1, ok2, e2 = eager_and_traced(v, tide.ones({3}, "int32"), mode)
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.is_truthy(e1:find(mode .. ": the variable is float32 but the value is int32", 1, true), e1)
      assert.is_truthy(e2:find("the variable is float32 but the value is int32", 1, true), e2)
    end
  end)

  it("take a value of the variable's shape, a table, or another Variable", function()
    local v = tide.Variable(tide.zeros{2, 2})
    v:assign_add(tide.ones{2, 2})
    assert.are.same({ { 1, 1 }, { 1, 1 } }, v:numpy())
    v:assign_sub{ { 1, 0 }, { 0, 1 } }
    assert.are.same({ { 0, 1 }, { 1, 0 } }, v:numpy())
    v:assign_add(tide.Variable(tide.ones{2, 2}))
    assert.are.same({ { 1, 2 }, { 2, 1 } }, v:numpy())
    local f = tide.trace(function(x) v:assign_sub(x) return v:read_value() end)
    assert.are.same({ { 0, 1 }, { 1, 0 } }, f(tide.ones{2, 2}):totable())
  end)

  it("take a Lua number for any shape, eager and traced alike", function()
    local v = tide.Variable(tide.zeros{2, 3})
    v:assign_add(2)
    assert.are.same({ { 2, 2, 2 }, { 2, 2, 2 } }, v:numpy())
    v:assign_sub(0.5)
    assert.are.same({ { 1.5, 1.5, 1.5 }, { 1.5, 1.5, 1.5 } }, v:numpy())
    v:assign(4)
    assert.are.same({ { 4, 4, 4 }, { 4, 4, 4 } }, v:numpy())
    local f = tide.trace(function() v:assign_add(1) v:assign_sub(0.25) return v:read_value() end)
    assert.are.same({ { 4.75, 4.75, 4.75 }, { 4.75, 4.75, 4.75 } }, f():totable())
    local g = tide.trace(function() v:assign(0) return v:read_value() end)
    assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, g():totable())
    local counter = tide.Variable(0, { dtype = "int32" })
    counter:assign_add(1)
    assert.are.equal(1, counter:item())
    h.errors("assign_add: cannot convert 1.5 to int32", function() counter:assign_add(1.5) end)
    local flags = tide.Variable{ true, false }
    flags:assign(true)
    assert.are.same({ true, true }, flags:numpy())
    h.errors("expected true or false for a bool tensor", function() flags:assign(1) end)
  end)
end)
