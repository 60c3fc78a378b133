-- tests/spec/models/training_spec.lua — compile/fit/evaluate/predict and the
-- *_on_batch forms against TF 2.21's Keras (tests/fixtures/keras/models.lua,
-- from models_gen.py: an MLP with fixed weights, SGD, an l2 regularizer,
-- validation_split, sample and class weights), traced steps that trace once,
-- predict in a loop without retracing or memory growth, trainable changes
-- after compile, train_step overrides, run_eagerly, and the errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/models.lua")
local D = F.data

local function t32(v) return tide.tensor(v, "float32") end

local function make()
  local m = tide.Sequential { tide.Input { shape = { 4 } },
    L.Dense { 8, activation = "relu", kernel_regularizer = tide.regularizers.l2(0.01) }, L.Dense { 3 } }
  m:set_weights { t32(D.w1), t32(D.b1), t32(D.w2), t32(D.b2) }
  m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 },
    loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
  return m
end

local X, Y = t32(D.x), tide.tensor(D.y, "int32")

local function close_history(got, want)
  for k, values in pairs(want) do
    assert.is_truthy(got[k], "history lacks " .. k)
    h.close(got[k], values, 1e-5)
  end
  for k in pairs(got) do assert.is_truthy(want[k], "history has an extra " .. k) end
end

describe("fit, evaluate, predict against Keras", function()
  it("fit with validation_split, no shuffle: the same history and weights", function()
    local m = make()
    local hist = m:fit(X, Y, { batch_size = 4, epochs = 3, shuffle = false, verbose = 0, validation_split = 0.2 })
    close_history(hist.history, F.fit_history)
    assert.are.same({ 0, 1, 2 }, hist.epoch)
    assert.are.equal(hist, m.history)
    for i, w in ipairs(m:get_weights()) do h.close(w, F.fit_weights[i], 1e-5) end
    h.close(m:evaluate(X, Y, { batch_size = 3, verbose = 0 }), F.evaluate, 1e-5)
    h.close(m:predict(X, { batch_size = 3 }), F.predict, 1e-5)
    local d = m:evaluate(X, Y, { batch_size = 3, verbose = 0, return_dict = true })
    h.close({ d.loss, d.accuracy }, F.evaluate, 1e-5)
  end)

  it("sample_weight and class_weight weigh the loss and the metrics", function()
    local m = make()
    local hist = m:fit(X, Y, { batch_size = 4, epochs = 2, shuffle = false, verbose = 0, sample_weight = t32(D.sw) })
    close_history(hist.history, F.fit_sample_weight_history)
    m = make()
    hist = m:fit(X, Y, { batch_size = 4, epochs = 2, shuffle = false, verbose = 0,
      class_weight = { [0] = 1.0, [1] = 2.0, [2] = 0.5 } })
    close_history(hist.history, F.fit_class_weight_history)
  end)

  it("train_on_batch returns the batch's loss and metrics and takes one step", function()
    local m = make()
    h.close(m:train_on_batch(X:slice { { 0, 5 } }, Y:slice { { 0, 5 } }), F.train_on_batch, 1e-5)
    for i, w in ipairs(m:get_weights()) do h.close(w, F.train_on_batch_weights[i], 1e-5) end
    local logs = m:test_on_batch(X, Y, { return_dict = true })
    assert.is_number(logs.loss)
    assert.are.same({ 10, 3 }, m:predict_on_batch(X).shape:as_list())
  end)
end)

describe("traced steps", function()
  local function data(n)
    tide.random.set_seed(3)
    local x = tide.random.normal { n, 6 }
    local y = tide.cast(tide.reduce_sum(x, 1):gt(0), "int32")
    return x, y
  end

  local function model()
    local m = tide.Sequential { tide.Input { shape = { 6 } }, L.Dense { 16, activation = "relu" }, L.Dense { 2 } }
    m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 },
      loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true }, metrics = { "accuracy" } }
    return m
  end

  it("trace once for every batch size, epoch and fit call; learn", function()
    local x, y = data(203)
    local m = model()
    local hist = m:fit(x, y, { batch_size = 16, epochs = 8, verbose = 0, validation_data = { x, y } })
    assert.are.equal(1, m._functions["train:y"]:trace_count())
    assert.are.equal(1, m._functions["test:y"]:trace_count())
    m:fit(x, y, { batch_size = 50, epochs = 1, verbose = 0 })
    assert.are.equal(1, m._functions["train:y"]:trace_count())
    local acc = hist.history.accuracy
    assert.is_true(acc[#acc] > 0.9, "accuracy " .. acc[#acc])
    assert.is_true(hist.history.val_accuracy[8] > 0.9)
  end)

  it("predict: every sample, the last partial batch included, no retrace and no memory growth in a loop", function()
    local x = data(37)
    local m = model()
    local p = m:predict(x, { batch_size = 10 })
    assert.are.same({ 37, 2 }, p.shape:as_list())
    h.close(p, m(x):totable(), 1e-5)
    local function rss_kb()
      local f = io.open("/proc/self/statm")
      local pages = f:read("*n"); pages = f:read("*n")
      f:close()
      return pages * 4
    end
    local function loop(n)
      for _ = 1, n do m:predict(x, { batch_size = 10 }); m(x) end
      collectgarbage(); collectgarbage()
      return rss_kb(), tide.config.memory_info().current, collectgarbage("count")
    end
    -- The warm-up is long: the RSS settles over the first thousand or so calls
    -- (LuaJIT's traces and machine code, mmapped, and the allocators' free
    -- lists), by a few MB that vary run to run; a leak grows with every call.
    loop(1500)
    local rss, tensor_bytes, lua_kb = loop(2000)
    local rss2, tensor_bytes2, lua_kb2 = loop(2000)
    assert.are.equal(1, m._functions["predict"]:trace_count())
    assert.are.equal(tensor_bytes, tensor_bytes2, "bytes held by tensors")
    assert.is_true(lua_kb2 - lua_kb < 256, "the Lua heap grew by " .. (lua_kb2 - lua_kb) .. " KB")
    assert.is_true(rss2 - rss < 4 * 1024, "RSS grew by " .. (rss2 - rss) .. " KB in 2000 calls")
  end)

  it("trainable = false after compile takes effect at the next fit (the step is traced again)", function()
    local x, y = data(64)
    local m = model()
    m:fit(x, y, { epochs = 1, verbose = 0 })
    local first = m.layers[1]
    first.trainable = false
    local frozen = first.kernel:read_value():totable()
    local other = m.layers[2].kernel:read_value():totable()
    m:fit(x, y, { epochs = 1, verbose = 0 })
    h.close(first.kernel:read_value(), frozen, 0)
    assert.is_false(h.values(m.layers[2].kernel:read_value())[1] == h.values(other)[1])
    first.trainable = true
    m:fit(x, y, { epochs = 1, verbose = 0 })
    assert.is_false(h.values(first.kernel:read_value())[1] == h.values(frozen)[1])
    assert.are.equal(1, m._functions["train:y"]:trace_count()) -- a new function, traced once
  end)

  it("run_eagerly = true runs the Lua step with the same results", function()
    local x, y = data(40)
    local a, b = model(), model()
    b:set_weights(a:get_weights())
    b:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.01 }, loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true },
      metrics = { "accuracy" }, run_eagerly = true }
    local ha = a:fit(x, y, { epochs = 2, shuffle = false, verbose = 0 })
    local hb = b:fit(x, y, { epochs = 2, shuffle = false, verbose = 0 })
    h.close(hb.history.loss, ha.history.loss, 1e-5)
    assert.are.equal("function", type(b._functions["train:y:eager"]))
  end)

  it("a subclass's train_step is used by fit, traced once", function()
    local Custom = tide.Model:extend("Custom")
    function Custom:init() self.d = L.Dense { 1 } end
    function Custom:call(x) return self.d(x) end
    local calls = 0
    function Custom:train_step(batch)
      calls = calls + 1
      local x, y = batch[1], batch[2]
      local tape = tide.GradientTape()
      local loss = tape:run(function() return tide.reduce_mean((self(x, { training = true }) - y) ^ 2) end)
      local vars = self.trainable_weights
      self.optimizer:apply(tape:gradient(loss, vars), vars)
      return { loss = loss, twice = loss * 2 }
    end
    local m = Custom {}
    m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 } }
    local x = tide.random.normal { 64, 3 }
    local y = tide.matmul(x, t32 { { 1 }, { -2 }, { 0.5 } })
    local hist = m:fit(x, y, { epochs = 20, batch_size = 16, verbose = 0 })
    assert.are.equal(1, calls)
    assert.is_true(hist.history.loss[20] < 0.01 * hist.history.loss[1])
    h.close(hist.history.twice, (function()
      local out = {}
      for i, v in ipairs(hist.history.loss) do out[i] = 2 * v end
      return out
    end)(), 1e-5)
  end)

  it("several outputs: a loss each, loss_weights, per-output metric names", function()
    local a = tide.Input { shape = { 3 } }
    local hidden = L.Dense { 8, activation = "relu" }(a)
    local m = tide.Model { inputs = a, outputs = { L.Dense { 1, name = "reg" }(hidden), L.Dense { 2, name = "cls" }(hidden) } }
    m:compile { optimizer = "adam", loss = { "mse", tide.losses.SparseCategoricalCrossentropy { from_logits = true } },
      loss_weights = { 1.0, 0.5 }, metrics = { "accuracy" } }
    local x = tide.random.normal { 32, 3 }
    local hist = m:fit(x, { tide.random.normal { 32, 1 }, tide.zeros({ 32 }, "int32") }, { epochs = 2, verbose = 0 })
    assert.is_truthy(hist.history.loss)
    assert.is_truthy(hist.history.reg_accuracy)
    assert.is_truthy(hist.history.cls_accuracy)
  end)
end)

describe("steps_per_epoch", function()
  it("takes that many batches per epoch, continuing through the data; a short pass ends the epoch", function()
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 1 } }
    m:compile { optimizer = "sgd", loss = "mse" }
    local x, y = tide.random.normal { 40, 4 }, tide.random.normal { 40, 1 }
    local hist = m:fit(x, y, { batch_size = 4, epochs = 3, steps_per_epoch = 3, verbose = 0 })
    assert.are.equal(9, m.optimizer.iterations:item())
    assert.are.equal(3, #hist.history.loss)
    -- 10 batches a pass: epoch 1 runs 6, epoch 2 runs the 4 left (with a warning), epoch 3 starts a new pass
    m:fit(x, y, { batch_size = 4, epochs = 3, steps_per_epoch = 6, verbose = 0 })
    assert.are.equal(9 + 6 + 4 + 6, m.optimizer.iterations:item())
  end)
end)

describe("training errors", function()
  it("names what to change", function()
    L.clear_session()
    local m = tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 3 } }
    h.errors("you must call compile{optimizer=, loss=} before fit", function() m:fit(X, Y) end)
    h.errors("compile: unknown loss 'nope'", function() m:compile { loss = "nope" } end)
    h.errors("compile: unknown option 'lr'", function() m:compile { loss = "mse", lr = 1 } end)
    m:compile { optimizer = "sgd", loss = "sparse_categorical_crossentropy" }
    h.errors("the labels for output 'dense' have shape (None, 3), which does not fit the output's shape (None, 3): " ..
      "sparse categorical crossentropy takes class indices of shape (None,)",
      function() m:fit(X, tide.one_hot(Y, 3), { verbose = 0 }) end)
    h.errors("x has 10, but y has 9", function() m:fit(X, Y:slice { { 0, 9 } }, { verbose = 0 }) end)
    h.errors("fit: unknown option 'epoch'", function() m:fit(X, Y, { epoch = 2 }) end)
    h.errors("class_weight and sample_weight cannot be given together", function()
      m:fit(X, Y, { verbose = 0, sample_weight = tide.ones { 10 }, class_weight = { [0] = 1 } })
    end)
    h.errors("sample_weight must have shape (10,)", function() m:fit(X, Y, { verbose = 0, sample_weight = tide.ones { 3 } }) end)
    h.errors("validation_split must be a number in (0, 1)", function() m:fit(X, Y, { validation_split = 1.5 }) end)
    m:compile { optimizer = "sgd", loss = "mse" }
    h.errors("the labels for output 'dense' have shape (None, 5), which does not fit the output's shape (None, 3)",
      function() m:fit(X, tide.ones { 10, 5 }, { verbose = 0 }) end)
  end)
end)
