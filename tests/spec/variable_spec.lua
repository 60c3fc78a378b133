-- Variables where tensors are due (tide.tensor, creation functions, list
-- and scalar arguments) and the copy-on-write of their values.
local tide = require "tide"
local h = require "helpers"

describe("a Variable where a tensor is due", function()
  it("tide.tensor(v) is its current value, unchanged by later assigns", function()
    local v = tide.Variable{1, 2, 3}
    local t = tide.tensor(v)
    assert.is_true(tide.is_tensor(t))
    assert.are.same({3}, t.shape)
    assert.are.equal("float32", t.dtype)
    assert.are.same({1, 2, 3}, t:totable())
    v:assign{4, 5, 6}
    assert.are.same({1, 2, 3}, t:totable())
    assert.are.same({4, 5, 6}, tide.convert_to_tensor(v):totable())
    assert.are.equal("int32", tide.tensor(v, "int32").dtype)
    assert.are.same({4, 5, 6}, tide.constant(v, "float64"):totable())
  end)

  it("tide.tensor(v) and v:read_value() are reads a tape tracks", function()
    local v = tide.Variable(3.0)
    local tape = tide.GradientTape()
    local y = tape:run(function() return v:read_value() * 2 + tide.tensor(v) * 3 end)
    assert.are.equal(5, tape:gradient(y, v):item())
  end)

  it("packs nested tables of tensors and Variables, as TF does", function()
    local v = tide.Variable{1, 2}
    assert.are.same({{1, 2}, {2, 4}}, tide.tensor{v, v * 2}:totable())
    local w = tide.Variable(5.0)
    local t = tide.tensor{{w, 3}, {1, 2}}
    assert.are.equal("float32", t.dtype)
    assert.are.same({{5, 3}, {1, 2}}, t:totable())
    assert.are.equal("float64", tide.tensor({v, {3, 4}}, "float64").dtype)
    h.errors("values[2] has shape (1,) but values[1] has shape (2,)",
      function() return tide.tensor{tide.tensor{1.0, 2.0}, {3}} end)
    -- the packed value is differentiable
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(tide.tensor{w, w * 2}) end)
    assert.are.equal(3, tape:gradient(y, w):item())
  end)

  it("gives shapes and scalars to creation functions", function()
    local dims = tide.Variable({2, 3}, {dtype = "int32"})
    assert.are.same({{1.5, 1.5, 1.5}, {1.5, 1.5, 1.5}}, tide.fill(dims, 1.5):totable())
    assert.are.same({2, 3}, tide.zeros(dims).shape)
    assert.are.same({2, 3}, tide.ones(dims).shape)
    assert.are.same({2.5, 2.5}, tide.fill({2}, tide.Variable(2.5)):totable())
    assert.are.same({0, 1, 2}, tide.range(tide.Variable(3.0)):totable())
    assert.are.same({0, 0.5, 1}, tide.linspace(tide.Variable(0.0), 1, 3):totable())
    assert.are.same({{1, 2}, {3, 4}}, tide.reshape(tide.Variable{1, 2, 3, 4}, tide.Variable({2, 2},
      {dtype = "int32"})):totable())
    assert.are.same({3}, tide.reduce_sum(tide.tensor{{1, 2}}, tide.Variable(1, {dtype = "int32"})):totable())
    assert.are.same({1, 2}, tide.stack{tide.Variable(1.0), 2}:totable())
    assert.are.same({0, 0}, tide.zeros_like(tide.Variable{1, 2}):totable())
    h.errors("fill: shape must be an integer tensor, got float32", function() tide.fill(tide.Variable{2}, 1) end)
  end)
end)
