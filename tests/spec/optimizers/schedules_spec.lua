-- tests/spec/optimizers/schedules_spec.lua — tide.optimizers.schedules against Keras
-- 3's values (tests/fixtures/keras/optimizers.lua), eager and traced (one trace for
-- every step), configs and serialization, and the errors.
local tide = require "tide"
local h = require "helpers"

local root = debug.getinfo(1, "S").source:match("^@(.*)tests/") or ""
local F = dofile(root .. "tests/fixtures/keras/optimizers.lua")
local S = tide.optimizers.schedules

local function label(s)
  local keys = {}
  for k, v in pairs(s.config) do keys[#keys + 1] = k .. "=" .. tostring(type(v) == "table" and #v or v) end
  table.sort(keys)
  return s.class .. "{" .. table.concat(keys, ", ") .. "}"
end

describe("schedules against Keras 3", function()
  for _, s in ipairs(F.schedules) do
    it(label(s) .. ", eager, at Lua numbers, tensors and Variables", function()
      local sched = S[s.class](s.config)
      for i, step in ipairs(s.steps) do
        local at_number = sched(step)
        assert.are.equal("float32", at_number.dtype)
        assert.are.equal(0, at_number.ndim)
        h.close({ at_number:item() }, { s.values[i] }, 1e-6)
        h.close({ sched(tide.tensor(step, "int64")):item() }, { s.values[i] }, 1e-6)
        h.close({ sched(tide.Variable(step, { dtype = "int64" })):item() }, { s.values[i] }, 1e-6)
      end
    end)

    it(label(s) .. ", traced once for every step", function()
      local sched = S[s.class](s.config)
      local f = tide.trace(function(step) return sched(step) end)
      for i, step in ipairs(s.steps) do
        h.close({ f(tide.tensor(step, "int64")):item() }, { s.values[i] }, 1e-6)
      end
      assert.are.equal(1, f:trace_count())
    end)
  end
end)

describe("schedules", function()
  it("take TF's keyword names or positional values in TF's order", function()
    local a = S.ExponentialDecay(0.1, 10, 0.96, true)
    local b = S.ExponentialDecay { initial_learning_rate = 0.1, decay_steps = 10, decay_rate = 0.96, staircase = true }
    assert.are.same(a:get_config(), b:get_config())
    assert.are.same({ initial_learning_rate = 0.1, decay_steps = 10, decay_rate = 0.96, staircase = true,
                      name = "ExponentialDecay" }, a:get_config())
    assert.are.same({ boundaries = { 1, 2 }, values = { 3, 2, 1 }, name = "PiecewiseConstant" },
      S.PiecewiseConstantDecay({ 1, 2 }, { 3, 2, 1 }):get_config())
    assert.are.same({ initial_learning_rate = 1, decay_steps = 5, alpha = 0, name = "CosineDecay",
                      warmup_steps = 0 }, S.CosineDecay(1, 5):get_config())
    assert.are.same({ initial_learning_rate = 1, decay_steps = 5, end_learning_rate = 0.0001, power = 1,
                      cycle = false, name = "PolynomialDecay" }, S.PolynomialDecay(1, 5):get_config())
    assert.are.same({ initial_learning_rate = 1, first_decay_steps = 5, t_mul = 2, m_mul = 1, alpha = 0,
                      name = "SGDRDecay" }, S.CosineDecayRestarts(1, 5):get_config())
  end)

  it("serialize and deserialize (and from_config) give the same schedule", function()
    for _, s in ipairs(F.schedules) do
      local sched = S[s.class](s.config)
      local ser = S.serialize(sched)
      assert.are.equal(s.class, ser.class_name)
      local again = S.deserialize(ser)
      assert.are.same(sched:get_config(), again:get_config())
      assert.are.equal(sched(7):item(), again(7):item())
      assert.are.same(sched:get_config(), S[s.class].from_config(sched:get_config()):get_config())
      assert.are.same(sched:get_config(), S[s.class]:from_config(sched:get_config()):get_config())
    end
  end)

  it("print their class and name", function()
    assert.are.equal("<tide.optimizers.schedules.InverseTimeDecay 'decay'>",
      tostring(S.InverseTimeDecay { initial_learning_rate = 1, decay_steps = 1, decay_rate = 1, name = "decay" }))
  end)

  it("name what is wrong with their arguments", function()
    h.errors("ExponentialDecay: decay_steps must be > 0, got 0", S.ExponentialDecay, 0.1, 0, 0.9)
    h.errors("CosineDecay: decay_steps must be > 0, got -1", S.CosineDecay, 0.1, -1)
    h.errors("ExponentialDecay: decay_rate is required", S.ExponentialDecay, { initial_learning_rate = 0.1,
      decay_steps = 1 })
    h.errors("ExponentialDecay: unknown option 'decay'", S.ExponentialDecay, { initial_learning_rate = 0.1,
      decay_steps = 1, decay_rate = 0.5, decay = 1 })
    h.errors("InverseTimeDecay: initial_learning_rate must be a number, got the string \"fast\"",
      S.InverseTimeDecay, "fast", 1, 1)
    h.errors("ExponentialDecay: staircase must be true or false, got 1", S.ExponentialDecay, 0.1, 1, 0.5, 1)
    h.errors("PiecewiseConstantDecay: boundaries must have one entry fewer than values", S.PiecewiseConstantDecay,
      { 1, 2 }, { 1, 2 })
    h.errors("PiecewiseConstantDecay: values[2] must be a number", S.PiecewiseConstantDecay, { 1 }, { 1, "x" })
    h.errors("ExponentialDecay: the step must be a tensor, a Variable or a number, got the string \"3\"",
      S.ExponentialDecay(0.1, 1, 0.5), "3")
    h.errors("PolynomialDecay: decay_steps must be > 0, got 0", S.PolynomialDecay, 0.1, 0)
    h.errors("CosineDecayRestarts: first_decay_steps must be > 0, got 0", S.CosineDecayRestarts, 0.1, 0)
    h.errors("PolynomialDecay: cycle must be true or false, got 1", S.PolynomialDecay, 0.1, 2, 0.01, 1, 1)
    h.errors("schedules.deserialize: unknown schedule 'Linear' (known: CosineDecay, CosineDecayRestarts, " ..
      "ExponentialDecay, InverseTimeDecay, PiecewiseConstantDecay, PolynomialDecay)", S.deserialize, { class_name = "Linear", config = {} })
    h.errors("schedules.serialize: expects a schedule", S.serialize, function() end)
  end)
end)
