-- tests/spec/models/fit_dataset_spec.lua — fit, evaluate and predict reading
-- a tide.data.Dataset: batches from the dataset, validation_data as a
-- dataset, a short dataset under steps_per_epoch, and what cannot be given.
local tide = require "tide"
local h = require "helpers"
local D = tide.data.Dataset

local function problem()
  tide.random.set_seed(3)
  local x = tide.random.normal({ 128, 4 })
  local y = x:sum { axis = 1 }:gt(0):cast("int32")
  local model = tide.Sequential { tide.layers.Dense { 8, activation = "relu" }, tide.layers.Dense { 2 } }
  model:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.05 },
    loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
  return model, x, y
end

describe("fit with a dataset", function()
  it("trains on its batches, one pass an epoch, and validates on a dataset", function()
    local model, x, y = problem()
    local ds = D.from_tensor_slices { x, y }:shuffle(128, { seed = 1 }):batch(16)
    local hist = model:fit(ds, nil, { epochs = 4, verbose = 0, validation_data = D.from_tensor_slices { x, y }:batch(64) })
    local loss = hist.history.loss
    assert.are.equal(4, #loss)
    assert.is_true(loss[4] < loss[1])
    assert.is_not_nil(hist.history.val_accuracy[4])
    local acc = model:evaluate(D.from_tensor_slices { x, y }:batch(50), nil, { verbose = 0 })[2]
    assert.are.equal(hist.history.val_accuracy[4], acc)
    local p = model:predict(D.from_tensor_slices(x):batch(50))
    assert.are.same({ 128, 2 }, p.shape:as_list())
    h.close(p, model:predict(x), 1e-5)
  end)

  it("ends an epoch with a warning when the dataset runs out before steps_per_epoch", function()
    local model, x, y = problem()
    local stderr = io.stderr
    local lines = {}
    io.stderr = { write = function(_, s) lines[#lines + 1] = s end }
    local ok, err = pcall(model.fit, model, D.from_tensor_slices { x, y }:batch(32):take(2), nil,
      { epochs = 1, steps_per_epoch = 5, verbose = 0 })
    io.stderr = stderr
    assert(ok, err)
    assert.is_truthy(table.concat(lines):find("after 2 of 5 steps", 1, true))
  end)

  it("refuses y, batch_size and an infinite dataset without steps", function()
    local model, x, y = problem()
    local ds = D.from_tensor_slices { x, y }:batch(32)
    h.errors("y must be nil when x is a dataset", function() model:fit(ds, y, { verbose = 0 }) end)
    h.errors("batch_size cannot be given with a dataset", function() model:fit(ds, nil, { batch_size = 8, verbose = 0 }) end)
    h.errors("give steps_per_epoch", function() model:fit(ds:repeat_(), nil, { verbose = 0 }) end)
  end)

  it("takes its options second, as Keras's fit(ds, epochs=...), for fit and evaluate", function()
    local model, x, y = problem()
    local ds = D.from_tensor_slices { x, y }:batch(32)
    local hist = model:fit(ds, { epochs = 2, verbose = 0 })
    assert.are.equal(2, #hist.history.loss)
    local a = model:evaluate(ds, { verbose = 0 })
    local b = model:evaluate(ds, nil, { verbose = 0 })
    assert.are.same(b, a)
  end)

  it("evaluates and predicts a dataset of unknown size to its end (a filter's)", function()
    local model, x, y = problem()
    local keep = function(_, label) return label:gt(0) end -- the positive samples
    local ds = D.from_tensor_slices { x, y }:filter(keep):batch(16)
    assert.are.equal(tide.data.UNKNOWN_CARDINALITY, ds:cardinality())
    local n = y:sum():item()
    local p = model:predict(ds, { verbose = 0 })
    assert.are.same({ n, 2 }, p.shape:as_list())
    local xs = tide.boolean_mask(x, y:gt(0))
    h.close(p, model:predict(xs, { verbose = 0 }), 1e-5)
    local steps = {}
    local Count = tide.callbacks.Callback:extend("Count")
    function Count:on_test_batch_end(step) steps[#steps + 1] = step end
    local got = model:evaluate(ds, { verbose = 0, callbacks = { Count() } })
    local want = model:evaluate(xs, tide.boolean_mask(y, y:gt(0)), { batch_size = 16, verbose = 0 })
    assert.are.equal(math.ceil(n / 16), #steps)
    h.close(tide.tensor(got), tide.tensor(want), 1e-5)
  end)
end)
