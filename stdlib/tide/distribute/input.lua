-- stdlib/tide/distribute/input.lua — input under a strategy: InputContext, and each
-- worker its part of every global batch (auto-sharding fit's dataset by files or by rows).
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local create_ops = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local dynamic_shape = require "tide.ops.dynamic_shape"
local dataset = require "tide.data.dataset"
local collective = require "tide.distribute.collective"
local pack = require("tide.varargs").pack

local fmt = string.format

local M = {}

local InputContext = {}
InputContext.__index = InputContext

-- InputContext{num_input_pipelines=, input_pipeline_id=, num_replicas_in_sync=}
-- (tf.distribute.InputContext): what distribute_datasets_from_function's fn is given.
function M.InputContext(o)
  o = o or {}
  local c = setmetatable({ num_input_pipelines = o.num_input_pipelines or 1,
                           input_pipeline_id = o.input_pipeline_id or 0,
                           num_replicas_in_sync = o.num_replicas_in_sync or 1 }, InputContext)
  for _, k in ipairs { "num_input_pipelines", "input_pipeline_id", "num_replicas_in_sync" } do
    local v = c[k]
    if type(v) ~= "number" or v % 1 ~= 0 or v < 0 or (k ~= "input_pipeline_id" and v < 1) then
      binding.error(fmt("tide.distribute.InputContext: %s must be a %s integer, got %s", k,
        k == "input_pipeline_id" and "non-negative" or "positive", tostring(v)))
    end
  end
  if c.input_pipeline_id >= c.num_input_pipelines then
    binding.error(fmt("tide.distribute.InputContext: input_pipeline_id %d is not below num_input_pipelines %d",
      c.input_pipeline_id, c.num_input_pipelines))
  end
  return c
end

-- The batch each replica takes of a global batch (which must split evenly).
function InputContext:get_per_replica_batch_size(global_batch_size)
  local n = self.num_replicas_in_sync
  if type(global_batch_size) ~= "number" or global_batch_size % 1 ~= 0 or global_batch_size < 1 then
    binding.error("InputContext:get_per_replica_batch_size: the global batch size must be a positive integer, got " ..
      tostring(global_batch_size))
  end
  if global_batch_size % n ~= 0 then
    binding.error(fmt("InputContext:get_per_replica_batch_size: the global batch size %d does not split evenly " ..
      "over %d replicas", global_batch_size, n))
  end
  return global_batch_size / n
end

-- A copy of dataset node ds over `input` (its caches left behind).
local function clone_node(ds, input)
  local c = {}
  for k, v in pairs(ds) do
    if type(k) ~= "string" or k:sub(1, 1) ~= "_" then c[k] = v end
  end
  c.input = input
  return setmetatable(c, getmetatable(ds))
end

-- A map function giving worker r of n its rows of every leaf of a batch of
-- m rows: [floor(r m / n), floor((r + 1) m / n)), as fit's rows() splits
-- tensors (TF's rebatch: a last, short batch splits as evenly as it can);
-- a batch of fewer rows than workers is every worker's whole. Traced, so
-- it runs on the pipeline's threads.
local function rows_of_batch(n, r)
  local function rows(t)
    local m = math_ops.cast(dynamic_shape.shape(t)[0], "int64")
    local ones = create_ops.ones(math_ops.cast(dynamic_shape.shape(t):slice { { 0, 1 } }, "int64"), "int64")
    local i1 = reduce_ops.cumsum(ones, 0) -- 1..m
    local keep = math_ops.logical_and((i1 * n):gt(m * r), (i1 * n):le(m * (r + 1)))
    return index_ops.boolean_mask(t, math_ops.logical_or(keep, m:lt(n)))
  end
  local function walk(v)
    if binding.istensor(v) then return rows(v) end
    if type(v) ~= "table" then return v end
    local o = {}
    for k, x in pairs(v) do o[k] = walk(x) end
    return o
  end
  return function(...)
    local a = pack(...)
    for i = 1, a.n do a[i] = walk(a[i]) end
    return unpack(a, 1, a.n)
  end
end

-- fit(dataset) under the strategy (TF's auto-shard policy AUTO): ds yields
-- global batches. FILE: when it reads files (TFRecordDataset,
-- TextLineDataset, CsvDataset: a source that knows its files), ends with batch(B)
-- (prefetch after it allowed) and there are at least as many files as
-- workers, worker k reads files k, k + N, ... and batches B/N of them; else
-- DATA: every worker reads everything and takes its rows of every global
-- batch (rows_of_batch), so every worker makes as many steps, whatever the
-- size. Returns this worker's dataset and the policy.
function M.auto_shard(s, ds, what)
  what = what or (s.name .. ": fit")
  local n = s.num_replicas_in_sync
  if n == 1 then return ds, "OFF" end
  local prefetch = {}
  while ds.kind == "prefetch" do
    prefetch[#prefetch + 1] = ds.n
    ds = ds.input
  end
  local chain, root = {}, ds
  while root.input ~= nil and root.inputs == nil do
    chain[#chain + 1] = root
    root = root.input
  end
  local out, policy
  local files = root.kind == "c_source" and root.files
  if files and #files >= n and ds.kind == "batch" then
    if ds.n % n ~= 0 then
      binding.error(fmt("%s: the global batch size %d does not split evenly over %d workers", what, ds.n, n))
    end
    local mine = {}
    for i = s.worker_index + 1, #files, n do mine[#mine + 1] = files[i] end
    out = root.with_files(mine)
    for i = #chain, 1, -1 do
      local node = clone_node(chain[i], out)
      if i == 1 then node.n = ds.n / n end -- the last batch: this worker's part of the global batch
      out = node
    end
    policy = "FILE"
  else
    out = ds:map(rows_of_batch(n, s.worker_index))
    policy = "DATA"
  end
  for i = #prefetch, 1, -1 do out = out:prefetch(prefetch[i]) end
  return out, policy
end

-- Whether every worker got a batch this step (has: this one did), for a
-- dataset of unknown size whose shards may end at different steps: a
-- worker that stops early would leave the others waiting in an all-reduce.
-- Known sizes split evenly (checked when sharding): no collective then.
function M.all_have(s, card, has)
  if card >= 0 or card == dataset.INFINITE_CARDINALITY then return has end
  local t = collective.all_reduce_sum(convert.tensor({ has and 1 or 0 }, "float64", "fit"))
  return t:totable()[1] == s.num_replicas_in_sync
end

return M
