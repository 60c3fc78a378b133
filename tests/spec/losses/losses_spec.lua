-- tests/spec/losses/losses_spec.lua — tide.losses beyond the TF fixtures:
-- float64 gradient checks (eager and traced with None dims), options, get(),
-- configs, subclassing, and the errors for bad input.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local L = tide.losses

local function f64(v) return tide.tensor(v, "float64") end

describe("gradients (float64, finite differences)", function()
  local N, C = 3, 4
  local reg_t, reg_p = gc.random({ N, C }, -2, 2, 3), gc.random({ N, C }, -2, 2, 5)
  local prob_t, prob_p = gc.random({ N, C }, 0.05, 0.95, 11), gc.random({ N, C }, 0.05, 0.95, 13)
  local sw = f64 { 1.0, 0.5, 2.0 }
  local cases = {
    { L.MeanSquaredError(), reg_t, reg_p },
    { L.MeanAbsoluteError(), reg_t, reg_p },
    { L.MeanAbsolutePercentageError(), reg_t, reg_p },
    { L.MeanSquaredLogarithmicError(), prob_t, prob_p },
    { L.Huber { delta = 0.7 }, reg_t, reg_p },
    { L.LogCosh(), reg_t, reg_p },
    { L.CosineSimilarity(), reg_t, reg_p },
    { L.BinaryCrossentropy(), prob_t, prob_p },
    { L.BinaryCrossentropy { label_smoothing = 0.2 }, prob_t, prob_p },
    { L.BinaryCrossentropy { from_logits = true }, prob_t, reg_p },
    { L.CategoricalCrossentropy(), prob_t, prob_p },
    { L.CategoricalCrossentropy { from_logits = true, label_smoothing = 0.1 }, prob_t, reg_p },
    { L.KLDivergence(), prob_t, prob_p },
    { L.Poisson(), prob_t, prob_p },
    { L.Hinge(), reg_t, reg_p },
    { L.SquaredHinge(), reg_t, reg_p },
    { L.CategoricalHinge(), prob_t, reg_p },
  }
  for _, c in ipairs(cases) do
    it(c[1].name .. " with respect to y_true and y_pred, with sample weights", function()
      local loss = c[1]
      gc.check(function(t, p) return loss(t, p, sw) end, { c[2], c[3] })
      gc.check(function(t, p) return L[c[1].name == "huber_loss" and "huber" or c[1].name](t, p) end,
        { c[2], c[3] })
    end)
  end
  it("sparse_categorical_crossentropy with respect to y_pred (probabilities and logits, ignore_class)", function()
    local labels = tide.tensor({ 0, 3, 1 }, "int64")
    gc.check(function(p) return L.SparseCategoricalCrossentropy()(labels, p, sw) end, { prob_p })
    gc.check(function(p) return L.SparseCategoricalCrossentropy { from_logits = true }(labels, p) end, { reg_p })
    gc.check(function(p) return L.SparseCategoricalCrossentropy { from_logits = true, ignore_class = 3 }(labels, p) end,
      { reg_p })
  end)
end)

describe("classes and functions", function()
  local yt = tide.tensor({ { 0, 1 }, { 1, 0 } }, "float32")
  local yp = tide.tensor({ { 0.2, 0.7 }, { 0.6, 0.3 } }, "float32")

  it("take Keras's constructor arguments by position or by name", function()
    assert.are.equal(2, L.Huber { 2 }.delta)
    assert.are.equal("sum", L.Huber { 2, "sum" }.reduction)
    assert.are.equal(true, L.BinaryCrossentropy { true, 0.1 }.from_logits)
    assert.are.equal(0.1, L.CategoricalCrossentropy { label_smoothing = 0.1 }.label_smoothing)
    assert.are.equal("none", L.SparseCategoricalCrossentropy { true, 2, "none" }.reduction)
    assert.are.equal("my_loss", L.MeanSquaredError { name = "my_loss" }.name)
  end)

  it("take Lua tables, with y_pred in float32 and y_true in y_pred's dtype", function()
    local got = L.MeanSquaredError()({ { 1, 2 } }, { { 1.5, 2.5 } })
    assert.are.equal("float32", got.dtype)
    h.close(got, 0.25, 1e-7)
    h.close(L.mean_absolute_error(tide.tensor({ { 1, 2 } }, "int32"), yp:slice { { 0, 1 } }), 1.05, 1e-6)
    assert.are.equal("float64", L.MeanSquaredError { dtype = "float64" }(yt, yp).dtype)
  end)

  it("snake_case functions take their options by position or in a table", function()
    local a = L.binary_crossentropy(yt, yp, true)
    local b = L.binary_crossentropy(yt, yp, { from_logits = true })
    h.close(a, b:totable(), 0)
    h.close(L.huber(yt, yp, 0.1), L.huber(yt, yp, { delta = 0.1 }):totable(), 0)
  end)

  it("ignore_class gives zeros for the ignored entries and averages over the others", function()
    local labels = tide.tensor({ 0, 1, 1 }, "int32")
    local logits = tide.tensor({ { 2, 1 }, { 0, 3 }, { 1, 1 } }, "float32")
    local per = L.sparse_categorical_crossentropy(labels, logits, { from_logits = true, ignore_class = 0 })
    assert.are.equal(0, per[0]:item())
    local mean = L.SparseCategoricalCrossentropy { from_logits = true, ignore_class = 0 }(labels, logits)
    h.close(mean, (per[1]:item() + per[2]:item()) / 2, 1e-6)
  end)

  it("a traced loss gives the eager values, with None dims too", function()
    local loss = L.CategoricalCrossentropy { label_smoothing = 0.1 }
    local f = tide.trace(function(a, b) return loss(a, b) end,
      { input_signature = { tide.TensorSpec({ tide.None, tide.None }), tide.TensorSpec({ tide.None, tide.None }) } })
    h.close(f(yt, yp), loss(yt, yp):item(), 1e-6)
    local g = tide.trace(function(a, b, w) return L.SparseCategoricalCrossentropy()(a, b, w) end,
      { input_signature = { tide.TensorSpec({ tide.None }, "int32"), tide.TensorSpec({ tide.None, 2 }),
        tide.TensorSpec({ tide.None }) } })
    local labels, w = tide.tensor({ 1, 0 }, "int32"), tide.tensor({ 1, 3 }, "float32")
    h.close(g(labels, yp, w), L.SparseCategoricalCrossentropy()(labels, yp, w):item(), 1e-6)
  end)

  it("get_config and from_config round-trip", function()
    for _, loss in ipairs { L.Huber { delta = 3, reduction = "sum" }, L.CategoricalCrossentropy { true, 0.2 },
      L.SparseCategoricalCrossentropy { ignore_class = 4 }, L.CosineSimilarity { axis = 0 } } do
      local cls = getmetatable(loss)
      local again = cls:from_config(loss:get_config())
      assert.are.same(loss:get_config(), again:get_config())
    end
    assert.are.same({ name = "huber_loss", reduction = "sum_over_batch_size", delta = 1 }, L.Huber():get_config())
  end)

  it("subclass with Loss:extend", function()
    local Twice = L.Loss:extend("TwiceAbsolute")
    function Twice:call(y_true, y_pred) return 2 * tide.reduce_mean(tide.abs(y_true - y_pred), -1) end
    local loss = Twice { reduction = "sum" }
    assert.are.equal("twice_absolute", loss.name)
    h.close(loss(yt, yp), 2 * (0.25 + 0.35), 1e-6) -- sum of 2 * the rows' mean absolute errors
    assert.is_true(L.is_loss(loss))
  end)
end)

describe("get", function()
  it("gives functions by function name and alias, instances by class name", function()
    assert.are.equal(L.sparse_categorical_crossentropy, L.get("sparse_categorical_crossentropy"))
    assert.are.equal(L.mean_squared_error, L.get("mse"))
    assert.are.equal(L.kl_divergence, L.get("KLD"))
    local cce = L.get("CategoricalCrossentropy")
    assert.is_true(L.is_loss(cce))
    assert.are.equal("categorical_crossentropy", cce.name)
    assert.are.equal(true, L.get { class_name = "CategoricalCrossentropy", config = { from_logits = true } }.from_logits)
    assert.is_true(L.is_loss(L.get(L.Hinge)))
    local mine = L.Huber()
    assert.are.equal(mine, L.get(mine))
    assert.is_nil(L.get(nil))
  end)

  it("names what it knows when the name is unknown", function()
    local err = h.errors("unknown loss 'sparse_crossentropy'", L.get, "sparse_crossentropy")
    assert.truthy(err:find("sparse_categorical_crossentropy", 1, true))
    h.errors("could not interpret loss identifier", L.get, 42)
    h.errors("unknown loss class 'Nope'", L.get, { class_name = "Nope" })
  end)
end)

describe("errors", function()
  local yt = tide.tensor({ { 0, 1, 0 }, { 1, 0, 0 } }, "float32")
  local yp = tide.tensor({ { 0.2, 0.7, 0.1 }, { 0.6, 0.3, 0.1 } }, "float32")

  it("mismatched shapes name both shapes", function()
    local other = tide.ones { 2, 2 }
    h.errors("y_true has shape (2, 3) but y_pred has shape (2, 2)", L.MeanSquaredError(), yt, other)
    h.errors("y_true has shape (2, 3) but y_pred has shape (2, 2)", L.binary_crossentropy, yt, other)
    h.errors("y_true has shape (2, 3) but y_pred has shape (2, 2)", L.CategoricalCrossentropy(), yt, other)
    h.errors("y_true has shape (2, 3) but y_pred has shape (2, 2)", L.hinge, yt, other)
    h.errors("y_true has shape (3,) but y_pred has shape (2, 3)", L.SparseCategoricalCrossentropy(),
      tide.tensor { 0, 1, 2 }, yp)
    h.errors("sample_weight of shape (3,) does not broadcast against the losses of shape (2,)",
      L.MeanSquaredError(), yt, yp, { 1, 2, 3 })
  end)

  it("int predictions where floats are due", function()
    h.errors("y_pred must be a float tensor", L.MeanSquaredError(), yt, tide.tensor { { 0, 1, 0 }, { 1, 0, 0 } })
    h.errors("y_pred must be a float tensor (float32, float64, float16 or bfloat16), got int32",
      L.sparse_categorical_crossentropy, { 0, 1 }, tide.tensor { { 0, 1 }, { 1, 0 } })
    h.errors("y_pred must be a tensor, a Lua number or a table, got nil", L.BinaryCrossentropy(), yt, nil)
    h.errors("y_true must hold class indices", L.SparseCategoricalCrossentropy(), tide.tensor { true, false }, yp)
  end)

  it("a bad reduction, unknown options and bad option values", function()
    h.errors('reduction must be "sum_over_batch_size", "sum", "none", "mean" or "mean_with_sample_weight", got "avg"',
      L.MeanSquaredError, { reduction = "avg" })
    h.errors("Huber: unknown option 'delt' (expected: delta, reduction, name, dtype)", L.Huber, { delt = 1 })
    h.errors("label_smoothing must be a number in [0, 1], got 2", L.CategoricalCrossentropy, { label_smoothing = 2 })
    h.errors("from_logits must be true or false, got 1", L.BinaryCrossentropy, { from_logits = 1 })
    h.errors("dtype must be a float dtype", L.MeanSquaredError, { dtype = "int32" })
    h.errors("too many positional options", L.Hinge, { "sum", "h", "float32", 4 })
    h.errors("only axis=-1 (the last) is supported", L.sparse_categorical_crossentropy, { 0, 1 }, yp, { axis = 0 })
    h.errors("binary_crossentropy: unknown option 'logits'", L.binary_crossentropy, yt, yp, { logits = true })
  end)

  it("a label outside the classes is the op's error", function()
    h.errors("label", L.SparseCategoricalCrossentropy(), tide.tensor { 0, 7 }, yp)
  end)
end)
