-- stdlib/tide/ops/reduce.lua — reductions (reduce_sum ... reduce_all, with short
-- names sum ... all), their composites (logsumexp, variance, std, euclidean_norm,
-- count_nonzero), argmax/argmin, the scans (cumsum, cumprod,
-- cumulative_logsumexp), sort/argsort and top_k, as TF 2 spells them.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local C = binding.C

local M = {}

local stop_gradient = require("tide.tape_recorder").stop_gradient

local KEEPDIMS, EXCLUSIVE, REVERSE, DESCENDING =
  C.TIDE_ATTR_KEEPDIMS, C.TIDE_ATTR_EXCLUSIVE, C.TIDE_ATTR_REVERSE, C.TIDE_ATTR_DESCENDING

-- Reject non-float inputs of the float-only composites, naming the op.
local function check_float(op, x)
  if not dtype.is_float[tonumber(x.dt)] then
    binding.error(string.format("%s: input must be a float tensor, got %s (use :cast(\"float32\"))", op,
      dtype.names[tonumber(x.dt)]))
  end
end

---------------------------------------------------------------------------
-- Reductions: reduce_X(input, axis=nil, keepdims=false)
---------------------------------------------------------------------------

-- reduce_X(x, {}) reduces over no axes (TF's axis=[]): {} there is the list.
local AXIS_ARGS = { "axis", "keepdims", lists = { axis = true } }

local function reducer(name, op)
  return function(x, ...)
    local o = args.parse(name, AXIS_ARGS, ...)
    x = convert.arg(x, name)
    local axes = args.int_list(name, "axis", o.axis)
    local keep = args.bool(name, "keepdims", o.keepdims, false)
    -- TF: an empty axis list reduces nothing. The C op reads "no axes" as all
    -- axes, so the input passes through unchanged here.
    if axes and #axes == 0 then return x end
    local a = dispatch.attrs()
    if axes then dispatch.set_ints(a, axes, name) end
    if keep then a.flags = KEEPDIMS end
    return dispatch.run1(op, a, x)
  end
end

M.reduce_sum = reducer("reduce_sum", C.TIDE_OP_SUM)
M.reduce_mean = reducer("reduce_mean", C.TIDE_OP_MEAN)
M.reduce_max = reducer("reduce_max", C.TIDE_OP_MAX)
M.reduce_min = reducer("reduce_min", C.TIDE_OP_MIN)
M.reduce_prod = reducer("reduce_prod", C.TIDE_OP_PROD)
M.reduce_any = reducer("reduce_any", C.TIDE_OP_ANY)
M.reduce_all = reducer("reduce_all", C.TIDE_OP_ALL)

-- reduce_logsumexp(x, axis, keepdims): log(sum(exp(x))) without overflow, as TF:
-- shift by the max, but by 0 where the max is not finite, so rows of -inf give
-- -inf (not NaN) and +inf gives +inf. The gradient is softmax(x) * dy: the
-- shift carries none (TF stops it too; it cancels out of the value). A row of
-- only -inf gets a zero gradient where TF's is NaN (0 * inf through log);
-- rows holding +inf or NaN get NaN, as in TF.
function M.reduce_logsumexp(x, ...)
  local o = args.parse("reduce_logsumexp", AXIS_ARGS, ...)
  x = convert.arg(x, "reduce_logsumexp")
  check_float("reduce_logsumexp", x)
  local keep = args.bool("reduce_logsumexp", "keepdims", o.keepdims, false)
  local axis = o.axis
  local raw = M.reduce_max(stop_gradient(x), axis, true)
  local shift = math_ops.where(math_ops.isfinite(raw), raw, 0)
  local total = M.reduce_sum(math_ops.exp(math_ops.sub(x, shift)), axis, keep)
  -- log(0) = -inf is the value of an all -inf row; the guarded log keeps its
  -- gradient 0 instead of 0 * inf.
  local empty = math_ops.equal(total, 0)
  local lse = math_ops.where(empty, -math.huge, math_ops.log(math_ops.where(empty, 1, total)))
  -- Summing the kept size-1 dims away reshapes the shift to the result's shape.
  if not keep then shift = M.reduce_sum(shift, axis, false) end
  return math_ops.add(lse, shift)
end

-- reduce_variance(x, axis, keepdims): the mean of squared deviations from the
-- mean (two passes, so large offsets do not cancel). Float inputs only, as TF.
function M.reduce_variance(x, ...)
  local o = args.parse("reduce_variance", AXIS_ARGS, ...)
  x = convert.arg(x, "reduce_variance")
  check_float("reduce_variance", x)
  local keep = args.bool("reduce_variance", "keepdims", o.keepdims, false)
  local means = M.reduce_mean(x, o.axis, true)
  return M.reduce_mean(math_ops.square(math_ops.sub(x, means)), o.axis, keep)
end

-- reduce_std(x, axis, keepdims): the square root of reduce_variance.
function M.reduce_std(x, ...)
  local o = args.parse("reduce_std", AXIS_ARGS, ...)
  x = convert.arg(x, "reduce_std")
  check_float("reduce_std", x)
  return math_ops.sqrt(M.reduce_variance(x, o.axis, args.bool("reduce_std", "keepdims", o.keepdims, false)))
end

-- Check a composite's axes before its parts run, so that an error names the
-- composite (not the reduce_sum inside it); the parts check them again.
local function check_axes(op, x, axis)
  local axes = args.int_list(op, "axis", axis)
  local nd = x.ndim
  if not axes or nd < 0 then return end
  local seen = {}
  for _, a in ipairs(axes) do
    if a < -nd or a >= nd then
      binding.error(string.format("%s: axis %d is out of range for a tensor of rank %d (valid: %d to %d)", op, a, nd,
        -nd, nd - 1))
    end
    local d = a < 0 and a + nd or a
    if seen[d] then binding.error(string.format("%s: axis %d is repeated", op, a)) end
    seen[d] = true
  end
end

-- reduce_euclidean_norm(x, axis, keepdims): sqrt(sum(x^2)), as TF computes
-- it (no rescaling: squares overflow and underflow as TF's do). Integer
-- inputs give integers as TF's: squares and sums wrap in the dtype, the root
-- truncates, and a sum that wrapped negative gives 0.
function M.reduce_euclidean_norm(x, ...)
  local o = args.parse("reduce_euclidean_norm", AXIS_ARGS, ...)
  x = convert.arg(x, "reduce_euclidean_norm")
  local keep = args.bool("reduce_euclidean_norm", "keepdims", o.keepdims, false)
  local dt = tonumber(x.dt)
  if dt == C.TIDE_BOOL then
    binding.error("reduce_euclidean_norm: input must be a numeric tensor (not bool), got bool")
  end
  check_axes("reduce_euclidean_norm", x, o.axis)
  local total = M.reduce_sum(math_ops.square(x), o.axis, keep)
  if dtype.is_float[dt] then return math_ops.sqrt(total) end
  return math_ops.cast(math_ops.sqrt(math_ops.cast(total, "float64")), dtype.names[dt])
end

-- count_nonzero(input, axis, keepdims, dtype="int64"): how many elements are
-- not zero (not false for bool; NaN counts, -0.0 does not), as TF's.
function M.count_nonzero(x, ...)
  local o = args.parse("count_nonzero", { "axis", "keepdims", "dtype", lists = { axis = true } }, ...)
  x = convert.arg(x, "count_nonzero")
  local keep = args.bool("count_nonzero", "keepdims", o.keepdims, false)
  local out = dtype.names[dtype.code(o.dtype == nil and "int64" or o.dtype, "count_nonzero")]
  check_axes("count_nonzero", x, o.axis)
  local zero = 0
  if tonumber(x.dt) == C.TIDE_BOOL then zero = false end
  local counts = M.reduce_sum(math_ops.cast(math_ops.not_equal(x, zero), "int64"), o.axis, keep)
  return math_ops.cast(counts, out)
end

-- Short names, also the method forms: x:sum{axis=0, keepdims=true}.
M.sum, M.mean, M.max, M.min, M.prod = M.reduce_sum, M.reduce_mean, M.reduce_max, M.reduce_min, M.reduce_prod
M.any, M.all = M.reduce_any, M.reduce_all
M.logsumexp, M.variance, M.std = M.reduce_logsumexp, M.reduce_variance, M.reduce_std

---------------------------------------------------------------------------
-- argmax / argmin (input, axis=nil -> 0 as TF, output_type="int64")
---------------------------------------------------------------------------

local function argreducer(name, op)
  return function(x, ...)
    local o = args.parse(name, { "axis", "output_type" }, ...)
    x = convert.arg(x, name)
    local axis = o.axis == nil and 0 or args.int(name, "axis", o.axis)
    local dt = dtype.code(o.output_type == nil and "int64" or o.output_type, name)
    local a = dispatch.attrs()
    a.axis = axis
    a.dtype = dt
    return dispatch.run1(op, a, x)
  end
end

M.argmax = argreducer("argmax", C.TIDE_OP_ARGMAX)
M.argmin = argreducer("argmin", C.TIDE_OP_ARGMIN)

---------------------------------------------------------------------------
-- cumsum / cumprod (x, axis=0, exclusive=false, reverse=false), as tf.math.cumsum
---------------------------------------------------------------------------

local function scanner(name, op)
  return function(x, ...)
    local o = args.parse(name, { "axis", "exclusive", "reverse" }, ...)
    x = convert.arg(x, name)
    local axis = o.axis == nil and 0 or args.int(name, "axis", o.axis)
    local flags = 0
    if args.bool(name, "exclusive", o.exclusive, false) then flags = flags + EXCLUSIVE end
    if args.bool(name, "reverse", o.reverse, false) then flags = flags + REVERSE end
    local a = dispatch.attrs()
    a.axis = axis
    a.flags = flags
    return dispatch.run1(op, a, x)
  end
end

M.cumsum = scanner("cumsum", C.TIDE_OP_CUMSUM)
M.cumprod = scanner("cumprod", C.TIDE_OP_CUMPROD)
-- cumulative_logsumexp(x, axis=0, exclusive=false, reverse=false): the log of
-- cumsum(exp(x)) without overflow or early underflow (float dtypes).
M.cumulative_logsumexp = scanner("cumulative_logsumexp", C.TIDE_OP_CUMULATIVE_LOGSUMEXP)

---------------------------------------------------------------------------
-- sort / argsort (values, axis=-1, direction="ASCENDING"); top_k
---------------------------------------------------------------------------

-- True for "DESCENDING", false for "ASCENDING" (TF accepts only these two).
local function descending(op, direction)
  if direction == nil or direction == "ASCENDING" then return false end
  if direction == "DESCENDING" then return true end
  binding.error(string.format("%s: direction must be \"ASCENDING\" or \"DESCENDING\", got %s", op, tostring(direction)))
end

-- sort(values, axis=-1, direction): the values sorted along axis. NaN sorts
-- above every number (last ascending, first descending); equal values keep
-- their order.
function M.sort(values, ...)
  local o = args.parse("sort", { "axis", "direction" }, ...)
  values = convert.arg(values, "sort")
  local axis = o.axis == nil and -1 or args.int("sort", "axis", o.axis)
  local a = dispatch.attrs()
  a.axis = axis
  if descending("sort", o.direction) then a.flags = DESCENDING end
  return dispatch.run1(C.TIDE_OP_SORT, a, values)
end

-- argsort(values, axis=-1, direction, stable=false): int32 indices that sort
-- values along axis. The sort is always stable, so `stable` changes nothing.
function M.argsort(values, ...)
  local o = args.parse("argsort", { "axis", "direction", "stable" }, ...)
  values = convert.arg(values, "argsort")
  local axis = o.axis == nil and -1 or args.int("argsort", "axis", o.axis)
  args.bool("argsort", "stable", o.stable, false)
  local a = dispatch.attrs()
  a.axis = axis
  a.dtype = C.TIDE_INT32
  if descending("argsort", o.direction) then a.flags = DESCENDING end
  return dispatch.run1(C.TIDE_OP_ARGSORT, a, values)
end

-- top_k(input, k=1, sorted=true, index_type="int32"): the k largest entries
-- along the last axis and their indices, largest first; equal values: lower
-- index first. Results are always sorted (TF leaves the order unspecified
-- when sorted=false).
function M.top_k(input, ...)
  local o = args.parse("top_k", { "k", "sorted", "index_type" }, ...)
  input = convert.arg(input, "top_k")
  local k = o.k == nil and 1 or args.int("top_k", "k", o.k)
  args.bool("top_k", "sorted", o.sorted, true)
  local itype = o.index_type == nil and C.TIDE_INT32 or dtype.code(o.index_type, "top_k")
  if itype ~= C.TIDE_INT32 and itype ~= C.TIDE_INT64 then
    binding.error(string.format("top_k: index_type must be int32 or int64, got %s", dtype.names[itype]))
  end
  local a = dispatch.attrs()
  a.n = k
  local values, indices = dispatch.run(C.TIDE_OP_TOP_K, a, { input }, 2)
  if itype == C.TIDE_INT64 then indices = math_ops.cast(indices, "int64") end
  return values, indices
end

return M
