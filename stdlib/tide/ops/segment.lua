-- stdlib/tide/ops/segment.lua — TF's segment reductions (tf.math.segment_* over
-- sorted ids, tf.math.unsorted_segment_* over any ids with num_segments).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local dynamic_shape = require "tide.ops.dynamic_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local fmt = string.format

-- A tensor argument (Lua numbers and tables convert); nil is an error naming it.
local function input(v, op, pos, what)
  if istype(Tensor, v) then return v end
  if v == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what)) end
  return convert.arg(v, op, pos)
end

-- segment_<kind>(data, segment_ids) as tf.math.segment_<kind>: the rows of
-- data (along dim 0) combined per segment id. The ids (int32 or int64, one per
-- row) must be sorted and non-negative; the result has last id + 1 rows
-- (known when the op runs: a traced result has a None dim), an empty segment
-- giving 0 (1 for prod). mean divides by the count (integers truncate).
local function sorted_op(name, code)
  return function(data, segment_ids, ...)
    args.parse(name, {}, ...)
    data = input(data, name, 1, "data")
    segment_ids = input(segment_ids, name, 2, "segment_ids")
    return dispatch.run(code, nil, { data, segment_ids })
  end
end

M.segment_sum = sorted_op("segment_sum", C.TIDE_OP_SEGMENT_SUM)
M.segment_mean = sorted_op("segment_mean", C.TIDE_OP_SEGMENT_MEAN)
M.segment_max = sorted_op("segment_max", C.TIDE_OP_SEGMENT_MAX)
M.segment_min = sorted_op("segment_min", C.TIDE_OP_SEGMENT_MIN)
M.segment_prod = sorted_op("segment_prod", C.TIDE_OP_SEGMENT_PROD)

-- num_segments as an int scalar tensor: a Lua number (int32, or int64 when
-- large), or a tensor (a traced one is read when the graph runs).
local function num_segments_arg(op, v)
  v = convert.unvariable(v)
  if v == nil then binding.error(op .. ": num_segments is required") end
  if istype(Tensor, v) then
    if v.dt ~= C.TIDE_INT32 and v.dt ~= C.TIDE_INT64 then
      binding.error(fmt("%s: num_segments must be an int32 or int64 tensor, got %s", op, dtype.names[v.dt]))
    end
    return v
  end
  local n = args.int(op, "num_segments", v)
  if n < 0 then binding.error(fmt("%s: num_segments must not be negative, got %d", op, n)) end
  return convert.tensor(n, n <= 2147483647 and "int32" or "int64", op)
end

-- The three arguments of an unsorted segment op, checked and converted.
local function unsorted_args(name, data, segment_ids, num_segments, ...)
  args.parse(name, {}, ...)
  data = input(data, name, 1, "data")
  segment_ids = input(segment_ids, name, 2, "segment_ids")
  return data, segment_ids, num_segments_arg(name, num_segments)
end

-- unsorted_segment_<kind>(data, segment_ids, num_segments) as
-- tf.math.unsorted_segment_<kind>: segment_ids (int32 or int64) has the shape
-- of a prefix of data's; each slice of data goes to the segment its id names,
-- giving [num_segments] + data.shape[rank(segment_ids):]. Negative ids are
-- dropped; an id >= num_segments is an error. An empty segment gives 0 (sum),
-- 1 (prod), and the dtype's lowest (max) or highest (min) finite value.
local function unsorted_op(name, code)
  return function(...)
    local data, ids, n = unsorted_args(name, ...)
    return dispatch.run(code, nil, { data, ids, n })
  end
end

M.unsorted_segment_sum = unsorted_op("unsorted_segment_sum", C.TIDE_OP_UNSORTED_SEGMENT_SUM)
M.unsorted_segment_max = unsorted_op("unsorted_segment_max", C.TIDE_OP_UNSORTED_SEGMENT_MAX)
M.unsorted_segment_min = unsorted_op("unsorted_segment_min", C.TIDE_OP_UNSORTED_SEGMENT_MIN)
M.unsorted_segment_prod = unsorted_op("unsorted_segment_prod", C.TIDE_OP_UNSORTED_SEGMENT_PROD)

-- The rows per segment (at least 1), shaped to broadcast against the segment
-- sums: [num_segments, 1, ...] in data's dtype (TF's _unsorted_segment_N).
local function segment_counts(data, ids, n)
  local ones = create.ones_like(ids, { dtype = dtype.names[data.dt] })
  local count = dispatch.run(C.TIDE_OP_UNSORTED_SEGMENT_SUM, nil, { ones, ids, n })
  if data.ndim < 0 or ids.ndim < 0 then -- the size-1 dims counted when the graph runs
    local extra = math_ops.sub(dynamic_shape.rank(data), dynamic_shape.rank(ids))
    local ones_ = create.ones(shape_ops.reshape(extra, { 1 }), { dtype = "int32" })
    local target = shape_ops.concat({ convert.tensor({ -1 }, "int32"), ones_ }, 0)
    return math_ops.maximum(shape_ops.reshape(count, target), 1)
  end
  local shape = { -1 }
  for i = 2, data.ndim - ids.ndim + 1 do shape[i] = 1 end
  return math_ops.maximum(shape_ops.reshape(count, shape), 1)
end

-- unsorted_segment_mean(data, segment_ids, num_segments): the sum over the
-- count, as TF composes it (integer data divides as TF's truediv: float32 for
-- int8/uint8, float64 for int32/int64); an empty segment gives 0.
function M.unsorted_segment_mean(...)
  local data, ids, n = unsorted_args("unsorted_segment_mean", ...)
  local sum = dispatch.run(C.TIDE_OP_UNSORTED_SEGMENT_SUM, nil, { data, ids, n })
  return math_ops.div(sum, segment_counts(data, ids, n))
end

-- unsorted_segment_sqrt_n(data, segment_ids, num_segments): the sum over the
-- square root of the count (float data only, as TF).
function M.unsorted_segment_sqrt_n(...)
  local data, ids, n = unsorted_args("unsorted_segment_sqrt_n", ...)
  if not dtype.is_float[data.dt] then
    binding.error(fmt("unsorted_segment_sqrt_n: data must be a float tensor, got %s (use :cast(\"float32\"))",
      dtype.names[data.dt]))
  end
  local sum = dispatch.run(C.TIDE_OP_UNSORTED_SEGMENT_SUM, nil, { data, ids, n })
  return math_ops.div(sum, math_ops.sqrt(segment_counts(data, ids, n)))
end

return M
