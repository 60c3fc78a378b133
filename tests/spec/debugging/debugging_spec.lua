-- tests/spec/debugging/debugging_spec.lua — tide.debugging: check numerics
-- (eager and traced, naming the op, its inputs and the Lua line), and the
-- assertions eagerly, inside traced graphs (run-time failures with their
-- origin, static facts at trace time), with TF's messages, and their errors.
local tide = require "tide"
local h = require "helpers"

local D = tide.debugging
local f32 = function(v) return tide.tensor(v, "float32") end
local None = tide.None

local function line_of(fn) return debug.getinfo(fn, "S").linedefined end
local FILE = debug.getinfo(1, "S").short_src:match("[^/]*$")

describe("tide.debugging check numerics", function()
  after_each(function() D.disable_check_numerics() end)

  it("is off by default, and lets NaN and Inf through while off", function()
    assert.is_false(D.check_numerics_enabled())
    local v = tide.log(f32 { -1, 1 }):totable()[1]
    assert.is_true(v ~= v)
  end)

  it("names the first eager op producing a NaN or Inf, its inputs and the Lua line", function()
    D.enable_check_numerics()
    assert.is_true(D.check_numerics_enabled())
    local x = f32 { 1, -1, 4 }
    local y = tide.sqrt(tide.abs(x)) -- fine
    assert.are.same({ 1, 1, 2 }, y:totable())
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() return tide.log(x) end)
    assert.is_false(ok)
    err = tostring(err)
    assert.truthy(err:find(FILE .. ":" .. line .. ":", 1, true), err)
    assert.truthy(err:find("log produced NaN in output 1 (float32[3]: 1 NaN, 0 Inf of 3 values, first at [1])",
      1, true), err)
    assert.truthy(err:find("its inputs: float32[3]", 1, true), err)
    err = h.errors("div produced Inf", function() return f32 { 1, 2 } / f32 { 0, 1 } end)
    assert.truthy(err:find("its inputs: float32[2], float32[2]", 1, true), err)
    h.errors("produced NaN and Inf", function() return f32 { { 0, 1 }, { 2, 3 } } / f32 { 0, 0 } end)
    -- integer results and finite floats are left alone
    assert.are.same({ 0, 1 }, tide.floordiv(tide.tensor { 1, 2 }, 2):totable())
    D.disable_check_numerics()
    assert.is_false(D.check_numerics_enabled())
    tide.log(x)
  end)

  it("names the node and the line that recorded it in a traced function", function()
    D.enable_check_numerics()
    local function body(v)
      local a = v * 2
      local b = tide.log(a) -- the first non-finite result
      return b * 0 + 1
    end
    local f = tide.trace(body)
    assert.are.same({ 1, 1 }, f(f32 { 1, 2 }):totable())
    local err = h.errors("log produced NaN", f, f32 { -1, 2 })
    assert.truthy(err:find("(recorded at ", 1, true) and err:find(FILE .. ":" .. (line_of(body) + 2) .. ")", 1, true), err)
  end)

  it("checks graphs traced before it was enabled, naming their fused ops", function()
    local f = tide.trace(function(v) return tide.exp(v) * 2 end)
    assert.are.same({ math.huge }, f(f32 { 1000 }):totable())
    D.enable_check_numerics()
    local err = h.errors("produced Inf", f, f32 { 1000 })
    assert.truthy(err:find("exp", 1, true), err)
  end)

  it("checks float16 and bfloat16 results: an overflow under mixed_float16 is reported", function()
    D.enable_check_numerics()
    for _, dt in ipairs { "float16", "bfloat16" } do
      local x = tide.tensor({ 1, 200 }, dt)
      h.errors("exp produced Inf in output 1 (" .. dt .. "[2]: 0 NaN, 1 Inf of 2 values, first at [1])",
        tide.exp, x)
      h.errors("log produced NaN in output 1 (" .. dt .. "[2]", tide.log, tide.tensor({ -1, 1 }, dt))
      h.errors("produced Inf", tide.trace(function(v) return tide.exp(v) + 1 end), x)
    end
    -- a Dense layer computing in float16 (65504 is float16's largest): 300 * 300 overflows
    local mp = tide.mixed_precision
    mp.set_global_policy("mixed_float16")
    local ok, err = pcall(function()
      local layer = tide.layers.Dense { 1, use_bias = false, kernel_initializer = "ones" }
      local m = tide.Sequential { tide.Input { shape = { 300 } }, layer }
      local big = tide.ones { 1, 300 } * 300
      assert.are.equal("float16", m(tide.ones { 1, 300 }).dtype)
      h.errors("produced Inf", m, big)
      h.errors("produced Inf", function() return m:predict(big, { verbose = 0 }) end)
    end)
    mp.set_global_policy("float32")
    assert(ok, err)
  end)
end)

describe("tide.debugging assertions", function()
  local x = f32 { 1, -1, 2 }

  it("pass silently and fail with TF's messages eagerly", function()
    assert.is_nil(D.assert_positive(f32 { 1, 2 }))
    assert.is_nil(D.assert_non_negative(tide.tensor { 0, 3 }))
    assert.is_nil(D.assert_equal(f32 { 1, 2 }, f32 { 1, 2 }))
    assert.is_nil(D.assert_equal(tide.ones { 2, 3 }, 1)) -- a number takes x's dtype, broadcast
    assert.is_nil(D.assert_rank(x, 1))
    local line = debug.getinfo(1, "l").currentline + 2
    local err = h.errors("assert_positive: Condition x > 0 did not hold element-wise:\n" ..
      "x (shape=[3] dtype=float32) = [1 -1 2]", function() D.assert_positive(x) end)
    assert.truthy(err:find(FILE .. ":" .. line .. ":", 1, true), err) -- raised at the caller's line
    h.errors("assert_positive: my msg: Condition x > 0", D.assert_positive, x, { message = "my msg" })
    h.errors("assert_positive: my msg: Condition x > 0", D.assert_positive, x, "my msg")
    h.errors("Condition x >= 0 did not hold", D.assert_non_negative, tide.tensor { 0, -3 })
    h.errors("Condition x == y did not hold element-wise:\nx (shape=[3] dtype=float32) = [1 -1 2]\n" ..
      "y (shape=[3] dtype=float32) = [1 2 2]", D.assert_equal, x, f32 { 1, 2, 2 })
    h.errors("= [0 1 2 ...]", D.assert_positive, tide.range(0, 10))
    h.errors("= [0 1 2 3 4 ...]", D.assert_positive, tide.range(0, 10), { summarize = 5 })
    h.errors("assert_rank: Tensor x must have rank 2. Received rank 1, shape=[3] dtype=float32", D.assert_rank, x, 2)
    h.errors("bad values : Tensor had NaN values", D.check_numerics, f32 { 1, 0 / 0 }, "bad values")
    h.errors("bad values : Tensor had Inf values", D.assert_all_finite, f32 { 1, 1 / 0 }, "bad values")
    h.errors("Tensor had NaN and Inf values", D.check_numerics, f32 { -1 / 0, 0 / 0 }, "m")
  end)

  it("check_numerics gives x back, and gradients pass through it", function()
    local v = tide.tensor({ 1, 2 }, "float64")
    assert.are.equal(v, D.check_numerics(v, "ok"))
    local tape = tide.GradientTape()
    local w = tide.Variable(tide.tensor({ 1, 2 }, "float64"))
    local y = tape:run(function() return tide.reduce_sum(D.check_numerics(w * 3, "ok")) end)
    assert.are.same({ 3, 3 }, tape:gradient(y, { w })[1]:totable())
  end)

  it("run inside traced graphs, failing when the graph runs with the message and the recording line", function()
    local function body(v)
      D.assert_positive(v, { message = "in graph" }) -- nothing reads its result: kept anyway
      return v * 2
    end
    local g = tide.trace(body)
    assert.are.same({ 2, 4 }, g(f32 { 1, 2 }):totable())
    assert.truthy(g:get_concrete_function(f32 { 1, 2 }):graph_text():find("assert(", 1, true))
    local err = h.errors("assert_positive: in graph: Condition x > 0 did not hold element-wise:\n" ..
      "x (shape=[2] dtype=float32) = [-1 2]", g, f32 { -1, 2 })
    assert.truthy(err:find("(recorded at ", 1, true) and err:find(FILE .. ":" .. (line_of(body) + 1) .. ")", 1, true), err)
    -- with None dims the shape says so
    local gn = tide.trace(body, { input_signature = { tide.TensorSpec({ None }, "float32") } })
    h.errors("x (shape=[None] dtype=float32) = [-1]", gn, f32 { -1 })
    -- check_numerics and assert_equal too
    local c = tide.trace(function(v, w)
      D.assert_equal(v, w)
      return D.check_numerics(v / w, "ratio")
    end)
    assert.are.same({ 1, 1 }, c(f32 { 1, 2 }, f32 { 1, 2 }):totable())
    h.errors("Condition x == y did not hold", c, f32 { 1, 2 }, f32 { 1, 3 })
    h.errors("ratio : Tensor had NaN values", c, f32 { 0 }, f32 { 0 })
  end)

  it("check known ranks and dims while tracing, the rest when the graph runs", function()
    -- a known rank: an error at trace time (TF's ValueError)
    local r2 = tide.trace(function(v) D.assert_rank(v, 2) return v end)
    h.errors("Tensor x must have rank 2. Received rank 1", r2, f32 { 1 })
    -- an unknown rank: checked at each run
    local ru = tide.trace(function(v) D.assert_rank(v, 2) return v end,
      { input_signature = { tide.TensorSpec(nil, "float32") } })
    assert.are.same({ { 1 } }, ru(f32 { { 1 } }):totable())
    h.errors("Tensor x must have rank 2.", ru, f32 { 1 })
    -- the rank itself a traced value
    local rt = tide.trace(function(v, r) D.assert_rank(v, r) return v end,
      { input_signature = { tide.TensorSpec(nil, "float32"), tide.TensorSpec({}, "int32") } })
    assert.are.same({ 1 }, rt(f32 { 1 }, tide.tensor(1)):totable())
    h.errors("Condition rank(x) == rank did not hold:\nrank(x) = [1]", rt, f32 { 1 }, tide.tensor(2))
    -- assert_shapes: a name binds dims across tensors; None dims checked at run time
    local s = tide.trace(function(a, b)
      D.assert_shapes { { a, { "N", 3 } }, { b, { "N" } } }
      return b
    end, { input_signature = { tide.TensorSpec({ None, 3 }), tide.TensorSpec({ None }) } })
    assert.are.same({ 1, 2 }, s(tide.ones { 2, 3 }, f32 { 1, 2 }):totable())
    h.errors("tensor 2 dimension 0 must have size as tensor 1 dimension 0, named 'N'", s, tide.ones { 2, 3 },
      f32 { 1, 2, 3 })
    -- eagerly, and known dims while tracing
    D.assert_shapes { { tide.ones { 2, 3 }, { "N", "D" } }, { tide.ones { 2 }, { "N" } }, { tide.ones { 4, 2, 3 }, { "*", "D" } } }
    h.errors("tensor 2 dimension 0 must have size 2 (tensor 1 dimension 0, named 'N'). Received size 3",
      D.assert_shapes, { { tide.ones { 2, 3 }, { "N", 3 } }, { tide.ones { 3 }, { "N" } } })
    h.errors("tensor 1 dimension 1 must have size 4 (as specified). Received size 3", D.assert_shapes,
      { { tide.ones { 2, 3 }, { ".", 4 } } })
    h.errors("tensor 1 must have rank 3", D.assert_shapes, { { tide.ones { 2, 3 }, { 1, 2, 3 } } })
    h.errors("tensor 1 must have rank at least 3", D.assert_shapes, { { tide.ones { 2, 3 }, { "*", 1, 2, 3 } } })
    local st = tide.trace(function(a) D.assert_shapes { { a, { 5 } } } return a end)
    h.errors("must have size 5 (as specified). Received size 2", st, f32 { 1, 2 })
  end)

  it("refuse bad arguments, naming them", function()
    h.errors("assert_positive: x must be a tensor", D.assert_positive, nil)
    h.errors("x must be a numeric tensor, got bool", D.assert_positive, tide.tensor { true })
    h.errors("summarize must be a positive integer", D.assert_positive, x, { summarize = 0 })
    h.errors("message must be a string", D.assert_positive, x, { message = 3 })
    h.errors("unknown option", D.assert_positive, x, { nope = 1 })
    h.errors("assert_equal: expects x and y", D.assert_equal, x)
    h.errors("incompatible shapes", D.assert_equal, x, f32 { 1, 2 })
    h.errors("rank must be a non-negative integer", D.assert_rank, x, -1)
    h.errors("rank must be a 0-d integer tensor", D.assert_rank, x, f32 { 1 })
    h.errors("check_numerics: message must be a string", D.check_numerics, x)
    h.errors("x must be a float tensor, got int32", D.check_numerics, tide.tensor { 1 }, "m")
    h.errors("shapes must be a list", D.assert_shapes, 3)
    h.errors("entry 1 must be {tensor, shape}", D.assert_shapes, { { x } })
    h.errors("dimension 1 is true", D.assert_shapes, { { x, { true } } })
  end)
end)
