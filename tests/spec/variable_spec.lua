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

describe("copy-on-write of a Variable's values", function()
  local function immutable(fn)
    h.errors("in-place write into a value read from a tide.Variable", fn)
  end

  it("refuses in-place writes into a read, on every path, leaving all values unchanged", function()
    local v = tide.Variable{{1, 2}, {3, 4}}
    local r = v:read_value()
    local earlier = v:read_value()
    immutable(function() r[0] = 5 end)
    immutable(function() v[0][1] = 7 end)
    immutable(function() v:read_value()[0]:copy_(tide.tensor({1, 2}, "float32")) end)
    immutable(function() tide.tensor(v)[1] = 1 end)
    immutable(function() v:reshape{4}[0] = 1 end)
    immutable(function() tide.stop_gradient(v):copy_(0) end)
    immutable(function() r:copy_(0) end)
    assert.are.same({{1, 2}, {3, 4}}, v:numpy())
    assert.are.same({{1, 2}, {3, 4}}, r:totable())
    assert.are.same({{1, 2}, {3, 4}}, earlier:totable())
    -- an earlier read stays immutable after the variable moved on
    v:assign{{0, 0}, {0, 0}}
    immutable(function() r[0] = 5 end)
    immutable(function() v:read_value()[1] = 5 end) -- the copy-on-write storage is the variable's too
    assert.are.same({{1, 2}, {3, 4}}, r:totable())
  end)

  it("names the shape and dtype, and what to do instead", function()
    local v = tide.Variable{1, 2}
    local err = h.errors("setindex: in-place write into a value read from a tide.Variable (shape (), float32)",
      function() v:read_value()[0] = 1 end)
    assert.truthy(err:find("v[i] = x", 1, true))
    assert.truthy(err:find("tide.identity(x)", 1, true))
  end)

  it("writes through v[i] = x without changing earlier reads", function()
    local v = tide.Variable{{1, 2}, {3, 4}}
    local before, row = v:read_value(), v[1]
    v[0] = 9
    v[-1] = {5, 6}
    v[1] = tide.Variable{7, 8}
    assert.are.same({{9, 9}, {7, 8}}, v:numpy())
    assert.are.same({{1, 2}, {3, 4}}, before:totable())
    assert.are.same({3, 4}, row:totable())
    h.errors("setindex: index 2 is out of range for dimension 0 of size 2", function() v[2] = 1 end)
    h.errors("setindex: cannot index a 0-d variable", function() tide.Variable(1.0)[0] = 1 end)
    h.errors("cannot convert 1.5 to int32", function() tide.Variable({1, 2}, {dtype = "int32"})[0] = 1.5 end)
    assert.are.same({{9, 9}, {7, 8}}, v:numpy())
  end)

  it("keeps a tape's saved reads when v[i] = x writes during recording", function()
    local v = tide.Variable{1, 2}
    local tape = tide.GradientTape()
    local y = tape:run(function()
      local y = v * v
      v[0] = 100
      return y
    end)
    assert.are.same({2, 4}, tape:gradient(y, v):totable())
  end)

  it("gives a copy of its own that can be written with tide.identity", function()
    local v = tide.Variable{1, 2}
    local c = tide.identity(v)
    c[0] = 5
    assert.are.same({5, 2}, c:totable())
    assert.are.same({1, 2}, v:numpy())
    local t = tide.tensor{1.5, 2}
    local d = t:identity()
    d[0] = 0
    assert.are.same({1.5, 2}, t:totable())
  end)

  it("is an update node when traced: v[i] = x runs at each call", function()
    local v = tide.Variable{{1, 2}, {3, 4}}
    local before = v:read_value()
    local f = tide.trace(function(x)
      v[1] = x
      v[0] = 7
      return v:read_value()
    end)
    assert.are.same({{7, 7}, {5.5, 6.5}}, f(tide.tensor{5.5, 6.5}):totable())
    v:assign{{0, 0}, {0, 0}}
    assert.are.same({{7, 7}, {1.5, 2.5}}, f(tide.tensor{1.5, 2.5}):totable())
    assert.are.same({{7, 7}, {1.5, 2.5}}, v:numpy())
    assert.are.same({{1, 2}, {3, 4}}, before:totable())
  end)
end)
