-- tests/spec/callbacks/tensorboard_spec.lua — tide.callbacks.TensorBoard in
-- fit and evaluate: Keras 3's runs (train/, validation/), tags, steps and
-- values, batch summaries by update_freq, weight histograms, and errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local reader = require "event_reader"
local ffi = require "ffi"
local L = tide.layers

local x = tide.random.normal({ 40, 3 }, { seed = 5 })
local y = tide.matmul(x, tide.tensor({ { 1 }, { -1 }, { 0.5 } }, "float32"))

local function model()
  local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 4, activation = "relu" }, L.Dense { 1 } }
  m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.05 }, loss = "mse", metrics = { "mae" } }
  return m
end

-- tag -> list of {step, value or tensor} over every event file of dir.
local function by_tag(dir)
  local out = {}
  for _, f in ipairs(reader.files(dir)) do
    for _, e in ipairs(reader.read(f)) do
      for _, v in ipairs(e.values) do
        local list = out[v.tag] or {}
        out[v.tag] = list
        local value = v.plugin_name == "scalars" and reader.as_float(v.tensor.content) or v
        list[#list + 1] = { step = e.step, value = value, plugin = v.plugin_name }
      end
    end
  end
  return out
end

local function f32(v) return ffi.new("float[1]", v)[0] end

describe("callbacks.TensorBoard", function()
  local tmpdir, remove_tmpdirs = tmp.dirs("tensorboard")
  teardown(remove_tmpdirs)

  it("writes epoch metrics, the learning rate and validation metrics as Keras lays them out", function()
    local dir = tmpdir()
    local m = model()
    local hist = m:fit(x, y, { epochs = 3, batch_size = 10, verbose = 0, validation_split = 0.25,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir } } })
    local train, val = by_tag(dir .. "/train"), by_tag(dir .. "/validation")
    assert.are.equal(1, #reader.files(dir .. "/train"))
    assert.are.equal(1, #reader.files(dir .. "/validation"))
    for _, name in ipairs { "loss", "mae" } do
      local t, v = train["epoch_" .. name], val["epoch_" .. name]
      assert.are.equal(3, #t)
      assert.are.equal(3, #v)
      for e = 1, 3 do
        assert.are.equal(e - 1, t[e].step)
        assert.are.equal(f32(hist.history[name][e]), t[e].value)
        assert.are.equal(e - 1, v[e].step)
        assert.are.equal(f32(hist.history["val_" .. name][e]), v[e].value)
      end
    end
    assert.are.equal(3, #train.epoch_learning_rate)
    assert.are.equal(f32(0.05), train.epoch_learning_rate[1].value)
    assert.is_nil(train.epoch_val_loss)
    assert.is_nil(val.epoch_learning_rate)
    assert.is_nil(train.batch_loss) -- update_freq "epoch"
  end)

  it("writes batch summaries every update_freq global batches and histograms every histogram_freq epochs", function()
    local dir = tmpdir()
    local m = model()
    m:fit(x, y, { epochs = 3, batch_size = 10, verbose = 0,
      callbacks = { tide.callbacks.TensorBoard { dir, update_freq = 3, histogram_freq = 2 } } })
    local train = by_tag(dir .. "/train")
    local steps = {}
    for _, p in ipairs(train.batch_loss) do steps[#steps + 1] = p.step end
    assert.are.same({ 3, 6, 9, 12 }, steps) -- 12 batches in all, numbered from 1
    assert.are.equal(3, #train.epoch_loss) -- the batch condition does not drop epoch summaries
    local l1, l2 = m.layers[1].name, m.layers[2].name
    local hk = train[m.name .. "/" .. l1 .. "/kernel/histogram"]
    assert.truthy(hk, "no kernel histogram")
    assert.are.same({ 0, 2 }, { hk[1].step, hk[2].step })
    assert.are.equal("histograms", hk[1].plugin)
    assert.are.equal(2, #train[m.name .. "/" .. l2 .. "/bias/histogram"])
    local counts = reader.doubles(hk[1].value.tensor.content)
    local total = 0
    for b = 0, 29 do total = total + counts[3 * b + 3] end
    assert.are.equal(12, total) -- the 3 x 4 kernel
    -- "batch": every batch
    local dir2 = tmpdir()
    model():fit(x, y, { epochs = 1, batch_size = 10, verbose = 0,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir2, update_freq = "batch" } } })
    assert.are.equal(4, #by_tag(dir2 .. "/train").batch_loss)
  end)

  it("lets the model's own summaries land in the train run during fit", function()
    local dir = tmpdir()
    local m = model()
    local Probe = tide.callbacks.Callback:extend("Probe")
    function Probe:on_train_batch_end(batch)
      tide.summary.scalar("custom", batch) -- the step is the global batch, as Keras's pushed writer
    end
    m:fit(x, y, { epochs = 1, batch_size = 10, verbose = 0,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir, update_freq = 2 }, Probe() } })
    local custom = by_tag(dir .. "/train").custom
    assert.are.same({ 2, 4 }, { custom[1].step, custom[2].step })
    assert.is_nil(tide.summary.get_default_writer())
  end)

  it("summaries written inside the traced train step land at each batch's step (update_freq)", function()
    local dir = tmpdir()
    local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 4 },
      L.Lambda { function(t)
        tide.summary.scalar("activation_mean", tide.reduce_mean(t))
        return t
      end }, L.Dense { 1 } }
    m:compile { optimizer = "sgd", loss = "mse" }
    m:fit(x, y, { epochs = 2, batch_size = 10, verbose = 0,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir, update_freq = 3 } } })
    local got = by_tag(dir .. "/train").activation_mean
    assert.are.same({ 3, 6 }, { got[1].step, got[2].step }) -- global batches 1..8, every third
    assert.are.equal(2, #got)
    assert.are_not.equal(got[1].value, got[2].value)
  end)

  it("writes evaluation_<name>_vs_iterations after evaluate", function()
    local dir = tmpdir()
    local m = model()
    m:fit(x, y, { epochs = 1, batch_size = 10, verbose = 0 })
    local logs = m:evaluate(x, y, { batch_size = 20, verbose = 0, return_dict = true,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir } } })
    local val = by_tag(dir .. "/validation")
    assert.are.equal(4, val.evaluation_loss_vs_iterations[1].step)
    assert.are.equal(f32(logs.loss), val.evaluation_loss_vs_iterations[1].value)
  end)

  it("refuses options it does not know or support", function()
    h.errors("unknown option 'logdir'", tide.callbacks.TensorBoard, { logdir = "x" })
    h.errors("update_freq must be", tide.callbacks.TensorBoard, { update_freq = "often" })
    h.errors("histogram_freq must be", tide.callbacks.TensorBoard, { histogram_freq = -1 })
    h.errors("write_images is not supported", tide.callbacks.TensorBoard, { write_images = true })
    h.errors("profile_batch must be 0, a batch number", tide.callbacks.TensorBoard, { profile_batch = "2" })
  end)
end)
