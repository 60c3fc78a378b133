-- tests/spec/optimizers/optimizers_more_spec.lua — Keras 3's newer optimizers (Lion, Lamb, Adafactor, Ftrl, Muon,
-- ScheduleFreeAdamW) against TF 2.21's Keras (tests/fixtures/keras/optimizers_more.lua): the variables after each
-- of four steps, eager and inside one traced step; Keras's default arguments; errors and get() by name.
local tide = require "tide"
local h = require "helpers"

local F = dofile("tests/fixtures/keras/optimizers_more.lua")
local TOL = { float32 = 2e-5, float64 = 1e-12 }
local KEYS = { "w1", "w2", "w3" }

local function make_variables(c)
  local vars = {}
  for i, k in ipairs(KEYS) do
    vars[i] = tide.Variable(tide.tensor(F.inits[k], c.dtype), { name = c.var_names[i] })
  end
  return vars
end

local function grads(c, s)
  local out = {}
  for i, k in ipairs(KEYS) do out[i] = tide.tensor(F.grads[s][k], c.dtype) end
  return out
end

local function check(c, vars, s, where)
  for i, k in ipairs(KEYS) do
    local ok, err = pcall(h.close, vars[i]:numpy(), c.steps[s][k], TOL[c.dtype])
    assert(ok, string.format("%s, %s, step %d, %s: %s", c.name, where, s, k, tostring(err)))
  end
end

describe("Keras 3's newer optimizers against Keras", function()
  local retracing
  setup(function()
    retracing = tide.config.get_retracing_warning()
    tide.config.set_retracing_warning(false)
  end)
  teardown(function() tide.config.set_retracing_warning(retracing) end)

  for _, c in ipairs(F.cases) do
    it(c.name .. ", eager", function()
      local opt = tide.optimizers[c.class](c.config)
      local vars = make_variables(c)
      for s = 1, #c.steps do
        local g = grads(c, s)
        opt:apply_gradients { { g[1], vars[1] }, { g[2], vars[2] }, { g[3], vars[3] } }
        check(c, vars, s, "eager")
      end
    end)

    it(c.name .. ", traced once", function()
      local opt = tide.optimizers[c.class](c.config)
      local vars = make_variables(c)
      local step = tide.trace(function(g1, g2, g3)
        opt:apply_gradients { { g1, vars[1] }, { g2, vars[2] }, { g3, vars[3] } }
        return opt.iterations:read_value()
      end)
      for s = 1, #c.steps do
        local g = grads(c, s)
        assert.are.equal(s, step(g[1], g[2], g[3]):item())
        check(c, vars, s, "traced")
      end
      assert.are.equal(1, step:trace_count())
    end)
  end
end)

describe("the newer optimizers' arguments", function()
  for cls, want in pairs(F.defaults) do
    it(cls .. " has Keras's default arguments, and round-trips its config", function()
      local opt = tide.optimizers[cls]()
      local cfg = opt:get_config()
      for k, v in pairs(want) do
        if type(v) == "number" then
          h.close({ cfg[k] }, { v }, k == "learning_rate" and 1e-7 or 1e-15)
        elseif type(v) == "table" then
          assert.are.same(v, cfg[k] or {}, cls .. "." .. k)
        else
          assert.are.equal(v, cfg[k], cls .. "." .. k)
        end
      end
      local again = tide.optimizers[cls]:from_config(cfg)
      assert.are.same(cfg.learning_rate, again:get_config().learning_rate)
      assert.are.equal(cls, getmetatable(tide.optimizers.get(cls:lower())).__name)
    end)
  end

  it("take Keras's positional arguments", function()
    local lion = tide.optimizers.Lion { 0.01, 0.8, 0.9 }
    assert.are.equal(0.8, lion.beta_1)
    assert.are.equal(0.9, lion.beta_2)
    local muon = tide.optimizers.Muon { 0.01, 0.8 }
    assert.are.equal(0.8, muon.adam_beta_1)
  end)

  it("refuse bad values, naming them", function()
    h.errors("Lion: beta_1 must be in (0, 1]", tide.optimizers.Lion, { beta_1 = 0 })
    h.errors("Lamb: epsilon must be a number", tide.optimizers.Lamb, { epsilon = "x" })
    h.errors("Adafactor: relative_step must be true or false", tide.optimizers.Adafactor, { relative_step = 1 })
    h.errors("Ftrl: learning_rate_power must be <= 0", tide.optimizers.Ftrl, { learning_rate_power = 0.5 })
    h.errors("Ftrl: initial_accumulator_value must be a number >= 0", tide.optimizers.Ftrl,
      { initial_accumulator_value = -1 })
    h.errors("Ftrl: l1_regularization_strength must be a number >= 0", tide.optimizers.Ftrl,
      { l1_regularization_strength = -0.1 })
    h.errors("Muon: exclude_layers[1] must be a string", tide.optimizers.Muon, { exclude_layers = { 3 } })
    h.errors("Muon: ns_steps must be an integer >= 1", tide.optimizers.Muon, { ns_steps = 0 })
    h.errors("ScheduleFreeAdamW: warmup_steps must be a number >= 0", tide.optimizers.ScheduleFreeAdamW,
      { warmup_steps = -1 })
    h.errors("unknown", tide.optimizers.Lion, { beta_3 = 1 })
  end)

  it("Muon gives AdamW's step to what is not 2-D or is excluded", function()
    local opt = tide.optimizers.Muon { exclude_layers = { "^head" } }
    local a = tide.Variable(tide.ones({ 2, 3 }), { name = "dense/kernel" })
    local b = tide.Variable(tide.ones({ 2, 3 }), { name = "head/kernel" })
    local e = tide.Variable(tide.ones({ 2, 3 }), { name = "token_embedding/embeddings" })
    local bias = tide.Variable(tide.ones({ 3 }), { name = "dense/bias" })
    opt:build { a, b, e, bias }
    assert.is_nil(opt:get_slot(a, "velocity"))
    assert.is_not_nil(opt:get_slot(b, "velocity"))
    assert.is_not_nil(opt:get_slot(e, "velocity"))
    assert.is_not_nil(opt:get_slot(bias, "velocity"))
  end)
end)
