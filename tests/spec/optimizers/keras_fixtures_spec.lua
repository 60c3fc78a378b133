-- tests/spec/optimizers/keras_fixtures_spec.lua — every optimizer (and its option
-- combinations, clipping, weight decay, schedules, None gradients) against Keras 3's
-- own steps (tests/fixtures/keras/optimizers.lua, made by optimizers_gen.py there):
-- variables, optimizer variables (names, order, values) and learning rates after
-- each step, eagerly and inside a traced step; and Keras's default arguments.
local tide = require "tide"
local h = require "helpers"

local root = debug.getinfo(1, "S").source:match("^@(.*)tests/") or ""
local F = dofile(root .. "tests/fixtures/keras/optimizers.lua")

local TOL = { float32 = 1e-5, float64 = 1e-12 }
local VARS = { "w1", "w2" }

-- The optimizer of a case, made from its Keras config (a schedule as Keras serialized it).
local function make_optimizer(c)
  local config = {}
  for k, v in pairs(c.config) do config[k] = v end
  if type(config.learning_rate) == "table" then
    config.learning_rate = tide.optimizers.schedules.deserialize(config.learning_rate)
  end
  return tide.optimizers[c.class](config)
end

local function make_variables(dtype)
  local vars = {}
  for i, k in ipairs(VARS) do
    local init = F.inits[k]
    vars[i] = tide.Variable(tide.tensor(init.values, dtype):reshape(init.shape), { name = k })
  end
  return vars
end

-- The gradients of step s (1-based) of case c; nil where the case drops one.
local function gradients(c, s, vars)
  local out = {}
  for i, k in ipairs(VARS) do
    local dropped = false
    for _, m in ipairs(c.missing) do
      if m.step == s and m.var == k then dropped = true end
    end
    if not dropped then out[i] = tide.tensor(F.grads[s][k], c.dtype):reshape(vars[i].shape:as_list()) end
  end
  return out
end

-- Keras names Nadam's u_product "variable", "variable_1", ... (an unnamed Variable).
local function tide_name(keras_name)
  if keras_name:match("^variable") then return "u_product" end
  return keras_name
end

local function check_step(c, opt, vars, s, lr_before, where)
  local want = c.steps[s]
  local tol = TOL[c.dtype]
  local ctx = string.format("%s, %s, step %d", c.name, where, s)
  h.close({ lr_before }, { want.learning_rate }, 1e-7)
  for i, k in ipairs(VARS) do
    local ok, err = pcall(h.close, vars[i]:numpy(), want.vars[k], tol)
    assert(ok, ctx .. ", variable " .. k .. ": " .. tostring(err))
  end
  local ovs = opt.variables
  assert(#ovs == #want.optimizer_variables, string.format("%s: %d optimizer variables, Keras has %d", ctx, #ovs,
    #want.optimizer_variables))
  for j, ov in ipairs(want.optimizer_variables) do
    assert.are.equal(tide_name(ov.name), ovs[j].name, ctx)
    assert.are.equal(ov.dtype, ovs[j].dtype, ctx .. ", " .. ov.name)
    local ok, err = pcall(h.close, ovs[j]:numpy(), ov.values, ov.dtype == "int64" and 0 or tol)
    assert(ok, ctx .. ", optimizer variable " .. ov.name .. ": " .. tostring(err))
  end
end

local function lr_value(opt) return opt.learning_rate:item() end

describe("optimizers against Keras 3 (" .. F.keras_version .. ")", function()
  -- Each case traces its own closure of one Lua function (tide's retracing
  -- warning), and the cases with a nil gradient warn as Keras does: neither
  -- is what this file checks (optimizer_spec.lua checks the latter).
  local stderr, retracing
  setup(function()
    retracing = tide.config.get_retracing_warning()
    tide.config.set_retracing_warning(false)
    stderr = io.stderr
    io.stderr = { write = function() end }
  end)
  teardown(function()
    io.stderr = stderr
    tide.config.set_retracing_warning(retracing)
  end)

  for _, c in ipairs(F.cases) do
    it(c.name .. ", eager", function()
      local opt = make_optimizer(c)
      local vars = make_variables(c.dtype)
      for s = 1, #c.steps do
        local g = gradients(c, s, vars)
        local lr = lr_value(opt)
        opt:apply_gradients { { g[1], vars[1] }, { g[2], vars[2] } }
        check_step(c, opt, vars, s, lr, "eager")
      end
    end)

    it(c.name .. ", traced", function()
      local opt = make_optimizer(c)
      local vars = make_variables(c.dtype)
      local step = tide.trace(function(g1, g2)
        opt:apply_gradients { { g1, vars[1] }, { g2, vars[2] } }
        return opt.iterations:read_value()
      end)
      local shapes = {}
      for s = 1, #c.steps do
        local g = gradients(c, s, vars)
        shapes[(g[1] and "1" or "-") .. (g[2] and "2" or "-")] = true
        local lr = lr_value(opt)
        assert.are.equal(s, step(g[1], g[2]):item())
        check_step(c, opt, vars, s, lr, "traced")
      end
      local kinds = 0
      for _ in pairs(shapes) do kinds = kinds + 1 end
      assert.are.equal(kinds, step:trace_count()) -- one trace per pattern of nil gradients, none per step
    end)
  end
end)

describe("optimizer defaults", function()
  for cls, want in pairs(F.defaults) do
    it(cls .. " has Keras's default arguments", function()
      local cfg = tide.optimizers[cls]():get_config()
      for k, v in pairs(want) do
        if type(v) == "number" then
          h.close({ cfg[k] }, { v }, 1e-15)
        else
          assert.are.equal(v, cfg[k], cls .. "." .. k)
        end
      end
      for k, v in pairs(cfg) do
        if k ~= "name" then assert(want[k] ~= nil, cls .. ": tide's config has " .. k .. " = " .. tostring(v)) end
      end
    end)
  end

  it("names optimizers as Keras does (snake case, then _1, _2 ...)", function()
    for cls, snake in pairs(F.snake_names) do
      local a, b = tide.optimizers[cls](), tide.optimizers[cls]()
      assert.are.equal(snake, a.name:gsub("_%d+$", ""))
      assert.are_not.equal(a.name, b.name)
    end
    assert.are.equal("mine", tide.optimizers.SGD { name = "mine" }.name)
  end)
end)
