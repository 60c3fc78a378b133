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

local function output_names(self, n)
  local names = {}
  local outs = rawget(self, "outputs")
  local stack = rawget(self, "_layers")
  if outs == nil and n == 1 and stack and stack[#stack] and getmetatable(self).add then
    return { stack[#stack].name } -- a Sequential: its last layer
  end
  for i = 1, n do
    local kt = outs and outs[i]
    names[i] = kt and kt.node and kt.node.layer and kt.node.layer.name or ("output_" .. i)
  end
  return names
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
        if n > 1 and (type(id) == "string" or metrics_mod.is_deferred(id)) then m.name = names[i] .. "_" .. m.name end
        if group[2] and type(id) == "string" then m.name = "weighted_" .. m.name end
        entries[#entries + 1] = { metric = m, output = i, weighted = group[2] }
        list[#list + 1] = m
      end
    end
  end
  rawset(self, "_metric_entries", entries)
  rawset(self, "_compiled_metrics", list)
end

function M.metrics(self)
  local out = {}
  local tracker = rawget(self, "_loss_tracker")
  if tracker then out[1] = tracker end
  for _, m in ipairs(rawget(self, "_compiled_metrics") or {}) do out[#out + 1] = m end
  return out
end

-- compute_loss(x, y, y_pred, sample_weight): the compiled losses (weighted
-- per output) plus the model's regularization losses; the loss tracker is
-- updated with it, weighted by the batch size (Keras 3).
local function compute_loss(self, x, y, y_pred, sample_weight)
  local preds = output_list(y_pred)
  local ys = y == nil and {} or (istensor(y) and { y } or data.flatten(y, "y").leaves)
  local n = #preds
  local names = output_names(self, n)
  local loss_objects = rawget(self, "_loss_objects")
  local total
  if loss_objects ~= nil then
    if #ys ~= n then
      binding.error(fmt("%s: the model has %d output(s) but %d target array(s) were given", who(self), n, #ys))
    end
    for i = 1, n do
      local loss = per_output(loss_objects, i, names[i], n)
      if loss ~= nil then
        check_labels(self, loss, ys[i], preds[i], names[i])
        local value
        if type(loss) == "function" then
          local p = preds[i] -- a half output (mixed precision) is scored in float32, as Keras's wrapper does
          if p.dtype == "float16" or p.dtype == "bfloat16" then
            local mask = keras_mask.get(p)
            p = math_ops.cast(p, "float32")
            if mask ~= nil then keras_mask.set(p, mask) end
          end
          value = losses_base.reduce_weighted_values(names[i], loss(ys[i], p), sample_weight,
            keras_mask.get(p), "sum_over_batch_size")
        else
          value = loss(ys[i], preds[i], sample_weight)
        end
        local w = per_output(rawget(self, "_loss_weights"), i, names[i], n)
        if w ~= nil then value = value * w end
        total = total and (total + value) or value
      end
    end
  end
  for _, l in ipairs(self.losses) do
    l = math_ops.cast(l, total and total.dtype or "float32")
    total = total and (total + l) or l
  end
  if total == nil then
    binding.error(fmt("%s: no loss to train on: give compile a loss= (or add losses in call with add_loss)", who(self)))
  end
  local first = x
  while type(first) == "table" and not istensor(first) do
    local _, v = next(first)
    first = v
  end
  local batch = dynamic_shape.shape(first)[0]
  rawget(self, "_loss_tracker"):update_state(total, math_ops.cast(batch, "float32"))
  return total
end

-- compute_metrics(x, y, y_pred, sample_weight): update the compiled metrics,
-- return get_metrics_result().
local function compute_metrics(self, x, y, y_pred, sample_weight)
  local preds = output_list(y_pred)
  local ys = y == nil and {} or (istensor(y) and { y } or data.flatten(y, "y").leaves)
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

local function reset_metrics(self)
  for _, m in ipairs(self.metrics) do m:reset_state() end
end

M.who, M.options, M.set = who, options, set
M.compile, M.require_compiled = compile, require_compiled
M.compute_loss, M.compute_metrics = compute_loss, compute_metrics
M.get_metrics_result, M.reset_metrics = get_metrics_result, reset_metrics
return M
