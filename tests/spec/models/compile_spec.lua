-- tests/spec/models/compile_spec.lua — compile's losses and metrics as keras.io's
-- examples use them, against TF 2.21's Keras 3 (tests/fixtures/keras/examples.lua,
-- from examples_gen.py): every loss given by name takes labels (N,) for
-- predictions (N, 1) and (N, 1) for (N,); a model of two named Inputs takes
-- tables keyed by their names in call, fit, evaluate, predict and datasets, and
-- with two outputs logs each output's loss and metrics under Keras 3's names.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/examples.lua")

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

describe("compile's losses align the labels' rank (Keras's LossFunctionWrapper)", function()
  local R = F.losses_rank
  local p = tide.tensor(R.p, "float32")
  local N = #R.p

  -- A model whose output is its input, as a column (N, 1) or flat (N,).
  local function identity(flat)
    L.clear_session()
    local x = tide.Input { shape = { 1 } }
    local out = flat and L.Lambda { function(t) return tide.squeeze(t, { -1 }) end }(x) or L.Activation { "linear" }(x)
    return tide.Model { inputs = x, outputs = out }
  end

  -- Losses this check cannot take, and why.
  local APART = {
    ctc = "its predictions are (batch, time, classes) logits and its labels sequences (tests/spec/ops/ctc_spec.lua)",
    categorical_generalized_cross_entropy = "Keras's losses.get does not know it by name, so compile cannot be " ..
      "given it as a string (tests/spec/losses/losses_more_spec.lua)",
  }

  it("for every loss function tide has: labels (N,) for predictions (N, 1), and (N, 1) for (N,)", function()
    local names = {}
    for name, fn in pairs(tide.losses) do
      if type(fn) == "function" and name:match("^%l") and name ~= "get" and name ~= "serialize" and not APART[name] and
          name ~= "deserialize" and pcall(tide.losses.get, name) and tide.losses.get(name) == fn then
        names[#names + 1] = name
      end
    end
    table.sort(names)
    assert.is_true(#names >= 14)
    for _, name in ipairs(names) do
      local want = R.values[name]
      assert.is_truthy(want, name .. " has no Keras value: add it to examples_gen.py's LOSSES")
      local y = tide.tensor(want.labels, "float32")
      local col = identity(false)
      col:compile { optimizer = "sgd", loss = name }
      h.close(col:evaluate(p:reshape { N, 1 }, y, { batch_size = N, verbose = 0 }), want.labels_n, 1e-5)
      local flat = identity(true)
      flat:compile { optimizer = "sgd", loss = name }
      h.close(flat:evaluate(p:reshape { N, 1 }, y:reshape { N, 1 }, { batch_size = N, verbose = 0 }), want.labels_n1, 1e-5)
    end
  end)

  it("a model trains with binary_crossentropy on labels (N,), its accuracy too", function()
    L.clear_session()
    local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 1, activation = "sigmoid" } }
    m:compile { optimizer = "sgd", loss = "binary_crossentropy", metrics = { "accuracy" } }
    local hist = m:fit(tide.random.normal { 8, 3 }, tide.tensor({ 1, 0, 1, 0, 1, 0, 1, 0 }, "float32"), { verbose = 0 })
    assert.are.same({ "accuracy", "loss" }, sorted_keys(hist.history))
  end)
end)

describe("a model of two named Inputs and two outputs", function()
  local T = F.two_by_two
  local D = T.data
  local function t32(v) return tide.tensor(v, "float32") end
  local x1, x2, y1, y2 = t32(D.x1), t32(D.x2), t32(D.y1), t32(D.y2)

  local function two_by_two(opts)
    L.clear_session()
    local a = tide.Input { shape = { 3 }, name = "title" }
    local b = tide.Input { shape = { 2 }, name = "body" }
    local hidden = L.Concatenate { name = "cat" } { a, b }
    local o1 = L.Dense { 1, name = "priority" }(hidden)
    local o2 = L.Dense { 4, activation = "softmax", name = "department" }(hidden)
    local m = tide.Model { inputs = { a, b }, outputs = { o1, o2 } }
    m:set_weights { t32(D.k1), tide.zeros { 1 }, t32(D.k2), tide.zeros { 4 } }
    m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 }, loss = opts.loss, metrics = opts.metrics,
                loss_weights = opts.loss_weights }
    return m
  end

  it("takes a table keyed by the Inputs' names in call, fit, evaluate and predict: History and evaluate as Keras 3",
    function()
      local m = two_by_two { loss = { "mse", "categorical_crossentropy" }, metrics = { { "mae" }, { "accuracy" } },
                             loss_weights = { 1.0, 0.5 } }
      local x = { title = x1, body = x2 }
      local by_list = m { x1, x2 }
      local by_name = m(x)
      h.close(by_name[1], by_list[1]:totable(), 0)
      h.close(by_name[2], by_list[2]:totable(), 0)
      -- targets keyed by the outputs' names, too
      local hist = m:fit(x, { priority = y1, department = y2 }, { batch_size = 4, epochs = 2, shuffle = false,
                                                                 verbose = 0 })
      assert.are.same(sorted_keys(T.history), sorted_keys(hist.history))
      for k, v in pairs(T.history) do h.close(hist.history[k], v, 1e-5) end
      for i, w in ipairs(m:get_weights()) do h.close(w, T.weights[i], 1e-5) end
      -- evaluate's list: loss, each output's loss, then the other values by name (Keras's order)
      h.close(m:evaluate(x, { y1, y2 }, { batch_size = 4, verbose = 0 }), T.evaluate, 1e-5)
      local logs = m:evaluate(x, { y1, y2 }, { batch_size = 4, verbose = 0, return_dict = true })
      assert.are.same(sorted_keys(T.evaluate_dict), sorted_keys(logs))
      for k, v in pairs(T.evaluate_dict) do h.close(logs[k], v, 1e-5) end
      local pred = m:predict(x, { verbose = 0 })
      h.close(pred[1], T.predict[1], 1e-5)
      h.close(pred[2], T.predict[2], 1e-5)
      assert.are.same({ "loss", "priority_mae", "department_accuracy", "priority_loss", "department_loss" },
        m.metrics_names)
    end)

  it("logs each output's loss when more than one output has a loss (one loss for all, or a list with nil)", function()
    local one = two_by_two { loss = "mse" }
    assert.are.same(T.one_loss_history_keys, sorted_keys(one:fit({ x1, x2 }, { y1, y2 }, { verbose = 0 }).history))
    local partial = two_by_two { loss = { priority = "mse" } }
    assert.are.same(T.partial_loss_history_keys,
      sorted_keys(partial:fit({ x1, x2 }, { y1, y2 }, { verbose = 0 }).history))
  end)

  it("reads a dataset of tables keyed by the Inputs' and outputs' names; the progress bar shows each output's loss",
    function()
      local m = two_by_two { loss = { "mse", "categorical_crossentropy" }, metrics = { { "mae" }, { "accuracy" } },
                             loss_weights = { 1.0, 0.5 } }
      local ds = tide.data.Dataset.from_tensor_slices { { title = x1, body = x2 },
                                                        { priority = y1, department = y2 } }:batch(4)
      local lines = {}
      local bar = tide.callbacks.ProgbarLogger { write = function(s) lines[#lines + 1] = s end, dynamic = false }
      local hist = m:fit(ds, { epochs = 2, verbose = 1, callbacks = { bar } })
      for k, v in pairs(T.history) do h.close(hist.history[k], v, 1e-5) end
      local text = table.concat(lines)
      for _, k in ipairs { "loss", "priority_loss", "department_loss", "priority_mae", "department_accuracy" } do
        assert.truthy(text:find(" - " .. k .. ": ", 1, true), k)
      end
      -- the same model fit with a list first, then with the dataset's tables: each structure its own step
      local m2 = two_by_two { loss = { "mse", "categorical_crossentropy" } }
      m2:fit({ x1, x2 }, { y1, y2 }, { epochs = 1, verbose = 0 })
      m2:fit(ds, { epochs = 1, verbose = 0 })
      h.close(m2:predict(tide.data.Dataset.from_tensor_slices { title = x1, body = x2 }:batch(4))[1],
        m2:predict({ x1, x2 })[1]:totable(), 1e-6)
    end)

  it("names what is missing", function()
    local m = two_by_two { loss = { "mse", "categorical_crossentropy" } }
    h.errors("an input is missing (expected one for 'body'; the table has title)", function() m { title = x1 } end)
    h.errors("it has none for output 'department'", function()
      m:fit({ x1, x2 }, { priority = y1, dept = y2 }, { verbose = 0 })
    end)
  end)
end)
