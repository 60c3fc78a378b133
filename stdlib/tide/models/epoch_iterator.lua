-- stdlib/tide/models/epoch_iterator.lua — the data fit, evaluate and predict walk (Keras 3's
-- trainers/epoch_iterator): x, y and weights (arrays or a dataset) checked and cut into each epoch's batches.
--
-- Arrays (tensors, Lua tables, structures of them: models/data.lua) are cut
-- into batches of batch_size, the last one partial, shuffled by a new
-- permutation each pass; a dataset (models/dataset_source.lua) yields its
-- own batches through a prefetching pass. With steps_per_epoch an epoch is
-- that many batches and the next epoch goes on where the last stopped (a
-- new pass when the data is used up); without it each epoch is one pass.
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local data = require "tide.models.data"
local dsource = require "tide.models.dataset_source"
local compile_mod = require "tide.models.compile"

local istensor = binding.istensor
local who = compile_mod.who
local fmt = string.format

local M = {}

---------------------------------------------------------------------------
-- Checking the arguments
---------------------------------------------------------------------------

-- A positive integer option (default when nil), or an error naming it.
function M.positive_int(what, name, v, default)
  if v == nil then return default end
  if type(v) ~= "number" or v ~= math.floor(v) or v < 1 then
    binding.error(fmt("%s: %s must be a positive integer, got %s", what, name, tostring(v)))
  end
  return v
end
local positive_int = M.positive_int

-- With a dataset the targets are in its elements, so the options may come
-- second: fit(ds, {epochs = 5}) as Keras's fit(ds, epochs=5).
function M.dataset_options(x, y, opts)
  if opts == nil and dsource.is_dataset(x) and type(y) == "table" and getmetatable(y) == nil then return nil, y end
  return y, opts
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

-- x, y and sample weights as flat groups (models/data.lua), their common
-- sample count checked: xd, yd, sw, n.
function M.prepare_xy(model, what, x, y, sample_weight)
  if x == nil then binding.error(fmt("%s: %s: x is nil; pass the input data", who(model), what)) end
  local xd = data.flatten(x, what .. ": x")
  local yd = y ~= nil and data.flatten(y, what .. ": y") or nil
  local n = data.sample_count { { data = xd, what = "x" }, { data = yd, what = "y" } }
  local sw = as_weights(sample_weight, n, who(model) .. ": " .. what)
  return xd, yd, sw, n
end

---------------------------------------------------------------------------
-- The iterator
---------------------------------------------------------------------------

local EpochIterator = {}
EpochIterator.__index = EpochIterator

-- Over a dataset's Source (it.source), or over flat groups xd, yd, sw of
-- n samples in batches of batch_size. steps: the batches of an epoch (nil:
-- until the data runs out).
local function new(fields)
  local it = setmetatable(fields, EpochIterator)
  if not it.source then it.batches = math.ceil(it.n / it.batch_size) end
  it.cursor = it.batches -- the next batch of the current pass: none yet
  return it
end

-- Arrays in order, one pass per epoch, steps at most (evaluate, predict).
local function of_arrays(xd, yd, sw, n, batch_size, steps)
  local total = math.ceil(n / batch_size)
  if steps then total = math.min(steps, total) end
  return new { xd = xd, yd = yd, sw = sw, n = n, batch_size = batch_size, steps = total }
end

-- A dataset's batches, one pass per epoch, steps at most (evaluate, predict).
local function of_dataset(source, steps)
  return new { source = source, steps = steps }
end

-- Start epoch `epoch` (0-based): without steps_per_epoch a new pass (a
-- dataset restarts; arrays draw their permutation at the first batch).
function EpochIterator:begin_epoch(epoch)
  self.epoch = epoch or 0
  if self.steps_per_epoch then return end
  if self.source then self.source:restart() else self.cursor = self.batches end
end

-- The epoch's batches are done: a PyDataset's on_epoch_end runs (a tide.data pass needs nothing).
function EpochIterator:end_epoch()
  if self.source and self.source.finish then self.source:finish() end
end

-- The batch of step `step` of this epoch: true, xb, yb, wb; or false when
-- the epoch ends (its steps done, or the data ran out: with
-- steps_per_epoch, a warning says so). skipping: the step is walked, not run
-- (a resumed fit): arrays move on without making the batch.
function EpochIterator:next(step, skipping)
  if self.steps and step >= self.steps then return false end
  local dist, hooks = self.dist, self.hooks
  if self.source then -- a dataset's batch; running out ends the epoch
    local xb, yb, wb = self.source:next()
    if dist and not hooks.all_have(dist, self.source, xb ~= nil) then xb = nil end -- all stop alike
    if xb == nil then
      if self.steps_per_epoch then
        io.stderr:write(fmt("Warning: fit: the dataset ran out of data in epoch %d after %d of %d steps " ..
          "(steps_per_epoch=%d); the epoch ends here. Make it longer (repeat_()) or give fewer steps.\n",
          self.epoch + 1, step, self.steps, self.steps))
      end
      return false
    end
    return true, xb, yb, wb
  end
  local batches, batch_size, n = self.batches, self.batch_size, self.n
  if self.cursor >= batches then
    if self.steps_per_epoch and step > 0 then
      io.stderr:write(fmt("Warning: fit: your input ran out of data in epoch %d after %d of %d steps " ..
        "(steps_per_epoch=%d, %d batches of %d samples); the epoch ends here. Give steps_per_epoch <= %d.\n",
        self.epoch + 1, step, self.steps, self.steps, batches, batch_size, batches))
      return false
    end
    self.perm, self.cursor = data.permutation(n, self.shuffle), 0
    if dist and self.perm then self.perm = hooks.same_permutation(dist, self.perm) end
  end
  local perm, sw = self.perm, self.sw
  local a, b = self.cursor * batch_size, math.min(n, (self.cursor + 1) * batch_size)
  self.cursor = self.cursor + 1
  if dist then a, b = hooks.rows(dist, a, b) end
  if skipping then return true end
  local xb, yb = data.batch(self.xd, a, b, perm), data.batch(self.yd, a, b, perm)
  local wb = sw and (perm and shape_ops.gather(sw, perm:slice { { a, b } }) or sw:slice { { a, b } }) or nil
  return true, xb, yb, wb
end

---------------------------------------------------------------------------
-- fit's training data, built in the order fit checks its options
---------------------------------------------------------------------------

-- The training data of fit(x, y, opts): x, y, sample_weight, class_weight,
-- batch_size and shuffle checked; validation, distribution and steps follow.
function M.for_fit(model, what, x, y, opts)
  local source = dsource.is_dataset(x) and dsource.source(x, what, y, opts) or nil
  if source and source.finish then source.shuffle = opts.shuffle ~= false end -- a PyDataset's batch order, as Keras
  local xd, yd, sw, n
  if source then n = 0 else xd, yd, sw, n = M.prepare_xy(model, "fit", x, y, opts.sample_weight) end
  if not source and yd == nil and rawget(model, "_loss_objects") ~= nil then
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
  return setmetatable({ source = source, xd = xd, yd = yd, sw = sw, n = n, batch_size = batch_size, what = what,
                        x = x, y = y, opts = opts, shuffle = opts.shuffle ~= false }, EpochIterator)
end

-- fit's validation data: validation_data ({x_val, y_val[, weights]} or a
-- dataset), else the last validation_split of the training arrays (taken
-- off them, before any shuffling, as Keras). An iterator over it (in
-- batches of validation_batch_size, validation_steps at most), or nil.
function EpochIterator:validation(model)
  local opts, what = self.opts, self.what
  local vx, vy, vw, vn
  if opts.validation_data ~= nil then
    local vd = opts.validation_data
    if dsource.is_dataset(vd) then
      vx = vd
    elseif type(vd) ~= "table" or getmetatable(vd) ~= nil or vd[1] == nil then
      binding.error(fmt("%s: validation_data must be {x_val, y_val} or {x_val, y_val, sample_weight_val}", what))
    end
    if not vx then vx, vy, vw, vn = M.prepare_xy(model, "fit: validation_data", vd[1], vd[2], vd[3]) end
  elseif opts.validation_split ~= nil and opts.validation_split ~= 0 then
    local f = opts.validation_split
    if type(f) ~= "number" or f <= 0 or f >= 1 then
      binding.error(fmt("%s: validation_split must be a number in (0, 1), got %s", what, tostring(f)))
    end
    local n, at = self.n, nil
    self.xd, vx, at = data.split(self.xd, n, f)
    if self.yd then self.yd, vy = data.split(self.yd, n, f) end
    if self.sw then vw = self.sw:slice { { at, n } }; self.sw = self.sw:slice { { 0, at } } end
    vn = n - at
    self.n = at
  end
  if vx == nil then return nil end
  local val_bs = opts.validation_batch_size or self.batch_size
  if dsource.is_dataset(vx) then
    return of_dataset(dsource.source(vx, who(model) .. ": evaluate", nil, nil), opts.validation_steps)
  end
  return of_arrays(vx, vy, vw, vn, val_bs, opts.validation_steps)
end

-- Under a strategy of several workers (dist; hooks: tide.models.training's
-- distribution table, set by tide.distribute), every worker walks the same
-- global batches and trains on its rows of each; a dataset is sharded.
function EpochIterator:distribute(dist, hooks)
  self.dist, self.hooks = dist, hooks
  if self.source then
    if self.source.finish then
      binding.error(fmt("%s: a PyDataset cannot be distributed yet; use a tide.data.Dataset under a strategy", self.what))
    end
    self.source = dsource.source(hooks.dataset(dist, self.x, self.what), self.what, self.y, self.opts)
  end
end

-- The batches of each epoch (nil: until a dataset runs out), from
-- steps_per_epoch, the arrays' size or the dataset's cardinality.
function EpochIterator:count_steps()
  local opts = self.opts
  local batches = math.ceil(self.n / self.batch_size)
  local steps = opts.steps_per_epoch and positive_int("fit", "steps_per_epoch", opts.steps_per_epoch) or batches
  if self.source then steps = self.source:steps(steps ~= batches and steps or nil, "steps_per_epoch") end
  self.steps, self.steps_per_epoch = steps, opts.steps_per_epoch ~= nil
  self.batches, self.cursor = batches, batches -- no pass begun yet
  return steps
end

---------------------------------------------------------------------------
-- evaluate's and predict's data
---------------------------------------------------------------------------

-- The data of evaluate(x, y, opts), in order, one pass: the iterator and
-- its steps (nil: until the dataset runs out).
function M.for_evaluate(model, x, y, opts)
  local what = who(model) .. ": evaluate"
  if dsource.is_dataset(x) then
    local source = dsource.source(x, what, y, opts)
    local steps = source:steps(opts.steps, "steps")
    positive_int("evaluate", "batch_size", opts.batch_size, 32)
    if opts.steps then steps = math.min(positive_int("evaluate", "steps", opts.steps), steps) end
    return of_dataset(source, opts.steps), steps -- read until it runs out (or steps), whatever its cardinality says
  end
  local xd, yd, sw, n = M.prepare_xy(model, "evaluate", x, y, opts.sample_weight)
  local batch_size = positive_int("evaluate", "batch_size", opts.batch_size, 32)
  local steps = math.ceil(n / batch_size)
  if opts.steps then steps = math.min(positive_int("evaluate", "steps", opts.steps), steps) end
  return of_arrays(xd, yd, sw, n, batch_size, steps), steps
end

-- The data of predict(x, opts), in order, one pass: the iterator and its
-- steps (nil: until the dataset runs out). A dataset's elements give x, or x first.
function M.for_predict(model, x, opts)
  if x == nil then binding.error(fmt("%s: predict: x is nil; pass the input data", who(model))) end
  local source = dsource.is_dataset(x) and dsource.source(x, who(model) .. ": predict", nil, opts) or nil
  local xd = not source and data.flatten(x, "predict: x") or nil
  local n = source and 0 or data.sample_count { { data = xd, what = "x" } }
  local batch_size = positive_int("predict", "batch_size", opts.batch_size, 32)
  local steps
  if source then steps = source:steps(opts.steps, "steps") else steps = math.ceil(n / batch_size) end
  if opts.steps then steps = math.min(positive_int("predict", "steps", opts.steps), steps) end
  if source then return of_dataset(source, steps), steps end
  return of_arrays(xd, nil, nil, n, batch_size, steps), steps
end

return M
