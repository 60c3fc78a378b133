-- stdlib/tide/models/training.lua — a model's fit, evaluate and predict
-- (Keras 3's Trainer; compile is models/compile.lua): the
-- train/test/predict steps as traced functions (one trace each: their input
-- signature has a None batch dim), the epoch loops, callbacks and the
-- History; the batches come from models/epoch_iterator.lua. Installed on
-- tide.Model by model.lua.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local shape_ops = require "tide.ops.shape"
local tape_mod = require "tide.tape"
local tracing = require "tide.tracing.function"
local spec = require "tide.tracing.spec"
local retracing = require "tide.tracing.retracing"
local data = require "tide.models.data"
local epoch_iterator = require "tide.models.epoch_iterator"
local callbacks_mod = require "tide.callbacks.callback"
local compile_mod = require "tide.models.compile"
local nest = require "tide.nest"

local None = tensor_shape.None
local istensor = binding.istensor
local fmt = string.format

local M = {}

local who, options, set = compile_mod.who, compile_mod.options, compile_mod.set
local compile, require_compiled = compile_mod.compile, compile_mod.require_compiled
local positive_int, dataset_options = epoch_iterator.positive_int, epoch_iterator.dataset_options
local prepare_xy = epoch_iterator.prepare_xy
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

-- A key for the structure of a batch's group (its template): "" for one
-- tensor, else its leaves' paths; a step is traced for one structure.
local function structure_key(template)
  if type(template) ~= "table" then return "" end
  local parts = {}
  for i, e in ipairs(nest.flatten_with_path(template)) do parts[i] = nest.path_text(e[1]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- The step function for `kind` ("train", "test", "predict") over batches
-- shaped like the given flat groups: traced once with a None batch dim
-- (kept on the model), or the plain Lua step under run_eagerly.
local function step_function(self, kind, x, y, sw)
  local fns = rawget(self, "_functions")
  if fns == nil then fns = {}; rawset(self, "_functions", fns) end
  local eager = rawget(self, "run_eagerly") == true
  local nx, ny = #x.leaves, y and #y.leaves or 0
  local key = kind .. structure_key(x.template) .. (y and ":y" .. structure_key(y.template) or "") .. (sw and ":w" or "")
    .. (eager and ":eager" or "")
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

-- True when the model's class (or a parent below Model) defines `name`
-- itself: a subclass's own call or train_step.
local function overrides(self, name)
  local cls = getmetatable(self)
  while cls and cls ~= M.Model do
    if rawget(cls, name) ~= nil then return true end
    cls = rawget(cls, "super")
  end
  return false
end

-- Make the weights (a first eager call on a batch, when the model has never
-- run) and the optimizer's slots before a step is traced. A subclass with
-- its own train_step and no call (keras.io's VAE and GAN) builds what its
-- step uses when the step is first traced (Keras's TF trainer defers the
-- build so too), and builds the optimizers it applies there.
local function prepare(self, xb, training)
  local has_call = rawget(self, "_graph") ~= nil or overrides(self, "call")
  if has_call and (not rawget(self, "built") or not rawget(self, "_has_run")) then
    self(data.rebuild(xb.template, xb.leaves, 0), { training = false })
    rawset(self, "_has_run", true)
    reset_metrics(self) -- that call is no step: a metric the model updates in call forgets it (Keras builds symbolically)
  end
  if training and not overrides(self, "train_step") then self.optimizer:build(self.trainable_weights) end
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

---------------------------------------------------------------------------
-- evaluate
---------------------------------------------------------------------------

local EVALUATE = set { "batch_size", "verbose", "sample_weight", "steps", "callbacks", "return_dict" }

-- The core of evaluate: one pass over the iterator's batches; returns the logs (numbers).
local function run_evaluate(self, batches, cbs)
  reset_metrics(self)
  cbs:on_test_begin()
  batches:begin_epoch()
  local logs, step = {}, 0
  while true do
    local more, xb, yb, wb = batches:next(step)
    if not more then break end
    cbs:on_test_batch_begin(step)
    prepare(self, xb, false)
    logs = numbers(call_step(step_function(self, "test", xb, yb, wb), xb, yb, wb))
    cbs:on_test_batch_end(step, logs)
    step = step + 1
  end
  batches:end_epoch()
  if step == 0 then logs = numbers(get_metrics_result(self)) end
  cbs:on_test_end(logs)
  return logs
end

-- evaluate(x, y, {batch_size=32, verbose=1, sample_weight=, steps=,
-- callbacks=, return_dict=false}): the loss and metrics over the data; a
-- number when there is only the loss, else a list in metrics_names' order
-- (or a table by name with return_dict). With a dataset the options may come second.
local function evaluate(self, x, y, opts)
  y, opts = dataset_options(x, y, opts)
  opts = options(who(self) .. ": evaluate", opts, EVALUATE)
  require_compiled(self, "evaluate")
  local batches, steps = epoch_iterator.for_evaluate(self, x, y, opts)
  local verbose = opts.verbose == nil and 1 or opts.verbose
  local cbs = callbacks_mod.CallbackList(opts.callbacks, { add_progbar = verbose ~= 0, model = self,
    verbose = verbose, epochs = 1, steps = steps })
  local logs = run_evaluate(self, batches, cbs)
  if opts.return_dict then return logs end
  return compile_mod.ordered_results(self, logs)
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
  local batches = epoch_iterator.for_fit(self, what, x, y, opts)
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
  local validation = batches:validation(self)
  -- Under a strategy of several workers, every worker walks the same global
  -- batches and trains on its rows of each (M.distribution tells the rest).
  local dist = M.distribution and M.distribution.of(self)
  if dist then
    batches:distribute(dist, M.distribution)
    verbose = dist.is_chief and verbose or 0
  end
  local steps = batches:count_steps()
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
  local train_function
  local epoch_logs = {}
  for epoch = initial_epoch, epochs - 1 do
    reset_metrics(self)
    cbs:on_epoch_begin(epoch)
    local logs = {}
    batches:begin_epoch(epoch)
    for step = 0, math.huge do
      local more, xb, yb, wb = batches:next(step, skip > 0)
      if not more then break end
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
      cbs:on_train_batch_end(step, logs)
      if rawget(self, "stop_training") then break end
      ::next_step::
    end
    batches:end_epoch()
    epoch_logs = {}
    for k, v in pairs(logs) do epoch_logs[k] = v end
    local freq = opts.validation_freq or 1
    if validation and (epoch + 1) % freq == 0 then
      local vcbs = callbacks_mod.CallbackList(nil, { model = self, verbose = 0, epochs = 1, steps = 0 })
      local vlogs = run_evaluate(self, validation, vcbs)
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
  local batches, steps = epoch_iterator.for_predict(self, x, opts)
  local verbose = opts.verbose == nil and 0 or opts.verbose
  local cbs = callbacks_mod.CallbackList(opts.callbacks, { add_progbar = verbose ~= 0, model = self,
    verbose = verbose, epochs = 1, steps = steps })
  cbs:on_predict_begin()
  batches:begin_epoch()
  local outs = {}
  for step = 0, math.huge do
    local more, xb = batches:next(step) -- a dataset's element: x, or x first
    if not more then break end
    cbs:on_predict_batch_begin(step)
    prepare(self, xb, false)
    local f = step_function(self, "predict", xb, nil, nil)
    outs[#outs + 1] = call_step(f, xb, nil, nil)
    cbs:on_predict_batch_end(step, { outputs = outs[#outs] })
  end
  batches:end_epoch()
  cbs:on_predict_end()
  if #outs == 0 then binding.error(fmt("%s: predict: x holds no samples", who(self))) end
  return concat_outputs(outs)
end

local function on_batch_logs(self, logs, return_dict)
  if return_dict then return logs end
  return compile_mod.ordered_results(self, logs)
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
  M.Model = Model
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
