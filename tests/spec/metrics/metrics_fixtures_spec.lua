-- tests/spec/metrics/metrics_fixtures_spec.lua — every tide.metrics metric
-- against TensorFlow 2.21's Keras 3 (tests/fixtures/keras/metrics.lua and metrics_more.lua, written
-- by metrics_gen.py and metrics_more_gen.py): several update_state calls, reset_state, one more update;
-- eager, and with update and result inside one tide.trace (traced once).
local tide = require "tide"
local h = require "helpers"

local F = { cases = {} }
for _, file in ipairs { "tests/fixtures/keras/metrics.lua", "tests/fixtures/keras/metrics_more.lua" } do
  for _, case in ipairs(dofile(file).cases) do F.cases[#F.cases + 1] = case end
end
local TOL = 1e-5

-- Each case traces new Functions, and the steps change shapes on purpose: no
-- retracing advice (metrics_spec checks that one signature traces once).
require("tide.tracing.retracing").settings.enabled = false

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- The arguments of one update_state step as tensors.
local function step_args(case, s)
  local sw = s.sample_weight and tide.tensor(s.sample_weight, "float32")
  if s.values then return { tide.tensor(s.values, "float32"), sw } end
  local y_true = tide.tensor(s.y_true, case.labels == "int" and "int32" or "float32")
  return { y_true, tide.tensor(s.y_pred, "float32"), sw }
end

local function run(case, update, reset)
  for i, s in ipairs(case.steps) do
    local got
    if s.reset then got = reset() else got = update(unpack(step_args(case, s))) end
    local ok, err = pcall(h.close, got, s.result, TOL)
    assert(ok, string.format("step %d%s: %s", i, s.reset and " (reset)" or "", tostring(err)))
  end
end

for _, case in ipairs(F.cases) do
  describe(case.id .. " (" .. case.class .. ")", function()
    it("updates, resets and gives Keras's results eagerly", function()
      local m = tide.metrics[case.class](copy(case.config))
      run(case, function(...)
        m:update_state(...)
        return m:result()
      end, function()
        m:reset_state()
        return m:result()
      end)
    end)

    it("updates its Variables inside traced steps", function()
      local m = tide.metrics[case.class](copy(case.config))
      local step_with = tide.trace(function(...)
        m:update_state(...)
        return m:result()
      end)
      local step_without = tide.trace(function(a, b)
        m:update_state(a, b)
        return m:result()
      end)
      local reset = tide.trace(function()
        m:reset_state()
        return m:result()
      end)
      run(case, function(...)
        local args = { ... }
        local n = case.steps[1].values and 2 or 3
        if args[n] == nil then return step_without(...) end
        return step_with(...)
      end, reset)
    end)

    it("has Keras's configuration", function()
      local config = tide.metrics[case.class](copy(case.config)):get_config()
      for k, v in pairs(case.keras_config) do
        if k ~= "name" then assert.are.same(v, config[k], k) end
      end
    end)
  end)
end
