-- tests/spec/losses/losses_more_spec.lua — the tide.losses added for issue 26 beyond the TF fixtures
-- (losses_more.lua): float64 gradient checks, options, configs, serialize/deserialize, and errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local L = tide.losses

local function f64(v) return tide.tensor(v, "float64") end

describe("gradients of the new losses (float64, finite differences)", function()
  local N, C = 3, 4
  local reg_p = gc.random({ N, C }, -2, 2, 5)
  local prob_t, prob_p = gc.random({ N, C }, 0.05, 0.95, 11), gc.random({ N, C }, 0.05, 0.95, 13)
  local sw = f64 { 1.0, 0.5, 2.0 }
  local cases = {
    { L.BinaryFocalCrossentropy(), "binary_focal_crossentropy", prob_t, prob_p },
    { L.BinaryFocalCrossentropy { apply_class_balancing = true, gamma = 1.5 }, nil, prob_t, prob_p },
    { L.BinaryFocalCrossentropy { from_logits = true, label_smoothing = 0.1 }, nil, prob_t, reg_p },
    { L.CategoricalFocalCrossentropy(), "categorical_focal_crossentropy", prob_t, prob_p },
    { L.CategoricalFocalCrossentropy { from_logits = true, label_smoothing = 0.2 }, nil, prob_t, reg_p },
    { L.Dice(), "dice", prob_t, prob_p },
    { L.Dice { axis = -1 }, nil, prob_t, prob_p },
    { L.Tversky { alpha = 0.7, beta = 0.3 }, "tversky", prob_t, prob_p },
  }
  for _, c in ipairs(cases) do
    it(c[1].name .. " with respect to y_true and y_pred", function()
      local loss = c[1]
      gc.check(function(t, p) return loss(t, p, sw) end, { c[3], c[4] })
      if c[2] then gc.check(function(t, p) return L[c[2]](t, p) end, { c[3], c[4] }) end
    end)
  end

  it("categorical_generalized_cross_entropy and circle with respect to y_pred", function()
    local labels = tide.tensor({ 0, 3, 1 }, "int64")
    gc.check(function(p) return L.CategoricalGeneralizedCrossEntropy { q = 0.7 }(labels, p, sw) end, { prob_p })
    -- circle on unit embeddings of 4 samples, two per class (every sample has a positive and a negative)
    local emb = tide.math.l2_normalize(gc.random({ 4, 3 }, -1, 1, 17), -1)
    local cl = tide.tensor({ 0, 0, 1, 1 }, "int64")
    gc.check(function(e) return L.Circle { gamma = 4 }(cl, e) end, { emb })
  end)
end)

describe("the new losses' options", function()
  it("take Keras's constructor arguments by position or by name", function()
    local a, b = L.BinaryFocalCrossentropy { true, 0.3, 1.5 }, L.BinaryFocalCrossentropy {
      apply_class_balancing = true, alpha = 0.3, gamma = 1.5 }
    assert.are.same(a:get_config(), b:get_config())
    assert.are.same(L.Tversky { 0.7, 0.3 }:get_config(), L.Tversky { alpha = 0.7, beta = 0.3 }:get_config())
    assert.are.equal(0.8, L.CategoricalGeneralizedCrossEntropy { 0.8 }.q)
    assert.are.same({ 1, 2 }, L.Dice { axis = { 1, 2 } }.axis)
  end)

  it("round-trip their configs (Circle leaves the function-only ref_labels out)", function()
    for _, loss in ipairs { L.BinaryFocalCrossentropy { gamma = 3 }, L.CategoricalFocalCrossentropy { alpha = 0.5 },
      L.CategoricalGeneralizedCrossEntropy { q = 0.2 }, L.Dice { axis = -1 }, L.Tversky { 0.2, 0.8 },
      L.Circle { gamma = 10, remove_diagonal = false } } do
      local again = getmetatable(loss):from_config(loss:get_config())
      assert.are.same(loss:get_config(), again:get_config())
    end
    assert.is_nil(L.Circle():get_config().ref_labels)
    assert.are.equal(80, L.Circle():get_config().gamma)
  end)

  it("circle takes reference labels and embeddings", function()
    local e = tide.math.l2_normalize(tide.tensor({ { 1, 0.2 }, { 0.9, 0.1 }, { 0, 1 } }, "float32"), -1)
    local r = tide.math.l2_normalize(tide.tensor({ { 1, 0 }, { 0, 1 } }, "float32"), -1)
    local got = L.circle({ 0, 0, 1 }, e, { ref_labels = { 0, 1 }, ref_embeddings = r, remove_diagonal = false })
    assert.are.same({ 3 }, got.shape:as_list())
    for _, v in ipairs(got:totable()) do assert.is_true(v >= 0) end
  end)

  it("serialize and deserialize as Keras writes them", function()
    local s = L.serialize(L.Tversky { alpha = 0.2 })
    assert.are.equal("keras.losses", s.module)
    assert.are.equal("Tversky", s.class_name)
    assert.are.equal(0.2, L.deserialize(s).alpha)
    assert.are.same({ module = "builtins", class_name = "function", config = "dice", registered_name = "function" },
      L.serialize(L.dice))
    assert.are.equal(L.dice, L.deserialize(L.serialize(L.dice)))
    assert.are.equal(L.mean_squared_error, L.deserialize("mse"))
    assert.is_nil(L.serialize(nil))
    local Mine = L.Loss:extend("MyLoss")
    function Mine:call(t, p) return tide.abs(p - t) end
    assert.are.equal("x", L.deserialize({ class_name = "MyLoss", config = { name = "x" } }, { MyLoss = Mine }).name)
  end)
end)

describe("the new losses' errors", function()
  it("bad option values name the option", function()
    h.errors("q must be a number in (0, 1)", L.CategoricalGeneralizedCrossEntropy, { q = 1 })
    h.errors("q must be a number in (0, 1)", L.categorical_generalized_cross_entropy, { 0 }, { { 1, 0 } }, 0)
    h.errors("gamma must be a number", L.BinaryFocalCrossentropy, { gamma = "2" })
    h.errors("apply_class_balancing must be true or false", L.BinaryFocalCrossentropy, { 1 })
    h.errors("label_smoothing must be a number in [0, 1]", L.CategoricalFocalCrossentropy, { label_smoothing = 2 })
    h.errors("alpha must be a number", L.Tversky, { alpha = {} })
    h.errors("axis must be nil, an integer or a list", L.Dice, { axis = "rows" })
    h.errors("remove_diagonal must be true or false", L.Circle, { remove_diagonal = 0 })
    h.errors("unknown", L.Circle, { ref_labels = { 0 } })
  end)

  it("bad inputs name the argument and shapes", function()
    h.errors("y_true has shape", L.dice, { { 1, 0 } }, { { 0.5, 0.5, 0.1 } })
    h.errors("y_pred must be a float tensor", L.binary_focal_crossentropy, { { 1 } }, tide.tensor({ { 1 } }, "int32"))
    h.errors("y_true has shape", L.categorical_generalized_cross_entropy, { { 0, 1 } }, { { 0.5, 0.5 } })
    h.errors("y_pred must be 2-D embeddings", L.circle, { 0, 1 }, { 0.5, 0.5 })
    h.errors("y_true must be integer labels of shape (N,)", L.circle, { { 0, 1 }, { 1, 0 } }, { { 1, 0 }, { 0, 1 } })
    h.errors("must hold class indices", L.circle, tide.tensor({ true, false }), { { 1, 0 }, { 0, 1 } })
    h.errors("y_true and y_pred must have at least one dimension", L.categorical_focal_crossentropy, 1, 0.5)
  end)

  it("serialize and deserialize name what they cannot handle", function()
    h.errors("none of tide.losses' functions", L.serialize, function() end)
    h.errors("expected a Loss or a loss function", L.serialize, 3)
    h.errors("unknown loss class 'Nope'", L.deserialize, { class_name = "Nope" })
    h.errors("unknown loss function 'nope'", L.deserialize, { class_name = "function", config = "nope" })
    h.errors("expected a name or {class_name=, config=}", L.deserialize, 4)
    h.errors("custom_objects must be a table", L.deserialize, "mse", "x")
  end)
end)
