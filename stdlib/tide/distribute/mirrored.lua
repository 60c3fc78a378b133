-- stdlib/tide/distribute/mirrored.lua — tf.distribute.MirroredStrategy: replicas on
-- several devices of this one process, gradients summed by NCCL (NcclAllReduce) or through one device.
--
-- How a step runs (TF runs the replicas on threads that meet in merge_call;
-- tide's scope machinery refuses a coroutine yield inside a boundary, so the
-- replicas run one after another instead):
-- - run(fn, args) runs fn once per replica, last replica first, each under
--   tide.device(its device) with its part of each PerReplica argument.
-- - A variable lives on the first replica's device. Another replica reads a
--   copy on its own device (made at its first read in each run), which its
--   tapes track as the variable's read: its gradients land on its device.
-- - An optimizer applying gradients in replicas 2..N keeps them and applies
--   nothing; when the first replica (run last) applies, the N lists are
--   all-reduced (one NCCL group for every gradient) and the sums applied once.
-- So a replica's forward pass sees the variables as they were at the start
-- of run, as in TF, as long as each variable is updated at most once per run.
local binding = require "tide.binding"
local device = require "tide.device"
local variable = require "tide.variable"
local reduce_ops = require "tide.ops.reduce"
local dataset = require "tide.data.dataset"
local strategy = require "tide.distribute.strategy"
local input = require "tide.distribute.input"
local pack = require("tide.varargs").pack

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local fmt = string.format
local CPU = C.TIDE_CPU

local M = {}

---------------------------------------------------------------------------
-- Per-replica values
---------------------------------------------------------------------------

local PerReplica = {}
PerReplica.__index = PerReplica
PerReplica.__name = "PerReplica"

-- PerReplica(values): one value per replica (tf.distribute's PerReplica).
function M.PerReplica(values)
  if type(values) ~= "table" or #values == 0 then
    binding.error("tide.distribute.PerReplica: expected a non-empty list of values, one per replica")
  end
  return setmetatable({ values = values }, PerReplica)
end

function M.is_per_replica(x) return getmetatable(x) == PerReplica end

function PerReplica:__tostring()
  local parts = {}
  for i, v in ipairs(self.values) do parts[i] = fmt("%d: %s", i - 1, tostring(v)) end
  return "PerReplica:{\n  " .. table.concat(parts, ",\n  ") .. "\n}"
end

---------------------------------------------------------------------------
-- Devices
---------------------------------------------------------------------------

-- The dev code of a TF or tide device name: "/cpu:0", "/gpu:1", "GPU:0",
-- "/job:localhost/replica:0/task:0/device:GPU:0", "cuda:1", "cpu".
local parsed = ffi.new("int[1]")
local function parse_device(name, what)
  if type(name) ~= "string" then
    binding.error(fmt("%s: a device must be a name such as \"/gpu:0\" or \"/cpu:0\", got %s", what, type(name)))
  end
  local s = name:match("device:([^/]+)$") or name:match("^/?([^/]+)$")
  if not s then
    binding.error(fmt("%s: \"%s\" is not a device name (\"/gpu:0\", \"/cpu:0\", \"cuda:1\")", what, name))
  end
  if C.tide_device_parse(s, parsed) ~= 0 then
    local why = ffi.string(C.tide_last_error()):gsub('^device "[^"]*": ', "")
    binding.error(fmt('%s: device "%s": %s', what, name, why))
  end
  return parsed[0]
end

---------------------------------------------------------------------------
-- Cross-device ops
---------------------------------------------------------------------------

local CrossDeviceOps = {}
CrossDeviceOps.__index = CrossDeviceOps

local function options(what, o, allowed)
  if o ~= nil and type(o) ~= "table" then binding.error(fmt("%s: expected an options table or nothing, got %s", what, type(o))) end
  for k in pairs(o or {}) do
    if not allowed[k] then binding.error(fmt("%s: unknown option '%s'", what, tostring(k))) end
  end
  return o or {}
end

-- NcclAllReduce{num_packs=1}: NCCL's all-reduce across the GPUs (every
-- replica on a GPU of its own). Every gradient of a step goes in one NCCL
-- group, which NCCL fuses itself; num_packs is checked and kept for TF's
-- signature but does not change that.
function M.NcclAllReduce(o)
  o = options("tide.distribute.NcclAllReduce", o, { num_packs = true })
  local packs = o.num_packs == nil and 1 or o.num_packs
  if type(packs) ~= "number" or packs % 1 ~= 0 or packs < 0 then
    binding.error("tide.distribute.NcclAllReduce: num_packs must be a non-negative integer, got " .. tostring(packs))
  end
  return setmetatable({ kind = "nccl", num_packs = packs }, CrossDeviceOps)
end

-- ReductionToOneDevice{reduce_to_device=}: copy every replica's value to one
-- device (default: the first replica's), add them there in replica order,
-- and copy the sum back to each replica's device. Works for any devices.
function M.ReductionToOneDevice(o)
  o = options("tide.distribute.ReductionToOneDevice", o, { reduce_to_device = true })
  local to = o.reduce_to_device
  if to ~= nil then parse_device(to, "tide.distribute.ReductionToOneDevice") end
  return setmetatable({ kind = "one_device", reduce_to_device = to }, CrossDeviceOps)
end

function CrossDeviceOps:__tostring()
  return self.kind == "nccl" and fmt("NcclAllReduce(num_packs=%d)", self.num_packs)
    or fmt("ReductionToOneDevice(reduce_to_device=%s)", tostring(self.reduce_to_device))
end

local function is_cross_device_ops(x) return getmetatable(x) == CrossDeviceOps end

-- lists[r][i]: tensor i of replica r (on devs[r]); returns sums[r][i], tensor i's sum on devs[r].
local function nccl_all_reduce(lists, devs)
  local n, count = #devs, #lists[1]
  local ins = ffi.new("const tide_tensor *[?]", math.max(n * count, 1))
  local outs = ffi.new("tide_tensor *[?]", math.max(n * count, 1))
  local made, keep = {}, {}
  for i = 1, count do
    for r = 1, n do
      local x = lists[r][i]
      keep[#keep + 1] = x
      local o = Tensor()
      made[(i - 1) * n + r] = o
      ins[(i - 1) * n + r - 1] = x
      outs[(i - 1) * n + r - 1] = o
    end
  end
  if C.tide_device_all_reduce_sum(n, count, ins, outs) ~= 0 then binding.raise() end
  local sums = {}
  for r = 1, n do
    sums[r] = {}
    for i = 1, count do sums[r][i] = binding.finish(made[(i - 1) * n + r]) end
  end
  return sums
end

local function one_device_all_reduce(lists, devs, to)
  local n, sums = #devs, {}
  for r = 1, n do sums[r] = {} end
  local to_name = device.name_of(to)
  for i = 1, #lists[1] do
    local acc = device.to(lists[1][i], to_name)
    for r = 2, n do acc = acc + device.to(lists[r][i], to_name) end
    for r = 1, n do sums[r][i] = device.to(acc, device.name_of(devs[r])) end
  end
  return sums
end

---------------------------------------------------------------------------
-- The strategy
---------------------------------------------------------------------------

local Mirrored = setmetatable({}, { __index = strategy.Strategy })
Mirrored.__index = Mirrored
Mirrored.__tostring = strategy.Strategy.__tostring

-- Make the strategy on dev codes devs (checked already).
local function make(devs, cross)
  local names = {}
  for i, d in ipairs(devs) do names[i] = device.name_of(d) end
  local all_gpus = true
  for _, d in ipairs(devs) do if d == CPU then all_gpus = false end end
  if cross == nil then
    cross = all_gpus and M.NcclAllReduce() or M.ReductionToOneDevice() -- TF's choice
  elseif cross.kind == "nccl" and not all_gpus then
    binding.error("tide.distribute.MirroredStrategy: NcclAllReduce sums across GPUs, but a replica is on the CPU; " ..
      "use ReductionToOneDevice")
  end
  local s = setmetatable({ name = "MirroredStrategy", devices = names, _devs = devs, num_replicas_in_sync = #devs,
                           worker_index = 0, is_chief = true, cross_device_ops = cross, _replicas_in_process = true },
                         Mirrored)
  s.extended = s
  return s
end

-- MirroredStrategy(devices, {cross_device_ops=}): one replica per device
-- (default: every visible GPU, or the CPU when none is, as TF).
function M.MirroredStrategy(devices, opts)
  local what = "tide.distribute.MirroredStrategy"
  opts = options(what, opts, { cross_device_ops = true })
  local cross = opts.cross_device_ops
  if cross ~= nil and not is_cross_device_ops(cross) then
    binding.error(fmt("%s: cross_device_ops must be tide.distribute.NcclAllReduce() or ReductionToOneDevice(), got %s",
      what, type(cross)))
  end
  local devs = {}
  if devices == nil then
    local n = device.gpu_count()
    if n == 0 then devs[1] = CPU end
    for k = 0, n - 1 do devs[#devs + 1] = C.TIDE_CUDA + k end
  else
    if type(devices) ~= "table" then
      binding.error(fmt("%s: devices must be a list of device names (\"/gpu:0\", ...) or nil, got %s", what, type(devices)))
    end
    if #devices == 0 then binding.error(what .. ": devices is empty; give at least one device") end
    local seen = {}
    for i, name in ipairs(devices) do
      local d = parse_device(name, what)
      if seen[d] then
        binding.error(fmt("%s: no duplicates allowed in devices: \"%s\" and \"%s\" are both %s", what, devices[seen[d]],
          name, device.name_of(d)))
      end
      seen[d] = i
      devs[i] = d
    end
  end
  return make(devs, cross)
end

-- For tests on a machine without GPUs: a strategy whose n replicas all run on
-- the CPU (TF gets the same with logical CPU devices), summing through it.
function M._on_cpu_replicas(n)
  local devs = {}
  for i = 1, n do devs[i] = CPU end
  return make(devs, M.ReductionToOneDevice())
end

local function run_on(self, r, what, fn, ...)
  local args = pack(...)
  return strategy.within(self, what, function()
    return device.scope(self.devices[r], function() return fn(unpack(args, 1, args.n)) end)
  end)
end

-- scope(fn, ...): fn with the strategy current, placed on the first replica's
-- device (where the variables made in it live).
function Mirrored:scope(fn, ...)
  strategy.check_fn(self, "scope", fn)
  return run_on(self, 1, "scope", fn, ...)
end

-- Replica r's value of an argument: its part of a PerReplica, a tensor
-- copied to its device, anything else as it is.
local function arg_for(self, x, r)
  if M.is_per_replica(x) then
    if #x.values ~= self.num_replicas_in_sync then
      binding.error(fmt("%s:run: a PerReplica argument has %d values for %d replicas", self.name, #x.values,
        self.num_replicas_in_sync))
    end
    return x.values[r]
  end
  if binding.istensor(x) and x.dev ~= self._devs[r] then return device.to(x, self.devices[r]) end
  return x
end

-- While replica r (> 1) runs on another device than the variables: each
-- variable read there is a copy on its device, made once per run.
local function replica_reader(self, r)
  local dev, name, copies, run_id = self._devs[r], self.devices[r], self._copies, self._run_id
  return function(v, h)
    if h.dev == dev then return h end
    local c = copies[v]
    if not c or c.run ~= run_id or c.handle ~= h then
      c = { run = run_id, handle = h, value = device.to(h, name) }
      copies[v] = c
    end
    return c.value
  end
end

local function finish_run(self)
  self._replica = nil
  variable.replica_value = nil
end

-- run(fn, args): fn once per replica, each with its part of the arguments;
-- the results as PerReplica values (one replica: fn's results themselves).
function Mirrored:run(fn, args)
  strategy.check_fn(self, "run", fn)
  if args ~= nil and type(args) ~= "table" then
    binding.error(fmt("%s:run: args must be a list (table) of arguments, got %s", self.name, type(args)))
  end
  args = args or {}
  local nargs, n = args.n or #args, self.num_replicas_in_sync
  if self._replica then binding.error(self.name .. ":run: run was called inside run") end
  self._run_id = (self._run_id or 0) + 1
  self._copies = setmetatable({}, { __mode = "k" })
  self._pending, self._applies = {}, {}
  local results = {}
  local ok, err = pcall(function()
    for r = n, 1, -1 do -- the first replica last: it applies what the others kept
      local mine = {}
      for i = 1, nargs do mine[i] = arg_for(self, args[i], r) end
      self._replica, self._applies[r] = r, 0
      variable.replica_value = r > 1 and self._devs[r] ~= self._devs[1] and replica_reader(self, r) or nil
      results[r] = pack(run_on(self, r, "run", fn, unpack(mine, 1, nargs)))
      variable.replica_value = nil
    end
  end)
  finish_run(self)
  local pending = self._pending
  self._pending, self._copies = nil, nil
  if not ok then error(err, 0) end
  for k in pairs(pending) do
    binding.error(fmt("%s:run: replica 0 applied gradients %d time(s) but another replica %d or more; every " ..
      "replica must apply the same gradients the same number of times", self.name, self._applies[1], k))
  end
  if n == 1 then return unpack(results[1], 1, results[1].n) end
  local count = 0
  for r = 1, n do count = math.max(count, results[r].n) end
  local out = {}
  for i = 1, count do
    local values = {}
    for r = 1, n do values[r] = results[r][i] end
    out[i] = M.PerReplica(values)
  end
  return unpack(out, 1, count)
end

-- The optimizer's hook (apply_gradients inside run): replicas 2..N keep
-- their gradients (false: apply nothing); the first replica's call sums
-- every replica's and applies the sums once.
function Mirrored:_aggregate(gs, vs, opt)
  local r, n = self._replica, self.num_replicas_in_sync
  if n == 1 or not r then return gs end -- one replica, or outside run (TF's cross-replica context)
  local k = self._applies[r] + 1
  self._applies[r] = k
  if r > 1 then
    self._pending[k] = self._pending[k] or {}
    self._pending[k][r] = { gs = gs, vs = vs, opt = opt }
    return false
  end
  local kept = self._pending[k] or {}
  self._pending[k] = nil
  local lists = { gs }
  for q = 2, n do
    local p = kept[q]
    if not p then
      binding.error(fmt("%s: replica 0 applies gradients (call %d) but replica %d did not; every replica must " ..
        "apply the same gradients", self.name, k, q - 1))
    end
    if p.opt ~= opt or #p.vs ~= #vs then
      binding.error(fmt("%s: replicas 0 and %d applied gradients with different optimizers or variable lists " ..
        "(call %d)", self.name, q - 1, k))
    end
    for i = 1, #vs do
      if not rawequal(p.vs[i], vs[i]) then
        binding.error(fmt("%s: replicas 0 and %d applied gradients to different variables (call %d, entry %d: " ..
          "'%s' and '%s')", self.name, q - 1, k, i, tostring(vs[i].name), tostring(p.vs[i].name)))
      end
    end
    lists[q] = p.gs
  end
  local sums
  if self.cross_device_ops.kind == "nccl" then
    sums = nccl_all_reduce(lists, self._devs)
  else
    local to = self.cross_device_ops.reduce_to_device
    sums = one_device_all_reduce(lists, self._devs, to and parse_device(to, self.name) or self._devs[1])
  end
  return sums[1]
end

-- reduce("SUM" | "MEAN", value, axis): a PerReplica's values combined (on
-- the CPU). A plain value is the same on every replica: MEAN gives it back,
-- SUM is an error (as TF).
function Mirrored:reduce(op, value, axis)
  local what = self.name .. ":reduce"
  if type(op) == "string" then op = op:upper() end
  if op ~= "SUM" and op ~= "MEAN" then
    binding.error(fmt('%s: the reduce op must be "SUM" or "MEAN", got %s', what, tostring(op)))
  end
  if value == nil then binding.error(what .. ": a value to reduce is required") end
  if not M.is_per_replica(value) then
    if self.num_replicas_in_sync == 1 then return strategy.Strategy.reduce(self, op, value, axis) end
    if op == "SUM" then
      binding.error(what .. ": a value that is not PerReplica cannot be summed over the replicas (it is the same " ..
        "on each); give run's PerReplica result")
    end
    value = M.PerReplica { value }
  end
  local total, count
  for r, x in ipairs(value.values) do
    if variable.is_variable(x) then x = variable.read(x) end
    if not binding.istensor(x) then
      binding.error(fmt("%s: replica %d's value is a %s, not a tensor", what, r - 1, type(x)))
    end
    x = device.cpu(x)
    if axis ~= nil then
      if type(axis) ~= "number" or axis % 1 ~= 0 or axis < -x.ndim or axis >= x.ndim then
        binding.error(fmt("%s: axis must be a dim of the value (%d-d), got %s", what, x.ndim, tostring(axis)))
      end
      count = (count or 0) + x.dims[axis < 0 and axis + x.ndim or axis]
      x = reduce_ops.reduce_sum(x, axis)
    end
    total = total and total + x or x
  end
  if op == "SUM" then return total end
  return total / (count or #value.values)
end

-- The values of a PerReplica on this process (a plain value: itself alone).
function Mirrored:experimental_local_results(value)
  if M.is_per_replica(value) then return { unpack(value.values) } end
  return { value }
end

-- PerReplica{fn(ctx)} with ctx = {replica_id_in_sync_group = r - 1, num_replicas_in_sync = n}.
function Mirrored:experimental_distribute_values_from_function(fn)
  strategy.check_fn(self, "experimental_distribute_values_from_function", fn)
  local values = {}
  for r = 1, self.num_replicas_in_sync do
    values[r] = device.scope(self.devices[r], function()
      return fn { replica_id_in_sync_group = r - 1, num_replicas_in_sync = self.num_replicas_in_sync }
    end)
  end
  return M.PerReplica(values)
end

---------------------------------------------------------------------------
-- Input: each replica its rows of every global batch
---------------------------------------------------------------------------

local DistributedDataset = {}
DistributedDataset.__index = DistributedDataset

-- Rows [a, b) of x along dim 0, on device dev.
local function rows_of(x, a, b, name)
  if not binding.istensor(x) then return x end
  if x.ndim == 0 then return device.to(x, name) end
  return device.to(x:slice{ { a, b } }, name)
end

local function split_value(self, v)
  local n = self.num_replicas_in_sync
  local first = binding.istensor(v) and v or (type(v) == "table" and v[next(v)]) or nil
  local B = first and binding.istensor(first) and first.ndim > 0 and first.dims[0] or nil
  if not B then
    binding.error(self.name .. ": a distributed dataset's elements must be batches (tensors, or tables of tensors, " ..
      "with the batch as dim 0)")
  end
  local values = {}
  for r = 1, n do
    local a, b = math.floor((r - 1) * B / n), math.floor(r * B / n)
    if binding.istensor(v) then values[r] = rows_of(v, a, b, self.devices[r])
    else
      local part = {}
      for k, x in pairs(v) do
        if binding.istensor(x) and x.ndim > 0 and x.dims[0] ~= B then
          binding.error(fmt("%s: the element's '%s' has %d rows, another %d: not one batch", self.name, tostring(k),
            tonumber(x.dims[0]), tonumber(B)))
        end
        part[k] = rows_of(x, a, b, self.devices[r])
      end
      values[r] = part
    end
  end
  return M.PerReplica(values)
end

-- ds:iter(): each element's values as PerReplica values.
function DistributedDataset:iter(opts)
  local s, nextf = self.strategy, self.dataset:iter(opts)
  if self.per_replica_elements then
    return function()
      local values, width = {}, nil
      for r = 1, s.num_replicas_in_sync do
        local got = pack(nextf())
        if got[1] == nil then return nil end -- the last step needs an element for every replica
        width = width or got.n
        for i = 1, width do
          values[i] = values[i] or {}
          values[i][r] = arg_for(s, got[i], r)
        end
      end
      local out = {}
      for i = 1, width do out[i] = M.PerReplica(values[i]) end
      return unpack(out, 1, width)
    end
  end
  return function()
    local got = pack(nextf())
    if got[1] == nil then return nil end
    for i = 1, got.n do got[i] = split_value(s, got[i]) end
    return unpack(got, 1, got.n)
  end
end

-- experimental_distribute_dataset(ds): ds yields global batches; each
-- replica gets its share of the rows of each (TF's rebatching; a batch
-- that does not split evenly gives the first replicas one row fewer).
function Mirrored:experimental_distribute_dataset(ds)
  if self.num_replicas_in_sync == 1 then return strategy.Strategy.experimental_distribute_dataset(self, ds) end
  if not dataset.is_dataset(ds) then
    binding.error(fmt("%s:experimental_distribute_dataset: expected a tide.data.Dataset, got %s", self.name, type(ds)))
  end
  return setmetatable({ strategy = self, dataset = ds }, DistributedDataset)
end

-- distribute_datasets_from_function(fn): fn(input_context) makes one
-- pipeline of per-replica batches; replicas take successive elements.
function Mirrored:distribute_datasets_from_function(fn)
  if self.num_replicas_in_sync == 1 then return strategy.Strategy.distribute_datasets_from_function(self, fn) end
  strategy.check_fn(self, "distribute_datasets_from_function", fn)
  local ds = fn(input.InputContext { num_input_pipelines = 1, input_pipeline_id = 0,
                                    num_replicas_in_sync = self.num_replicas_in_sync })
  if not dataset.is_dataset(ds) then
    binding.error(fmt("%s:distribute_datasets_from_function: the function must return a tide.data.Dataset, got %s",
      self.name, type(ds)))
  end
  return setmetatable({ strategy = self, dataset = ds, per_replica_elements = true }, DistributedDataset)
end

return M
