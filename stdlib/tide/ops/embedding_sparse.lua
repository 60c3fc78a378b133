-- stdlib/tide/ops/embedding_sparse.lua — tf.nn.embedding_lookup_sparse and safe_embedding_lookup_sparse: rows of
-- params picked by a SparseTensor of ids (anything with indices, values and dense_shape: the class sits floors up),
-- weighted and combined per row (sum, mean, sqrtn) with segment sums, so they trace and differentiate into params.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local segment = require "tide.ops.segment"
local create = require "tide.ops.create"

local M = {}
local fmt = string.format
local COMBINERS = { sum = true, mean = true, sqrtn = true }

local function is_sparse(v)
  return type(v) == "table" and not binding.istensor(v) and v.indices ~= nil and v.values ~= nil and v.dense_shape ~= nil
end

local function params_arg(op, p)
  if type(p) == "table" and not binding.istensor(p) and not p.read_value then
    if #p == 0 then binding.error(op .. ": params is an empty list") end
    local parts = {}
    for i, t in ipairs(p) do parts[i] = convert.arg(t, op .. " (params)") end
    return #parts == 1 and parts[1] or shape.concat(parts, 0) -- "div": the blocks in order
  end
  return convert.arg(p, op .. " (params)")
end

-- Rows of params for ids, each scaled down to an l2 norm of max_norm when longer (TF's clip_by_norm per row).
local function lookup(p, ids, max_norm)
  local e = shape.gather(p, ids)
  if max_norm == nil then return e end
  local axes = {}
  for i = 1, e.ndim - 1 do axes[i] = i end
  local norm = m.sqrt(reduce.reduce_sum(m.square(e), axes, true))
  return m.mul(e, m.minimum(m.div_no_nan(m.cast(max_norm, e.dtype), norm), 1))
end

-- weights [n] shaped to broadcast over rows of embeddings e.
local function per_row(w, e)
  local s = { -1 }
  for i = 2, e.ndim do s[i] = 1 end
  return shape.reshape(w, s)
end

-- The combination of the rows e[i] * w[i] by segment (row of sp_ids), rows = nseg (a count) or the sorted ids' last + 1.
local function combine(e, w, seg, combiner, nseg)
  local function sum(v)
    if nseg then return segment.unsorted_segment_sum(v, seg, nseg) end
    return segment.segment_sum(v, seg)
  end
  local wr = per_row(w, e)
  local total = sum(m.mul(e, wr))
  if combiner == "sum" then return total end
  local denom = combiner == "mean" and sum(wr) or m.sqrt(sum(m.square(wr)))
  return m.div_no_nan(total, denom)
end

local function check(op, params, sp_ids, sp_weights, combiner)
  if not is_sparse(sp_ids) then binding.error(op .. ": sp_ids must be a SparseTensor") end
  if sp_weights ~= nil and not is_sparse(sp_weights) then binding.error(op .. ": sp_weights must be nil or a SparseTensor") end
  combiner = combiner == nil and "mean" or combiner
  if not COMBINERS[combiner] then
    binding.error(fmt("%s: combiner must be one of 'mean', 'sqrtn' or 'sum', got %s", op, tostring(combiner)))
  end
  local p = params_arg(op, params)
  if not dtype.is_float[p.dt] then binding.error(fmt("%s: params must be a float tensor, got %s", op, dtype.names[p.dt])) end
  local ids = convert.arg(sp_ids.values, op .. " (sp_ids.values)")
  if not dtype.is_int[ids.dt] then binding.error(fmt("%s: sp_ids' values must be integer ids, got %s", op, dtype.names[ids.dt])) end
  return p, ids, combiner
end

-- embedding_lookup_sparse(params, sp_ids, sp_weights, {combiner="mean", max_norm=nil}) as tf.nn's: [rows, dims of
-- params past the first], rows the last row id of sp_ids + 1 (TF's sorted segments); sp_weights nil weighs each id 1.
function M.embedding_lookup_sparse(params, sp_ids, sp_weights, ...)
  local op = "embedding_lookup_sparse"
  local o = args.parse(op, { "combiner", "max_norm", "name", "allow_fast_lookup" }, ...)
  local p, ids, combiner = check(op, params, sp_ids, sp_weights, o.combiner)
  local seg = m.cast(sp_ids.indices:slice { {}, 0 }, "int32")
  local e = lookup(p, ids, o.max_norm)
  local w = sp_weights and m.cast(convert.arg(sp_weights.values, op), dtype.names[p.dt]) or create.ones_like(ids, dtype.names[p.dt])
  return combine(e, w, seg, combiner)
end

-- safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=nil, {combiner="mean", default_id=nil,
-- max_norm=nil}) as tf.nn's, for 2-D sparse_ids: ids below 0 (and, but for "sum", weights <= 0) count as absent;
-- a row with none gets
-- params[default_id], or zeros; [dense_shape[0], dims of params past the first].
function M.safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights, ...)
  local op = "safe_embedding_lookup_sparse"
  local o = args.parse(op, { "combiner", "default_id", "max_norm", "name", "partition_strategy", "allow_fast_lookup" }, ...)
  local p, ids, combiner = check(op, embedding_weights, sparse_ids, sparse_weights, o.combiner)
  local ds = convert.arg(sparse_ids.dense_shape, op)
  if ds.ndim ~= 1 or (ds.dims[0] >= 0 and tonumber(ds.dims[0]) ~= 2) then
    binding.error(op .. ": sparse_ids must be 2-D (rank-2 dense_shape); reshape higher ranks first")
  end
  local rows = m.cast(ds[0], "int32")
  local seg = m.cast(sparse_ids.indices:slice { {}, 0 }, "int32")
  local dt = dtype.names[p.dt]
  local valid = m.greater_equal(ids, 0)
  local w = create.ones_like(ids, dt)
  if sparse_weights then
    local sw = m.cast(convert.arg(sparse_weights.values, op), dt)
    if combiner ~= "sum" then valid = m.logical_and(valid, m.greater(sw, 0)) end -- (TF keeps any weight for "sum")
    w = sw
  end
  w = m.where(valid, w, convert.tensor(0, dt, op))
  local e = lookup(p, m.where(valid, ids, create.zeros_like(ids)), o.max_norm)
  local out = combine(e, w, seg, combiner, rows)
  if o.default_id ~= nil then -- rows with no valid id: params[default_id]
    local count = segment.unsorted_segment_sum(m.cast(valid, "int32"), seg, rows)
    local empty = m.equal(count, 0)
    local def = lookup(p, convert.tensor({ args.int(op, "default_id", o.default_id) }, "int32", op), o.max_norm)
    out = m.where(per_row(empty, out), def, out)
  end
  return out
end

return M
