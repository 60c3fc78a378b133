-- stdlib/tide/models/compile.lua — a model's compile (Keras 3's
-- CompileLoss and CompileMetrics): the optimizer, losses and metrics resolved
-- from names, the loss of a batch (weighted per output, masks and
-- regularization losses included) and the compiled metrics' updates.
local binding = require "tide.binding"
local class = require "tide.class"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local dynamic_shape = require "tide.ops.dynamic_shape"
local losses = require "tide.losses"
local losses_base = require "tide.losses.base"
local metrics_mod = require "tide.metrics"
local optimizers = require "tide.optimizers"
local keras_mask = require "tide.keras_mask"
local layer_mod = require "tide.layers.layer"
local data = require "tide.models.data"
local nest = require "tide.nest"
local common = require "tide.losses.common"

local None = tensor_shape.None
local istensor = binding.istensor
local fmt = string.format

local M = {}

local function who(self) return layer_mod.who(self) end

-- Options tables: keys checked against the known ones.
local function options(what, opts, known)
  if opts == nil then return {} end
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    binding.error(fmt("%s: expects an options table, got %s", what, type(opts)))
  end
  for k in pairs(opts) do
    if not known[k] then
      local names = {}
      for n in pairs(known) do names[#names + 1] = n end
      table.sort(names)
      binding.error(fmt("%s: unknown option '%s' (known: %s)", what, tostring(k), table.concat(names, ", ")))
    end
  end
  return opts
end

local function set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

---------------------------------------------------------------------------
-- compile
---------------------------------------------------------------------------

local COMPILE = set { "optimizer", "loss", "metrics", "loss_weights", "run_eagerly", "weighted_metrics",
  "steps_per_execution", "jit_compile", "auto_scale_loss" }

-- A loss identifier as compile keeps it: a Loss, or a function (reduced by
-- sum_over_batch_size as Keras's LossFunctionWrapper).
local function get_loss(self, identifier)
  if identifier == nil then return nil end
  local ok, loss = pcall(losses.get, identifier)
  if not ok then
    binding.error(fmt("%s: compile: %s", who(self), (tostring(loss):gsub("^.-tide%.losses%.get: ", ""))))
  end
  return loss
end

-- compile{optimizer="rmsprop", loss=, metrics=, loss_weights=, run_eagerly=false}.
local function compile(self, opts)
  opts = options(who(self) .. ": compile", opts, COMPILE)
  -- tide.distribute (when loaded) remembers the strategy a model was compiled under, for fit.
  if M.on_compile then M.on_compile(self) end
  local ok, opt = pcall(optimizers.get, opts.optimizer == nil and "rmsprop" or opts.optimizer)
  if not ok then binding.error(fmt("%s: compile: %s", who(self), (tostring(opt):gsub("^.-tide%.optimizers%.get: ", "")))) end
  local loss_id = opts.loss
  local loss_list
  if type(loss_id) == "table" and getmetatable(loss_id) == nil then
    loss_list = {}
    for k, v in pairs(loss_id) do loss_list[k] = get_loss(self, v) end
  else
    loss_list = get_loss(self, loss_id)
  end
  if opts.run_eagerly ~= nil and type(opts.run_eagerly) ~= "boolean" then
    binding.error(fmt("%s: compile: run_eagerly must be true or false, got %s", who(self), tostring(opts.run_eagerly)))
  end
  local metric_ids = opts.metrics or {}
  if type(metric_ids) ~= "table" or getmetatable(metric_ids) ~= nil then metric_ids = { metric_ids } end
  local weighted_ids = opts.weighted_metrics or {}
  if type(weighted_ids) ~= "table" or getmetatable(weighted_ids) ~= nil then weighted_ids = { weighted_ids } end
  local lw = opts.loss_weights
  if lw ~= nil and type(lw) ~= "table" and type(lw) ~= "number" then
    binding.error(fmt("%s: compile: loss_weights must be a list or a table by output name, got %s", who(self), type(lw)))
  end
  -- Keras: a mixed_float16 model trains through a LossScaleOptimizer (float16
  -- gradients underflow otherwise), unless auto_scale_loss = false
  if opts.auto_scale_loss ~= false and rawget(self, "_dtype_policy").name == "mixed_float16"
      and not class.is_instance(opt, optimizers.LossScaleOptimizer) then
    opt = optimizers.LossScaleOptimizer(opt, { name = "loss_scale_optimizer" })
  end
  rawset(self, "optimizer", opt)
  rawset(self, "loss", loss_id)
  rawset(self, "_loss_objects", loss_list)
  rawset(self, "_loss_weights", lw)
  rawset(self, "_metric_ids", metric_ids)
  rawset(self, "_weighted_metric_ids", weighted_ids)
  rawset(self, "_compiled_metrics", nil) -- made at the first batch, when shapes are known
  rawset(self, "_metric_entries", nil)
  rawset(self, "_output_loss_trackers", nil)
  rawset(self, "_loss_tracker", metrics_mod.Mean { name = "loss" })
  rawset(self, "run_eagerly", opts.run_eagerly == true)
  rawset(self, "compiled", true)
  rawset(self, "_functions", {})
  rawset(self, "stop_training", false)
end

local function require_compiled(self, what)
  if not rawget(self, "compiled") then
    binding.error(fmt("%s: you must call compile{optimizer=, loss=} before %s", who(self), what))
  end
end

-- The model's outputs as a list, and their names (output layers' names).
local function output_list(y_pred)
  if istensor(y_pred) then return { y_pred } end
  return data.flatten(y_pred, "outputs").leaves
end

-- The outputs' names in the order of output_list (Keras 3's): an output kept
-- under a key of a table of outputs is named by its path ("a/b"), one in a
-- list by the layer that made it; a Sequential's by its last layer.
local function output_names(self, n)
  local names = {}
  local struct = rawget(self, "_outputs_struct")
  local stack = rawget(self, "_layers")
  if struct == nil and n == 1 and stack and stack[#stack] and getmetatable(self).add then
    return { stack[#stack].name } -- a Sequential: its last layer
  end
  local entries = struct ~= nil and nest.flatten_with_path(struct) or {}
  for i = 1, n do
    local e = entries[i]
    local kt = e and e[2]
    local path = e and e[1] or {}
    if type(path[#path]) == "number" or #path == 0 then
      path = { unpack(path, 1, #path - 1) }
      path[#path + 1] = kt and kt.node and kt.node.layer and kt.node.layer.name or ("output_" .. i)
    end
    local parts = {}
    for k, p in ipairs(path) do parts[k] = tostring(p) end
    names[i] = table.concat(parts, "/")
  end
  return names
end

-- The targets as a list aligned with output_list: y flattened as the
-- outputs are, or, where the outputs are a list and y a table keyed by
-- their names, picked by name (Keras 3's CompileLoss does the same).
local function target_list(self, y, names)
  if y == nil then return {} end
  if istensor(y) then return { y } end
  if type(y) == "table" and getmetatable(y) == nil and y[1] == nil and #names > 1 then
    local struct = rawget(self, "_outputs_struct")
    if struct ~= nil and nest.is_list(struct) then
      local out = {}
      for i, name in ipairs(names) do
        if y[name] == nil then
          binding.error(fmt("%s: the targets are a table by output name, but it has none for output '%s' " ..
            "(outputs: %s)", who(self), name, table.concat(names, ", ")))
        end
        out[i] = y[name]
      end
      return data.flatten(out, "y").leaves
    end
  end
  return data.flatten(y, "y").leaves
end

-- The entry of a per-output option (a single value, a list, or a table by output name).
local function per_output(value, i, name, n)
  if type(value) ~= "table" or getmetatable(value) ~= nil then return value end
  if value[name] ~= nil then return value[name] end
  if n == 1 and value[1] == nil and next(value) ~= nil then return nil end
  return value[i]
end

local function loss_name(loss)
  if type(loss) == "table" then return loss.name or "loss" end
  return "loss"
end

local function shape_text(dims)
  return layer_mod.shape_text(dims)
end

-- Clear errors for labels that cannot fit the loss and the output.
local function check_labels(self, loss, y_true, y_pred, name)
  local ts, ps = y_true.shape, y_pred.shape
  if ts.rank == nil or ps.rank == nil then return end
  local t, p = ts:as_list(), ps:as_list()
  local sparse = false
  for _, cls in ipairs { losses.SparseCategoricalCrossentropy } do
    if getmetatable(loss) == cls then sparse = true end
  end
  if loss == losses.sparse_categorical_crossentropy then sparse = true end
  local function fail(why)
    binding.error(fmt("%s: the labels for output '%s' have shape %s, which does not fit the output's shape %s: %s",
      who(self), name, shape_text(t), shape_text(p), why))
  end
  if sparse then
    local ok = (#t == #p - 1) or (#t == #p and t[#t] == 1)
    if not ok then
      fail("sparse categorical crossentropy takes class indices of shape " .. shape_text({ unpack(p, 1, #p - 1) }) .. "; for one-hot labels use categorical_crossentropy")
    end
  elseif #t == #p then
    for i = 2, #t do
      if t[i] ~= None and p[i] ~= None and t[i] ~= p[i] and t[i] ~= 1 and p[i] ~= 1 then
        fail(fmt("dim %d differs (%s against %s)", i - 1, tostring(t[i]), tostring(p[i])))
      end
    end
  elseif #t ~= #p - 1 or p[#p] ~= 1 then
    if not (#t == #p + 1 and t[#t] == 1) then
      fail("the ranks differ; give labels of the output's shape (one-hot labels for categorical losses, or " ..
        "sparse_categorical_crossentropy for class indices)")
    end
  end
end

-- The metric identifiers for output i (of n, named name) in `ids`: a
-- list for every output, a table by output name, or a list of lists.
local function ids_for_output(ids, i, name, n)
  if n > 1 then
    if ids[name] ~= nil then ids = ids[name]
    elseif type(ids[1]) == "table" and getmetatable(ids[1]) == nil then ids = ids[i] end
  end
  if ids == nil then return {} end
  if type(ids) ~= "table" or getmetatable(ids) ~= nil then return { ids } end
  return ids
end

-- The compiled metrics, made once the outputs' and targets' shapes are
-- known: entries { metric, output = k, weighted = bool } (metrics= ignore
-- sample weights, weighted_metrics= use them, as Keras 3).
local function build_metrics(self, ys, preds)
  if rawget(self, "_compiled_metrics") then return end
  local entries, list = {}, {}
  local n = #preds
  local names = output_names(self, n)
  for _, group in ipairs { { rawget(self, "_metric_ids"), false }, { rawget(self, "_weighted_metric_ids"), true } } do
    for i = 1, n do
      local loss = per_output(rawget(self, "_loss_objects"), i, names[i], n)
      for _, id in ipairs(ids_for_output(group[1], i, names[i], n)) do
        local ok, m = pcall(metrics_mod.resolve, id, loss, preds[i].shape, ys[i] and ys[i].shape)
        if not ok then binding.error(fmt("%s: compile: %s", who(self), tostring(m))) end
        if group[2] and type(id) == "string" then m.name = "weighted_" .. m.name end
        local base = m.name -- the name Keras's CompileMetrics lists, before the output's prefix
        if n > 1 and (type(id) == "string" or metrics_mod.is_deferred(id)) then m.name = names[i] .. "_" .. m.name end
        entries[#entries + 1] = { metric = m, output = i, weighted = group[2], base = base }
        list[#list + 1] = m
      end
    end
  end
  rawset(self, "_metric_entries", entries)
  rawset(self, "_compiled_metrics", list)
end

-- The metrics a layer holds in its fields (and plain tables in them), in
-- the order the fields were first assigned (Keras 3's layer._metrics:
-- self.total_loss_tracker = tide.metrics.Mean{...}), then those of the
-- layers below it, depth first; a model below is skipped (it trains apart,
-- as Keras skips Trainers). A walk of its own, lighter than tracking's (no
-- Variables to order): fit's progress bar and train_on_batch read model.metrics.
local is_metric, is_layer = metrics_mod.is_metric, layer_mod.is_layer

local function scan(value, out, subs, seen)
  if type(value) ~= "table" or seen[value] then return end -- numbers, functions, Variables, tensors
  seen[value] = true
  if getmetatable(value) ~= nil then -- an object: a metric, a layer, or another
    if is_metric(value) then out[#out + 1] = value
    elseif is_layer(value) and type(value.fit) ~= "function" then subs[#subs + 1] = value end
    return
  end
  local n = #value -- a plain table: its list in order, then its other keys in tide.nest's order
  for i = 1, n do scan(value[i], out, subs, seen) end
  local others
  for k in pairs(value) do
    if not (type(k) == "number" and k >= 1 and k <= n and k == math.floor(k)) then
      others = others or {}
      others[#others + 1] = k
    end
  end
  if others then
    if #others > 1 then table.sort(others, nest.key_less) end
    for _, k in ipairs(others) do scan(value[k], out, subs, seen) end
  end
end

local function field_metrics(layer, out, seen)
  local t = rawget(layer, "_tracking")
  if t == nil then return end
  local subs = {}
  for _, k in ipairs(t.keys) do scan(rawget(layer, k), out, subs, seen) end
  for _, l in ipairs(subs) do field_metrics(l, out, seen) end
end

-- model.metrics in Keras 3's order: the loss tracker, the compiled metrics,
-- each output's loss tracker, then the metrics held in the model's fields
-- and in its layers'.
function M.metrics(self)
  local out, seen = {}, { [self] = true }
  local function add(m)
    if not seen[m] then seen[m] = true; out[#out + 1] = m end
  end
  local tracker = rawget(self, "_loss_tracker")
  if tracker then add(tracker) end
  for _, m in ipairs(rawget(self, "_compiled_metrics") or {}) do add(m) end
  for _, e in ipairs(rawget(self, "_output_loss_trackers") or {}) do add(e.metric) end
  field_metrics(self, out, seen)
  return out
end

-- The Mean that tracks output i's loss (`<name>_loss`, Keras 3's CompileLoss
-- metrics), made at the first batch when more than one output has a loss.
local function output_loss_tracker(self, i, name)
  local trackers = rawget(self, "_output_loss_trackers")
  if trackers == nil then
    trackers = {}
    rawset(self, "_output_loss_trackers", trackers)
  end
  for _, e in ipairs(trackers) do
    if e.output == i then return e.metric end
  end
  local m = metrics_mod.Mean { name = name .. "_loss" }
  trackers[#trackers + 1] = { output = i, metric = m }
  return m
end

-- compute_loss(x, y, y_pred, sample_weight): the compiled losses (weighted
-- per output) plus the model's regularization losses; the loss tracker is
-- updated with it, weighted by the batch size (Keras 3). With several
-- outputs that have a loss, each output's unweighted loss is tracked too.
local function compute_loss(self, x, y, y_pred, sample_weight)
  local preds = output_list(y_pred)
  local n = #preds
  local names = output_names(self, n)
  local ys = target_list(self, y, names)
  local loss_objects = rawget(self, "_loss_objects")
  -- the batch size (Keras: x's first tensor's) weighs this batch's loss in the trackers' means
  local first = nest.flatten(x)[1] or preds[1]
  local batch_weight = math_ops.cast(dynamic_shape.shape(first)[0], "float32")
  local total
  if loss_objects ~= nil then
    if #ys ~= n then
      binding.error(fmt("%s: the model has %d output(s) but %d target array(s) were given", who(self), n, #ys))
    end
    local values = {}
    for i = 1, n do
      local loss = per_output(loss_objects, i, names[i], n)
      if loss ~= nil then
        local value
        if type(loss) == "function" then
          -- Keras's LossFunctionWrapper: the labels' and predictions' ranks
          -- aligned first (labels (N,) for predictions (N, 1)); a half output
          -- (mixed precision) is scored in float32, as Keras's wrapper does
          local p = preds[i]
          local mask = keras_mask.get(p)
          if p.dtype == "float16" or p.dtype == "bfloat16" then p = math_ops.cast(p, "float32") end
          local yt
          yt, p = common.squeeze_or_expand(ys[i], p)
          if mask ~= nil and p ~= preds[i] then keras_mask.set(p, mask) end
          check_labels(self, loss, yt, p, names[i])
          value = losses_base.reduce_weighted_values(names[i], loss(yt, p), sample_weight,
            keras_mask.get(p), "sum_over_batch_size")
        else
          check_labels(self, loss, ys[i], preds[i], names[i])
          value = loss(ys[i], preds[i], sample_weight)
        end
        values[#values + 1] = { i, value }
        local w = per_output(rawget(self, "_loss_weights"), i, names[i], n)
        if w ~= nil then value = value * w end
        total = total and (total + value) or value
      end
    end
    if #values > 1 then
      -- each batch counts once (TF 2.21's Keras weighs these by the output's
      -- static batch dim, which is None in its traced step: a plain mean of
      -- the batches' values, unlike "loss", which is weighted by batch size)
      for _, e in ipairs(values) do output_loss_tracker(self, e[1], names[e[1]]):update_state(e[2]) end
    end
  end
  for _, l in ipairs(self.losses) do
    l = math_ops.cast(l, total and total.dtype or "float32")
    total = total and (total + l) or l
  end
  if total == nil then
    binding.error(fmt("%s: no loss to train on: give compile a loss= (or add losses in call with add_loss)", who(self)))
  end
  rawget(self, "_loss_tracker"):update_state(total, batch_weight)
  return total
end

-- compute_metrics(x, y, y_pred, sample_weight): update the compiled metrics,
-- return get_metrics_result().
local function compute_metrics(self, x, y, y_pred, sample_weight)
  local preds = output_list(y_pred)
  local ys = target_list(self, y, output_names(self, #preds))
  build_metrics(self, ys, preds)
  for _, e in ipairs(rawget(self, "_metric_entries")) do
    e.metric:update_state(ys[e.output], preds[e.output], e.weighted and sample_weight or nil)
  end
  return self:get_metrics_result()
end

local function get_metrics_result(self)
  -- tide.distribute (a higher floor) sums the states over the workers first in fit's step
  local global = M.global_results and M.global_results(self.metrics)
  if global then return global end
  local out = {}
  for _, m in ipairs(self.metrics) do out[m.name] = m:result() end
  return out
end

-- The logs (by name) as the list evaluate and the *_on_batch methods
-- return (Keras 3's _flatten_metrics_in_order): the values of the metrics'
-- names in model.metrics' order (the compiled metrics under the names their
-- container lists, before an output's prefix), then the other logs by name;
-- a single value alone.
local function ordered_results(self, logs)
  local base = {}
  for _, e in ipairs(rawget(self, "_metric_entries") or {}) do base[e.metric] = e.base end
  local names, listed = {}, {}
  for _, m in ipairs(self.metrics) do
    local name = base[m] or m.name
    names[#names + 1] = name
    listed[name] = true
  end
  local out = {}
  for _, name in ipairs(names) do
    if logs[name] ~= nil then out[#out + 1] = logs[name] end
  end
  local rest = {}
  for k in pairs(logs) do
    if not listed[k] then rest[#rest + 1] = k end
  end
  table.sort(rest)
  for _, k in ipairs(rest) do out[#out + 1] = logs[k] end
  if #out == 1 then return out[1] end
  return out
end

local function reset_metrics(self)
  for _, m in ipairs(self.metrics) do m:reset_state() end
end

M.who, M.options, M.set = who, options, set
M.compile, M.require_compiled = compile, require_compiled
M.compute_loss, M.compute_metrics = compute_loss, compute_metrics
M.get_metrics_result, M.reset_metrics = get_metrics_result, reset_metrics
M.ordered_results = ordered_results
return M
