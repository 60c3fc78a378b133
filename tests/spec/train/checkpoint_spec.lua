-- tests/spec/train/checkpoint_spec.lua — tide.train.Checkpoint: keys by object path,
-- training that continues identically after a restore into a fresh model and
-- optimizer (slots, iterations), deferred restore until build, the status's
-- checks, and errors; CheckpointManager's numbering, index file and max_to_keep.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local exists = require("tide.file").exists
local L = tide.layers
local train = tide.train

local x = tide.random.normal({ 16, 3 }, { seed = 1 })
local y = tide.random.normal({ 16, 1 }, { seed = 2 })

local function make(built)
  local layers = { L.Dense { 4, activation = "relu" }, L.Dense { 1 } }
  if built then table.insert(layers, 1, tide.Input { shape = { 3 } }) end
  return tide.Sequential(layers), tide.optimizers.Adam { learning_rate = 0.01 }
end

local function step(m, opt)
  local tape = tide.GradientTape()
  local loss = tape:run(function() return tide.reduce_mean((m(x) - y) ^ 2) end)
  local vars = m.trainable_variables
  opt:apply(tape:gradient(loss, vars), vars)
  return loss:item()
end

describe("tide.train.Checkpoint", function()
  it("keys variables by object path, slots under their variables", function()
    local m, opt = make(true)
    step(m, opt)
    local ck = train.Checkpoint { model = m, optimizer = opt, step = tide.Variable(0, { dtype = "int64" }) }
    local dir = tmp.dir("checkpoint")
    local path = ck:write(dir .. "/w")
    assert.are.equal(dir .. "/w", path)
    local f = tide.safetensors.safe_open(path .. ".safetensors")
    assert.are.same({
      "model/layer-0/bias", "model/layer-0/bias/.OPTIMIZER_SLOT/optimizer/momentum",
      "model/layer-0/bias/.OPTIMIZER_SLOT/optimizer/velocity", "model/layer-0/kernel",
      "model/layer-0/kernel/.OPTIMIZER_SLOT/optimizer/momentum",
      "model/layer-0/kernel/.OPTIMIZER_SLOT/optimizer/velocity", "model/layer-1/bias",
      "model/layer-1/bias/.OPTIMIZER_SLOT/optimizer/momentum",
      "model/layer-1/bias/.OPTIMIZER_SLOT/optimizer/velocity", "model/layer-1/kernel",
      "model/layer-1/kernel/.OPTIMIZER_SLOT/optimizer/momentum",
      "model/layer-1/kernel/.OPTIMIZER_SLOT/optimizer/velocity", "optimizer/iterations", "optimizer/learning_rate",
      "save_counter", "step" }, f:keys())
    assert.are.same({ format = "tide.train.Checkpoint", version = "1" }, f:metadata())
    h.close(f:get_tensor("optimizer/iterations"), { 1 }, 0)
    h.close(f:get_tensor("model/layer-0/kernel"), m.layers[1].kernel:read_value():totable(), 0)
    f:close()
    tmp.remove(dir)
  end)

  it("training continues identically after a restore into a fresh, unbuilt model and optimizer", function()
    local m, opt = make(false)
    local stepv = tide.Variable(0, { dtype = "int64" })
    for _ = 1, 3 do step(m, opt); stepv:assign_add(1) end
    local dir = tmp.dir("checkpoint")
    local path = train.Checkpoint { model = m, optimizer = opt, step = stepv }:save(dir .. "/ckpt")
    assert.are.equal(dir .. "/ckpt-1", path)
    local ref = {}
    for i = 1, 4 do ref[i] = step(m, opt) end
    local m2, opt2 = make(false)
    local step2 = tide.Variable(0, { dtype = "int64" })
    local ck2 = train.Checkpoint { model = m2, optimizer = opt2, step = step2 }
    local status = ck2:restore(path)
    assert.are.equal(3, step2:item())
    assert.are.equal(3, opt2.iterations:item())
    -- the model's weights and the slots wait for their builds
    h.errors("were not matched to any object (not built yet", function() status:assert_consumed() end)
    status:assert_existing_objects_matched()
    local got = {}
    for i = 1, 4 do got[i] = step(m2, opt2) end
    status:assert_consumed()
    assert.are.same({}, status:unused_keys())
    h.close(got, ref, 0)
    tmp.remove(dir)
  end)

  it("training continues identically with fit (a traced train step) after a restore", function()
    local function compiled()
      local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 4, activation = "tanh" }, L.Dense { 1 } }
      m:compile { optimizer = tide.optimizers.RMSprop { learning_rate = 0.01, momentum = 0.5 }, loss = "mse" }
      return m
    end
    local m = compiled()
    m:fit(x, y, { epochs = 2, batch_size = 8, verbose = 0, shuffle = false })
    local dir = tmp.dir("checkpoint")
    local path = train.Checkpoint { model = m, optimizer = m.optimizer }:save(dir .. "/c")
    local ref = m:fit(x, y, { epochs = 2, batch_size = 8, verbose = 0, shuffle = false }).history.loss
    local m2 = compiled()
    local status = train.Checkpoint { model = m2, optimizer = m2.optimizer }:restore(path)
    local got = m2:fit(x, y, { epochs = 2, batch_size = 8, verbose = 0, shuffle = false }).history.loss
    status:assert_consumed()
    h.close(got, ref, 1e-6)
    h.close(m2.layers[2].kernel:read_value(), m.layers[2].kernel:read_value():totable(), 1e-6)
    tmp.remove(dir)
  end)

  it("tracks layers, metrics, nested checkpoints and tables; names what does not match", function()
    local dir = tmp.dir("checkpoint")
    local dense = L.Dense { 2 }
    dense(tide.ones { 1, 3 })
    local metric = tide.metrics.Mean()
    metric:update_state(tide.tensor({ 1, 2, 3 }, "float32"))
    local ck = train.Checkpoint { layer = dense, metric = metric, inner = train.Checkpoint { v = tide.Variable(5) },
      list = { tide.Variable(1), tide.Variable(2) } }
    ck:write(dir .. "/a")
    local f = tide.safetensors.safe_open(dir .. "/a.safetensors")
    assert.are.same({ "inner/v", "layer/bias", "layer/kernel", "list/0", "list/1", "metric/count", "metric/total",
      "save_counter" }, f:keys())
    f:close()
    local metric2 = tide.metrics.Mean()
    local other = train.Checkpoint { metric = metric2, extra = tide.Variable(0) }
    local status = other:restore(dir .. "/a")
    h.close(metric2:result(), { 2 }, 0)
    h.errors("5 value(s) in '" .. dir .. "/a.safetensors' were not matched to any object",
      function() status:assert_consumed() end)
    h.errors("1 object(s) of the checkpoint have no value in '" .. dir .. "/a.safetensors': 'extra'",
      function() status:assert_existing_objects_matched() end)
    assert.are.equal(status, status:expect_partial())
    -- partial restores dropped unconsumed are collected, and their files closed
    local function open_files()
      local p = io.popen("ls /proc/$PPID/fd | wc -l") -- the shell's parent: this process
      local n = tonumber(p:read("*l"))
      p:close()
      return n
    end
    collectgarbage()
    collectgarbage()
    local before = open_files()
    for _ = 1, 50 do other:restore(dir .. "/a"):expect_partial() end
    collectgarbage()
    collectgarbage()
    assert.is_true(open_files() <= before + 2)
    tmp.remove(dir)
  end)

  it("refuses mismatched values before assigning any, and bad arguments", function()
    local dir = tmp.dir("checkpoint")
    local a, b = tide.Variable(tide.tensor({ 1, 2 }, "float32")), tide.Variable(tide.tensor({ 3 }, "float32"))
    train.Checkpoint { a = a, b = b }:write(dir .. "/x")
    local a2, b2 = tide.Variable(tide.tensor({ 0, 0 }, "float32")), tide.Variable(tide.tensor({ 0, 0 }, "float32"))
    h.errors("'b' in '" .. dir .. "/x.safetensors' has shape (1,), but the Variable has shape (2,)",
      function() train.Checkpoint { a = a2, b = b2 }:restore(dir .. "/x") end)
    h.close(a2:read_value(), { 0, 0 }, 0) -- nothing assigned
    local a3 = tide.Variable(tide.tensor({ 0, 0 }, "float32"))
    train.Checkpoint { a = a3 }:read(dir .. "/x"):expect_partial() -- read is restore
    h.close(a3:read_value(), { 1, 2 }, 0)
    h.errors("'a' in '" .. dir .. "/x.safetensors' is float32, but the Variable is int32",
      function() train.Checkpoint { a = tide.Variable(tide.tensor { 0, 0 }) }:restore(dir .. "/x") end)
    tide.safetensors.save_file({ a = tide.tensor { 1 } }, dir .. "/plain.safetensors")
    h.errors("is not a tide checkpoint", function() train.Checkpoint { a = a }:restore(dir .. "/plain") end)
    tide.safetensors.save_file({}, dir .. "/new.safetensors",
      { metadata = { format = "tide.train.Checkpoint", version = "2" } })
    h.errors("has checkpoint format version 2; this tide reads version 1",
      function() train.Checkpoint { a = a }:restore(dir .. "/new") end)
    h.errors("cannot open '" .. dir .. "/none.safetensors'",
      function() train.Checkpoint { a = a }:restore(dir .. "/none") end)
    h.errors("'n' is number; a checkpoint tracks Variables", function() train.Checkpoint { n = 3 }:write(dir .. "/y") end)
    h.errors("'save' cannot name an object", function() train.Checkpoint { save = a } end)
    h.errors("objects are named", function() train.Checkpoint { a } end)
    h.errors("expects a path", function() train.Checkpoint { a = a }:save() end)
    local none = train.Checkpoint { a = a }:restore(nil)
    h.errors("no checkpoint was given", function() none:assert_consumed() end)
    none:expect_partial()
    tmp.remove(dir)
  end)
end)

describe("tide.train.CheckpointManager", function()
  it("numbers saves, keeps max_to_keep, writes TF's index file, and reloads it", function()
    local dir = tmp.dir("checkpoint") .. "/sub/run"
    local v = tide.Variable(0)
    local ck = train.Checkpoint { v = v }
    local manager = train.CheckpointManager(ck, dir, { max_to_keep = 2 })
    assert.is_nil(manager.latest_checkpoint)
    assert.is_nil(manager:restore_or_initialize()) -- nothing saved yet: nothing restored
    assert.are.same({}, manager.checkpoints)
    assert.is_nil(train.latest_checkpoint(dir))
    for i = 1, 4 do
      v:assign(i)
      assert.are.equal(dir .. "/ckpt-" .. i, manager:save())
    end
    assert.are.same({ dir .. "/ckpt-3", dir .. "/ckpt-4" }, manager.checkpoints)
    assert.are.equal(dir .. "/ckpt-4", manager.latest_checkpoint)
    assert.are.equal(dir .. "/ckpt-4", train.latest_checkpoint(dir))
    assert.falsy(exists(dir .. "/ckpt-1.safetensors"))
    assert.falsy(exists(dir .. "/ckpt-2.safetensors"))
    assert.truthy(exists(dir .. "/ckpt-3.safetensors"))
    local f = io.open(dir .. "/checkpoint")
    local index = f:read("*a")
    f:close()
    assert.truthy(index:find('^model_checkpoint_path: "ckpt%-4"\nall_model_checkpoint_paths: "ckpt%-3"\n' ..
      'all_model_checkpoint_paths: "ckpt%-4"\nall_model_checkpoint_timestamps: [%d.e+]+\n' ..
      'all_model_checkpoint_timestamps: [%d.e+]+\nlast_preserved_timestamp: [%d.e+]+\n$'), index)
    -- a new manager (a new run) takes the list over; a restore sets the counter
    local v2 = tide.Variable(0)
    local ck2 = train.Checkpoint { v = v2 }
    local m2 = train.CheckpointManager(ck2, dir, { max_to_keep = 2 })
    assert.are.same({ dir .. "/ckpt-3", dir .. "/ckpt-4" }, m2.checkpoints)
    assert.are.equal(dir .. "/ckpt-4", m2:restore_or_initialize())
    assert.are.equal(4, v2:item())
    assert.are.equal(4, ck2.save_counter:item())
    assert.are.equal(dir .. "/ckpt-5", m2:save())
    assert.are.equal(dir .. "/ckpt-100", m2:save { checkpoint_number = 100 })
    assert.are.same({ dir .. "/ckpt-5", dir .. "/ckpt-100" }, m2.checkpoints)
    -- nothing in the folder but the index and the kept files (no temporaries)
    local p = io.popen("ls -A " .. dir)
    local listing = p:read("*a")
    p:close()
    assert.are.equal("checkpoint\nckpt-100.safetensors\nckpt-5.safetensors\n", listing)
    tmp.remove((dir:gsub("/sub/run$", "")))
  end)

  it("keep_checkpoint_every_n_hours keeps dropped checkpoints on disk; max_to_keep=false keeps all", function()
    local dir = tmp.dir("checkpoint")
    local ck = train.Checkpoint { v = tide.Variable(0) }
    local keep = train.CheckpointManager(ck, dir .. "/a", { max_to_keep = 1, keep_checkpoint_every_n_hours = 1e-9 })
    for _ = 1, 3 do keep:save() end
    assert.are.same({ dir .. "/a/ckpt-3" }, keep.checkpoints)
    assert.truthy(exists(dir .. "/a/ckpt-1.safetensors"))
    assert.truthy(exists(dir .. "/a/ckpt-2.safetensors"))
    local never = train.CheckpointManager(ck, dir .. "/b", { max_to_keep = 1, keep_checkpoint_every_n_hours = 1e6 })
    for _ = 1, 3 do never:save() end
    assert.falsy(exists(dir .. "/b/ckpt-4.safetensors"))
    assert.falsy(exists(dir .. "/b/ckpt-5.safetensors"))
    assert.truthy(exists(dir .. "/b/ckpt-6.safetensors"))
    local all = train.CheckpointManager(ck, dir .. "/c", { max_to_keep = false, checkpoint_name = "model" })
    for _ = 1, 3 do all:save() end
    assert.are.same({ dir .. "/c/model-7", dir .. "/c/model-8", dir .. "/c/model-9" }, all.checkpoints)
    tmp.remove(dir)
  end)

  it("keep_checkpoint_every_n_hours keeps one dropped checkpoint per interval, measured from the last one kept",
    function()
      -- six checkpoints half an hour apart (their times set in the index, TF's text format), the last one kept
      -- an hour before the first: with a 1 hour interval the 1st, 3rd and 5th stay on disk, the others go
      local dir = tmp.dir("checkpoint") .. "/run"
      local ck = train.Checkpoint { v = tide.Variable(0) }
      local first = train.CheckpointManager(ck, dir, { max_to_keep = 10 })
      for _ = 1, 6 do first:save() end
      local t0 = 1.7e9
      local lines = { 'model_checkpoint_path: "ckpt-6"' }
      for k = 1, 6 do lines[#lines + 1] = string.format('all_model_checkpoint_paths: "ckpt-%d"', k) end
      for k = 1, 6 do
        lines[#lines + 1] = string.format("all_model_checkpoint_timestamps: %.17g", t0 + (k - 1) * 1800)
      end
      lines[#lines + 1] = string.format("last_preserved_timestamp: %.17g", t0 - 3600)
      local f = assert(io.open(dir .. "/checkpoint", "w"))
      f:write(table.concat(lines, "\n"), "\n")
      f:close()
      local m = train.CheckpointManager(ck, dir, { max_to_keep = 1, keep_checkpoint_every_n_hours = 1 })
      assert.are.equal(6, #m.checkpoints)
      m:save()
      assert.are.same({ dir .. "/ckpt-7" }, m.checkpoints)
      local on_disk = {}
      for k = 1, 7 do on_disk[k] = exists(string.format("%s/ckpt-%d.safetensors", dir, k)) and true or false end
      assert.are.same({ true, false, true, false, true, false, true }, on_disk)
      -- the index remembers the last one kept (ckpt-5, at t0 + 2 h) for the next manager
      local text = assert(io.open(dir .. "/checkpoint")):read("*a")
      assert.truthy(text:find(string.format("last_preserved_timestamp: %.17g", t0 + 4 * 1800), 1, true), text)
      tmp.remove((dir:gsub("/run$", "")))
    end)

  it("refuses bad arguments", function()
    local ck = train.Checkpoint { v = tide.Variable(0) }
    h.errors("must be a tide.train.Checkpoint", function() train.CheckpointManager({}, "/tmp/x") end)
    h.errors("directory must be a folder path", function() train.CheckpointManager(ck, nil) end)
    h.errors("max_to_keep must be a positive integer", function() train.CheckpointManager(ck, "/tmp/x",
      { max_to_keep = 0 }) end)
    h.errors("unknown option 'keep'", function() train.CheckpointManager(ck, "/tmp/x", { keep = 1 }) end)
    h.errors("checkpoint_name must be a file name", function() train.CheckpointManager(ck, "/tmp/x",
      { checkpoint_name = "a/b" }) end)
    h.errors("keep_checkpoint_every_n_hours must be a positive number",
      function() train.CheckpointManager(ck, "/tmp/x", { keep_checkpoint_every_n_hours = -1 }) end)
    local m = train.CheckpointManager(ck, "/tmp/x")
    h.errors("checkpoint_number must be a non-negative integer", function() m:save { checkpoint_number = 1.5 } end)
    h.errors("latest_checkpoint: expects a folder path", function() train.latest_checkpoint(nil) end)
  end)
end)
