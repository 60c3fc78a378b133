-- tests/spec/metrics/metrics_more_spec.lua — the tide.metrics names added for issue 26 beyond the
-- update/result fixtures: the metric functions against Keras (metrics_more.lua), configs, serialization, errors.
local tide = require "tide"
local h = require "helpers"

local M = tide.metrics
local F = dofile("tests/fixtures/keras/metrics_more.lua")

describe("metric functions", function()
  it("give Keras's per-sample values", function()
    for _, f in ipairs(F.functions) do
      local yt = tide.tensor(f.y_true, f.int_labels and "int32" or "float32")
      local yp = tide.tensor(f.y_pred, "float32")
      local extra = {}
      if f.axis then extra.axis = f.axis end
      if f.k then extra.k = f.k end
      local got = next(extra) and M[f.fn](yt, yp, extra) or M[f.fn](yt, yp)
      h.close(got, f.out, 1e-5)
    end
  end)

  it("are Keras's loss functions under keras.metrics' names", function()
    for _, name in ipairs { "binary_crossentropy", "categorical_crossentropy", "categorical_hinge", "hinge", "huber",
      "kl_divergence", "log_cosh", "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
      "mean_squared_logarithmic_error", "poisson", "sparse_categorical_crossentropy", "squared_hinge" } do
      assert.are.equal(tide.losses[name], M[name], name)
    end
    h.close(M.mean_squared_error({ { 1, 2 } }, { { 2, 4 } }), { 2.5 }, 1e-6)
  end)

  it("take their options positionally or by name, and refuse bad ones", function()
    local yt, yp = tide.tensor({ { 1, 2, 3 } }, "float32"), tide.tensor({ { 1, 3, 2 } }, "float32")
    h.close(M.pearson_correlation(yt, yp, -1), M.pearson_correlation(yt, yp, { axis = -1 }), 0)
    h.errors("axis must be an integer", M.pearson_correlation, yt, yp, { axis = 0.5 })
    h.errors("y_true has shape", M.concordance_correlation, tide.tensor({ { 1, 2 } }, "float32"), yp)
    h.errors("y_pred must be a float tensor", M.pearson_correlation, yt, tide.tensor({ { 1, 2, 3 } }, "int32"))
    h.errors("k must be an integer >= 1", M.sparse_top_k_categorical_accuracy, { 0 }, { { 0.5, 0.5 } }, 0)
    h.close(M.sparse_top_k_categorical_accuracy({ 1, 0 }, { { 0.2, 0.8 }, { 0.3, 0.7 } }, 1), { 1, 0 }, 0)
    h.close(M.sparse_top_k_categorical_accuracy(tide.tensor({ 2, 0 }, "float32"), tide.tensor({ { 2, 0, 1 },
      { 1, 2, 0 } }, "float32"), { k = 1, from_sorted_ids = true }), { 1, 0 }, 0)
  end)
end)

describe("new metric classes", function()
  it("refuse bad constructor arguments, naming them", function()
    h.errors("thresholds must be in [0, 1]", M.TruePositives, { thresholds = 1.5 })
    h.errors("thresholds must be a number or a list", M.FalseNegatives, { thresholds = {} })
    h.errors("unknown", M.TrueNegatives, { threshold = 0.5 })
    h.errors("specificity is required", M.SensitivityAtSpecificity)
    h.errors("sensitivity must be a number in [0, 1]", M.SpecificityAtSensitivity, { 1.5 })
    h.errors("num_thresholds must be an integer >= 1", M.PrecisionAtRecall, { 0.5, num_thresholds = 0 })
    h.errors("class_id must be an integer >= 0", M.RecallAtPrecision, { 0.5, class_id = -1 })
    h.errors("num_classes is required", M.IoU, { target_class_ids = { 0 } })
    h.errors("target class id 3 is out of range", M.IoU, { 3, { 0, 3 } })
    h.errors("target_class_ids must be a non-empty list", M.IoU, { 3, {} })
    h.errors("num_classes is required", M.MeanIoU)
    h.errors("threshold must be a number", M.BinaryIoU, { threshold = "x" })
    h.errors("dtype must be a numeric dtype", M.MeanIoU, { 2, dtype = "string" })
    h.errors("sparse_y_pred must be true or false", M.OneHotIoU, { 3, { 0 }, sparse_y_pred = 1 })
    h.errors("num_classes must be an integer >= 1", M.OneHotMeanIoU, { 0 })
    h.errors("average must be nil, \"micro\"", M.F1Score, { average = "mean" })
    h.errors("beta must be a number > 0", M.FBetaScore, { beta = 0 })
    h.errors("threshold must be a number with 0 < threshold <= 1", M.FBetaScore, { threshold = 0 })
    h.errors("class_aggregation must be", M.R2Score, { class_aggregation = "mean" })
    h.errors("num_regressors must be an integer >= 0", M.R2Score, { num_regressors = -1 })
    h.errors("axis must be an integer", M.PearsonCorrelation, { axis = "x" })
    h.errors("axis must be an integer", M.ConcordanceCorrelation, { axis = 1.5 })
    h.errors("k must be an integer >= 1", M.SparseTopKCategoricalAccuracy, { 0 })
    h.errors("from_sorted_ids must be true or false", M.SparseTopKCategoricalAccuracy, { from_sorted_ids = 1 })
  end)

  it("refuse bad inputs to update_state, naming them", function()
    h.errors("y_true has shape", function() M.TruePositives():update_state({ 1, 0 }, { 0.5, 0.2, 0.1 }) end)
    h.errors("with class_id, y_pred must be 2-D", function()
      M.RecallAtPrecision { 0.5, class_id = 1 }:update_state({ 1, 0 }, { 0.5, 0.2 })
    end)
    h.errors("y_true must hold class ids", function() M.MeanIoU(2):update_state(tide.tensor({ true }), { 1 }) end)
    h.errors("y_pred must be a float tensor", function()
      M.OneHotMeanIoU(2):update_state({ { 1, 0 } }, tide.tensor({ { 1, 0 } }, "int32"))
    end)
    h.errors("expects 2-D inputs", function() M.F1Score():update_state({ 1, 0 }, { 0.4, 0.6 }) end)
    h.errors("expects 2-D inputs", function() M.R2Score():update_state({ 1, 0 }, { 0.4, 0.6 }) end)
    h.errors("y_true has shape", function()
      M.F1Score():update_state({ { 1, 0 } }, { { 0.4, 0.6 }, { 0.1, 0.9 } })
    end)
  end)

  it("give the counts of one cell per threshold, as a scalar for one threshold", function()
    local m = M.FalsePositives { thresholds = { 0.15, 0.5 } }
    m:update_state({ 0, 1, 0, 0 }, { 0.2, 0.9, 0.6, 0.1 })
    h.close(m:result(), { 2, 1 }, 0)
    local one = M.TrueNegatives()
    one:update_state({ 0, 1, 0, 0 }, { 0.2, 0.9, 0.6, 0.1 }, { 1, 1, 1, 3 })
    h.close(one:result(), 4, 0)
  end)

  it("IoU counts in an int64 matrix and truncates float weights, as Keras", function()
    local m = M.MeanIoU(2)
    assert.are.equal("int64", m.total_cm.dtype)
    m:update_state({ 0, 1, 1 }, { 0, 1, 0 }, { 1.9, 1, 0.5 }) -- weights 1, 1, 0
    h.close(m:result(), 1, 1e-6)
    local f = M.MeanIoU { 2, dtype = "float32" }
    f:update_state({ 0, 1, 1 }, { 0, 1, 0 }, { 1.9, 1, 0.5 })
    h.close(f:result(), (1.9 / 2.4 + 1 / 1.5) / 2, 1e-5)
  end)

  it("R2Score without aggregation (class_aggregation=false) gives one score per output", function()
    local m = M.R2Score { class_aggregation = false }
    m:update_state({ { 1, 2 }, { 2, 4 }, { 3, 6 } }, { { 1, 2 }, { 2, 5 }, { 3, 6 } })
    h.close(m:result(), { 1, 1 - 1 / 8 }, 1e-5)
    assert.is_nil(m:get_config().class_aggregation)
  end)

  it("round-trip their configs", function()
    for _, m in ipairs { M.TruePositives { thresholds = { 0.2, 0.4 } }, M.SensitivityAtSpecificity { 0.4, 20, 1 },
      M.IoU { 3, { 0, 2 }, ignore_class = 1 }, M.MeanIoU(4), M.BinaryIoU { { 1 }, 0.3 }, M.OneHotIoU { 3, { 1 } },
      M.OneHotMeanIoU { 3, sparse_y_pred = true }, M.F1Score { "macro", 0.4 }, M.FBetaScore { "weighted", 2 },
      M.R2Score { "variance_weighted_average", 1 }, M.PearsonCorrelation { axis = 0 },
      M.ConcordanceCorrelation(), M.SparseTopKCategoricalAccuracy { 3, from_sorted_ids = true } } do
      local again = getmetatable(m):from_config(m:get_config())
      assert.are.same(m:get_config(), again:get_config())
      local by_get = M.get { class_name = getmetatable(m).__name, config = m:get_config() }
      assert.are.same(m:get_config(), by_get:get_config())
    end
  end)
end)

describe("MeanMetricWrapper", function()
  it("averages a function's values with its keyword arguments, and serializes it by name", function()
    local m = M.MeanMetricWrapper { M.binary_crossentropy, name = "bce_logits", from_logits = true }
    m:update_state({ { 1, 0 } }, { { 2, -1 } })
    h.close(m:result(), tide.losses.binary_crossentropy({ { 1, 0 } }, { { 2, -1 } }, { from_logits = true })[0], 1e-6)
    local c = m:get_config()
    assert.are.same({ module = "builtins", class_name = "function", config = "binary_crossentropy",
      registered_name = "function" }, c.fn)
    assert.is_true(c.from_logits)
    local again = M.MeanMetricWrapper:from_config(c)
    again:update_state({ { 1, 0 } }, { { 2, -1 } })
    h.close(again:result(), m:result(), 0)
    local by_name = M.MeanMetricWrapper("mean_absolute_error")
    by_name:update_state({ 1, 2 }, { 2, 4 })
    h.close(by_name:result(), 1.5, 1e-6)
    local own = M.MeanMetricWrapper(function(a, b) return tide.abs(tide.tensor(a, "float32") - b) end)
    own:update_state({ 1 }, tide.tensor({ 3 }, "float32"), { 2 })
    h.close(own:result(), 2, 0)
  end)

  it("refuses what is not a function", function()
    h.errors("fn must be a function", M.MeanMetricWrapper, 3)
    h.errors("no tide.metrics function named 'nope'", M.MeanMetricWrapper, "nope")
    h.errors("takes at most 3 positional entries", M.MeanMetricWrapper, { M.hinge, "n", "float32", 4 })
    h.errors("expects (fn, {options})", M.MeanMetricWrapper, M.hinge, "n")
  end)
end)

describe("serialize and deserialize", function()
  it("round-trip metrics and functions as Keras writes them", function()
    local s = M.serialize(M.F1Score { average = "micro" })
    assert.are.equal("keras.metrics", s.module)
    assert.are.equal("F1Score", s.class_name)
    assert.are.equal("micro", s.config.average)
    local back = M.deserialize(s)
    assert.are.equal("micro", back.average)
    assert.are.same({ module = "builtins", class_name = "function", config = "hinge", registered_name = "function" },
      M.serialize(M.hinge))
    assert.are.equal(M.hinge, M.deserialize(M.serialize(M.hinge)))
    assert.are.equal("MeanSquaredError", getmetatable(M.deserialize("mse")).__name)
    assert.is_nil(M.serialize(nil))
    local Mine = M.Metric:extend("Mine")
    function Mine:__init(o) self:_init_base("Mine", o and o.name) end
    local mine = M.deserialize({ class_name = "Mine", config = { name = "x" } }, { Mine = Mine })
    assert.are.equal("x", mine.name)
  end)

  it("name what they cannot handle", function()
    h.errors("none of tide.metrics' functions", M.serialize, function() end)
    h.errors("expected a Metric or a metric function", M.serialize, 3)
    h.errors("unknown metric class 'Nope'", M.deserialize, { class_name = "Nope", config = {} })
    h.errors("unknown metric function 'nope'", M.deserialize, { class_name = "function", config = "nope" })
    h.errors("expected a name or {class_name=, config=}", M.deserialize, 5)
    h.errors("custom_objects must be a table", M.deserialize, "mse", 3)
  end)
end)
