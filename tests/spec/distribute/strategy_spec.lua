-- tests/spec/distribute/strategy_spec.lua — tide.distribute in one process (a
-- world of one): the default strategy, OneDeviceStrategy and
-- MultiWorkerMirroredStrategy's scope, run, reduce, gradient all-reduce and
-- collectives, and their errors. 2 workers: tests/sh/test_distribute.sh.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"

local D = tide.distribute
local f32 = function(v) return tide.tensor(v, "float32") end

describe("tide.distribute", function()
  it("loads on first use and has a default strategy of one replica", function()
    assert.are.equal(require("tide.distribute"), D)
    local s = D.get_strategy()
    assert.are.equal("DefaultStrategy", s.name)
    assert.are.equal(1, s.num_replicas_in_sync)
    assert.is_true(s.is_chief)
    assert.is_false(D.has_strategy())
    assert.are.equal(6, s:run(function(a, b) return a * b end, { 2, 3 }))
    assert.are.same({ 1, 2 }, s:reduce("SUM", f32 { 1, 2 }):totable())
  end)

  it("MultiWorkerMirroredStrategy alone is a world of one, without MPI", function()
    local s = D.MultiWorkerMirroredStrategy()
    assert.are.equal(1, s.num_replicas_in_sync)
    assert.are.equal(0, s.worker_index)
    assert.is_true(s.is_chief)
    assert.is_false(s.uses_mpi)
    assert.are.equal(0, D.worker_index())
    assert.are.equal(1, D.num_workers())
    assert.are.equal("MultiWorkerMirroredStrategy(num_replicas_in_sync=1)", tostring(s))
  end)

  it("scope and run make the strategy current, also through an error, and return fn's results", function()
    local s = D.MultiWorkerMirroredStrategy()
    local seen
    local a, b = s:scope(function(x) seen = D.get_strategy(); return x, "two" end, 1)
    assert.are.equal(s, seen)
    assert.are.same({ 1, "two" }, { a, b })
    assert.are.equal("DefaultStrategy", D.get_strategy().name)
    h.errors("boom", function() s:run(function() error("boom") end) end)
    assert.is_false(D.has_strategy())
    assert.are.equal(7, s:run(function(x, y) assert.are.equal(s, D.get_strategy()); return x + y end, { 3, 4 }))
    -- nested: the inner strategy while it runs, then the outer again
    local inner = D.OneDeviceStrategy("cpu")
    s:scope(function()
      inner:run(function() assert.are.equal(inner, D.get_strategy()) end)
      assert.are.equal(s, D.get_strategy())
    end)
  end)

  it("reduce sums and averages, over an axis too", function()
    local s = D.MultiWorkerMirroredStrategy()
    local x = f32 { { 1, 2 }, { 3, 6 } }
    assert.are.same({ { 1, 2 }, { 3, 6 } }, s:reduce("SUM", x):totable())
    assert.are.same({ { 1, 2 }, { 3, 6 } }, s:reduce("mean", x):totable())
    assert.are.same({ 4, 8 }, s:reduce("SUM", x, 0):totable())
    assert.are.same({ 2, 4 }, s:reduce("MEAN", x, 0):totable())
    assert.are.same({ 1.5, 4.5 }, s:reduce(D.ReduceOp.MEAN, x, -1):totable())
    assert.are.equal("float32", s:reduce("MEAN", x, 0).dtype)
    assert.are.same({ 5 }, s:reduce("SUM", tide.Variable(f32 { 5 })):totable())
    assert.are.equal(3, s:reduce("SUM", 3):item())
  end)

  it("reduce names what was wrong", function()
    local s = D.MultiWorkerMirroredStrategy()
    h.errors('the reduce op must be "SUM" or "MEAN", got MAX', function() s:reduce("MAX", f32 { 1 }) end)
    h.errors("a value to reduce is required", function() s:reduce("SUM") end)
    h.errors("axis must be a dim of the value (1-d), got 1", function() s:reduce("SUM", f32 { 1 }, 1) end)
    h.errors("collectives run eagerly only", function()
      tide.trace(function(x) return s:reduce("SUM", x) end)(f32 { 1 })
    end)
    h.errors("bytes_per_pack must be a whole number of bytes >= 0, got 0.5",
      function() D.MultiWorkerMirroredStrategy { communication_options = { bytes_per_pack = 0.5 } } end)
    h.errors("unknown communication option 'timeout'",
      function() D.MultiWorkerMirroredStrategy { communication_options = { timeout = 1 } } end)
    assert.are.equal(1024, D.MultiWorkerMirroredStrategy { communication_options = { bytes_per_pack = 1024 } }
      .bytes_per_pack)
  end)

  it("collectives: all_reduce_sum keeps the dtype, broadcast copies, barrier returns", function()
    local x = f32 { 1, 2 }
    local y = D.all_reduce_sum(x)
    assert.are.same({ 1, 2 }, y:totable())
    assert.are.equal("float32", y.dtype)
    local i = D.all_reduce_sum(tide.tensor({ 7, 8 }, "int64"))
    assert.are.equal("int64", i.dtype)
    assert.are.same({ 7, 8 }, i:totable())
    assert.are.equal("float16", D.all_reduce_sum(tide.tensor({ 1 }, "float16")).dtype)
    local b = D.broadcast(tide.tensor({ 3, 4 }, "int32"))
    assert.are.same({ 3, 4 }, b:totable())
    assert.are.same({ 3, 4 }, D.all_reduce_sum(tide.transpose(f32 { { 3 }, { 4 } })):totable()[1])
    D.barrier()
    h.errors("strings cannot be summed", function() D.all_reduce_sum(tide.tensor { "a" }) end)
    h.errors("root 1 is not a rank of this world of 1", function() D.broadcast(f32 { 1 }, 1) end)
    h.errors("root must be a worker index", function() D.broadcast(f32 { 1 }, 0.5) end)
    h.errors("must be a tensor, a Variable or a number, got function", function() D.all_reduce_sum(print) end)
  end)

  it("all_reduce_sum: a list in one call, eagerly and traced (a world of one: the values)", function()
    local calls = D.collective_calls()
    local s = D.all_reduce_sum { f32 { 1, 2 }, tide.tensor({ 3 }, "float64"), tide.Variable(f32 { 4 }), 5 }
    assert.are.same({ { 1, 2 }, { 3 }, { 4 } }, { s[1]:totable(), s[2]:totable(), s[3]:totable() })
    assert.are.same({ "float32", "float64", "float32", "int32" }, { s[1].dtype, s[2].dtype, s[3].dtype, s[4].dtype })
    assert.are.equal(5, s[4]:item())
    assert.are.equal(calls, D.collective_calls()) -- no MPI in a world of one
    local f = tide.trace(function(x, y)
      local r = D.all_reduce_sum({ x, y }, { bytes_per_pack = 8 })
      return r[1] * 2, r[2]
    end)
    local a, b = f(f32 { { 1, 2 }, { 3, 4 } }, tide.tensor({ 5, 6 }, "float64"))
    assert.are.same({ { 2, 4 }, { 6, 8 } }, a:totable())
    assert.are.same({ 5, 6 }, b:totable())
    -- an effect: kept in the graph when nothing reads it, never folded from constants
    local g = tide.trace(function(x)
      D.all_reduce_sum(x)
      D.all_reduce_sum(f32 { 1 })
      return x + 1
    end)
    assert.are.same({ 2 }, g(f32 { 1 }):totable())
    local text = tostring(g:get_concrete_function(f32 { 1 }).graph)
    local _, count = text:gsub("all_reduce_sum", "")
    assert.are.equal(2, count)
  end)

  it("all_reduce_sum names what was wrong", function()
    h.errors("expected a tensor, a Variable, a number or a list of them, got nil", function() D.all_reduce_sum(nil) end)
    h.errors("value 2 is nil", function() D.all_reduce_sum { f32 { 1 }, nil, f32 { 2 } } end)
    h.errors("value 1 is a string tensor", function() D.all_reduce_sum { tide.tensor { "a" } } end)
    h.errors("bytes_per_pack must be a whole number of bytes >= 0, got -1",
      function() D.all_reduce_sum(f32 { 1 }, { bytes_per_pack = -1 }) end)
    -- the registry op itself takes float32 and float64 only
    h.errors("all_reduce_sum: input 2 is int32; only float32 and float64", function()
      D.all_reduce_op { f32 { 1 }, tide.tensor { 1 } }
    end)
    h.errors("tensor 1 is nil", function() D.all_reduce_op { nil, f32 { 1 } } end)
    h.errors("expected a list of tensors, got a tensor", function() D.all_reduce_op(f32 { 1 }) end)
    h.errors("input 1 is float16", function()
      tide.trace(function(x) return D.all_reduce_op({ x })[1] end)(tide.tensor({ 1 }, "float16"))
    end)
  end)

  -- all_reduce_sum's gradient (the all-reduce of the upstream gradient):
  -- tests/support/grad_cases_nn.lua's finite-difference cases.

  it("all_reduce_gradients sums or averages a list with holes", function()
    local s = D.MultiWorkerMirroredStrategy()
    local g = s:all_reduce_gradients({ f32 { 2 }, nil, f32 { 4 } })
    assert.are.same({ 2 }, g[1]:totable())
    assert.is_nil(g[2])
    assert.are.same({ 4 }, g[3]:totable())
    assert.are.same({ 2 }, s:all_reduce_gradients({ f32 { 2 } }, "MEAN")[1]:totable())
    h.errors("expected a list of gradients", function() s:all_reduce_gradients(f32 { 1 }) end)
    h.errors('the op must be "SUM" or "MEAN"', function() s:all_reduce_gradients({}, "MAX") end)
  end)

  it("trains under scope and run as without a strategy (one worker)", function()
    local s = D.MultiWorkerMirroredStrategy()
    local function train(strategy)
      tide.random.set_seed(5)
      local make = function()
        return tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 2 } },
               tide.optimizers.SGD { learning_rate = 0.5 }
      end
      local model, opt
      if strategy then model, opt = strategy:scope(make) else model, opt = make() end
      local x, y = f32 { { 1, 2, 3 }, { -1, 0, 2 } }, f32 { { 1, 0 }, { 0, 1 } }
      local function step()
        local tape = tide.GradientTape()
        local loss = tape:run(function()
          return D.compute_average_loss(tide.reduce_sum((model(x) - y) ^ 2, 1), 2)
        end)
        opt:apply_gradients { { tape:gradient(loss, model.trainable_weights[1]), model.trainable_weights[1] } }
      end
      for _ = 1, 3 do
        if strategy then strategy:run(step) else step() end
      end
      return model.trainable_weights[1]:read_value():totable()
    end
    assert.are.same(train(nil), train(s))
  end)

  it("broadcast_variables gives variables the chief's values and checks its list", function()
    local s = D.MultiWorkerMirroredStrategy()
    local v = tide.Variable(f32 { 1, 2 })
    s:broadcast_variables { v }
    assert.are.same({ 1, 2 }, v:read_value():totable())
    h.errors("entry 1 is a number, not a Variable", function() s:broadcast_variables { 3 } end)
    h.errors("expected a list of Variables", function() s:broadcast_variables(v) end)
  end)

  it("compute_average_loss divides the sum by the global batch", function()
    local l = f32 { 1, 2, 3, 6 }
    assert.are.equal(1.5, D.compute_average_loss(l, 8):item())
    assert.are.equal(3, D.compute_average_loss(l):item()) -- one replica: the local batch
    h.errors("global_batch_size must be a positive number, got 0", function() D.compute_average_loss(l, 0) end)
    h.errors("expected a tensor of per-example losses", function() D.compute_average_loss(3) end)
  end)

  it("OneDeviceStrategy runs on its device and checks its arguments", function()
    local s = D.OneDeviceStrategy("cpu")
    assert.are.equal(1, s.num_replicas_in_sync)
    assert.are.equal("cpu", s:scope(function() return require("tide.device").current() end))
    assert.are.equal(3, s:run(function(a) return a + 1 end, { 2 }))
    h.errors("expected a device name", function() D.OneDeviceStrategy(0) end)
    h.errors("tide.distribute.OneDeviceStrategy", function() D.OneDeviceStrategy("tpu:0") end)
    h.errors("OneDeviceStrategy:run: args must be a list", function() s:run(print, 3) end)
    h.errors("OneDeviceStrategy:scope: expected a function, got nil", function() s:scope() end)
  end)

  it("datasets: one worker keeps the dataset; the function gets its input context", function()
    local s = D.MultiWorkerMirroredStrategy()
    local ds = tide.data.Dataset.from_tensor_slices(tide.range(6)):batch(4)
    assert.are.equal(ds, s:experimental_distribute_dataset(ds))
    local seen
    local out = s:distribute_datasets_from_function(function(ctx)
      seen = ctx
      return ds
    end)
    assert.are.equal(ds, out)
    assert.are.same({ 1, 0, 1 }, { seen.num_input_pipelines, seen.input_pipeline_id, seen.num_replicas_in_sync })
    assert.are.equal(64, seen:get_per_replica_batch_size(64))
    h.errors("expected a tide.data.Dataset, got number", function() s:experimental_distribute_dataset(3) end)
    h.errors("the function must return a tide.data.Dataset, got nil",
      function() s:distribute_datasets_from_function(function() end) end)
    h.errors("expected a function", function() s:distribute_datasets_from_function(ds) end)
  end)

  it("auto_shard leaves a world of one's dataset alone; all_have needs no collective for a known size", function()
    local s = D.MultiWorkerMirroredStrategy()
    local ds = tide.data.Dataset.from_tensor_slices(tide.range(6)):batch(4)
    local out, policy = D.auto_shard(s, ds)
    assert.are.equal(ds, out)
    assert.are.equal("OFF", policy)
    local calls = D.collective_calls()
    assert.is_true(D.all_have(s, 3, true))
    assert.is_false(D.all_have(s, 3, false))
    assert.is_true(D.all_have(s, tide.data.UNKNOWN_CARDINALITY, true)) -- a world of one agrees with itself
    assert.is_false(D.all_have(s, tide.data.UNKNOWN_CARDINALITY, false))
    assert.are.equal(calls, D.collective_calls())
  end)

  it("InputContext splits the global batch and checks its fields", function()
    local c = D.InputContext { num_input_pipelines = 2, input_pipeline_id = 1, num_replicas_in_sync = 4 }
    assert.are.equal(16, c:get_per_replica_batch_size(64))
    h.errors("the global batch size 10 does not split evenly over 4 replicas", function() c:get_per_replica_batch_size(10) end)
    h.errors("must be a positive integer, got 0", function() c:get_per_replica_batch_size(0) end)
    h.errors("input_pipeline_id 2 is not below num_input_pipelines 2",
      function() D.InputContext { num_input_pipelines = 2, input_pipeline_id = 2 } end)
    h.errors("num_replicas_in_sync must be a positive integer, got 0", function() D.InputContext { num_replicas_in_sync = 0 } end)
  end)

  it("fit's helpers: each worker's rows and share, chief-only callbacks, the model's strategy", function()
    local d = require("tide.models.training").distribution
    local w1 = { num_replicas_in_sync = 2, worker_index = 1, is_chief = false }
    assert.are.same({ 132, 137 }, { d.rows(w1, 128, 137) }) -- 9 rows: 4 and 5
    assert.are.same({ 64, 65 }, { d.rows(w1, 64, 65) }) -- fewer rows than workers: all of them
    local dir = tmp.name()
    local csv, stop = tide.callbacks.CSVLogger(dir .. ".csv"), tide.callbacks.EarlyStopping {}
    local backup = tide.callbacks.BackupAndRestore { backup_dir = dir .. ".backup" }
    local kept = d.callbacks(w1, { csv, stop, tide.callbacks.ModelCheckpoint(dir .. ".weights.h5"), backup })
    assert.are.same({ stop, backup }, kept) -- every worker restores its backup; only the chief writes it
    local chief = { num_replicas_in_sync = 2, worker_index = 0, is_chief = true }
    assert.are.equal(3, #d.callbacks(chief, { csv, stop, csv }))
    os.remove(dir)
    -- one worker: fit runs as without a strategy; compile under scope remembers the strategy
    local s = D.MultiWorkerMirroredStrategy()
    local model = s:scope(function()
      local m = tide.Sequential { tide.Input { shape = { 2 } }, tide.layers.Dense { 1 } }
      m:compile { optimizer = "sgd", loss = "mse" }
      return m
    end)
    assert.are.equal(s, rawget(model, "_distribute_strategy"))
    assert.is_nil(d.of(model)) -- a world of one
    local h1 = model:fit(f32 { { 1, 2 }, { 3, 4 } }, f32 { { 1 }, { 2 } }, { verbose = 0, epochs = 2 })
    assert.are.equal(2, #h1.history.loss)
  end)

  it("timeout= sets how long a collective waits for the other workers", function()
    local C = require("tide.binding").C
    local before = C.tide_dist_timeout()
    assert.are.equal(12.5, (function() D.MultiWorkerMirroredStrategy { timeout = 12.5 }; return C.tide_dist_timeout() end)())
    D.MultiWorkerMirroredStrategy { timeout = math.huge }
    assert.are.equal(math.huge, C.tide_dist_timeout())
    for _, bad in ipairs { 0, -1, "5", 0 / 0 } do
      h.errors("timeout must be a positive number of seconds", function() D.MultiWorkerMirroredStrategy { timeout = bad } end)
    end
    assert.are.equal(math.huge, C.tide_dist_timeout()) -- unchanged by the refused ones
    assert.are.equal(0, C.tide_dist_set_timeout(before))
  end)

  it("refuses bad arguments to the strategy", function()
    h.errors("unknown option 'cluster'", function() D.MultiWorkerMirroredStrategy { cluster = 1 } end)
    h.errors("expected an options table or nothing", function() D.MultiWorkerMirroredStrategy(3) end)
    local s = D.MultiWorkerMirroredStrategy()
    h.errors("MultiWorkerMirroredStrategy:run: expected a function, got number", function() s:run(3) end)
    h.errors("MultiWorkerMirroredStrategy:run: args must be a list", function() s:run(print, "x") end)
  end)
end)
