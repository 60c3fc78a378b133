-- stdlib/tide/distribute/strategy.lua — the strategy base (scope, run, reduce, datasets),
-- the strategy that is current while a scope or run runs, and the default strategy.
local binding = require "tide.binding"
local convert = require "tide.convert"
local scope = require "tide.scope"
local variable = require "tide.variable"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local dataset = require "tide.data.dataset"
local collective = require "tide.distribute.collective"
local input = require "tide.distribute.input"

local is_variable = variable.is_variable
local concrete = collective.concrete
local fmt = string.format

local M = {}

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

function Strategy:_input_context()
  return input.InputContext { num_input_pipelines = self.num_replicas_in_sync, input_pipeline_id = self.worker_index or 0,
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

M.ReduceOp = { SUM = "SUM", MEAN = "MEAN" }

-- The strategy whose scope or run is running, else nil (the default), and
-- setting it outside a scope (fit's step makes a Variable with none current).
function M.current() return current end
function M.set_current(s) current = s end

-- For the strategies built on this base (one_device, multi_worker, mirrored).
M.Strategy, M.within, M.check_fn, M.new_strategy = Strategy, within, check_fn, new_strategy

return M
