-- tests/spec/initializers/initializers_spec.lua — tide.initializers: each
-- initializer's statistics on large shapes, Keras's fans (against Keras's
-- own compute_fans, tests/fixtures/keras/layers.lua), orthogonality, names,
-- configs, seeds, init_scope, and the errors.
local tide = require "tide"
local h = require "helpers"
local I = tide.initializers
local F = dofile("tests/fixtures/keras/layers.lua")

local function stats(t)
  local n = t:size()
  local mean = tide.reduce_mean(t:cast("float64")):item()
  local var = tide.reduce_mean((t:cast("float64") - mean) ^ 2):item()
  return mean, math.sqrt(var), tide.reduce_min(t):item(), tide.reduce_max(t):item(), n
end

describe("tide.initializers", function()
  before_each(function() tide.random.set_seed(2024) end)

  it("computes fans as Keras does (scalars, vectors, matrices, conv kernels)", function()
    for key, want in pairs(F.fans) do
      local shape = {}
      for d in key:gmatch("%d+") do shape[#shape + 1] = tonumber(d) end
      local fi, fo = I.compute_fans(shape)
      assert.are.same(want, { fi, fo }, key)
    end
    assert.are.same({ 1, 1 }, { I.compute_fans({}) })
  end)

  it("glorot_uniform (the default) is uniform in +-sqrt(6 / (fan_in + fan_out))", function()
    local w = I.get("glorot_uniform")({ 400, 600 })
    assert.are.equal("float32", w.dtype)
    local limit = math.sqrt(6 / 1000)
    local mean, std, lo, hi = stats(w)
    assert.is_true(math.abs(mean) < 2e-4)
    assert.is_true(math.abs(std - limit / math.sqrt(3)) < 0.01 * limit)
    assert.is_true(lo >= -limit and hi <= limit and hi > 0.99 * limit)
  end)

  it("the variance-scaling family has Keras's standard deviations", function()
    -- fan_in 300, fan_out 500 for a {300, 500} kernel; conv kernels multiply by the receptive field
    local cases = {
      { "glorot_normal", 2 / 800, true }, { "he_normal", 2 / 300, true }, { "lecun_normal", 1 / 300, true },
      { "he_uniform", 2 / 300, false }, { "lecun_uniform", 1 / 300, false },
    }
    for _, c in ipairs(cases) do
      local w = I.get(c[1])({ 300, 500 })
      local mean, std, lo, hi = stats(w)
      local want = math.sqrt(c[2])
      assert.is_true(math.abs(mean) < 0.01 * want, c[1] .. " mean " .. mean)
      assert.is_true(math.abs(std - want) < 0.02 * want, c[1] .. " std " .. std .. " vs " .. want)
      if c[3] then -- truncated at 2 stddev of the untruncated normal
        local bound = 2 * want / 0.87962566103423978
        assert.is_true(lo >= -bound - 1e-6 and hi <= bound + 1e-6, c[1] .. " is truncated")
      else
        local limit = math.sqrt(3 * c[2])
        assert.is_true(lo >= -limit and hi <= limit, c[1] .. " is bounded")
      end
    end
    local conv = I.HeNormal()({ 3, 3, 32, 64 })  -- fan_in = 3 * 3 * 32
    local _, std = stats(conv)
    assert.is_true(math.abs(std - math.sqrt(2 / 288)) < 0.02 * math.sqrt(2 / 288))
    local vs = I.VarianceScaling { scale = 3, mode = "fan_out", distribution = "untruncated_normal" }({ 200, 400 })
    local _, std2 = stats(vs)
    assert.is_true(math.abs(std2 - math.sqrt(3 / 400)) < 0.02 * math.sqrt(3 / 400))
  end)

  it("random_normal, random_uniform, truncated_normal keep Keras's defaults and take arguments", function()
    local _, std = stats(I.random_normal()({ 500, 400 }))
    assert.is_true(math.abs(std - 0.05) < 0.001)
    local _, _, lo, hi = stats(I.RandomUniform()({ 500, 400 }))
    assert.is_true(lo >= -0.05 and hi <= 0.05 and hi > 0.0499)
    local m, s, lo2, hi2 = stats(I.TruncatedNormal { mean = 1, stddev = 0.5 }({ 500, 400 }))
    assert.is_true(math.abs(m - 1) < 0.005 and s < 0.5 and lo2 >= 0 and hi2 <= 2)
    local m3, s3 = stats(I.RandomNormal(3, 2)({ 500, 400 }, "float64"))
    assert.is_true(math.abs(m3 - 3) < 0.02 and math.abs(s3 - 2) < 0.02)
    local u = I.RandomUniform { minval = 2, maxval = 5 }({ 1000 }, { dtype = "float64" })
    assert.are.equal("float64", u.dtype)
    local _, _, lo4, hi4 = stats(u)
    assert.is_true(lo4 >= 2 and hi4 < 5)
  end)

  it("zeros, ones, constant and identity are exact, in any dtype", function()
    assert.are.same({ { 0, 0 } }, I.zeros()({ 1, 2 }):totable())
    assert.are.same({ 1, 1, 1 }, I.Ones()({ 3 }, "int32"):totable())
    assert.are.equal("int32", I.Ones()({ 3 }, "int32").dtype)
    assert.are.same({ 2.5, 2.5 }, I.Constant(2.5)({ 2 }):totable())
    assert.are.same({ 7, 7 }, I.constant { value = 7 }({ 2 }, "int64"):totable())
    assert.are.same({ { 3, 0, 0 }, { 0, 3, 0 } }, I.Identity { gain = 3 }({ 2, 3 }):totable())
  end)

  it("orthogonal gives orthonormal columns (or rows), times gain, for any shape", function()
    for _, shape in ipairs { { 64, 64 }, { 80, 30 }, { 30, 80 }, { 3, 3, 8, 16 } } do
      local w = I.Orthogonal { gain = 1.5 }(shape, "float64")
      assert.are.same(shape, w.shape:as_list())
      local rows = 1
      for i = 1, #shape - 1 do rows = rows * shape[i] end
      local m = w:reshape(rows, shape[#shape])
      local gram
      if rows >= shape[#shape] then gram = tide.matmul(m, m, { transpose_a = true })
      else gram = tide.matmul(m, m, { transpose_b = true }) end
      local n = gram.shape[1]
      h.close(gram, (tide.eye(n, { dtype = "float64" }) * 2.25):totable(), 1e-10)
    end
    local f32 = I.orthogonal()({ 10, 10 })
    assert.are.equal("float32", f32.dtype)
    h.close(tide.matmul(f32, f32, { transpose_a = true }), tide.eye(10):totable(), 1e-5)
    h.errors("at least two-dimensional", function() I.Orthogonal()({ 5 }) end)
  end)

  it("a seeded initializer repeats after set_seed; unseeded ones draw new values", function()
    tide.random.set_seed(7)
    local a = I.GlorotUniform { seed = 3 }({ 4, 4 })
    local b = I.GlorotUniform()({ 4, 4 })
    tide.random.set_seed(7)
    local a2 = I.GlorotUniform { seed = 3 }({ 4, 4 })
    local b2 = I.GlorotUniform()({ 4, 4 })
    assert.are.same(a:totable(), a2:totable())
    assert.are.same(b:totable(), b2:totable())
    assert.are_not.same(a:totable(), b:totable())
    local init = I.HeUniform()
    assert.are_not.same(init({ 3, 3 }):totable(), init({ 3, 3 }):totable())
  end)

  it("get takes names (snake_case, class names, Keras's aliases), objects, functions and configs", function()
    assert.is_true(I.is_initializer(I.get("GlorotUniform")))
    assert.are.equal(I.RandomUniform, getmetatable(I.get("uniform")))
    assert.are.equal(I.RandomNormal, getmetatable(I.get("normal")))
    local obj = I.he_normal { seed = 5 }
    assert.are.equal(obj, I.get(obj))
    local fn = function(shape, dt) return tide.ones(shape, dt) end
    assert.are.equal(fn, I.get(fn))
    assert.is_nil(I.get(nil))
    local cfg = I.serialize(I.RandomNormal { mean = 1, stddev = 2, seed = 9 })
    assert.are.same({ class_name = "RandomNormal", config = { mean = 1, stddev = 2, seed = 9 } }, cfg)
    local back = I.get(cfg)
    assert.are.same({ 1, 2, 9 }, { back.mean, back.stddev, back.seed })
    assert.are.same({ scale = 2, mode = "fan_out", distribution = "uniform", seed = nil },
      I.VarianceScaling { 2, "fan_out", "uniform" }:get_config())
    assert.are.same({ seed = 4 }, I.LecunNormal { seed = 4 }:get_config())
    assert.are.equal("VarianceScaling", I.serialize(I.deserialize(I.serialize(I.VarianceScaling()))).class_name)
  end)

  it("errors name the initializer and what to change", function()
    h.errors("unknown initializer 'glorot'", I.get, "glorot")
    h.errors("known: constant", I.get, "nope")
    h.errors("RandomNormal: unknown option 'std'", function() I.RandomNormal { std = 1 } end)
    h.errors("VarianceScaling: mode must be", function() I.VarianceScaling { mode = "fan" } end)
    h.errors("distribution must be", function() I.VarianceScaling { distribution = "cauchy" } end)
    h.errors("scale must be positive", function() I.VarianceScaling { scale = 0 } end)
    h.errors("seed must be an integer", function() I.HeNormal { seed = 1.5 } end)
    h.errors("a shape is required", function() I.Zeros()() end)
    h.errors("not a float dtype", function() I.GlorotUniform()({ 2, 2 }, "int32") end)
    h.errors("Constant: value must be a number", function() I.Constant { value = "x" } end)
    h.errors("expected an initializer name", I.get, 42)
  end)

  it("init_scope makes eager values inside a trace and with a tape recording", function()
    local made
    local f = tide.trace(function(x)
      made = I.init_scope(function() return I.Ones()({ 2 }) + 1 end)
      return x + made
    end)
    local y = f(tide.zeros { 2 })
    assert.are.same({ 2, 2 }, y:totable())
    assert.are.same({ 2, 2 }, made:totable()) -- eager, usable after the trace
    assert.are.same({ 2, 2 }, f(tide.zeros { 2 }):totable())
    local v = tide.Variable({ 1, 2 })
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      local c = I.init_scope(function() return v * 3 end)
      return tide.reduce_sum(v * 2 + c)
    end)
    assert.are.same({ 2, 2 }, tape:gradient(loss, v):totable()) -- the scope's use of v was not recorded
    -- an error inside leaves the trace usable and the graph state as it was
    local g = tide.trace(function(x)
      pcall(I.init_scope, function() error("boom") end)
      return x * 2
    end)
    assert.are.same({ 4 }, g(tide.tensor({ 2 }, "float32")):totable())
  end)
end)
