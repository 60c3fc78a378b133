-- tests/spec/constraints/constraints_spec.lua — tide.constraints against Keras 3's
-- values (tests/fixtures/keras/constraints.lua): each constraint on fixed weights,
-- layers whose optimizer projects their weights after each step, configs and errors.
local tide = require "tide"
local h = require "helpers"
local K = tide.constraints
local F = dofile("tests/fixtures/keras/constraints.lua")

local function label(c)
  local keys = {}
  for k, v in pairs(c.config) do
    keys[#keys + 1] = k .. "=" .. (type(v) == "table" and "{" .. table.concat(v, ",") .. "}" or tostring(v))
  end
  table.sort(keys)
  return c.class .. "{" .. table.concat(keys, ", ") .. "}"
end

describe("tide.constraints against Keras 3", function()
  local project = tide.trace(function(con, x) return con(x) end)
  for _, c in ipairs(F.cases) do
    it(label(c) .. " projects weights as Keras does, eagerly and traced, on tensors and Variables", function()
      local con = K[c.class](c.config)
      local w = tide.tensor(c.w, "float32")
      h.close(con(w), c.result, 1e-6)
      h.close(con(tide.Variable(w)), c.result, 1e-6)
      h.close(project(con, w), c.result, 1e-6)
      assert.are.same(c.keras_config, con:get_config())
    end)
  end

  it("a Dense layer's kernel (MaxNorm) and bias (NonNeg) are projected after each SGD step", function()
    local T = F.training.dense
    local layer = tide.layers.Dense { 3, kernel_constraint = K.MaxNorm(1.0), bias_constraint = "non_neg" }
    local model = tide.Sequential { tide.Input { shape = { 4 } }, layer }
    layer:set_weights { tide.tensor(T.kernel, "float32"), tide.tensor(T.bias, "float32") }
    model:compile { optimizer = tide.optimizers.SGD(0.1), loss = "mse" }
    local x, y = tide.tensor(T.x, "float32"), tide.tensor(T.y, "float32")
    for _ = 1, 2 do model:train_on_batch(x, y) end
    local after = layer:get_weights()
    h.close(after[1], T.after[1], 1e-5)
    h.close(after[2], T.after[2], 1e-5)
  end)

  it("a Conv2D kernel with UnitNorm over axes {0, 1, 2} is projected after each step", function()
    local T = F.training.conv
    local layer = tide.layers.Conv2D { 2, 2, kernel_constraint = K.UnitNorm { axis = { 0, 1, 2 } } }
    local model = tide.Sequential { tide.Input { shape = { 5, 5, 3 } }, layer }
    layer:set_weights { tide.tensor(T.kernel, "float32"), tide.tensor(T.bias, "float32") }
    model:compile { optimizer = tide.optimizers.SGD(0.1), loss = "mse" }
    local x, y = tide.tensor(T.x, "float32"), tide.tensor(T.y, "float32")
    for _ = 1, 2 do model:train_on_batch(x, y) end
    local after = layer:get_weights()
    h.close(after[1], T.after[1], 1e-5)
    h.close(after[2], T.after[2], 1e-5)
  end)
end)

describe("tide.constraints", function()
  it("a Variable's constraint is applied by any optimizer after its update, eagerly and in a traced step", function()
    local v = tide.Variable({ 1, -2, 3 }, { constraint = K.NonNeg() })
    local opt = tide.optimizers.SGD(1.0)
    opt:apply_gradients { { tide.tensor({ 2, 0, -1 }, "float32"), v } }
    h.close(v:read_value(), { 0, 0, 4 }, 0)
    local step = tide.trace(function(g) opt:apply_gradients { { g, v } } end)
    step(tide.tensor({ -1, 1, 5 }, "float32"))
    h.close(v:read_value(), { 1, 0, 0 }, 0)
    -- a plain function is a constraint too, and the field can be set later
    local w = tide.Variable({ 5, -5 })
    w.constraint = function(x) return tide.clip_by_value(x, -1, 1) end
    tide.optimizers.Adam(0.1):apply_gradients { { tide.tensor({ 1, 1 }, "float32"), w } }
    h.close(w:read_value(), { 1, -1 }, 0)
  end)

  it("add_weight takes a constraint by name, object or function", function()
    local L = tide.layers.Layer:extend("WithConstraint")
    function L:build() self.w = self:add_weight { name = "w", shape = { 2 }, constraint = "unit_norm" } end
    function L:call(x) return x * self.w end
    local l = L()
    l(tide.ones { 2 })
    assert.is_true(K.is_constraint(l.w.constraint))
    assert.are.equal("UnitNorm", getmetatable(l.w.constraint).__name)
    h.errors("add_weight 'w': unknown constraint 'norm'", function()
      local M = tide.layers.Layer:extend("BadConstraint")
      function M:build() self:add_weight { name = "w", shape = { 2 }, constraint = "norm" } end
      M()(tide.ones { 2 })
    end)
  end)

  it("get, serialize, deserialize and layer configs round-trip", function()
    for _, name in ipairs { "max_norm", "min_max_norm", "non_neg", "unit_norm" } do
      local c = K.get(name)
      local again = K.deserialize(K.serialize(c))
      assert.are.same(c:get_config(), again:get_config())
      assert.are.equal(getmetatable(c), getmetatable(again))
    end
    local f = function(x) return x end
    assert.are.equal(f, K.get(f))
    assert.is_nil(K.get(nil))
    local d = tide.layers.Dense { 2, kernel_constraint = K.MaxNorm { max_value = 3, axis = 1 } }
    local cfg = d:get_config()
    assert.are.same({ class_name = "MaxNorm", config = { max_value = 3, axis = 1 } }, cfg.kernel_constraint)
    local d2 = tide.layers.Dense:from_config(cfg)
    assert.are.same(cfg.kernel_constraint, K.serialize(d2.kernel_constraint))
    for _, l in ipairs { tide.layers.LSTM { 2, recurrent_constraint = "non_neg" },
                         tide.layers.BatchNormalization { gamma_constraint = "non_neg" },
                         tide.layers.Embedding { 4, 2, embeddings_constraint = "unit_norm" },
                         tide.layers.SeparableConv2D { 2, 3, pointwise_constraint = "max_norm" } } do
      assert.is_not_nil(next(l:get_config()))
    end
  end)

  it("name what is wrong", function()
    h.errors("MaxNorm: max_value must be a number, got big", K.MaxNorm, { max_value = "big" })
    h.errors("UnitNorm: axis must be an integer or a list of integers, got entry 2 = x", K.UnitNorm, { axis = { 0, "x" } })
    h.errors("MinMaxNorm: unknown option 'maximum'", K.MinMaxNorm, { maximum = 2 })
    h.errors("NonNeg: expects a weight (a tensor or Variable), got nil", K.NonNeg())
    h.errors("Dense: kernel_constraint: unknown constraint 'maxnorm' (known: max_norm, min_max_norm, non_neg, " ..
      "unit_norm)", tide.layers.Dense, { 2, kernel_constraint = "maxnorm" })
    h.errors("constraint: expected a constraint name, object, config table or function, got number", K.get, 3)
    h.errors("Variable: constraint must be a function of the variable's value", tide.Variable, 1, { constraint = 2 })
  end)
end)
