-- stdlib/tide/distribute/init.lua — tide.distribute (tf.distribute): the
-- default strategy, OneDeviceStrategy, and MultiWorkerMirroredStrategy over
-- MPI (one process per worker, started by `mpirun -np N tide train.lua`).
local binding = require "tide.binding"
local convert = require "tide.convert"
local context = require "tide.trace_context"
local scope = require "tide.scope"
local device = require "tide.device"
local variable = require "tide.variable"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local optimizer = require "tide.optimizers.optimizer"
local dataset = require "tide.data.dataset"
local training = require "tide.models.training"
local compile = require "tide.models.compile"
local collective = require "tide.distribute.collective"
local create_ops = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local dynamic_shape = require "tide.ops.dynamic_shape"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local is_variable = variable.is_variable
local fmt = string.format

local M = {}

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- A new contiguous CPU tensor holding x's values, ours to overwrite.
local function fresh_copy(x)
  for i = 0, x.ndim - 1 do dims_buf[i] = x.dims[i] end
  local h = Tensor()
  if C.tide_tensor_init_heap(h, x.dt, x.ndim, dims_buf) ~= 0 then binding.raise() end
  binding.track(h)
  if C.tide_tensor_copy_into(h, x) ~= 0 then binding.raise() end
  return h
end

local function join()
  if C.tide_dist_init() ~= 0 then binding.raise() end
end

-- The value of a tensor, variable or Lua number/table as a concrete CPU tensor.
local function concrete(what, x)
  if is_variable(x) then x = variable.read(x) end
  if not binding.istensor(x) then
    local ok, t = pcall(convert.tensor, x, nil, what)
    if not ok or t == nil then
      binding.error(fmt("%s: expected a tensor, a Variable or a number, got %s", what, type(x)))
    end
    x = t
  end
  if context.current() ~= nil or x.flags % 4 >= 2 then
    binding.error(fmt("%s: collectives run eagerly only; call it outside tide.trace (this value belongs to a " ..
      "graph being traced)", what))
  end
  if x.dev ~= C.TIDE_CPU then x = device.cpu(x) end
  return x
end

---------------------------------------------------------------------------
-- Collectives (every worker must make the same calls in the same order)
---------------------------------------------------------------------------

-- This worker's index (0 = the chief) and the number of workers.
function M.worker_index() join(); return C.tide_dist_rank() end
function M.num_workers() join(); return C.tide_dist_size() end

-- The sum of x over every worker, as a new tensor of x's dtype; given a
-- list of values, the list of their sums, made by one collective (packed
-- per dtype, in buckets of bytes_per_pack: 25 MiB unless given). Floats
-- are summed in their own precision (float16/bfloat16 in float32),
-- integers and booleans in float64 (exact below 2^53). Eager or inside
-- tide.trace: the registry op all_reduce_sum, which a graph keeps in program
-- order; its gradient is the sum of the upstream gradients.
function M.all_reduce_sum(x, opts)
  local what = "tide.distribute.all_reduce_sum"
  join()
  if opts ~= nil and type(opts) ~= "table" then binding.error(what .. ": options must be a table {bytes_per_pack=}") end
  local bytes = opts and opts.bytes_per_pack
  if bytes ~= nil and (type(bytes) ~= "number" or bytes < 0 or bytes % 1 ~= 0) then
    binding.error(fmt("%s: bytes_per_pack must be a whole number of bytes >= 0, got %s", what, tostring(bytes)))
  end
  if x == nil then binding.error(what .. ": expected a tensor, a Variable, a number or a list of them, got nil") end
  if type(x) == "table" and not binding.istensor(x) then return collective.sum_list(x, bytes, what) end
  return collective.sum_list({ x }, bytes, what)[1]
end

-- The raw registry op all_reduce_sum on a list of float32/float64 tensors
-- (no casting): the list of their sums over the workers.
M.all_reduce_op = collective.op

-- Collectives this process has made (MPI calls: all-reduce buckets,
-- broadcasts, barriers), for benchmarks.
function M.collective_calls() return tonumber(C.tide_dist_collective_calls()) end

-- x as on worker `root` (default 0, the chief), as a new tensor.
function M.broadcast(x, root)
  join()
  x = concrete("tide.distribute.broadcast", x)
  root = root or 0
  if type(root) ~= "number" or root % 1 ~= 0 then
    binding.error("tide.distribute.broadcast: root must be a worker index (an integer), got " .. tostring(root))
  end
  local h = fresh_copy(x)
  if C.tide_dist_broadcast(h, root) ~= 0 then binding.raise() end
  return h
end

-- Wait until every worker gets here.
function M.barrier()
  join()
  if C.tide_dist_barrier() ~= 0 then binding.raise() end
end

---------------------------------------------------------------------------
-- Strategies
---------------------------------------------------------------------------

local current = nil -- the strategy whose scope or run is running, else nil (the default)

local Strategy = {}
Strategy.__index = Strategy

local function check_fn(self, what, fn)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    binding.error(fmt("%s:%s: expected a function, got %s", self.name, what, type(fn)))
  end
end

local function restore(s) current = s end

-- Run fn(...) with this strategy current (undone however fn ends).
local function within(self, what, fn, ...)
  local mark = scope.enter()
  scope.push(restore, current)
  current = self
  return scope.call(self.name .. ":" .. what, mark, fn, ...)
end

-- scope(fn, ...): run fn with this strategy current (TF's `with
-- strategy.scope():`); variables created meanwhile (layers, optimizer
-- slots) are mirrored. Returns what fn returns.
function Strategy:scope(fn, ...)
  check_fn(self, "scope", fn)
  return within(self, "scope", fn, ...)
end

-- run(fn, args): fn(unpack(args)) on this worker's replica; returns its results.
function Strategy:run(fn, args)
  check_fn(self, "run", fn)
  if args ~= nil and type(args) ~= "table" then
    binding.error(fmt("%s:run: args must be a list (table) of arguments, got %s", self.name, type(args)))
  end
  args = args or {}
  return within(self, "run", fn, unpack(args, 1, args.n or #args))
end

local REDUCE_OPS = { SUM = true, MEAN = true }

-- reduce("SUM" | "MEAN", value, axis): the per-replica values combined over
-- every replica, as one tensor. With axis (a dim of value), value is also
-- reduced along it, and MEAN divides by the elements counted on every replica.
function Strategy:reduce(op, value, axis)
  local what = self.name .. ":reduce"
  if type(op) == "string" then op = op:upper() end
  if not REDUCE_OPS[op] then
    binding.error(fmt('%s: the reduce op must be "SUM" or "MEAN", got %s', what, tostring(op)))
  end
  if value == nil then binding.error(what .. ": a value to reduce is required") end
  local x = concrete(what, value)
  local count = 1
  if axis ~= nil then
    if type(axis) ~= "number" or axis % 1 ~= 0 or axis < -x.ndim or axis >= x.ndim then
      binding.error(fmt("%s: axis must be a dim of the value (%d-d), got %s", what, x.ndim, tostring(axis)))
    end
    count = x.dims[axis < 0 and axis + x.ndim or axis]
    x = reduce_ops.reduce_sum(x, axis)
  end
  local n = self.num_replicas_in_sync
  local total = self:_sum(x)
  if op == "SUM" then return total end
  if axis ~= nil then
    local counted = self:_sum(convert.tensor(tonumber(count), "float64", what))
    return total / math_ops.cast(counted, total.dtype)
  end
  return total / n
end

-- The sum of x over the replicas (one replica: x itself); of each of a list.
function Strategy:_sum(x) return x end
function Strategy:_sum_list(list) return list end

-- Sum (or with "MEAN", average) each gradient of the list over the replicas;
-- nil entries stay nil. Returns a new list.
function Strategy:all_reduce_gradients(grads, op)
  if type(grads) ~= "table" then
    binding.error(fmt("%s:all_reduce_gradients: expected a list of gradients, got %s", self.name, type(grads)))
  end
  op = op and op:upper() or "SUM"
  if not REDUCE_OPS[op] then
    binding.error(fmt('%s:all_reduce_gradients: the op must be "SUM" or "MEAN", got %s', self.name, tostring(op)))
  end
  local out, n = {}, self.num_replicas_in_sync
  local list, at = {}, {}
  for i = 1, table.maxn(grads) do
    if grads[i] ~= nil then list[#list + 1], at[#at + 1] = grads[i], i end
  end
  local sums = self:_sum_list(list)
  for j, i in ipairs(at) do out[i] = op == "MEAN" and sums[j] / n or sums[j] end
  return out
end

function Strategy:__tostring()
  return fmt("%s(num_replicas_in_sync=%d)", self.name, self.num_replicas_in_sync)
end

---------------------------------------------------------------------------
-- Input: each worker its part of every global batch
---------------------------------------------------------------------------

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

function Strategy:_input_context()
  return M.InputContext { num_input_pipelines = self.num_replicas_in_sync, input_pipeline_id = self.worker_index or 0,
                          num_replicas_in_sync = self.num_replicas_in_sync }
end

-- distribute_datasets_from_function(fn): fn(input_context) makes this
-- worker's dataset (sharding and batching it by the context itself).
function Strategy:distribute_datasets_from_function(fn)
  check_fn(self, "distribute_datasets_from_function", fn)
  local ds = fn(self:_input_context())
  if not dataset.is_dataset(ds) then
    binding.error(fmt("%s:distribute_datasets_from_function: the function must return a tide.data.Dataset, got %s",
      self.name, type(ds)))
  end
  return ds
end

-- experimental_distribute_dataset(ds): ds yields global batches (ds:batch(B)
-- last); each worker gets its B/N rows of every one (TF's DATA auto-shard:
-- rebatch to B/N, then every N-th piece). Every worker must get the same
-- number of batches, or the all-reduce of the last one would wait forever:
-- the element count must make whole rounds (or the batch drop its
-- remainder), or the dataset repeat forever.
function Strategy:experimental_distribute_dataset(ds)
  local what = self.name .. ":experimental_distribute_dataset"
  if not dataset.is_dataset(ds) then binding.error(fmt("%s: expected a tide.data.Dataset, got %s", what, type(ds))) end
  local n = self.num_replicas_in_sync
  if n == 1 then return ds end
  if ds.kind ~= "batch" then
    binding.error(fmt("%s: the dataset must end with batch(global_batch_size) (it ends with %s); apply prefetch " ..
      "and the like to the distributed dataset, or shard by hand with distribute_datasets_from_function", what,
      tostring(ds.kind)))
  end
  local B, drop, input = ds.n, ds.drop, ds.input
  if B % n ~= 0 then
    binding.error(fmt("%s: the global batch size %d does not split evenly over %d workers", what, B, n))
  end
  local b = B / n
  local c = input:cardinality()
  local pieces = input:batch(b, { drop_remainder = drop })
  if c >= 0 then
    local count = drop and math.floor(c / B) * n or math.ceil(c / b)
    if count % n ~= 0 then
      binding.error(fmt("%s: %d elements in global batches of %d leave the workers different numbers of batches " ..
        "(a hang at the last all-reduce); batch with drop_remainder=true or use a multiple of %d elements", what, c, B, b * n))
    end
    pieces = pieces:take(count)
  elseif c ~= dataset.INFINITE_CARDINALITY then -- infinite: every worker gets as many as it asks for
    binding.error(fmt("%s: the dataset's size is unknown, so the workers could get different numbers of batches " ..
      "(a hang at the last all-reduce); repeat it (and stop after a number of steps), or shard by hand with " ..
      "distribute_datasets_from_function", what))
  end
  return pieces:shard(n, self.worker_index)
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
    local a = { n = select("#", ...), ... }
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
  local t = M.all_reduce_sum(convert.tensor({ has and 1 or 0 }, "float64", "fit"))
  return t:totable()[1] == s.num_replicas_in_sync
end

local function new_strategy(name, fields)
  local s = setmetatable(fields, Strategy)
  s.name = name
  s.extended = s
  return s
end

-- The strategy when none is set: one replica, this process.
local default = new_strategy("DefaultStrategy", { num_replicas_in_sync = 1, worker_index = 0, is_chief = true })

-- OneDeviceStrategy(device): one replica whose tensors sit on `device`
-- ("cpu", "gpu:0", ...) inside scope and run.
function M.OneDeviceStrategy(dev)
  if type(dev) ~= "string" then
    binding.error("tide.distribute.OneDeviceStrategy: expected a device name (\"cpu\", \"gpu:0\"), got " .. type(dev))
  end
  device.parse(dev, "tide.distribute.OneDeviceStrategy")
  local s = new_strategy("OneDeviceStrategy", { num_replicas_in_sync = 1, worker_index = 0, is_chief = true,
                                                device = dev })
  local function on_device(what, fn, ...)
    local args = { n = select("#", ...), ... }
    return within(s, what, function() return device.scope(dev, function() return fn(unpack(args, 1, args.n)) end) end)
  end
  function s.scope(self, fn, ...)
    check_fn(self, "scope", fn)
    return on_device("scope", fn, ...)
  end
  function s.run(self, fn, args)
    check_fn(self, "run", fn)
    if args ~= nil and type(args) ~= "table" then
      binding.error(fmt("%s:run: args must be a list (table) of arguments, got %s", self.name, type(args)))
    end
    args = args or {}
    return on_device("run", fn, unpack(args, 1, args.n or #args))
  end
  return s
end

local MWMS = setmetatable({}, { __index = Strategy })
MWMS.__index = MWMS
MWMS.__tostring = Strategy.__tostring

function MWMS:_sum(x) return M.all_reduce_sum(x) end
function MWMS:_sum_list(list)
  if #list == 0 then return {} end
  return collective.sum_list(list, self.bytes_per_pack, self.name .. ":all_reduce")
end

-- Give existing variables the chief's values (scope does this for the
-- variables created inside it).
function MWMS:broadcast_variables(vars)
  if type(vars) ~= "table" then
    binding.error(fmt("%s:broadcast_variables: expected a list of Variables, got %s", self.name, type(vars)))
  end
  for i, v in ipairs(vars) do
    if not is_variable(v) then
      binding.error(fmt("%s:broadcast_variables: entry %d is a %s, not a Variable", self.name, i, type(v)))
    end
    v:assign(M.broadcast(v))
  end
end

-- MultiWorkerMirroredStrategy{timeout=, communication_options=}: one
-- replica per process of the world that mpirun started (a process started
-- alone is a world of one). Variables created under scope or run start from
-- the chief's values; gradients that an optimizer applies under scope or run
-- are summed over the workers (as TF's: scale each worker's loss by 1/global
-- batch, compute_average_loss). timeout: seconds a collective waits for the
-- other workers before it fails and the job ends (default
-- TIDE_DIST_TIMEOUT, else 300; math.huge for no limit).
-- communication_options = {bytes_per_pack=, timeout_seconds=} (TF's
-- CommunicationOptions): the bucket size gradients are packed into, one MPI
-- call per bucket (0 or nil: 25 MiB, PyTorch DDP's), and the timeout again.
function M.MultiWorkerMirroredStrategy(opts)
  local what = "tide.distribute.MultiWorkerMirroredStrategy"
  if opts ~= nil and type(opts) ~= "table" then
    binding.error(what .. ": expected an options table or nothing, got " .. type(opts))
  end
  local bytes_per_pack, timeout
  local function set_timeout(name, v)
    if type(v) ~= "number" or not (v > 0) then
      binding.error(fmt("%s: %s must be a positive number of seconds (math.huge for no limit), got %s", what, name,
        tostring(v)))
    end
    timeout = v
  end
  for k, v in pairs(opts or {}) do
    if k == "timeout" then set_timeout("timeout", v)
    elseif k == "communication_options" then
      if type(v) ~= "table" then
        binding.error(what .. ": communication_options must be a table {bytes_per_pack=, timeout_seconds=}")
      end
      for ck, cv in pairs(v) do
        if ck == "timeout_seconds" then set_timeout("timeout_seconds", cv)
        elseif ck ~= "bytes_per_pack" then
          binding.error(fmt("%s: unknown communication option '%s'", what, tostring(ck)))
        elseif type(cv) ~= "number" or cv < 0 or cv % 1 ~= 0 then
          binding.error(fmt("%s: bytes_per_pack must be a whole number of bytes >= 0, got %s", what, tostring(cv)))
        else
          bytes_per_pack = cv
        end
      end
    else
      binding.error(fmt("%s: unknown option '%s'", what, tostring(k)))
    end
  end
  join()
  if timeout and C.tide_dist_set_timeout(timeout) ~= 0 then binding.raise() end
  local rank, size = C.tide_dist_rank(), C.tide_dist_size()
  local s = setmetatable({ num_replicas_in_sync = size, worker_index = rank, is_chief = rank == 0,
                           uses_mpi = C.tide_dist_uses_mpi() ~= 0, bytes_per_pack = bytes_per_pack }, MWMS)
  s.name = "MultiWorkerMirroredStrategy"
  s.extended = s
  return s
end

-- The strategy whose scope or run is running, else the default strategy.
function M.get_strategy() return current or default end
-- True while some strategy's scope or run is running.
function M.has_strategy() return current ~= nil end
-- The per-example losses' sum over this replica divided by the global batch
-- size (TF's tf.nn.compute_average_loss): summed over the replicas, the mean.
function M.compute_average_loss(per_example_loss, global_batch_size)
  local x = per_example_loss
  if not binding.istensor(x) and not is_variable(x) then
    binding.error("tide.distribute.compute_average_loss: expected a tensor of per-example losses, got " .. type(x))
  end
  local n = global_batch_size
  if n == nil then
    n = (x.ndim > 0 and x.dims[0] or 1) * M.get_strategy().num_replicas_in_sync
  elseif type(n) ~= "number" or n <= 0 then
    binding.error("tide.distribute.compute_average_loss: global_batch_size must be a positive number, got " ..
      tostring(n))
  end
  return reduce_ops.reduce_sum(x) / math_ops.cast(n, x.dtype)
end

-- The hooks: under a multi-worker strategy, new variables take the chief's
-- values and applied gradients are summed over the workers.
variable.on_create = function(v, h)
  local s = current
  if s and getmetatable(s) == MWMS and s.uses_mpi and h.dt ~= C.TIDE_STRING then
    if C.tide_dist_broadcast(h, 0) ~= 0 then binding.raise() end
  end
end

-- This worker's rows in fit's current step: one Variable for the process
-- (every strategy shares the world), so a step traced once reads it anew.
local fit_rows = nil

-- In fit's step each worker's gradients are means over its own rows, so
-- they are weighted by its rows (a Variable fit sets before each step, read
-- by the traced step when it runs) and the sum divided by the rows of every
-- worker, summed in the same call: the mean over the global batch, however
-- it split. A custom loop's are summed (scale the loss by 1/global batch:
-- compute_average_loss).
optimizer.aggregate_gradients = function(gs, vs, opt)
  local s = current
  if s and s._aggregate then return s:_aggregate(gs, vs, opt) end -- MirroredStrategy (mirrored.lua)
  if not (s and getmetatable(s) == MWMS) then return gs end
  if s.num_replicas_in_sync == 1 and not s._fit_step then return gs end -- the sum of one
  local rows = s._fit_step and fit_rows
  if not rows then return s:_sum_list(gs) end
  local list, n = {}, #gs
  local r = variable.read(rows)
  for i = 1, n do
    local g = gs[i]
    list[i] = g * (g.dtype == r.dtype and r or math_ops.cast(r, g.dtype))
  end
  list[n + 1] = r
  local sums = s:_sum_list(list)
  local total, out = sums[n + 1], {}
  for i = 1, n do out[i] = sums[i] / (sums[i].dtype == total.dtype and total or math_ops.cast(total, sums[i].dtype)) end
  return out
end

---------------------------------------------------------------------------
-- fit under a strategy (tide.models.training calls these)
---------------------------------------------------------------------------

-- A model compiled under a strategy's scope keeps it (TF: model.distribute_strategy).
compile.on_compile = function(model)
  if current then rawset(model, "_distribute_strategy", current) end
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
  local s = current
  if not (s and getmetatable(s) == MWMS and s._fit_step and s.num_replicas_in_sync > 1) then return nil end
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
    local s = rawget(model, "_distribute_strategy") or current
    if s and s._replicas_in_process and s.num_replicas_in_sync > 1 then
      binding.error(fmt("fit: under a %s of %d replicas fit is not supported yet; write the step with " ..
        "strategy:run and experimental_distribute_dataset (one replica runs fit as usual)", s.name, s.num_replicas_in_sync))
    end
    if s and getmetatable(s) == MWMS and s.num_replicas_in_sync > 1 then return s end
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
  same_permutation = function(s, perm) return M.broadcast(perm, 0) end,
  -- This worker's rows of the global batch [a, b). A batch smaller than
  -- the world is every worker's whole (each weighs in with all its rows,
  -- so the weighted mean is the batch's).
  rows = function(s, a, b)
    local n, r, m = s.num_replicas_in_sync, s.worker_index, b - a
    if m < n then return a, b end
    return a + math.floor(r * m / n), a + math.floor((r + 1) * m / n)
  end,
  -- fit(dataset): each worker its part of every global batch (M.auto_shard).
  dataset = function(s, ds, what)
    local out, policy = M.auto_shard(s, ds, what)
    s._shards_may_differ = policy == "FILE" -- DATA: every worker reads every batch
    return out
  end,
  -- Whether every worker has a batch this step (M.all_have).
  all_have = function(s, source, has)
    if not s._shards_may_differ then return has end
    return M.all_have(s, source.card, has)
  end,
  -- One step on this worker's batch (xb: fit's flat groups) with the
  -- strategy current: its rows weigh its gradients (see aggregate_gradients)
  -- and the logs are the metrics over the global batch (compile.global_results),
  -- the same on every worker, so every worker's callbacks decide alike.
  step = function(s, xb, fn)
    local rows = fit_rows
    if rows == nil then
      local saved = current
      current = nil -- not a mirrored variable: no broadcast
      rows = variable.Variable(0, { dtype = "float32", trainable = false, name = "distribute_rows" })
      current = saved
      fit_rows = rows
    end
    local leaf = xb.leaves[1]
    rows:assign(leaf.ndim > 0 and leaf.shape[1] or 1)
    s._fit_step = true
    local ok, logs = pcall(within, s, "fit", fn)
    s._fit_step = nil
    if not ok then error(logs, 0) end
    return logs
  end,
}

M.ReduceOp = { SUM = "SUM", MEAN = "MEAN" }

-- For distribute/mirrored.lua: the strategy base, running with a strategy current.
M._Strategy, M._within, M._check_fn = Strategy, within, check_fn
-- MirroredStrategy and its cross-device ops (distribute/mirrored.lua, loaded on first use).
-- _on_cpu_replicas(n): n replicas all on the CPU, for tests on machines without GPUs.
for _, name in ipairs { "MirroredStrategy", "NcclAllReduce", "ReductionToOneDevice", "PerReplica", "is_per_replica",
                        "_on_cpu_replicas" } do
  M[name] = function(...)
    local mirrored = require "tide.distribute.mirrored"
    mirrored.attach(M)
    return mirrored[name](...)
  end
end

return M
