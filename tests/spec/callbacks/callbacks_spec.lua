-- tests/spec/callbacks/callbacks_spec.lua — tide.callbacks in fit: every hook
-- in Keras's order, History, EarlyStopping (patience, min_delta, mode,
-- restore_best_weights), ModelCheckpoint (safetensors, save_best_only, no
-- half-written file), ReduceLROnPlateau, LearningRateScheduler, CSVLogger,
-- TerminateOnNaN, LambdaCallback, save/load_weights, and their errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local L = tide.layers
local C = tide.callbacks

local function model(lr)
  local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 4, activation = "relu" }, L.Dense { 1 } }
  m:compile { optimizer = tide.optimizers.SGD { learning_rate = lr or 0.05 }, loss = "mse" }
  return m
end

local x = tide.random.normal({ 40, 3 }, { seed = 5 })
local y = tide.matmul(x, tide.tensor({ { 1 }, { -1 }, { 0.5 } }, "float32"))

describe("callbacks", function()
  it("every hook runs in Keras's order with its arguments", function()
    local seen = {}
    local Rec = C.Callback:extend("Rec")
    for _, hook in ipairs { "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
      "on_train_batch_end", "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end",
      "on_predict_begin", "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end" } do
      Rec[hook] = function(self, a)
        assert.is_truthy(self.model)
        seen[#seen + 1] = type(a) == "number" and (hook .. " " .. a) or hook
      end
    end
    local m = model()
    m:fit(x, y, { batch_size = 20, epochs = 2, verbose = 0, callbacks = { Rec() }, validation_data = { x, y } })
    assert.are.same({ "on_train_begin", "on_epoch_begin 0", "on_train_batch_begin 0", "on_train_batch_end 0",
      "on_train_batch_begin 1", "on_train_batch_end 1", "on_epoch_end 0", "on_epoch_begin 1",
      "on_train_batch_begin 0", "on_train_batch_end 0", "on_train_batch_begin 1", "on_train_batch_end 1",
      "on_epoch_end 1", "on_train_end" }, seen)
    seen = {}
    m:evaluate(x, y, { batch_size = 40, verbose = 0, callbacks = { Rec() } })
    assert.are.same({ "on_test_begin", "on_test_batch_begin 0", "on_test_batch_end 0", "on_test_end" }, seen)
    seen = {}
    m:predict(x, { batch_size = 40, callbacks = { Rec() } })
    assert.are.same({ "on_predict_begin", "on_predict_batch_begin 0", "on_predict_batch_end 0", "on_predict_end" }, seen)
  end)

  it("EarlyStopping stops after patience epochs without improvement and restores the best weights", function()
    local m = model()
    local losses = { 5, 4, 4.5, 4.2, 3.99, 4.1, 4.1, 4.1 }
    local epoch_weights = {}
    local Fake = C.Callback:extend("Fake") -- sets the monitored value and remembers the weights
    function Fake:on_epoch_end(epoch, logs)
      logs.val_loss = losses[epoch + 1]
      epoch_weights[epoch + 1] = self.model:get_weights()[1]:totable()
    end
    local es = C.EarlyStopping { patience = 2, min_delta = 0.05, restore_best_weights = true }
    local hist = m:fit(x, y, { epochs = 8, verbose = 0, callbacks = { Fake(), es } })
    -- best 4 at epoch 2 (3.99 is not better by 0.05); epochs 3 and 4 wait; stop at epoch 4 (0-based 3)
    assert.are.equal(4, #hist.history.loss)
    assert.are.equal(3, es.stopped_epoch)
    assert.are.equal(1, es.best_epoch)
    h.close(m:get_weights()[1], epoch_weights[2], 0)
    local es2 = C.EarlyStopping { monitor = "val_accuracy" }
    assert.are.equal("max", es2.mode)
    h.errors("mode must be \"auto\", \"min\" or \"max\"", function() C.EarlyStopping { mode = "up" } end)
    h.errors("unknown option 'patients'", function() C.EarlyStopping { patients = 2 } end)
  end)

  it("EarlyStopping in max mode needs the value to rise by more than min_delta (Keras: current - min_delta > best)",
    function()
      local m = model()
      local accs = { 0.5, 0.6, 0.62, 0.7, 0.7 }
      local Fake = C.Callback:extend("FakeAcc")
      function Fake:on_epoch_end(epoch, logs) logs.val_accuracy = accs[epoch + 1] end
      local es = C.EarlyStopping { monitor = "val_accuracy", min_delta = 0.05, patience = 1 }
      assert.are.equal("max", es.mode)
      local hist = m:fit(x, y, { epochs = 5, verbose = 0, callbacks = { Fake(), es } })
      -- 0.6 - 0.05 > 0.5 improves; 0.62 - 0.05 > 0.6 does not: stop at epoch 2 (0-based)
      assert.are.equal(3, #hist.history.loss)
      assert.are.equal(2, es.stopped_epoch)
      assert.are.equal(1, es.best_epoch)
      assert.are.equal(0.6, es.best)
      -- patience 2 runs to the end (0.7 at epoch 3 improves), unless a baseline of 0.58 must be beaten by
      -- min_delta: 0.6 - 0.05 does not, so the wait never restarts and epoch 2 stops (as Keras 3 does)
      local es2 = C.EarlyStopping { monitor = "val_accuracy", min_delta = 0.05, patience = 2 }
      hist = m:fit(x, y, { epochs = 5, verbose = 0, callbacks = { Fake(), es2 } })
      assert.are.equal(5, #hist.history.loss)
      assert.are.equal(0, es2.stopped_epoch)
      assert.are.equal(3, es2.best_epoch)
      local es3 = C.EarlyStopping { monitor = "val_accuracy", min_delta = 0.05, patience = 2, baseline = 0.58 }
      hist = m:fit(x, y, { epochs = 5, verbose = 0, callbacks = { Fake(), es3 } })
      assert.are.equal(3, #hist.history.loss)
      assert.are.equal(2, es3.stopped_epoch)
    end)

  it("ModelCheckpoint saves safetensors weights (best only) that load back; nothing half-written", function()
    local path = tmp.name(".safetensors")
    local m = model()
    local values = { 3, 2, 2.5, 1 }
    local Fake = C.Callback:extend("Fake2")
    function Fake:on_epoch_end(epoch, logs) logs.val_loss = values[epoch + 1] end
    local ck = C.ModelCheckpoint(path, { save_best_only = true })
    local saved = {}
    local Spy = C.Callback:extend("Spy")
    function Spy:on_epoch_end(epoch)
      local f = io.open(path, "rb")
      saved[#saved + 1] = f and f:read("*a") or false
      if f then f:close() end
    end
    m:fit(x, y, { epochs = 4, verbose = 0, callbacks = { Fake(), ck, Spy() } })
    assert.are.equal(saved[2] ~= saved[1], true)
    assert.are.equal(saved[3], saved[2]) -- 2.5 did not improve on 2
    assert.are.equal(1, ck.best)
    local fresh = model()
    fresh:load_weights(path)
    for i, w in ipairs(m:get_weights()) do h.close(fresh:get_weights()[i], w:totable(), 0) end
    -- the directory holds only the file: the temporary names were renamed
    local dir = path:match("^(.*)/")
    local p = io.popen("ls " .. dir .. " | grep -c '" .. path:match("[^/]*$") .. ".tmp' || true")
    assert.are.equal("0", p:read("*l"))
    p:close()
    os.remove(path)
    -- epoch and value fields in the name
    local pattern = tmp.name("-{epoch:02d}-{loss:.1f}.safetensors")
    local ck2 = C.ModelCheckpoint(pattern)
    m:fit(x, y, { epochs = 1, verbose = 0, callbacks = { ck2 } })
    local name = ck2:_path(0, { loss = m.history.history.loss[1] })
    assert.truthy(name:find("-01-", 1, true))
    assert.truthy(io.open(name, "rb"))
    os.remove(name)
    h.errors("save_weights_only must be true or false", function() C.ModelCheckpoint(path, { save_weights_only = 1 }) end)
    -- save_weights_only = false: the whole model, as a SavedModel directory
    local whole = tmp.name("-model")
    local ck3 = C.ModelCheckpoint(whole, { save_weights_only = false })
    m:fit(x, y, { epochs = 1, verbose = 0, callbacks = { ck3 } })
    local back = tide.models.load_model(whole)
    h.close(back:predict(x, { verbose = 0 }), m:predict(x, { verbose = 0 }):totable(), 1e-6)
    tmp.remove(whole)
  end)

  it("load_weights refuses a corrupt or mismatched file and changes nothing", function()
    local m = model()
    local before = m:get_weights()[1]:totable()
    local path = tmp.name(".safetensors")
    local f = io.open(path, "wb")
    f:write("\255\255\0\0\0\0\0\0{")
    f:close()
    h.errors("is corrupt", function() m:load_weights(path) end)
    local other = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 5 }, L.Dense { 1 } }
    other:save_weights(path)
    h.errors("has shape (3, 4), which is not compatible with the value's shape (3, 5)",
      function() m:load_weights(path) end)
    tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 1 } }:save_weights(path)
    h.errors("holds 2 weights, but the model has 4", function() m:load_weights(path) end)
    h.close(m:get_weights()[1], before, 0)
    os.remove(path)
  end)

  it("ReduceLROnPlateau and LearningRateScheduler set the optimizer's rate", function()
    local m = model(0.1)
    local Flat = C.Callback:extend("Flat")
    function Flat:on_epoch_end(_, logs) logs.val_loss = 1 end
    local hist = m:fit(x, y, { epochs = 5, verbose = 0,
      callbacks = { Flat(), C.ReduceLROnPlateau { patience = 2, factor = 0.5 } } })
    h.close(hist.history.learning_rate, { 0.1, 0.1, 0.1, 0.05, 0.05 }, 1e-6)
    local m2 = model(0.1)
    local hist2 = m2:fit(x, y, { epochs = 3, verbose = 0,
      callbacks = { C.LearningRateScheduler(function(epoch, lr) return epoch == 0 and lr or lr * 0.1 end) } })
    h.close(hist2.history.learning_rate, { 0.1, 0.01, 0.001 }, 1e-6)
    h.errors("factor must be below 1", function() C.ReduceLROnPlateau { factor = 2 } end)
    h.errors("schedule must be a function", function() C.LearningRateScheduler(3) end)
  end)

  it("CSVLogger writes a row per epoch; TerminateOnNaN stops; LambdaCallback calls functions", function()
    local path = tmp.name(".csv")
    local m = model()
    local epochs = {}
    m:fit(x, y, { epochs = 3, verbose = 0, validation_split = 0.25, callbacks = { C.CSVLogger(path),
      C.LambdaCallback { on_epoch_end = function(epoch, logs) epochs[#epochs + 1] = epoch end } } })
    local lines = {}
    for line in io.lines(path) do lines[#lines + 1] = line end
    os.remove(path)
    assert.are.equal("epoch,loss,val_loss", lines[1])
    assert.are.equal(4, #lines)
    assert.truthy(lines[4]:match("^2,[%d.e-]+,[%d.e-]+$"))
    assert.are.same({ 0, 1, 2 }, epochs)
    local bad = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 1 } }
    bad:compile { optimizer = tide.optimizers.SGD { learning_rate = 1e30 }, loss = "mse" }
    local hist = bad:fit(x * 1e10, y, { epochs = 5, batch_size = 8, verbose = 0, callbacks = { C.TerminateOnNaN() } })
    assert.is_true(#hist.history.loss < 5)
    h.errors("unknown hook 'on_epoch'", function() C.LambdaCallback { on_epoch = print } end)
    h.errors("entry 1 is not a tide.callbacks.Callback", function() m:fit(x, y, { verbose = 0, callbacks = { 3 } }) end)
  end)
end)
