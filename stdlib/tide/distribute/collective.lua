-- stdlib/tide/distribute/collective.lua — the collectives: the all_reduce_sum registry op
-- from Lua (eager or traced: a graph keeps it in order as an effect) and its gradient, broadcast, barrier.
local binding = require "tide.binding"
local convert = require "tide.convert"
local context = require "tide.trace_context"
local device = require "tide.device"
local dispatch = require "tide.dispatch"
local recorder = require "tide.tape_recorder"
local grad = require "tide.grad"
local variable = require "tide.variable"
local math_ops = require "tide.ops.math"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local fmt = string.format

local M = {}

local OP = C.tide_op_lookup("all_reduce_sum")
M.OP = OP

-- The registry op on a list of float32/float64 tensors: their sums over
-- every worker (themselves in a world of one), as a new list; one
-- collective per bucket of at most bucket_bytes (nil or 0: 25 MiB).
function M.op(list, bucket_bytes, what)
  what = what or "tide.distribute.all_reduce_sum"
  if type(list) ~= "table" or binding.istensor(list) then
    binding.error(fmt("%s: expected a list of tensors, got %s", what, binding.istensor(list) and "a tensor" or type(list)))
  end
  local n = table.maxn(list)
  if n == 0 then return {} end
  local ins = ffi.new("const tide_tensor *[?]", n)
  local outs_arr = ffi.new("tide_tensor *[?]", n)
  local outs, given = {}, list
  list = {}
  for i = 1, n do
    local x = given[i]
    if x == nil then binding.error(fmt("%s: tensor %d is nil", what, i)) end
    if variable.is_variable(x) then x = variable.read(x) end
    if not binding.istensor(x) then
      binding.error(fmt("%s: tensor %d must be a tensor or a Variable, got %s", what, i, type(x)))
    end
    list[i] = x
  end
  local a = ffi.new("tide_attrs")
  a.n = bucket_bytes or 0
  for i = 1, n do
    outs[i] = Tensor()
    outs_arr[i - 1] = outs[i]
    ins[i - 1] = list[i]
  end
  if C.tide_op_run(OP, a, n, ins, n, outs_arr) ~= 0 then binding.raise() end
  for i = 1, n do dispatch.finish(outs[i]) end
  if recorder.active and recorder.any_wanted(list) then recorder.op(OP, a, list, outs) end
  return outs
end

-- The gradient of a sum over the workers with respect to each worker's
-- input is the sum of the upstream gradients over the workers (every
-- worker's loss depends on every input through the sum).
grad.register("all_reduce_sum", function(node, dys)
  local list, at = {}, {}
  for k = 1, #node.inputs do
    if dys[k] ~= nil then
      list[#list + 1] = dys[k]
      at[#at + 1] = k
    end
  end
  local sums = M.op(list, node.attrs and tonumber(node.attrs.n) or 0, "all_reduce_sum gradient")
  local out = {}
  for j, k in ipairs(at) do out[k] = sums[j] end
  return unpack(out, 1, #node.inputs) -- one gradient per input, as values
end)

-- The dtype a tensor of dtype dt is summed in: float32/float64 as they
-- are, float16/bfloat16 in float32, integers and booleans in float64
-- (exact below 2^53).
local function work_dtype(dt)
  if dt == "float32" or dt == "float64" then return dt end
  if dt == "float16" or dt == "bfloat16" then return "float32" end
  return "float64"
end

-- The sums over every worker of a list of values (tensors, Variables,
-- numbers), each of its own dtype, in one call of the op (packed per
-- dtype); traced or eager.
function M.sum_list(values, bucket_bytes, what)
  local list, dts = {}, {}
  for i = 1, table.maxn(values) do
    local x = values[i]
    if x == nil then binding.error(fmt("%s: value %d is nil; expected a tensor, a Variable or a number", what, i)) end
    if variable.is_variable(x) then x = variable.read(x) end
    if not binding.istensor(x) then
      local ok, t = pcall(convert.tensor, x, nil, what)
      if not ok or t == nil then
        binding.error(fmt("%s: value %d must be a tensor, a Variable or a number, got %s", what, i, type(x)))
      end
      x = t
    end
    local dt = x.dtype
    if dt == "string" then binding.error(fmt("%s: value %d is a string tensor; strings cannot be summed", what, i)) end
    dts[i] = dt
    local w = work_dtype(dt)
    list[i] = w == dt and x or math_ops.cast(x, w)
  end
  local sums = M.op(list, bucket_bytes, what)
  for i = 1, #sums do
    if work_dtype(dts[i]) ~= dts[i] then sums[i] = math_ops.cast(sums[i], dts[i]) end
  end
  return sums
end

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

-- Join the world of workers (MPI when mpirun started this process; a
-- world of one otherwise); later calls do nothing.
local function join()
  if C.tide_dist_init() ~= 0 then binding.raise() end
end

-- The value of a tensor, variable or Lua number/table as a concrete CPU tensor.
local function concrete(what, x)
  if variable.is_variable(x) then x = variable.read(x) end
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
  if type(x) == "table" and not binding.istensor(x) then return M.sum_list(x, bytes, what) end
  return M.sum_list({ x }, bytes, what)[1]
end

-- The raw registry op all_reduce_sum on a list of float32/float64 tensors
-- (no casting): the list of their sums over the workers.
M.all_reduce_op = M.op

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

M.join, M.concrete = join, concrete

return M
