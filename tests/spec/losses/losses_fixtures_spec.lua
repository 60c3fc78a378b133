-- tests/spec/losses/losses_fixtures_spec.lua — every tide.losses loss against
-- TensorFlow 2.21's Keras 3 (tests/fixtures/keras/losses.lua and losses_more.lua, written by
-- losses_gen.py and losses_more_gen.py): functions, and classes under each reduction and sample weight,
-- float32 and float64, eager and inside tide.trace.
local tide = require "tide"
local h = require "helpers"

local TOL = { float32 = 1e-5, float64 = 1e-10 }

-- Each check traces a new Function on purpose: no retracing advice.
require("tide.tracing.retracing").settings.enabled = false

local function inputs(F, case, dt)
  local inp = F.inputs[case.input]
  local sparse = case.int_labels or case.fn:match("^sparse") ~= nil
  local y_true = sparse and tide.tensor(inp.y_true, "int64") or tide.tensor(inp.y_true, dt)
  return y_true, tide.tensor(inp.y_pred, dt)
end

local function sample_weight(F, name, dt)
  if name == nil then return nil end
  return tide.tensor(F.sample_weights[name], dt)
end

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- Every case of one fixture file, and its classes' configs.
local function check_file(file)
  local F = dofile(file)
  for _, case in ipairs(F.cases) do
    describe(case.id .. " (" .. case.class .. ")", function()
      for _, dt in ipairs { "float32", "float64" } do
        local want = case[dt]
        local tol = TOL[dt]

        it("as the function " .. case.fn .. ", " .. dt .. ", eager and traced", function()
          local y_true, y_pred = inputs(F, case, dt)
          local fn = tide.losses[case.fn]
          local got = fn(y_true, y_pred, copy(case.fn_options))
          assert.are.equal(dt, got.dtype)
          h.close(got, want.fn, tol)
          local traced = tide.trace(function(a, b) return fn(a, b, copy(case.fn_options)) end)
          h.close(traced(y_true, y_pred), want.fn, tol)
        end)

        it("as the class under every reduction and sample weight, " .. dt .. ", eager and traced", function()
          local y_true, y_pred = inputs(F, case, dt)
          for _, r in ipairs(want.reduced) do
            local config = copy(case.config)
            config.reduction = r.reduction
            local loss = tide.losses[case.class](config)
            local sw = sample_weight(F, r.sample_weight, dt)
            local what = string.format("reduction %s, sample_weight %s", r.reduction, tostring(r.sample_weight))
            local ok, err = pcall(function()
              local got = loss(y_true, y_pred, sw)
              assert.are.equal(dt, got.dtype)
              h.close(got, r.value, tol)
              local traced = tide.trace(function(a, b, w) return loss(a, b, w) end)
              h.close(traced(y_true, y_pred, sw), r.value, tol)
            end)
            assert(ok, what .. ": " .. tostring(err))
          end
        end)
      end
    end)
  end

  describe("get_config (" .. file .. ")", function()
    it("holds what Keras's get_config holds, with the same values", function()
      for class_name, keras_config in pairs(F.configs) do
        local config = tide.losses[class_name]():get_config()
        for k, v in pairs(keras_config) do
          assert.are.same(v, config[k], class_name .. "." .. k)
        end
      end
    end)
  end)
end

check_file("tests/fixtures/keras/losses.lua")
check_file("tests/fixtures/keras/losses_more.lua")
