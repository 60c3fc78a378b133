-- stdlib/tide/models/training.lua — a model's fit, evaluate and predict
-- (Keras 3's Trainer; compile is models/compile.lua): the
-- train/test/predict steps as traced functions (one trace each: their input
-- signature has a None batch dim), batches, callbacks and the History.
-- Installed on tide.Model by model.lua.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local tape_mod = require "tide.tape"
local tracing = require "tide.tracing.function"
local spec = require "tide.tracing.spec"
local retracing = require "tide.tracing.retracing"
local data = require "tide.models.data"
local dsource = require "tide.models.dataset_source"
local callbacks_mod = require "tide.callbacks.callback"
local compile_mod = require "tide.models.compile"

local None = tensor_shape.None
local istensor = binding.istensor
local fmt = string.format

local M = {}

local who, options, set = compile_mod.who, compile_mod.options, compile_mod.set
local compile, require_compiled = compile_mod.compile, compile_mod.require_compiled
local compute_loss, compute_metrics = compile_mod.compute_loss, compile_mod.compute_metrics
local get_metrics_result, reset_metrics = compile_mod.get_metrics_result, compile_mod.reset_metrics
M.metrics = compile_mod.metrics


---------------------------------------------------------------------------
-- Steps
---------------------------------------------------------------------------

-- train_step(data): data = {x, y, sample_weight}; one optimizer step, returns
-- the metrics' results by name.
local function train_step(self, batch)
  local x, y, sw = batch[1], batch[2], batch[3]
  local vars = self.trainable_weights
  local tape = tape_mod.GradientTape()
  local y_pred, loss = tape:run(function()
    local p = self(x, { training = true })
    -- the optimizer's loss scaling (LossScaleOptimizer, loss_scale_factor), after the loss is tracked
    return p, self.optimizer:scale_loss(self:compute_loss(x, y, p, sw))
  end)
  if #vars > 0 then
    local grads = tape:gradient(loss, vars)
    -- GradientHealth without a probe batch: this step's gradient norms
    local norms = rawget(self, "_gradient_norms")
    if norms then norms:record(grads, self.optimizer) end
    self.optimizer:apply(grads, vars)
  end
  return self:compute_metrics(x, y, y_pred, sw)
end

local function test_step(self, batch)
  local x, y, sw = batch[1], batch[2], batch[3]
  local y_pred = self(x, { training = false })
  self:compute_loss(x, y, y_pred, sw)
  return self:compute_metrics(x, y, y_pred, sw)
end

local function predict_step(self, batch)
  return self(batch[1], { training = false })
end

-- A key naming the trainable variables now: a change (model.trainable =
-- false, a layer frozen) makes fit build its train function again.
local variable_ids, next_id = setmetatable({}, { __mode = "k" }), 0
local function trainable_key(self)
  local parts = {}
  for i, v in ipairs(self.trainable_weights) do
    local id = variable_ids[v]
    if id == nil then
      next_id = next_id + 1
      id = next_id
      variable_ids[v] = id
    end
    parts[i] = id
  end
  return table.concat(parts, ",")
end

local function spec_for(t)
  local dims = t.shape:as_list()
  dims[1] = None
  return spec.TensorSpec(dims, t.dtype)
end

-- The step function for `kind` ("train", "test", "predict") over batches
-- shaped like the given flat groups: traced once with a None batch dim
-- (kept on the model), or the plain Lua step under run_eagerly.
local function step_function(self, kind, x, y, sw)
  local fns = rawget(self, "_functions")
  if fns == nil then fns = {}; rawset(self, "_functions", fns) end
  local eager = rawget(self, "run_eagerly") == true
  local nx, ny = #x.leaves, y and #y.leaves or 0
  local key = kind .. (y and ":y" or "") .. (sw and ":w" or "") .. (eager and ":eager" or "")
    .. (kind == "train" and rawget(self, "_gradient_norms") and ":norms" or "")
  -- a train step traced under a multi-worker strategy all-reduces; one traced without does not
  if kind == "train" and M.distribution and M.distribution.of(self) then key = key .. ":distributed" end
  if kind == "train" then
    local tk = trainable_key(self)
    if rawget(self, "_trainable_key") ~= tk then
      for k in pairs(fns) do if k:sub(1, 5) == "train" then fns[k] = nil end end
      rawset(self, "_trainable_key", tk)
    end
  end
  local f = fns[key]
  if f then return f end
  local xt, yt = x.template, y and y.template
  local step = kind == "train" and "train_step" or kind == "test" and "test_step" or "predict_step"
  local fn = function(...)
    local args = { ... }
    local bx = data.rebuild(xt, args, 0)
    local by = yt and data.rebuild(yt, args, nx) or nil
    local bw = sw and args[nx + ny + 1] or nil
    return self[step](self, { bx, by, bw })
  end
  if not eager then
    local sig = {}
    for _, t in ipairs(x.leaves) do sig[#sig + 1] = spec_for(t) end
    for _, t in ipairs(y and y.leaves or {}) do sig[#sig + 1] = spec_for(t) end
    if sw then sig[#sig + 1] = spec.TensorSpec({ None }, "float32") end
    f = tracing.trace(fn, { input_signature = sig, name = kind .. "_function" })
    -- its own retracing detector: every model makes a new closure of fn,
    -- which a detector shared by the Lua function would count as retracing
    f._detector = retracing.new_detector()
  else
    f = fn
  end
  fns[key] = f
  return f
end
M.step_function = step_function

-- Make the weights (a first eager call on a batch, when the model has never
-- run) and the optimizer's slots before a step is traced.
local function prepare(self, xb, training)
  if not rawget(self, "built") or not rawget(self, "_has_run") then
    self(data.rebuild(xb.template, xb.leaves, 0), { training = false })
    rawset(self, "_has_run", true)
  end
  if training then self.optimizer:build(self.trainable_weights) end
end

-- Logs as Lua numbers.
local function numbers(logs)
  local out = {}
  for k, v in pairs(logs or {}) do
    if istensor(v) then out[k] = v:item() else out[k] = v end
  end
  return out
end

local function call_step(f, xb, yb, wb)
  local args = {}
  for _, t in ipairs(xb.leaves) do args[#args + 1] = t end
  if yb then for _, t in ipairs(yb.leaves) do args[#args + 1] = t end end
  if wb then args[#args + 1] = wb end
  return f(unpack(args))
end

local function as_weights(sw, n, what)
  if sw == nil then return nil end
  if not istensor(sw) then sw = convert.tensor(sw, "float32", what) end
  if sw.dtype ~= "float32" then sw = math_ops.cast(sw, "float32") end
  if sw.ndim ~= 1 or sw.shape[1] ~= n then
    binding.error(fmt("%s: sample_weight must have shape (%d,) (one weight per sample), got %s", what, n,
      tostring(sw.shape)))
  end
  return sw
end

local function positive_int(what, name, v, default)
  if v == nil then return default end
  if type(v) ~= "number" or v ~= math.floor(v) or v < 1 then
    binding.error(fmt("%s: %s must be a positive integer, got %s", what, name, tostring(v)))
  end
  return v
end

---------------------------------------------------------------------------
-- evaluate
---------------------------------------------------------------------------

local EVALUATE = set { "batch_size", "verbose", "sample_weight", "steps", "callbacks", "return_dict" }

local run_evaluate_dataset -- below

-- The core of evaluate on flat groups; returns the logs (numbers).
local function run_evaluate(self, x, y, sw, n, batch_size, steps, cbs)
  if dsource.is_dataset(x) then return run_evaluate_dataset(self, x, steps, cbs) end
  local total_steps = math.ceil(n / batch_size)
  if steps then total_steps = math.min(steps, total_steps) end
  reset_metrics(self)
  cbs:on_test_begin()
  local logs = {}
  for step = 0, total_steps - 1 do
    local a, b = step * batch_size, math.min(n, (step + 1) * batch_size)
    local xb, yb = data.batch(x, a, b), data.batch(y, a, b)
    local wb = sw and sw:slice { { a, b } } or nil
    cbs:on_test_batch_begin(step)
    prepare(self, xb, false)
    local f = step_function(self, "test", xb, yb, wb)
    logs = numbers(call_step(f, xb, yb, wb))
    cbs:on_test_batch_end(step, logs)
  end
  if total_steps == 0 then logs = numbers(get_metrics_result(self)) end
  cbs:on_test_end(logs)
  return logs
end

-- evaluate over a dataset's batches (steps: at most this many).
run_evaluate_dataset = function(self, ds, steps, cbs)
  local src = dsource.source(ds, who(self) .. ": evaluate", nil, nil)
  reset_metrics(self)
  cbs:on_test_begin()
  local logs, step = {}, 0
  while not steps or step < steps do
    local xb, yb, wb = src:next()
    if xb == nil then break end
    cbs:on_test_batch_begin(step)
    prepare(self, xb, false)
    logs = numbers(call_step(step_function(self, "test", xb, yb, wb), xb, yb, wb))
    cbs:on_test_batch_end(step, logs)
    step = step + 1
  end
  if step == 0 then logs = numbers(get_metrics_result(self)) end
  cbs:on_test_end(logs)
  return logs
end

local function prepare_xy(self, what, x, y, sample_weight)
  if x == nil then binding.error(fmt("%s: %s: x is nil; pass the input data", who(self), what)) end
  local xd = data.flatten(x, what .. ": x")
  local yd = y ~= nil and data.flatten(y, what .. ": y") or nil
  local n = data.sample_count { { data = xd, what = "x" }, { data = yd, what = "y" } }
  local sw = as_weights(sample_weight, n, who(self) .. ": " .. what)
  return xd, yd, sw, n
end

-- evaluate(x, y, {batch_size=32, verbose=1, sample_weight=, steps=,
-- callbacks=, return_dict=false}): the loss and metrics over the data; a
-- number when there is only the loss, else a list in metrics_names' order
-- (or a table by name with return_dict).
-- With a dataset the targets are in its elements, so the options may come
-- second: fit(ds, {epochs = 5}) as Keras's fit(ds, epochs=5).
local function dataset_options(x, y, opts)
  if opts == nil and dsource.is_dataset(x) and type(y) == "table" and getmetatable(y) == nil then return nil, y end
  return y, opts
end

local function evaluate(self, x, y, opts)
  y, opts = dataset_options(x, y, opts)
  opts = options(who(self) .. ": evaluate", opts, EVALUATE)
  require_compiled(self, "evaluate")
  local xd, yd, sw, n, steps
  if dsource.is_dataset(x) then
    xd, steps = x, dsource.source(x, who(self) .. ": evaluate", y, opts):steps(opts.steps, "steps")
  else
    xd, yd, sw, n = prepare_xy(self, "evaluate", x, y, opts.sample_weight)
  end
  local batch_size = positive_int("evaluate", "batch_size", opts.batch_size, 32)
  local verbose = opts.verbose == nil and 1 or opts.verbose
  steps = steps or math.ceil(n / batch_size)
  if opts.steps then steps = math.min(positive_int("evaluate", "steps", opts.steps), steps) end
  local cbs = callbacks_mod.CallbackList(opts.callbacks, { add_progbar = verbose ~= 0, model = self,
    verbose = verbose, epochs = 1, steps = steps })
  local logs = run_evaluate(self, xd, yd, sw, n, batch_size, opts.steps, cbs)
  if opts.return_dict then return logs end
  local names = self.metrics_names
  if #names == 1 then return logs[names[1]] end
  local out = {}
  for i, k in ipairs(names) do out[i] = logs[k] end
  return out
end

---------------------------------------------------------------------------
-- fit
---------------------------------------------------------------------------

-- fit under a multi-worker strategy: tide.distribute (when loaded) sets
-- M.distribution to { of(model) -> strategy or nil (one replica), ... }.
M.distribution = nil

local FIT = set { "batch_size", "epochs", "verbose", "callbacks", "validation_split", "validation_data", "shuffle",
  "initial_epoch", "steps_per_epoch", "class_weight", "sample_weight", "validation_batch_size", "validation_steps",
  "validation_freq" }

-- fit(x, y, {batch_size=32, epochs=1, verbose=1, callbacks=, validation_split=0,
-- validation_data=, shuffle=true, initial_epoch=0, steps_per_epoch=,
-- class_weight=, sample_weight=}) -> History.
local function fit(self, x, y, opts)
  y, opts = dataset_options(x, y, opts)
  opts = options(who(self) .. ": fit", opts, FIT)
  require_compiled(self, "fit")
  local what = who(self) .. ": fit"
  local source = dsource.is_dataset(x) and dsource.source(x, what, y, opts) or nil
  local xd, yd, sw, n
  if source then n = 0 else xd, yd, sw, n = prepare_xy(self, "fit", x, y, opts.sample_weight) end
  if not source and yd == nil and rawget(self, "_loss_objects") ~= nil then
    binding.error(fmt("%s: y is nil, but the model was compiled with a loss; pass the targets", what))
  end
  if opts.class_weight ~= nil then
    if sw then
      binding.error(fmt("%s: class_weight and sample_weight cannot be given together (as Keras); fold the class " ..
        "weights into sample_weight", what))
    end
    sw = data.class_weights(opts.class_weight, yd, what)
  end
  local batch_size = positive_int("fit", "batch_size", opts.batch_size, 32)
  local epochs = positive_int("fit", "epochs", opts.epochs, 1)
  local initial_epoch = opts.initial_epoch or 0
  if type(initial_epoch) ~= "number" or initial_epoch < 0 or initial_epoch ~= math.floor(initial_epoch) then
    binding.error(fmt("%s: initial_epoch must be a non-negative integer, got %s", what, tostring(initial_epoch)))
  end
  local verbose = opts.verbose == nil and 1 or opts.verbose
  if verbose ~= 0 and verbose ~= 1 and verbose ~= 2 and verbose ~= "auto" then
    binding.error(fmt("%s: verbose must be 0, 1 or 2, got %s", what, tostring(verbose)))
  end
  if verbose == "auto" then verbose = 1 end
  local shuffle = opts.shuffle ~= false
  -- validation data
  local vx, vy, vw, vn
  if opts.validation_data ~= nil then
    local vd = opts.validation_data
    if dsource.is_dataset(vd) then
      vx = vd
    elseif type(vd) ~= "table" or getmetatable(vd) ~= nil or vd[1] == nil then
      binding.error(fmt("%s: validation_data must be {x_val, y_val} or {x_val, y_val, sample_weight_val}", what))
    end
    if not vx then vx, vy, vw, vn = prepare_xy(self, "fit: validation_data", vd[1], vd[2], vd[3]) end
  elseif opts.validation_split ~= nil and opts.validation_split ~= 0 then
    local f = opts.validation_split
    if type(f) ~= "number" or f <= 0 or f >= 1 then
      binding.error(fmt("%s: validation_split must be a number in (0, 1), got %s", what, tostring(f)))
    end
    local at
    xd, vx, at = data.split(xd, n, f)
    if yd then yd, vy = data.split(yd, n, f) end
    if sw then vw = sw:slice { { at, n } }; sw = sw:slice { { 0, at } } end
    vn = n - at
    n = at
  end
  -- Under a strategy of several workers, every worker walks the same global
  -- batches and trains on its rows of each (M.distribution tells the rest).
  local dist = M.distribution and M.distribution.of(self)
  if dist then
    if source then source = dsource.source(M.distribution.dataset(dist, x, what), what, y, opts) end
    verbose = dist.is_chief and verbose or 0
  end
  local batches = math.ceil(n / batch_size)
  local steps = opts.steps_per_epoch and positive_int("fit", "steps_per_epoch", opts.steps_per_epoch) or batches
  if source then steps = source:steps(steps ~= batches and steps or nil, "steps_per_epoch") end
  local cbs = callbacks_mod.CallbackList(dist and M.distribution.callbacks(dist, opts.callbacks) or opts.callbacks,
    { add_history = true, add_progbar = verbose ~= 0, model = self, verbose = verbose, epochs = epochs, steps = steps })
  rawset(self, "stop_training", false)
  cbs:on_train_begin()
  -- BackupAndRestore's on_train_begin resumes a restarted fit: from its
  -- epoch, and in it from its step (the steps before are walked, not run,
  -- so the data and its shuffle stay where the interrupted run had them)
  local skip = 0
  if rawget(self, "_initial_epoch") ~= nil then
    initial_epoch, skip = rawget(self, "_initial_epoch"), rawget(self, "_initial_step") or 0
    rawset(self, "_initial_epoch", nil)
    rawset(self, "_initial_step", nil)
  end
  local perm, cursor = nil, batches -- cursor: the next batch of the current pass
  local train_function
  local epoch_logs = {}
  local val_bs = opts.validation_batch_size or batch_size
  for epoch = initial_epoch, epochs - 1 do
    reset_metrics(self)
    cbs:on_epoch_begin(epoch)
    local logs = {}
    local ran = 0
    if not opts.steps_per_epoch then cursor = batches end -- each epoch is one pass
    if source and not opts.steps_per_epoch then source:restart() end
    for step = 0, (steps or math.huge) - 1 do
      local xb, yb, wb
      if source then -- a dataset's batch; running out ends the epoch
        xb, yb, wb = source:next()
        if dist and not M.distribution.all_have(dist, source, xb ~= nil) then xb = nil end -- all stop alike
        if xb == nil then
          if opts.steps_per_epoch then
            io.stderr:write(fmt("Warning: fit: the dataset ran out of data in epoch %d after %d of %d steps " ..
              "(steps_per_epoch=%d); the epoch ends here. Make it longer (repeat_()) or give fewer steps.\n",
              epoch + 1, step, steps, steps))
          end
          break
        end
      elseif cursor >= batches then
        if opts.steps_per_epoch and step > 0 then
          io.stderr:write(fmt("Warning: fit: your input ran out of data in epoch %d after %d of %d steps " ..
            "(steps_per_epoch=%d, %d batches of %d samples); the epoch ends here. Give steps_per_epoch <= %d.\n",
            epoch + 1, step, steps, steps, batches, batch_size, batches))
          break
        end
        perm, cursor = data.permutation(n, shuffle), 0
        if dist and perm then perm = M.distribution.same_permutation(dist, perm) end
      end
      if not source then
        local a, b = cursor * batch_size, math.min(n, (cursor + 1) * batch_size)
        cursor = cursor + 1
        if dist then a, b = M.distribution.rows(dist, a, b) end
        if skip == 0 then
          xb, yb = data.batch(xd, a, b, perm), data.batch(yd, a, b, perm)
          wb = sw and (perm and shape_ops.gather(sw, perm:slice { { a, b } }) or sw:slice { { a, b } }) or nil
        end
      end
      if skip > 0 then
        skip = skip - 1
        goto next_step
      end
      cbs:on_train_batch_begin(step)
      if train_function == nil then
        -- once per fit, as Keras's make_train_function: the weights,
        -- slots and trace are fixed for the run (trainable changes apply
        -- at the next fit), and a step pays for no lookups
        prepare(self, xb, true)
        train_function = step_function(self, "train", xb, yb, wb)
        rawset(self, "train_function", train_function) -- Keras's model.train_function (TensorBoard's write_graph)
      end
      if dist then
        logs = M.distribution.step(dist, xb, function() return numbers(call_step(train_function, xb, yb, wb)) end)
      else
        logs = numbers(call_step(train_function, xb, yb, wb))
      end
      ran = ran + 1
      cbs:on_train_batch_end(step, logs)
      if rawget(self, "stop_training") then break end
      ::next_step::
    end
    epoch_logs = {}
    for k, v in pairs(logs) do epoch_logs[k] = v end
    local freq = opts.validation_freq or 1
    if vx and (epoch + 1) % freq == 0 then
      local vcbs = callbacks_mod.CallbackList(nil, { model = self, verbose = 0, epochs = 1, steps = 0 })
      local vlogs = run_evaluate(self, vx, vy, vw, vn, val_bs, opts.validation_steps, vcbs)
      for k, v in pairs(vlogs) do epoch_logs["val_" .. k] = v end
    end
    cbs:on_epoch_end(epoch, epoch_logs)
    if rawget(self, "stop_training") then break end
  end
  -- Keras: an optimizer with use_ema leaves its averages in the weights
  if epochs > 0 then rawget(self, "optimizer"):finalize_variable_values(self.trainable_weights) end
  cbs:on_train_end(epoch_logs)
  return rawget(self, "history")
end

---------------------------------------------------------------------------
-- predict and the *_on_batch forms
---------------------------------------------------------------------------

local PREDICT = set { "batch_size", "verbose", "steps", "callbacks" }

-- Join the batches' outputs (each a tensor or a structure) along axis 0.
local function concat_outputs(outs)
  local first = outs[1]
  if istensor(first) then
    if #outs == 1 then return first end
    return shape_ops.concat(outs, 0)
  end
  local joined = {}
  for k in pairs(first) do
    local parts = {}
    for i, o in ipairs(outs) do parts[i] = o[k] end
    joined[k] = concat_outputs(parts)
  end
  return joined
end

-- predict(x, {batch_size=32, verbose=0, steps=, callbacks=}): the outputs for
-- every sample (the last partial batch included), joined.
local function predict(self, x, opts)
  opts = options(who(self) .. ": predict", opts, PREDICT)
  if x == nil then binding.error(fmt("%s: predict: x is nil; pass the input data", who(self))) end
  local source = dsource.is_dataset(x) and dsource.source(x, who(self) .. ": predict", nil, opts) or nil
  local xd = not source and data.flatten(x, "predict: x") or nil
  local n = source and 0 or data.sample_count { { data = xd, what = "x" } }
  local batch_size = positive_int("predict", "batch_size", opts.batch_size, 32)
  local steps = source and source:steps(opts.steps, "steps") or math.ceil(n / batch_size)
  if opts.steps then steps = math.min(positive_int("predict", "steps", opts.steps), steps) end
  local verbose = opts.verbose == nil and 0 or opts.verbose
  local cbs = callbacks_mod.CallbackList(opts.callbacks, { add_progbar = verbose ~= 0, model = self,
    verbose = verbose, epochs = 1, steps = steps })
  cbs:on_predict_begin()
  local outs = {}
  for step = 0, (steps or math.huge) - 1 do
    local xb
    if source then
      xb = source:next() -- a dataset's element: x, or x first
      if xb == nil then break end
    else
      local a, b = step * batch_size, math.min(n, (step + 1) * batch_size)
      xb = data.batch(xd, a, b)
    end
    cbs:on_predict_batch_begin(step)
    prepare(self, xb, false)
    local f = step_function(self, "predict", xb, nil, nil)
    outs[#outs + 1] = call_step(f, xb, nil, nil)
    cbs:on_predict_batch_end(step, { outputs = outs[#outs] })
  end
  cbs:on_predict_end()
  if #outs == 0 then binding.error(fmt("%s: predict: x holds no samples", who(self))) end
  return concat_outputs(outs)
end

local function on_batch_logs(self, logs, return_dict)
  if return_dict then return logs end
  local names = self.metrics_names
  if #names == 1 then return logs[names[1]] end
  local out = {}
  for i, k in ipairs(names) do out[i] = logs[k] end
  return out
end

local ON_BATCH = set { "sample_weight", "class_weight", "return_dict" }

-- train_on_batch(x, y, {sample_weight=, class_weight=, return_dict=false}):
-- one step; the batch's loss and metrics (metrics are reset first, so the
-- values are this batch's, as Keras's reset_metrics=True).
local function train_on_batch(self, x, y, opts)
  opts = options(who(self) .. ": train_on_batch", opts, ON_BATCH)
  require_compiled(self, "train_on_batch")
  local xd, yd, sw = prepare_xy(self, "train_on_batch", x, y, opts.sample_weight)
  if opts.class_weight then
    local cw = data.class_weights(opts.class_weight, yd, who(self) .. ": train_on_batch")
    sw = sw and sw * cw or cw
  end
  reset_metrics(self)
  prepare(self, xd, true)
  local f = step_function(self, "train", xd, yd, sw)
  return on_batch_logs(self, numbers(call_step(f, xd, yd, sw)), opts.return_dict)
end

local function test_on_batch(self, x, y, opts)
  opts = options(who(self) .. ": test_on_batch", opts, set { "sample_weight", "return_dict" })
  require_compiled(self, "test_on_batch")
  local xd, yd, sw = prepare_xy(self, "test_on_batch", x, y, opts.sample_weight)
  reset_metrics(self)
  prepare(self, xd, false)
  local f = step_function(self, "test", xd, yd, sw)
  return on_batch_logs(self, numbers(call_step(f, xd, yd, sw)), opts.return_dict)
end

local function predict_on_batch(self, x)
  local xd = data.flatten(x, "predict_on_batch: x")
  prepare(self, xd, false)
  local f = step_function(self, "predict", xd, nil, nil)
  return call_step(f, xd, nil, nil)
end

-- Install the training methods on the Model class.
function M.install(Model)
  Model.compile = compile
  Model.fit = fit
  Model.evaluate = evaluate
  Model.predict = predict
  Model.train_on_batch = train_on_batch
  Model.test_on_batch = test_on_batch
  Model.predict_on_batch = predict_on_batch
  Model.train_step = train_step
  Model.test_step = test_step
  Model.predict_step = predict_step
  Model.compute_loss = compute_loss
  Model.compute_metrics = compute_metrics
  Model.get_metrics_result = get_metrics_result
  Model.reset_metrics = reset_metrics
end

return M
