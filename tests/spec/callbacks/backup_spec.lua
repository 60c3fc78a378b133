-- tests/spec/callbacks/backup_spec.lua — BackupAndRestore in one process: a
-- fit interrupted (an error in a callback) and run again resumes from the
-- last backup (an epoch's end, or a step with save_freq=n) and ends with the
-- same weights as an uninterrupted fit with the same seed (shuffle, dropout
-- and Adam included); the backup's file, its deletion, and the errors.
-- 2 workers killed and resumed: tests/sh/test_distribute_resume.sh.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local exists = require("tide.file").exists
local L = tide.layers
local C = tide.callbacks
local safetensors = require "tide.safetensors"

-- The same model, data and seed every call: 40 rows, batches of 8 (5 steps an epoch).
local function setup()
  tide.random.set_seed(1234)
  local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 8, activation = "relu" }, L.Dropout { 0.25 },
    L.Dense { 1 } }
  m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.02 }, loss = "mse" }
  local x = tide.random.normal({ 40, 3 }, { seed = 5 })
  local y = tide.matmul(x, tide.tensor({ { 1 }, { -1 }, { 0.5 } }, "float32"))
  return m, x, y
end

local function weights(m)
  local out = {}
  for _, w in ipairs(m:get_weights()) do
    for _, v in ipairs(tide.reshape(w, { -1 }):totable()) do out[#out + 1] = v end
  end
  return out
end

-- A callback that raises at (epoch, step) after that step ran, or at an epoch's start when step is nil.
local function interrupt_at(epoch, step)
  local Stop = C.Callback:extend("Stop")
  function Stop:on_epoch_begin(e)
    self.epoch = e
    if step == nil and e == epoch then error("interrupted on purpose") end
  end
  function Stop:on_train_batch_end(s)
    if step ~= nil and self.epoch == epoch and s == step then error("interrupted on purpose") end
  end
  return Stop()
end

local FIT = { batch_size = 8, epochs = 4, shuffle = true, verbose = 0 }
local function fit_opts(callbacks)
  local o = { callbacks = callbacks }
  for k, v in pairs(FIT) do o[k] = v end
  return o
end

-- The weights of the uninterrupted fit.
local reference
local function setup_reference()
  if reference then return reference end
  local m, x, y = setup()
  m:fit(x, y, fit_opts())
  reference = weights(m)
  return reference
end

describe("BackupAndRestore", function()
  it("resumes an interrupted fit from the last epoch: the same weights as without the interruption", function()
    local want = setup_reference()
    local dir = tmp.name("-backup")
    local m, x, y = setup()
    h.errors("interrupted on purpose", function()
      m:fit(x, y, fit_opts { C.BackupAndRestore { backup_dir = dir }, interrupt_at(2) })
    end)
    local path = dir .. "/latest.safetensors"
    assert.is_true(exists(path))
    local meta = safetensors.load_metadata(path)
    assert.are.equal("tide.BackupAndRestore", meta.format)
    assert.are.equal("2", meta.epoch) -- epochs 0 and 1 done
    assert.are.equal("0", meta.step)
    local count = { model = 0, optimizer = 0 }
    for _, k in ipairs(safetensors.safe_open(path):keys()) do
      local group = k:match("^(%a+)/%d+/")
      count[group] = count[group] + 1
    end
    assert.are.equal(#m.weights, count.model)
    assert.are.equal(#m.optimizer.variables, count.optimizer) -- iterations, learning rate, Adam's slots
    -- a new process: the same seed, a fresh model; fit runs epochs 2 and 3 only
    local m2, x2, y2 = setup()
    local hist = m2:fit(x2, y2, fit_opts { C.BackupAndRestore { backup_dir = dir } })
    assert.are.same({ 2, 3 }, hist.epoch)
    assert.are.equal(20, m2.optimizer.iterations:item()) -- Adam's count went on from 10 steps
    assert.are.same(want, weights(m2))
    -- a finished fit deletes its backup and the folder it made
    assert.is_false(exists(path))
    assert.is_false(exists(dir))
  end)

  it("with save_freq=n resumes inside the epoch, at the step after the backup", function()
    local want = setup_reference()
    local dir = tmp.name("-backup")
    local m, x, y = setup()
    local steps = {}
    local Rec = C.Callback:extend("Rec")
    function Rec:on_epoch_begin(e) self.e = e end
    function Rec:on_train_batch_begin(s) steps[#steps + 1] = self.e .. ":" .. s end
    -- saves after every 2nd step: the last before the stop is epoch 1's step 2 (the 8th)
    h.errors("interrupted on purpose", function()
      m:fit(x, y, fit_opts { C.BackupAndRestore { backup_dir = dir, save_freq = 2 }, interrupt_at(1, 3) })
    end)
    local meta = safetensors.load_metadata(dir .. "/latest.safetensors")
    assert.are.equal("1", meta.epoch)
    assert.are.equal("3", meta.step)
    local m2, x2, y2 = setup()
    m2:fit(x2, y2, fit_opts { C.BackupAndRestore { backup_dir = dir, save_freq = 2 }, Rec() })
    assert.are.equal("1:3", steps[1]) -- the steps before were walked, not run
    assert.are.equal(2 + 5 + 5, #steps)
    assert.are.same(want, weights(m2))
    assert.is_false(exists(dir))
  end)

  it("a backup at an epoch's last step resumes at the next epoch", function()
    local dir = tmp.name("-backup")
    local m, x, y = setup()
    h.errors("interrupted on purpose", function()
      m:fit(x, y, fit_opts { C.BackupAndRestore { backup_dir = dir, save_freq = 5 }, interrupt_at(1, 1) })
    end)
    local meta = safetensors.load_metadata(dir .. "/latest.safetensors")
    assert.are.same({ "1", "0" }, { meta.epoch, meta.step })
    local m2, x2, y2 = setup()
    local hist = m2:fit(x2, y2, fit_opts { C.BackupAndRestore { backup_dir = dir, save_freq = 5 } })
    assert.are.same({ 1, 2, 3 }, hist.epoch)
    assert.are.same(setup_reference(), weights(m2))
  end)

  it("resumes inside an epoch of a dataset: the batches before the step are read and dropped", function()
    local function ds_setup()
      local m, x, y = setup()
      return m, tide.data.Dataset.from_tensor_slices({ x, y }):batch(8)
    end
    local m0, ds0 = ds_setup()
    m0:fit(ds0, nil, { epochs = 3, verbose = 0 })
    local want = weights(m0)
    local dir = tmp.name("-backup")
    local m, ds = ds_setup()
    h.errors("interrupted on purpose", function()
      m:fit(ds, nil, { epochs = 3, verbose = 0,
                       callbacks = { C.BackupAndRestore { backup_dir = dir, save_freq = 3 }, interrupt_at(1, 3) } })
    end)
    assert.are.equal("4", safetensors.load_metadata(dir .. "/latest.safetensors").step) -- saved after the 9th step (epoch 1, step 3)
    local m2, ds2 = ds_setup()
    local hist = m2:fit(ds2, nil, { epochs = 3, verbose = 0,
                                    callbacks = { C.BackupAndRestore { backup_dir = dir, save_freq = 3 } } })
    assert.are.same({ 1, 2 }, hist.epoch)
    assert.are.same(want, weights(m2))
  end)

  it("keeps the backup with delete_checkpoint=false; a finished backup resumes past the last epoch", function()
    local dir = tmp.name("-backup")
    local m, x, y = setup()
    m:fit(x, y, fit_opts { C.BackupAndRestore { backup_dir = dir, delete_checkpoint = false } })
    assert.are.equal("4", safetensors.load_metadata(dir .. "/latest.safetensors").epoch)
    local before = weights(m)
    local hist = m:fit(x, y, fit_opts { C.BackupAndRestore { backup_dir = dir, delete_checkpoint = false } })
    assert.are.same({}, hist.epoch) -- nothing left to run
    assert.are.same(before, weights(m))
    os.remove(dir .. "/latest.safetensors")
    os.remove(dir)
  end)

  it("refuses bad options, a backup of another model, and an unbuilt model", function()
    h.errors("backup_dir must be a folder name", function() C.BackupAndRestore {} end)
    h.errors("backup_dir must be a folder name", function() C.BackupAndRestore { backup_dir = "" } end)
    h.errors("save_freq must be \"epoch\" or a positive integer", function()
      C.BackupAndRestore { backup_dir = "/tmp/x", save_freq = 0 } end)
    h.errors("save_freq must be \"epoch\" or a positive integer", function()
      C.BackupAndRestore { backup_dir = "/tmp/x", save_freq = 1.5 } end)
    h.errors("delete_checkpoint must be true or false", function()
      C.BackupAndRestore { backup_dir = "/tmp/x", delete_checkpoint = 1 } end)
    h.errors("unknown option 'monitor'", function() C.BackupAndRestore { backup_dir = "/tmp/x", monitor = "loss" } end)
    h.errors("double_checkpoint is not supported", function()
      C.BackupAndRestore { backup_dir = "/tmp/x", double_checkpoint = true } end)
    assert.are.equal("/tmp/x", C.BackupAndRestore("/tmp/x/", { save_freq = 3 }).backup_dir)

    local dir = tmp.name("-backup")
    local m, x, y = setup()
    m:fit(x, y, { batch_size = 8, epochs = 1, verbose = 0,
                  callbacks = { C.BackupAndRestore { backup_dir = dir, delete_checkpoint = false } } })
    -- another model: nothing is set
    local other = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 2 }, L.Dense { 1 } }
    other:compile { optimizer = "adam", loss = "mse" }
    local w = weights(other)
    h.errors("it was written for another model; delete", function()
      other:fit(x, y, { epochs = 1, verbose = 0, callbacks = { C.BackupAndRestore { backup_dir = dir } } })
    end)
    assert.are.same(w, weights(other))
    -- a model not built yet cannot take the backup
    local lazy = tide.Sequential { L.Dense { 8 }, L.Dense { 1 } }
    lazy:compile { optimizer = "adam", loss = "mse" }
    h.errors("the model is not built", function()
      lazy:fit(x, y, { epochs = 1, verbose = 0, callbacks = { C.BackupAndRestore { backup_dir = dir } } })
    end)
    -- a file that is not a backup
    m:save_weights(dir .. "/latest.safetensors")
    h.errors("is not a BackupAndRestore backup", function()
      m:fit(x, y, { epochs = 1, verbose = 0, callbacks = { C.BackupAndRestore { backup_dir = dir } } })
    end)
    os.remove(dir .. "/latest.safetensors")
    os.remove(dir)
  end)
end)
