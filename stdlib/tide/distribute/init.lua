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

-- The sum of x over every worker, as a new tensor of x's dtype. Floats are
-- summed in their own precision (float16/bfloat16 in float32), integers and
-- booleans in float64 (exact below 2^53).
function M.all_reduce_sum(x)
  join()
  x = concrete("tide.distribute.all_reduce_sum", x)
  local dt = x.dtype
  local work_dt = (dt == "float32" or dt == "float64") and dt
    or ((dt == "float16" or dt == "bfloat16") and "float32" or "float64")
  if dt == "string" then binding.error("tide.distribute.all_reduce_sum: string tensors cannot be summed") end
  local h = fresh_copy(work_dt == dt and x or math_ops.cast(x, work_dt))
  if C.tide_dist_all_reduce_sum(h) ~= 0 then binding.raise() end
  if work_dt ~= dt then h = math_ops.cast(h, dt) end
  return h
end

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

-- The sum of x over the replicas (one replica: x itself).
function Strategy:_sum(x) return x end

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
  for i = 1, table.maxn(grads) do
    local g = grads[i]
    if g ~= nil then
      local s = self:_sum(concrete(self.name .. ":all_reduce_gradients", g))
      out[i] = op == "MEAN" and s / n or s
    end
  end
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

-- MultiWorkerMirroredStrategy{timeout=}: one replica per process of the
-- world that mpirun started (a process started alone is a world of one).
-- Variables created under scope or run start from the chief's values;
-- gradients that an optimizer applies under scope or run are summed over the
-- workers (as TF's: scale each worker's loss by 1/global batch,
-- compute_average_loss). timeout: seconds a collective waits for the other
-- workers before it fails and the job ends (default TIDE_DIST_TIMEOUT, else
-- 300; math.huge for no limit).
function M.MultiWorkerMirroredStrategy(opts)
  if opts ~= nil and type(opts) ~= "table" then
    binding.error("tide.distribute.MultiWorkerMirroredStrategy: expected an options table or nothing, got " .. type(opts))
  end
  for k in pairs(opts or {}) do
    if k ~= "timeout" then
      binding.error(fmt("tide.distribute.MultiWorkerMirroredStrategy: unknown option '%s'", tostring(k)))
    end
  end
  local timeout = opts and opts.timeout
  if timeout ~= nil and (type(timeout) ~= "number" or not (timeout > 0)) then
    binding.error("tide.distribute.MultiWorkerMirroredStrategy: timeout must be a positive number of seconds " ..
      "(math.huge for no limit), got " .. tostring(timeout))
  end
  join()
  if timeout and C.tide_dist_set_timeout(timeout) ~= 0 then binding.raise() end
  local rank, size = C.tide_dist_rank(), C.tide_dist_size()
  local s = setmetatable({ num_replicas_in_sync = size, worker_index = rank, is_chief = rank == 0,
                           uses_mpi = C.tide_dist_uses_mpi() ~= 0 }, MWMS)
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

optimizer.aggregate_gradients = function(gs, vs, opt)
  local s = current
  if s and s._aggregate then return s:_aggregate(gs, vs, opt) end -- MirroredStrategy (mirrored.lua)
  if not (s and getmetatable(s) == MWMS) then return gs end
  local scale = s._grad_scale -- fit: this worker's share of the global batch
  if scale then
    gs = { unpack(gs) }
    for i, g in ipairs(gs) do gs[i] = g * scale end
  end
  return s:all_reduce_gradients(gs, "SUM")
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
  -- This worker's rows of the global batch [a, b), and its share of the
  -- gradient (its rows / the batch's: the losses are means over the rows).
  -- A batch smaller than the world is every worker's whole, each a 1/N share.
  rows = function(s, a, b)
    local n, r, m = s.num_replicas_in_sync, s.worker_index, b - a
    if m < n then
      s._grad_scale = 1 / n
      return a, b
    end
    local lo, hi = a + math.floor(r * m / n), a + math.floor((r + 1) * m / n)
    s._grad_scale = (hi - lo) / m
    return lo, hi
  end,
  -- The collectives run eagerly, so fit's step does too under a strategy.
  eager_step = function(model, step_function, xb, yb, wb)
    local was = rawget(model, "run_eagerly")
    rawset(model, "run_eagerly", true)
    local ok, f = pcall(step_function, model, "train", xb, yb, wb)
    rawset(model, "run_eagerly", was)
    if not ok then error(f, 0) end
    return f
  end,
  -- One step with the strategy current; the logs averaged over the workers,
  -- so that every worker's callbacks (EarlyStopping, ...) decide alike.
  step = function(s, fn)
    local logs = within(s, "fit", fn)
    s._grad_scale = nil
    local keys = {}
    for k, v in pairs(logs) do if type(v) == "number" then keys[#keys + 1] = k end end
    table.sort(keys)
    if #keys == 0 then return logs end
    local values = {}
    for i, k in ipairs(keys) do values[i] = logs[k] end
    local mean = M.all_reduce_sum(convert.tensor(values, "float64", "fit")):totable()
    for i, k in ipairs(keys) do logs[k] = mean[i] / s.num_replicas_in_sync end
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
