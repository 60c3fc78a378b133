-- tests/spec/grad/math_spec.lua — gradients of the elementwise ops (unary,
-- binary with broadcasting, where, clip_by_value, cast, copy) checked against
-- float64 finite differences, plus ops without gradients giving nil.
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"

local R = gc.random

-- The gradient of sum(f(x) * w) by the tape, for hand-computed checks.
local function grad_of(f, xs, seed)
  local tape = tide.GradientTape()
  local y = tape:run(function()
    for _, x in ipairs(xs) do tape:watch(x) end
    return f(unpack(xs))
  end)
  return tape:gradient(y, xs, seed and { output_gradients = seed } or nil)
end

-- A [2, 3] view of a [3, 2] tensor (non-contiguous) with values in [lo, hi).
local function TR(lo, hi, seed) return R({ 3, 2 }, lo, hi, seed):transpose() end

describe("gradients of unary ops", function()
  -- name -> { function, lo, hi } with ranges away from kinks and poles.
  local cases = {
    neg = { tide.neg }, square = { tide.square }, exp = { tide.exp }, expm1 = { tide.expm1 },
    sin = { tide.sin }, cos = { tide.cos }, tanh = { tide.tanh }, sigmoid = { tide.sigmoid },
    softplus = { tide.nn.softplus }, erf = { tide.erf }, selu = { tide.nn.selu }, elu = { tide.nn.elu },
    gelu = { tide.nn.gelu },
    gelu_tanh = { function(x) return tide.nn.gelu(x, { approximate = true }) end },
    leaky_relu = { function(x) return tide.nn.leaky_relu(x, 0.3) end },
    relu = { tide.relu }, abs = { tide.abs }, sign = { tide.sign },
    log = { tide.log, 0.5, 2 }, log1p = { tide.log1p, -0.5, 2 }, sqrt = { tide.sqrt, 0.5, 2 },
    rsqrt = { tide.rsqrt, 0.5, 2 }, reciprocal = { tide.reciprocal, 0.5, 2 },
    tan = { tide.tan, -1.2, 1.2 }, erfc = { tide.erfc }, log_sigmoid = { tide.log_sigmoid, -5, 5 },
    gelu_tail = { tide.nn.gelu, -9, -5 },
    gelu_tanh_tail = { function(x) return tide.nn.gelu(x, { approximate = true }) end, -9, -5 },
    leaky_relu_alpha_2 = { function(x) return tide.nn.leaky_relu(x, { alpha = 2 }) end },
  }
  local names = {}
  for name in pairs(cases) do names[#names + 1] = name end
  table.sort(names)
  for k, name in ipairs(names) do
    local c = cases[name]
    it(name .. " on a contiguous and a transposed input", function()
      gc.check(c[1], { R({ 2, 3 }, c[2] or -2, c[3] or 2, k) })
      gc.check(c[1], { TR(c[2] or -2, c[3] or 2, k + 50) })
    end)
  end

  it("has the right values at hand-picked points", function()
    local x = tide.tensor({ -2, -0.5, 0.5, 3 }, "float64")
    h.close(grad_of(tide.relu, { x })[1], { 0, 0, 1, 1 })
    h.close(grad_of(tide.abs, { x })[1], { -1, -1, 1, 1 })
    h.close(grad_of(tide.sign, { x })[1], { 0, 0, 0, 0 })
    h.close(grad_of(function(v) return tide.nn.leaky_relu(v, 0.1) end, { x })[1], { 0.1, 0.1, 1, 1 })
    local t = math.tanh(0.5)
    h.close(grad_of(tide.tanh, { x })[1][2], { 1 - t * t })
  end)

  it("takes the linear side at 0 for elu and selu, as TF", function()
    local z = tide.tensor({ 0 }, "float64")
    h.close(grad_of(tide.nn.elu, { z })[1], { 1 })
    h.close(grad_of(tide.nn.selu, { z })[1], { 1.0507009873554805 })
  end)

  it("keeps gelu's negative tail and its gradient (erfc, not 1 + erf), in float32 as TF", function()
    local x = tide.tensor({ -10, -6, -3 }, "float32")
    -- TF 2.21: tf.nn.gelu and its gradient at these points
    h.close(tide.nn.gelu(x), { -7.619853608132182e-23, -5.919535528420283e-09, -0.004049695562571287 }, 1e-6)
    h.close(grad_of(tide.nn.gelu, { x })[1], { -7.618400084582658e-22, -3.546877991311703e-08,
      -0.011945651844143867 }, 1e-5)
    -- the tanh form: x * sigmoid(2u), whose tail TF rounds to -0
    local xa = tide.tensor({ -10 }, "float64")
    local z = 2 * math.sqrt(2 / math.pi) * (-10 + 0.044715 * -1000)
    h.close(tide.nn.gelu(xa, { approximate = true }), { -10 * math.exp(z) / (1 + math.exp(z)) }, 1e-12)
    assert.is_true(tide.nn.gelu(xa, { approximate = true }):item() < 0)
  end)

  it("gives leaky_relu of an integer input no gradient (it is cast to float32 first)", function()
    local i = tide.tensor { -3, 2 }
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(i) return tide.nn.leaky_relu(i) end)
    assert.are.equal("float32", y.dtype)
    assert.is_nil(tape:gradient(y, i))
  end)

  for _, case in ipairs {
    { "tanh", tide.tanh }, { "sigmoid", tide.sigmoid }, { "exp", tide.exp }, { "tan", tide.tan },
    { "erfc", tide.erfc }, { "gelu", tide.nn.gelu },
    { "gelu approximate", function(x) return tide.nn.gelu(x, { approximate = true }) end },
  } do
    it("second order: " .. case[1], function()
      gc.check(case[2], { R({ 2, 3 }, -1, 1, 3) }, { second_order = true })
      gc.check(case[2], { TR(-1, 1, 4) }, { second_order = true })
    end)
  end
end)

describe("gradients of binary ops", function()
  -- name -> { function, a range, b range }
  local cases = {
    { "add", tide.add }, { "sub", tide.sub }, { "mul", tide.mul },
    { "div", tide.div, { -2, 2 }, { 0.5, 2 } },
    { "pow", tide.pow, { 0.5, 2 }, { -1, 2 } },
    -- a / b stays inside (2, 3): away from mod's jumps.
    { "mod", tide.mod, { 2.2, 2.8 }, { 1, 1.05 } },
    { "maximum", tide.maximum }, { "minimum", tide.minimum },
    { "divide_no_nan", tide.divide_no_nan, { -2, 2 }, { 0.5, 2 } },
    { "squared_difference", tide.squared_difference },
    { "atan2", tide.atan2, { -2, 2 }, { 0.5, 2 } },
    { "xlogy", tide.xlogy, { -2, 2 }, { 0.5, 2 } },
    { "xlog1py", tide.xlog1py, { -2, 2 }, { -0.5, 2 } },
    { "xdivy", tide.xdivy, { -2, 2 }, { 0.5, 2 } },
  }
  -- Shape pairs: same, trailing broadcast both ways, both stretched, 0-d.
  local shapes = {
    { { 2, 3 }, { 2, 3 } }, { { 2, 3 }, { 3 } }, { { 3 }, { 2, 3 } }, { { 2, 1 }, { 1, 3 } },
    { { 1, 3 }, { 2, 1 } }, { { 2, 3 }, {} },
  }
  for k, c in ipairs(cases) do
    local name, f, ra, rb = c[1], c[2], c[3] or { -2, 2 }, c[4] or { -2, 2 }
    it(name .. " with broadcasting shapes", function()
      for j, s in ipairs(shapes) do
        gc.check(f, { R(s[1], ra[1], ra[2], k * 10 + j), R(s[2], rb[1], rb[2], k * 10 + j + 5) })
      end
    end)
    it(name .. " with non-contiguous inputs", function()
      local a = TR(ra[1], ra[2], k)
      local b = R({ 3, 4 }, rb[1], rb[2], k + 7):slice{ {}, { 0, 4, 2 } }:transpose() -- [2, 3], strides (2, 4)
      gc.check(f, { a, b })
      gc.check(f, { a, R({ 2, 1 }, rb[1], rb[2], k + 9) })
    end)
  end

  it("second order: mul and div", function()
    gc.check(tide.mul, { R({ 2, 3 }, -1, 1, 1), R({ 3 }, -1, 1, 2) }, { second_order = true })
    gc.check(tide.div, { R({ 2, 1 }, -1, 1, 3), R({ 1, 3 }, 0.5, 1.5, 4) }, { second_order = true })
    gc.check(tide.div, { TR(-1, 1, 5), R({ 2, 3 }, 0.5, 1.5, 6) }, { second_order = true })
  end)

  it("second order: the new binary ops", function()
    for _, f in ipairs { tide.divide_no_nan, tide.squared_difference, tide.atan2, tide.xlogy, tide.xlog1py,
                         tide.xdivy } do
      gc.check(f, { R({ 2, 3 }, -1, 1, 7), R({ 3 }, 0.5, 1.5, 8) }, { second_order = true })
    end
  end)

  it("gives divide_no_nan and the x*log(y) family 0, not NaN, where TF does", function()
    local x, y = tide.tensor({ 7, -7, 2.5 }, "float64"), tide.tensor({ 2, 2, 0 }, "float64")
    local g = grad_of(tide.divide_no_nan, { x, y })
    h.close(g[1], { 0.5, 0.5, 0 })
    h.close(g[2], { -1.75, 1.75, 0 })
    -- TF 2.21: gradients of xlogy at x = 0 are 0 for both inputs, even at y = 0
    local gx = grad_of(tide.xlogy, { tide.tensor({ 0, 0, 1 }, "float64"), tide.tensor({ 0, 1, 0 }, "float64") })
    h.close(gx[1], { 0, 0, -math.huge })
    h.close(gx[2], { 0, 0, math.huge })
    local gd = grad_of(tide.xdivy, { tide.tensor({ 0, 1 }, "float64"), tide.tensor({ 0, 0 }, "float64") })
    h.close(gd[1], { 0, math.huge })
    h.close(gd[2], { 0, -math.huge })
  end)

  it("gives ties of maximum and minimum to the first input, as TF", function()
    local a = tide.tensor({ 1, 2, 3 }, "float64")
    local b = tide.tensor({ 2, 2, 2 }, "float64")
    local gm = grad_of(tide.maximum, { a, b })
    h.close(gm[1], { 0, 1, 1 })
    h.close(gm[2], { 1, 0, 0 })
    local gn = grad_of(tide.minimum, { a, b })
    h.close(gn[1], { 1, 1, 0 })
    h.close(gn[2], { 0, 0, 1 })
  end)

  it("sums a broadcast gradient back to each input's shape", function()
    local a = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float64")
    local b = tide.tensor({ 10, 20, 30 }, "float64")
    local g = grad_of(tide.mul, { a, b })
    h.close(g[1], { { 10, 20, 30 }, { 10, 20, 30 } })
    h.close(g[2], { 5, 7, 9 })
    assert.are.same({ 3 }, g[2].shape:as_list())
    local s = tide.tensor(2, "float64")
    local gs = grad_of(tide.add, { a, s })
    assert.are.same({}, gs[2].shape:as_list())
    h.close(gs[2], { 6 })
  end)

  it("gives pow's exponent a zero gradient where the base is <= 0, as TF", function()
    local a = tide.tensor({ -2, 0, 3 }, "float64")
    local b = tide.tensor({ 2, 2, 2 }, "float64")
    local g = grad_of(tide.pow, { a, b })
    h.close(g[1], { -4, 0, 6 })
    h.close(g[2], { 0, 0, 9 * math.log(3) })
  end)

  it("gives x ^ 2, x ^ 1 and x ^ 0.5 gradients without a pow, with the general formula's values", function()
    local x = tide.tensor({ 0, -0.0, 1.5, 4, -2, 0 / 0, 1 / 0, -1 / 0 }, "float64")
    local dy = tide.tensor({ 1, 2, -1, 0.5, 3, 1, 2, 1 }, "float64")
    for _, e in ipairs { 2, 1, 0.5, 3 } do
      local function f(v)
        local tape = tide.GradientTape()
        local y = tape:run(function() tape:watch(v) return v ^ e end)
        return y, tape:gradient(y, v, { output_gradients = dy })
      end
      local want = dy * e * tide.pow(x, e - 1) -- TF's formula, with its pow
      -- the same values (0.5 / pow(x, 0.5) may differ from pow(x, -0.5) / 2 in the last bit)
      local tol = e == 0.5 and 1e-15 or 0
      local _, g = f(x)
      h.close(g, want, tol)
      -- traced: the forward's pow and, but for the exponent 3, no other
      local tf = tide.trace(f)
      h.close(select(2, tf(x)), want, tol)
      local _, pows = tf:get_concrete_function(x):graph_text():gsub("pow%(", "") -- a node or a fused step; not a fused name
      assert.are.equal(e == 3 and 2 or 1, pows, "x ^ " .. e)
    end
    for _, e in ipairs { 2, 1, 0.5 } do
      gc.check(function(v) return v ^ e end, { R({ 2, 3 }, 0.5, 2, 7) }, { second_order = true })
    end
  end)

  it("gives mod's divisor -floor(a / b) per unit of dy", function()
    local g = grad_of(tide.mod, { tide.tensor({ 7, -7 }, "float64"), tide.tensor({ 2, 2 }, "float64") })
    h.close(g[1], { 1, 1 })
    h.close(g[2], { -3, 4 })
  end)
end)

describe("gradients of where and clip_by_value", function()
  it("where routes dy by the condition, summed back over broadcasting", function()
    local cond = tide.tensor({ { true, false, true }, { false, false, true } })
    gc.check(function(x, y) return tide.where(cond, x, y) end, { R({ 2, 3 }, -1, 1, 1), R({ 2, 3 }, -1, 1, 2) })
    gc.check(function(x, y) return tide.where(cond, x, y) end, { R({ 3 }, -1, 1, 3), R({ 2, 1 }, -1, 1, 4) })
    gc.check(function(x, y) return tide.where(cond, x, y) end, { TR(-1, 1, 5), R({}, -1, 1, 6) })
    local g = grad_of(function(x, y) return tide.where(cond, x, y) end,
      { tide.tensor({ 1, 2, 3 }, "float64"), tide.tensor({ { 0 }, { 0 } }, "float64") })
    h.close(g[1], { 1, 0, 2 })
    h.close(g[2], { { 1 }, { 2 } })
  end)

  it("where gives the condition no gradient", function()
    local c = tide.tensor({ 1, -1 }, "float64")
    local g = grad_of(function(cf, x) return tide.where(cf:gt(0), x, 0) end, { c, tide.tensor({ 3, 4 }, "float64") })
    assert.is_nil(g[1])
    h.close(g[2], { 1, 0 })
  end)

  it("clip_by_value sends dy to t inside, to the bound outside", function()
    local t = tide.tensor({ { -3, -0.5, 0.2 }, { 0.7, 2, 5 } }, "float64")
    gc.check(function(x, lo, hi) return tide.clip_by_value(x, lo, hi) end,
      { t, tide.tensor(-1, "float64"), tide.tensor({ 1, 1.5, 2.5 }, "float64") })
    gc.check(function(x, lo, hi) return tide.clip_by_value(x, lo, hi) end,
      { t:transpose(), tide.tensor({ { -1 }, { -0.6 }, { 0 } }, "float64"), tide.tensor({ 0.5, 1 }, "float64") })
    local g = grad_of(function(x, lo, hi) return tide.clip_by_value(x, lo, hi) end,
      { t, tide.tensor(-1, "float64"), tide.tensor(1, "float64") })
    h.close(g[1], { { 0, 1, 1 }, { 1, 0, 0 } })
    h.close(g[2], { 1 })
    h.close(g[3], { 2 })
  end)

  it("clip_by_value gives ties with a bound to t, as TF's minimum/maximum form", function()
    local g = grad_of(function(x) return tide.clip_by_value(x, -1, 1) end, { tide.tensor({ -1, 1 }, "float64") })
    h.close(g[1], { 1, 1 })
  end)
end)

describe("gradients of cast and copy", function()
  it("cast between floats casts dy back to the input's dtype", function()
    local x = tide.tensor({ 1, 2, 3 }, "float64")
    local g = grad_of(function(v) return tide.cast(v, "float32") * tide.tensor({ 1, 2, 3 }, "float32") end, { x })
    assert.are.equal("float64", g[1].dtype)
    h.close(g[1], { 1, 2, 3 })
    gc.check(function(v) return tide.cast(tide.cast(v, "float32"), "float64") * 1 end,
      { tide.tensor({ 0.5, 1.5 }, "float64") }, { eps = 1e-2, rtol = 1e-4 })
  end)

  it("cast to an integer dtype stops the gradient", function()
    local x = tide.tensor({ 1.5, 2.5 }, "float64")
    local g = grad_of(function(v) return tide.cast(tide.cast(v, "int32"), "float64") * v end, { x })
    h.close(g[1], { 1, 2 }) -- only the direct factor
  end)

  it("copy passes dy through", function()
    gc.check(function(v) return tide.contiguous(v) end, { TR(-1, 1, 3) })
  end)
end)

describe("ops without gradients", function()
  local x = tide.tensor({ { 0.3, -1.7 }, { 2.2, 0.9 } }, "float64")
  local cases = {
    floor = tide.floor, ceil = tide.ceil, round = tide.round,
    floordiv = function(v) return tide.floordiv(v, 0.7) end,
    less = function(v) return v:lt(0.5) end, greater_equal = function(v) return v:ge(0.5) end,
    equal = function(v) return tide.equal(v, 0.3) end, not_equal = function(v) return tide.not_equal(v, 0.3) end,
    isnan = tide.isnan, isfinite = tide.isfinite, is_inf = tide.is_inf, rint = tide.rint,
    truncatediv = function(v) return tide.truncatediv(v, 0.7) end,
    truncatemod = function(v) return tide.truncatemod(v, 0.7) end,
    count_nonzero = function(v) return tide.count_nonzero(v) end,
    argmax = function(v) return tide.argmax(v, 1) end, argmin = function(v) return tide.argmin(v, 0) end,
    argsort = function(v) return tide.argsort(v) end,
    top_k_indices = function(v) local _, i = tide.top_k(v, 1) return i end,
  }
  for name, f in pairs(cases) do
    it(name .. " gives nil", function()
      local tape = tide.GradientTape()
      local y = tape:run(function() tape:watch(x) return f(x) end)
      assert.is_nil(tape:gradient(y, x))
    end)
  end

  it("a float function of a NO_GRAD result is unconnected", function()
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x) return tide.floor(x) * 2 + tide.cast(x:gt(0), "float64") end)
    assert.is_nil(tape:gradient(y, x))
  end)

  it("integer inputs get nil", function()
    local i = tide.tensor{ 1, 2, 3 }
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(i) return tide.cast(i * i, "float32") end)
    assert.is_nil(tape:gradient(y, i))
  end)
end)
