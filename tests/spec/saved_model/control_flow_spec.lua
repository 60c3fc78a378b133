-- SavedModels of graphs with cond, while_loop and TensorArray give the same
-- results after loading (replayed in Lua and rebuilt by C alone).
local tide = require "tide"
local prog = require "tide_program"
local sm = require "tide.saved_model"

describe("tide.saved_model and control flow", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("smcf") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  local function round_trip(f, ...)
    sm.save(f, dir .. "/m")
    local m = sm.load(dir .. "/m")
    local want = { f(...) }
    local got = m.signatures.serving_default(...)
    local c = { m:c_function("serving_default")(...) }
    for i, w in ipairs(want) do
      assert.are.same(w:totable(), got["output_" .. (i - 1)]:totable())
      assert.are.same(w:totable(), c[i]:totable())
    end
    return m
  end

  it("cond: both branches, with captured values", function()
    local f = tide.trace(function(x, k)
      return tide.cond(tide.reduce_sum(x):gt(0), function() return x * k end, function() return x - k end)
    end, {input_signature = {tide.TensorSpec({tide.None}, "float32"), tide.TensorSpec({}, "float32")}})
    round_trip(f, tide.tensor({1, 2}, "float32"), tide.tensor(3, "float32"))
    round_trip(f, tide.tensor({-1, -2, 0.5}, "float32"), tide.tensor(3, "float32"))
  end)

  it("while_loop with a run-time bound, a captured value and a variable", function()
    local v = tide.Variable(tide.tensor({1, 2}, "float32"), {name = "v"})
    local f = tide.trace(function(x, n)
      local i, acc = tide.while_loop(function(i, a) return i:lt(n) end,
        function(i, a) return i + 1, a + x * v end, {tide.tensor(0), tide.zeros_like(x)})
      return i, acc
    end, {input_signature = {tide.TensorSpec({2}, "float32"), tide.TensorSpec({}, "int32")}})
    local m = round_trip(f, tide.tensor({1, -3}, "float32"), tide.tensor(4))
    m.variables[1]:assign(tide.tensor({0, 1}, "float32"))
    local o = m.signatures.serving_default(tide.tensor({1, -3}, "float32"), tide.tensor(4))
    assert.are.same({0, -12}, o.output_1:totable())
  end)

  it("a while_loop whose variable grows (a None dim) and maximum_iterations", function()
    local f = tide.trace(function(x)
      local _, y = tide.while_loop(function(i, y) return i:lt(10) end,
        function(i, y) return i + 1, tide.concat({y, y}, 0) end, {tide.tensor(0), x}, {maximum_iterations = 3})
      return y
    end, {input_signature = {tide.TensorSpec({1}, "float32")}})
    round_trip(f, tide.tensor({7}, "float32"))
  end)

  it("TensorArray written in a loop and stacked", function()
    local f = tide.trace(function(x, n)
      local ta = tide.TensorArray("float32", {size = n})
      local _, out = tide.while_loop(function(i, ta) return i:lt(n) end,
        function(i, ta) return i + 1, ta:write(i, x * tide.cast(i, "float32")) end, {tide.tensor(0), ta})
      return out:stack()
    end, {input_signature = {tide.TensorSpec({2}, "float32"), tide.TensorSpec({}, "int32")}})
    round_trip(f, tide.tensor({1, 2}, "float32"), tide.tensor(4))
  end)

  it("gradients flow through a loaded cond and while_loop", function()
    local w = tide.Variable(tide.tensor({0.5, -1}, "float32"), {name = "w"})
    local f = tide.trace(function(x)
      local y = tide.cond(tide.reduce_sum(x):gt(0), function() return x * w end, function() return x + w end)
      local _, acc = tide.while_loop(function(i, a) return i:lt(3) end, function(i, a) return i + 1, a * y end,
        {tide.tensor(0), tide.ones_like(x)})
      return tide.reduce_sum(acc)
    end, {input_signature = {tide.TensorSpec({2}, "float32")}})
    sm.save(f, dir .. "/m")
    local m = sm.load(dir .. "/m")
    local x = tide.tensor({1, 2}, "float32")
    local t1, t2 = tide.GradientTape(), tide.GradientTape()
    local a = t1:run(function() return m.signatures.serving_default(x).output_0 end)
    local b = t2:run(function() return f(x) end)
    assert.are.equal(b:item(), a:item())
    local ga, gb = t1:gradient(a, m.variables[1]), t2:gradient(b, w)
    for i, g in ipairs(gb:totable()) do assert.is_true(math.abs(g - ga:totable()[i]) < 1e-5) end
  end)
end)
