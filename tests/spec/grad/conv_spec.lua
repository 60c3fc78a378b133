-- tests/spec/grad/conv_spec.lua — max_pool2d's gradients to any order: its
-- gradient op max_pool2d_grad and that one's (max_pool2d_grad_grad), against
-- TF's values (tests/fixtures/pool), eagerly and traced, ties and operands.
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"
local nn = require "tide.ops.nn_conv"
local None = tide.None

local R = gc.random
local raw, ops = nn.raw, nn.raw.ops

local geo = require "conv_cases"
local attrs, pool_grad, pool_grad_grad = geo.pool_attrs, geo.pool_grad, geo.pool_grad_grad
local CASES, case_name = geo.POOL, geo.pool_name

-- A [2, 5, 6, 3] float64 image with ties: values on a coarse grid (few levels)
-- plus the distinct values of R, chosen per element.
local function tied_image(seed)
  local x = R({ 2, 5, 6, 3 }, -1, 1, seed)
  return tide.round(x * 2) / 2
end

-- The float64 finite-difference cases of max_pool2d to second order (for
-- every window case), of max_pool2d_grad and of max_pool2d_grad_grad are
-- tests/support/grad_cases_nn.lua's.
describe("max_pool2d's gradient op", function()
  it("gives x zeros (not nil) through the gradient op, as TF", function()
    local x = R({ 1, 4, 4, 2 }, -1, 1, 151)
    local dy = R({ 1, 2, 2, 2 }, -1, 1, 152)
    local tape = tide.GradientTape()
    local s = tape:run(function()
      tape:watch(x)
      return tide.reduce_sum(pool_grad(x, dy, 2, 2, "VALID"))
    end)
    h.close(tape:gradient(s, x), h.values(tide.zeros({ 1, 4, 4, 2 }, "float64")), 0)
  end)
end)

describe("max_pool2d_grad_grad", function()
  it("is max_pool2d_grad's transpose in dy, ties included, in every float dtype", function()
    -- <g, grad(x, dy)> == <gradgrad(x, g), dy> holds only when both pick the same maximum
    for _, dt in ipairs { "float64", "float32", "float16", "bfloat16" } do
      local x = tied_image(161):cast(dt)
      for _, c in ipairs(CASES) do
        local y = nn.max_pool2d(x, c[1], c[2], c[3])
        local dy = tide.round(R(y.shape:as_list(), -4, 4, 162)):cast(dt)
        local g = tide.round(R(x.shape:as_list(), -4, 4, 163)):cast(dt)
        local gg = pool_grad_grad(x, g, c[1], c[2], c[3])
        assert.are.equal(dt, gg.dtype)
        assert.are.same(y.shape:as_list(), gg.shape:as_list())
        local lhs = tide.reduce_sum((g * pool_grad(x, dy, c[1], c[2], c[3])):cast("float64")):item()
        local rhs = tide.reduce_sum((gg * dy):cast("float64")):item()
        assert(lhs == rhs, string.format("%s, %s: %g vs %g", dt, case_name(c), lhs, rhs))
        -- and each value is g at the window's first maximum: float64's answer, rounded
        local want = pool_grad_grad(x:cast("float64"), g:cast("float64"), c[1], c[2], c[3])
        h.close(gg:cast("float64"), want, 0)
      end
    end
  end)

  it("picks the first maximum in row-major order on ties", function()
    local x = tide.tensor({ 1, 3, 3, 2, 0, 3, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0 }, "float32"):reshape { 1, 4, 4, 1 }
    local g = tide.range(16, { dtype = "float32" }):reshape { 1, 4, 4, 1 }
    h.close(pool_grad_grad(x, g, 2, 2, "VALID"), { 1, 2, 8, 10 }, 0) -- TF's MaxPoolGradGrad gives the same
  end)

  it("reads strided operands", function()
    local x = tied_image(171)
    local g = R({ 2, 6, 5, 3 }, -1, 1, 172):transpose { 0, 2, 1, 3 }
    h.close(pool_grad_grad(x, g, 3, 2, "SAME"), pool_grad_grad(x, tide.contiguous(g), 3, 2, "SAME"), 0)
    h.close(pool_grad_grad(x:transpose { 0, 2, 1, 3 }, g:transpose { 0, 2, 1, 3 }, 2, 1, "VALID"),
      pool_grad_grad(tide.contiguous(x:transpose { 0, 2, 1, 3 }), tide.contiguous(g:transpose { 0, 2, 1, 3 }), 2, 1,
        "VALID"), 0)
  end)

  it("splits channels past one block the same way (more than 64 channels)", function()
    local x = tide.round(R({ 1, 4, 3, 70 }, -2, 2, 173))
    local g = R({ 1, 4, 3, 70 }, -1, 1, 174)
    local dy = R({ 1, 2, 2, 70 }, -1, 1, 175)
    local gg = pool_grad_grad(x, g, 2, 2, "SAME")
    local lhs = tide.reduce_sum(g * pool_grad(x, dy, 2, 2, "SAME")):item()
    assert.is_true(math.abs(lhs - tide.reduce_sum(gg * dy):item()) < 1e-12)
  end)

  it("names what is wrong with its operands", function()
    local x = R({ 1, 4, 4, 2 }, -1, 1, 181)
    local y = nn.max_pool2d(x, 2)
    local a = attrs(2, 2, "VALID")
    local run = function(...) return raw.run(ops.max_pool2d_grad_grad, a, { ... }) end
    h.errors("max_pool2d_grad_grad: grad has shape [1, 4, 3, 2] but must have the input's shape [1, 4, 4, 2]", run,
      x, y, R({ 1, 4, 3, 2 }))
    h.errors("max_pool2d_grad_grad: output has shape [1, 3, 2, 2] but the pooling of that input gives [1, 2, 2, 2]",
      run, x, R({ 1, 3, 2, 2 }), x)
    h.errors("max_pool2d_grad_grad: dtype mismatch: input is float64 but grad is float32", run, x, y,
      x:cast("float32"))
    h.errors("max_pool2d_grad_grad: grad must be 4-D", run, x, y, R({ 4, 4, 2 }))
    h.errors("max_pool2d_grad_grad", run, x:cast("int32"), y:cast("int32"), x:cast("int32"))
    h.errors("max_pool2d_grad_grad: ksize must be positive", function()
      return raw.run(ops.max_pool2d_grad_grad, attrs(0, 1, "VALID"), { x, y, x })
    end)
  end)
end)

-- TF's tapes on the same data (tests/fixtures/pool/gen.py): exact, since the
-- values are quarters and every sum of their products is exact. With an empty
-- pooled output TF 2.21 returns uninitialized memory as the gradient; tide zeros.
describe("max_pool2d's gradients against TensorFlow", function()
  local CASES_TF = dofile("tests/fixtures/pool/max_pool_grads.lua")

  local function t(v, dt) return tide.tensor(v.values, dt):reshape(v.shape) end

  -- The four gradients the fixture keeps, by tide's tapes.
  local function grads(c, x, dy, g, w)
    local k, s, p = c.ksize, c.strides, c.padding
    local pool = function(v) return nn.max_pool2d(v, k, s, p) end
    local outer = tide.GradientTape()
    local dx
    local sum_g_dx = outer:run(function()
      outer:watch(dy)
      local inner = tide.GradientTape()
      local y = inner:run(function()
        inner:watch(x)
        return pool(x)
      end)
      dx = inner:gradient(y, x, { output_gradients = dy })
      return tide.reduce_sum(g * dx)
    end)
    local ddy = outer:gradient(sum_g_dx, dy, { unconnected_gradients = "zero" })
    outer = tide.GradientTape()
    local s2 = outer:run(function()
      outer:watch(x)
      local inner = tide.GradientTape()
      local l = inner:run(function()
        inner:watch(x)
        return tide.reduce_sum(w * tide.square(pool(x)))
      end)
      return tide.reduce_sum(g * inner:gradient(l, x))
    end)
    local hvp = outer:gradient(s2, x, { unconnected_gradients = "zero" })
    local tape = tide.GradientTape()
    local s3 = tape:run(function()
      tape:watch(g)
      return tide.reduce_sum(dy * raw.run(ops.max_pool2d_grad_grad, attrs(k, s, p), { x, pool(x), g }))
    end)
    local dg = tape:gradient(s3, g, { unconnected_gradients = "zero" })
    return pool(x), dx, ddy, hvp, dg
  end

  local function check(what, c, got)
    local names = { "y", "dx", "ddy", "hvp", "dg" }
    local garbage = {}
    for _, name in ipairs(c.uninitialized or {}) do garbage[name] = true end
    for i, name in ipairs(names) do
      local r = got[i]
      assert.are.equal(c.dtype, r.dtype, what .. " " .. name)
      assert.are.same(c[name].shape, r.shape:as_list(), what .. " " .. name)
      -- where TF left its result uninitialized (an empty pooled output), zeros
      local want = garbage[name] and h.values(tide.zeros(c[name].shape, c.dtype)) or c[name].values
      local ok, err = pcall(h.close, r, want, 0)
      assert(ok, string.format("%s: %s: %s", what, name, tostring(err)))
    end
  end

  it("match TF's values eagerly, traced, and traced with None dims", function()
    tide.config.set_retracing_warning { enabled = false }
    local ok, err = pcall(function()
      for _, c in ipairs(CASES_TF) do
        local inputs = { t(c.x, c.dtype), t(c.dy, c.dtype), t(c.g, c.dtype), t(c.w, c.dtype) }
        local fn = function(...) return grads(c, ...) end
        check(c.name .. " (eager)", c, { fn(unpack(inputs)) })
        check(c.name .. " (traced)", c, { tide.trace(fn)(unpack(inputs)) })
        local sig = {}
        for i = 1, 4 do sig[i] = tide.TensorSpec({ None, None, None, None }, c.dtype) end
        check(c.name .. " (None dims)", c, { tide.trace(fn, { input_signature = sig })(unpack(inputs)) })
      end
    end)
    tide.config.set_retracing_warning { enabled = true }
    assert(ok, err)
  end)
end)
