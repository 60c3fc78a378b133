-- tests/spec/metrics/metrics_spec.lua — tide.metrics beyond the TF fixtures:
-- state in non-trainable Variables updated by a step traced once, reset, names,
-- get() and resolve() (Keras's rule for "accuracy"), subclassing, and errors.
local tide = require "tide"
local h = require "helpers"

local M = tide.metrics

describe("state", function()
  it("lives in non-trainable Variables of the metric's dtype", function()
    local auc = M.AUC()
    assert.are.equal(4, #auc.variables)
    for _, v in ipairs(auc.variables) do
      assert.is_true(tide.is_variable(v))
      assert.is_false(v.trainable)
      assert.are.same({ 200 }, v.shape:as_list())
    end
    local mean = M.Mean { dtype = "float64" }
    assert.are.equal(2, #mean.variables)
    assert.are.equal("float64", mean.total.dtype)
    mean:update_state({ 1, 2 })
    assert.are.equal("float64", mean:result().dtype)
  end)

  it("a traced train-like step updates several metrics without tracing again", function()
    local acc, loss_mean, auc = M.SparseCategoricalAccuracy(), M.Mean { name = "loss" }, M.AUC { num_thresholds = 5 }
    local step = tide.trace(function(labels, logits)
      local loss = tide.losses.sparse_categorical_crossentropy(labels, logits, { from_logits = true })
      acc:update_state(labels, logits)
      loss_mean:update_state(loss)
      auc:update_state(labels:cast("float32"), tide.nn.softmax(logits):slice { {}, 1 })
      return acc:result(), loss_mean:result()
    end)
    local reset = tide.trace(function()
      for _, m in ipairs { acc, loss_mean, auc } do m:reset_state() end
    end)
    local labels = tide.tensor({ 1, 0, 1, 1 }, "int32")
    local logits = tide.tensor({ { 0, 2 }, { 1, 0 }, { 3, 1 }, { 0, 1 } }, "float32")
    local eager_acc, eager_loss = M.SparseCategoricalAccuracy(), M.Mean()
    for _ = 1, 5 do
      local a, l = step(labels, logits)
      eager_acc:update_state(labels, logits)
      eager_loss:update_state(tide.losses.sparse_categorical_crossentropy(labels, logits, { from_logits = true }))
      h.close(a, eager_acc:result():item(), 1e-6)
      h.close(l, eager_loss:result():item(), 1e-6)
    end
    assert.are.equal(1, step:trace_count())
    h.close(acc:result(), 0.75, 1e-7)
    reset()
    reset()
    assert.are.equal(1, reset:trace_count())
    assert.are.equal(0, acc:result():item())
    assert.are.equal(0, loss_mean.count:read_value():item())
    step(labels, logits)
    assert.are.equal(1, step:trace_count())
    h.close(acc:result(), 0.75, 1e-7)
  end)

  it("calling a metric updates it and gives the result", function()
    local m = M.Sum()
    h.close(m({ 1, 2, 3 }), 6, 0)
    h.close(m(4, 0.5), 8, 0)
    m:reset_state()
    h.close(m:result(), 0, 0)
  end)
end)

describe("names and configs", function()
  it("default names are Keras's; unnamed classes count up as Keras's auto_name", function()
    assert.are.equal("sparse_categorical_accuracy", M.SparseCategoricalAccuracy().name)
    assert.are.equal("root_mean_squared_error", M.RootMeanSquaredError().name)
    assert.are.equal("logcosh", M.LogCoshError().name)
    local a, b = M.Recall(), M.Recall()
    assert.truthy(a.name:match("^recall"))
    local n = tonumber(a.name:match("^recall_(%d+)$")) or 0
    assert.are.equal("recall_" .. (n + 1), b.name)
    assert.are.equal("mine", M.AUC { name = "mine" }.name)
  end)

  it("get_config and from_config round-trip", function()
    for _, m in ipairs { M.BinaryAccuracy { threshold = 0.3 }, M.TopKCategoricalAccuracy { k = 3 },
      M.Precision { thresholds = { 0.2, 0.4 }, class_id = 1 }, M.AUC { curve = "PR", num_thresholds = 50 },
      M.CategoricalCrossentropy { from_logits = true } } do
      local again = getmetatable(m):from_config(m:get_config())
      assert.are.same(m:get_config(), again:get_config())
    end
  end)

  it("Metric:extend makes a metric with its own state", function()
    local Max = M.Metric:extend("MaxSoFar")
    function Max:__init(opts)
      self:_init_base("MaxSoFar", opts and opts.name, opts and opts.dtype)
      self.best = self:add_variable({}, "best")
    end
    function Max:update_state(values) self.best:assign(tide.maximum(self.best, tide.reduce_max(values))) end
    function Max:result() return self.best:read_value() end
    local m = Max()
    assert.are.equal("max_so_far", m.name)
    m:update_state(tide.tensor({ 1, 5, 2 }, "float32"))
    h.close(m(tide.tensor({ 3 }, "float32")), 5, 0)
    assert.is_true(M.is_metric(m))
  end)
end)

describe("get", function()
  it("gives instances by class name, snake_case name and alias", function()
    assert.are.equal("SparseCategoricalAccuracy", getmetatable(M.get("sparse_categorical_accuracy")).__name)
    assert.are.equal("SparseCategoricalAccuracy", getmetatable(M.get("SparseCategoricalAccuracy")).__name)
    assert.are.equal("MeanSquaredError", getmetatable(M.get("mse")).__name)
    assert.are.equal("AUC", getmetatable(M.get("auc")).__name)
    assert.are.equal("TopKCategoricalAccuracy", getmetatable(M.get("top_k_categorical_accuracy")).__name)
    assert.are.equal(2, M.get { class_name = "TopKCategoricalAccuracy", config = { k = 2 } }.k)
    assert.are.equal("Precision", getmetatable(M.get(M.Precision)).__name)
    assert.is_nil(M.get(nil))
  end)

  it("gives a marker for 'accuracy' and 'acc' that resolve() turns into a metric", function()
    local marker = M.get("accuracy")
    assert.is_true(M.is_deferred(marker))
    assert.is_false(M.is_metric(marker))
    assert.is_true(M.is_deferred(M.get("acc")))
    assert.are.equal("Accuracy", getmetatable(M.get("Accuracy")).__name) -- the class: exact match
    local m = M.resolve(marker, "sparse_categorical_crossentropy", { tide.None, 10 })
    assert.are.equal("SparseCategoricalAccuracy", getmetatable(m).__name)
    assert.are.equal("accuracy", m.name)
  end)

  it("names the known metrics for an unknown one", function()
    local err = h.errors("unknown metric 'accurcy'", M.get, "accurcy")
    assert.truthy(err:find("sparse_categorical_accuracy", 1, true))
    h.errors("could not interpret metric identifier", M.get, true)
  end)
end)

describe("resolve", function()
  local losses = tide.losses
  local function class_of(...) return getmetatable(M.resolve(...)).__name end

  it("follows Keras's rule for 'accuracy' from the loss and the output's last dim", function()
    assert.are.equal("BinaryAccuracy", class_of("accuracy", "binary_crossentropy", { tide.None, 1 }))
    assert.are.equal("BinaryAccuracy", class_of("accuracy", "mse", { 32, 1 }))
    assert.are.equal("BinaryAccuracy", class_of("acc", losses.SparseCategoricalCrossentropy(), { 8, 1 }))
    assert.are.equal("SparseCategoricalAccuracy",
      class_of("accuracy", losses.SparseCategoricalCrossentropy { from_logits = true }, { tide.None, 10 }))
    assert.are.equal("SparseCategoricalAccuracy", class_of("ACC", losses.sparse_categorical_crossentropy, { 4, 10 }))
    assert.are.equal("SparseCategoricalAccuracy", class_of("accuracy", "SparseCategoricalCrossentropy",
      tide.zeros { 4, 3 }.shape))
    assert.are.equal("CategoricalAccuracy", class_of("accuracy", "categorical_crossentropy", { tide.None, 10 }))
    assert.are.equal("CategoricalAccuracy", class_of("accuracy", losses.BinaryCrossentropy(), { 4, 5 }))
    assert.are.equal("CategoricalAccuracy", class_of("accuracy", nil, { 4, 5 }))
  end)

  it("uses the targets' shape when it is given, as Keras 3 does", function()
    assert.are.equal("SparseCategoricalAccuracy", class_of("accuracy", "categorical_crossentropy", { 4, 10 }, { 4 }))
    assert.are.equal("SparseCategoricalAccuracy", class_of("accuracy", nil, { 4, 10 }, { 4, 1 }))
    assert.are.equal("CategoricalAccuracy", class_of("accuracy", "sparse_categorical_crossentropy", { 4, 10 },
      { 4, 10 }))
    assert.are.equal("BinaryAccuracy", class_of("accuracy", nil, { 4, 1 }, { 4 }))
  end)

  it("gives other names through get(), named as given, and wraps a function in a mean", function()
    local m = M.resolve("mse", "mse", { 4, 1 })
    assert.are.equal("MeanSquaredError", getmetatable(m).__name)
    assert.are.equal("mse", m.name)
    local own = M.Precision()
    assert.are.equal(own, M.resolve(own, nil, { 4, 1 }))
    local wrapped = M.resolve(function(y_true, y_pred) return tide.abs(y_true - y_pred) end, nil, { 2 })
    wrapped:update_state(tide.tensor({ 1, 2 }, "float32"), tide.tensor({ 2, 4 }, "float32"))
    h.close(wrapped:result(), 1.5, 1e-7)
  end)

  it("errors name what is wrong", function()
    h.errors("expected a metric, got nil", M.resolve, nil, nil, { 2 })
    h.errors("output_shape must be a shape", M.resolve, "accuracy", nil, 3)
    h.errors("output_shape must have at least one dim", M.resolve, "accuracy", nil, {})
  end)
end)

describe("errors", function()
  local yp = tide.tensor({ { 0.2, 0.8 }, { 0.6, 0.4 } }, "float32")

  it("mismatched shapes name both shapes", function()
    h.errors("y_true has shape (2,) but y_pred has shape (2, 2); they must be the same (one-hot labels; for " ..
      "class indices use sparse_categorical_accuracy)", M.CategoricalAccuracy(), tide.tensor { 0, 1 }, yp)
    h.errors("y_true has shape (2, 2) but y_pred has shape (2, 3)", M.MeanSquaredError(), yp, tide.ones { 2, 3 })
    h.errors("y_true has shape (3,) but y_pred has shape (2, 2)", M.SparseCategoricalAccuracy(), { 0, 1, 1 }, yp)
    h.errors("y_true has shape (2, 2) but y_pred has shape (2, 3)", M.AUC(), yp, tide.ones { 2, 3 })
    h.errors("sample_weight of shape (3,) does not broadcast against the values of shape (2,)", M.Mean(),
      tide.tensor({ 1, 2 }, "float32"), { 1, 2, 3 })
  end)

  it("int predictions where floats are due", function()
    h.errors("y_pred must be a float tensor", M.MeanSquaredError(), yp, tide.tensor { { 0, 1 }, { 1, 0 } })
    h.errors("y_pred must be a float tensor", M.RootMeanSquaredError(), yp, tide.tensor { { 0, 1 }, { 1, 0 } })
    h.errors("y_pred must be a float tensor", M.TopKCategoricalAccuracy(), yp, tide.tensor { { 0, 1 }, { 1, 0 } })
    h.errors("y_pred must be a numeric tensor, got bool", M.BinaryAccuracy(), { 1, 0 }, tide.tensor { true, false })
  end)

  it("bad options", function()
    h.errors("Precision: thresholds must be in [0, 1], got 1.5", M.Precision, { thresholds = { 0.5, 1.5 } })
    h.errors('AUC: curve must be "ROC", "PR" or "PRGAIN", got RAC', M.AUC, { curve = "RAC" })
    h.errors('summation_method must be "interpolation", "majoring" or "minoring"', M.AUC,
      { summation_method = "trapezoid" })
    h.errors("AUC: num_thresholds must be an integer > 1, got 1", M.AUC, { num_thresholds = 1 })
    h.errors("AUC: num_labels is needed only when multi_label is true", M.AUC, { num_labels = 3 })
    h.errors("AUC: with multi_label, y_pred must be 2-D (samples, labels)", function()
      M.AUC { multi_label = true }:update_state(tide.tensor { 1, 0 }, tide.tensor { 0.3, 0.8 })
    end)
    h.errors("with multi_label, y_pred must be 2-D (samples, labels), got shape (2,)", function()
      M.AUC { multi_label = true, num_labels = 2 }:update_state(tide.tensor { 1, 0 }, tide.tensor { 0.3, 0.8 })
    end)
    h.errors("k must be an integer >= 1, got 0.5", M.TopKCategoricalAccuracy, { k = 0.5 })
    h.errors("Mean: unknown option 'nme'", M.Mean, { nme = "x" })
    h.errors("dtype must be a float dtype", M.Sum, { dtype = "int64" })
  end)
end)
