-- stdlib/tide/distribute/fit.lua — fit, evaluate and compile under a multi-worker strategy:
-- the hooks tide.models.training and tide.models.compile call (sharding, chief-only callbacks, global metrics).
local binding = require "tide.binding"
local context = require "tide.trace_context"
local variable = require "tide.variable"
local training = require "tide.models.training"
local compile = require "tide.models.compile"
local collective = require "tide.distribute.collective"
local strategy = require "tide.distribute.strategy"
local input = require "tide.distribute.input"
local multi_worker = require "tide.distribute.multi_worker"

local C = binding.C
local current, within, is_multi_worker = strategy.current, strategy.within, multi_worker.is_multi_worker
local fmt = string.format

-- A model compiled under a strategy's scope keeps it (TF: model.distribute_strategy).
compile.on_compile = function(model)
  local s = current()
  if s then rawset(model, "_distribute_strategy", s) end
end

-- Callbacks that write files run on the chief only (TF has the others write to temporary folders).
-- BackupAndRestore runs on every worker (each restores) and writes on the chief only.
local CHIEF_ONLY = { ModelCheckpoint = true, TensorBoard = true, CSVLogger = true }

-- The metrics' results over the global batch: inside fit's step under a
-- multi-worker strategy, every metric's state (totals, counts, ...) summed
-- over the workers in one collective, then each result computed from the
-- sums (TF's SUM-aggregated metric variables read across replicas), so every
-- worker logs what one worker on the global batch would. Traced, the reads
-- of the state Variables are pinned to the sums while result() runs; eager,
-- the sums are assigned meanwhile and the local state put back.
compile.global_results = function(metrics)
  local s = current()
  if not (s and is_multi_worker(s) and s._fit_step and s.num_replicas_in_sync > 1) then return nil end
  local vars = {}
  for _, m in ipairs(metrics) do
    for _, v in ipairs(rawget(m, "variables") or {}) do vars[#vars + 1] = v end
  end
  local out = {}
  if #vars == 0 then
    for _, m in ipairs(metrics) do out[m.name] = m:result() end
    return out
  end
  local reads = {}
  for i, v in ipairs(vars) do reads[i] = variable.read_value(v) end
  local sums = s:_sum_list(reads)
  local g = C.tide_graph_building()
  if g ~= nil and context.current() ~= nil then
    for i, v in ipairs(vars) do
      if C.tide_graph_pin_variable(g, variable.handle(v), sums[i]) ~= 0 then binding.raise() end
    end
    local ok, err = pcall(function() for _, m in ipairs(metrics) do out[m.name] = m:result() end end)
    for _, v in ipairs(vars) do C.tide_graph_unpin_variable(g, variable.handle(v)) end
    if not ok then error(err, 0) end
  else
    for i, v in ipairs(vars) do v:assign(sums[i]) end
    local ok, err = pcall(function() for _, m in ipairs(metrics) do out[m.name] = m:result() end end)
    for i, v in ipairs(vars) do v:assign(reads[i]) end
    if not ok then error(err, 0) end
  end
  return out
end

training.distribution = {
  -- The multi-worker strategy fit runs under (the model's, else the current one), or nil.
  of = function(model)
    local s = rawget(model, "_distribute_strategy") or current()
    if s and s._replicas_in_process and s.num_replicas_in_sync > 1 then
      binding.error(fmt("fit: under a %s of %d replicas fit is not supported yet; write the step with " ..
        "strategy:run and experimental_distribute_dataset (one replica runs fit as usual)", s.name, s.num_replicas_in_sync))
    end
    if s and is_multi_worker(s) and s.num_replicas_in_sync > 1 then return s end
    return nil
  end,
  callbacks = function(s, list)
    if s.is_chief or type(list) ~= "table" then return list end
    local kept = {}
    for _, cb in ipairs(list) do
      local cls = getmetatable(cb)
      if not (cls and CHIEF_ONLY[cls.__name]) then kept[#kept + 1] = cb end
    end
    return kept
  end,
  -- Every worker shuffles alike: the chief's permutation.
  same_permutation = function(s, perm) return collective.broadcast(perm, 0) end,
  -- This worker's rows of the global batch [a, b). A batch smaller than
  -- the world is every worker's whole (each weighs in with all its rows,
  -- so the weighted mean is the batch's).
  rows = function(s, a, b)
    local n, r, m = s.num_replicas_in_sync, s.worker_index, b - a
    if m < n then return a, b end
    return a + math.floor(r * m / n), a + math.floor((r + 1) * m / n)
  end,
  -- fit(dataset): each worker its part of every global batch (input.auto_shard).
  dataset = function(s, ds, what)
    local out, policy = input.auto_shard(s, ds, what)
    s._shards_may_differ = policy == "FILE" -- DATA: every worker reads every batch
    return out
  end,
  -- Whether every worker has a batch this step (input.all_have).
  all_have = function(s, source, has)
    if not s._shards_may_differ then return has end
    return input.all_have(s, source.card, has)
  end,
  -- One step on this worker's batch (xb: fit's flat groups) with the
  -- strategy current: its rows weigh its gradients (see aggregate_gradients)
  -- and the logs are the metrics over the global batch (compile.global_results),
  -- the same on every worker, so every worker's callbacks decide alike.
  step = function(s, xb, fn)
    local rows = multi_worker.fit_rows()
    local leaf = xb.leaves[1]
    rows:assign(leaf.ndim > 0 and leaf.shape[1] or 1)
    s._fit_step = true
    local ok, logs = pcall(within, s, "fit", fn)
    s._fit_step = nil
    if not ok then error(logs, 0) end
    return logs
  end,
}

return {}
