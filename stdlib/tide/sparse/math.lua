-- stdlib/tide/sparse/math.lua — tf.sparse's arithmetic on tide.SparseTensor: map_values, maximum/minimum,
-- reduce_sum/reduce_max, softmax, sparse_dense_matmul (differentiable in the values and the dense operand),
-- the segment ops over dense rows, bincount and cross.
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local linalg_ops = require "tide.ops.linalg"
local segment = require "tide.ops.segment"
local more = require "tide.ops.math_more"
local nn = require "tide.ops.nn"
local sparse = require "tide.sparse_tensor"
local sops = require "tide.sparse.ops"

local M = {}
local m, r, s = math_ops, reduce_ops, shape_ops
local fmt = string.format
local SparseTensor = sparse.SparseTensor
local sp_arg, build = sops.sp_arg, sops.build

-- map_values(op, ...): op applied to the values of the SparseTensor arguments (all of one indices), the
-- other arguments passed as they are; the result has those indices.
function M.map_values(op, ...)
  if type(op) ~= "function" then binding.error("tide.sparse.map_values: op must be a function") end
  local a, n = { ... }, select("#", ...)
  local first
  for i = 1, n do
    if sparse.is_sparse(a[i]) then
      if first and table.concat(first.indices:reshape { -1 }:totable(), ",") ~=
          table.concat(a[i].indices:reshape { -1 }:totable(), ",") then
        binding.error("tide.sparse.map_values: the SparseTensor arguments must have the same indices")
      end
      first = first or a[i]
      a[i] = a[i].values
    end
  end
  if not first then binding.error("tide.sparse.map_values: no SparseTensor among the arguments") end
  local v = op(unpack(a, 1, n))
  return SparseTensor(first.indices, v, first.dense_shape)
end

-- maximum/minimum(sp_a, sp_b): over the union of the indices (a missing entry counts as 0).
local function union(op, f)
  return function(a, b)
    sp_arg(op, a, "sp_a")
    sp_arg(op, b, "sp_b")
    local da, db = a:to_dense(), b:to_dense()
    local both = sops.add(SparseTensor(a.indices, m.cast(create_ops.ones_like(a.values), "float64"), a.dense_shape),
      SparseTensor(b.indices, m.cast(create_ops.ones_like(b.values), "float64"), b.dense_shape))
    return SparseTensor(both.indices, require("tide.ops.index").gather_nd(f(da, db), both.indices), both.dense_shape)
  end
end
M.maximum = union("maximum", m.maximum)
M.minimum = union("minimum", m.minimum)

-- The reduced axes (nil: all) of a rank-`rank` input, non-negative.
local function axes_of(op, axis, rank)
  if axis == nil then return nil end
  local list = type(axis) == "table" and axis or { axis }
  local out = {}
  for i, a in ipairs(list) do
    if type(a) ~= "number" or a < -rank or a >= rank then
      binding.error(fmt("tide.sparse.%s: axis %s out of range for rank %d", op, tostring(a), rank))
    end
    out[i] = a < 0 and a + rank or a
  end
  return out
end

local function reducer(op, f, fill)
  return function(sp, axis, keepdims, output_is_sparse)
    if type(axis) == "table" and axis.axis ~= nil or (type(axis) == "table" and next(axis) and
        type(next(axis)) == "string") then
      axis, keepdims, output_is_sparse = axis.axis, axis.keepdims, axis.output_is_sparse
    end
    sp_arg(op, sp)
    local rank = #sp:shape_list()
    local axes = axes_of(op, axis, rank)
    local dense
    if fill then
      -- entries not present take no part (the fill is the reduction's identity); a result with none is 0
      local lowest = sp.values.dtype:match("^float") and -math.huge or -2 ^ 31
      local base = create_ops.fill(sp:shape_list(), lowest, { dtype = sp.values.dtype })
      dense = sp.values.dims[0] > 0 and require("tide.ops.index").tensor_scatter_nd_update(base, sp.indices,
        sp.values) or base
      local out = f(dense, axes, keepdims)
      out = m.where(m.equal(out, lowest), create_ops.zeros_like(out), out)
      dense = out
    else
      dense = f(sp:to_dense(), axes, keepdims)
    end
    if output_is_sparse then return sparse.from_dense(dense) end
    return dense
  end
end
M.reduce_sum = reducer("reduce_sum", r.reduce_sum, false)
M.reduce_max = reducer("reduce_max", r.reduce_max, true)

-- Segment ids of the entries by all their coordinates but the last (a row id, 0-based), and the row count.
local function rows_of(sp)
  local shape = sp:shape_list()
  local ids, count = {}, 1
  for d = 1, #shape - 1 do count = count * shape[d] end
  for k, row in ipairs(sp.indices:totable()) do
    local id = 0
    for d = 1, #row - 1 do id = id * shape[d] + row[d] end
    ids[k] = id
  end
  return ids, count
end

-- softmax(sp_input): the softmax of each innermost row's present values (rank 2 or more).
function M.softmax(sp)
  sp_arg("softmax", sp)
  if #sp:shape_list() < 2 then binding.error("tide.sparse.softmax: sp_input must have rank 2 or more") end
  local ids, count = rows_of(sp)
  if #ids == 0 then return sp end
  local seg = convert.tensor(ids, "int32")
  local mx = s.gather(segment.unsorted_segment_max(sp.values, seg, count), seg)
  local e = m.exp(m.sub(sp.values, require("tide.tape_recorder").stop_gradient(mx)))
  local sum = s.gather(segment.unsorted_segment_sum(e, seg, count), seg)
  return SparseTensor(sp.indices, m.div(e, sum), sp.dense_shape)
end

-- sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False): the dense product of a rank-2 SparseTensor
-- and a dense matrix: each value times its column's row of b, summed into its row (gradients reach the
-- values and b through gather, multiply and segment_sum).
function M.sparse_dense_matmul(a, b, adjoint_a, adjoint_b)
  if type(adjoint_a) == "table" then adjoint_a, adjoint_b = adjoint_a.adjoint_a, adjoint_a.adjoint_b end
  sp_arg("sparse_dense_matmul", a, "sp_a")
  if not binding.istensor(b) then binding.error("tide.sparse.sparse_dense_matmul: b must be a dense tensor") end
  local shape = a:shape_list()
  if #shape ~= 2 or b.ndim ~= 2 then
    binding.error(fmt("tide.sparse.sparse_dense_matmul: sp_a and b must be matrices, got ranks %d and %d", #shape,
      b.ndim))
  end
  if adjoint_b then b = linalg_ops.matrix_transpose(b) end
  local rows, cols = shape[1], shape[2]
  local ri, ci = 0, 1
  if adjoint_a then rows, cols, ri, ci = cols, rows, 1, 0 end
  if b.shape[1] ~= cols then
    binding.error(fmt("tide.sparse.sparse_dense_matmul: sp_a has %d columns but b has %d rows", cols, b.shape[1]))
  end
  if a.values.dtype ~= b.dtype then
    binding.error(fmt("tide.sparse.sparse_dense_matmul: sp_a's values are %s but b is %s", a.values.dtype, b.dtype))
  end
  local idx = a.indices
  local row = m.cast(s.gather(idx, ri, 1), "int32")
  local col = m.cast(s.gather(idx, ci, 1), "int32")
  local contrib = m.mul(s.expand_dims(a.values, 1), s.gather(b, col))
  return segment.unsorted_segment_sum(contrib, row, rows)
end

-- sampled_addmm(indices, values, dense_shape, mat1, mat2, beta=1, alpha=1): at each index (row, col) of the
-- sampled matrix, alpha (mat1 @ mat2)[row, col] + beta value; (indices, values, dense_shape) as TF's, batched
-- over leading dims (indices [..., N, 2]). Differentiable in values, mat1 and mat2.
function M.sampled_addmm(indices, values, dense_shape, mat1, mat2, opts)
  opts = opts or {}
  for _, a in ipairs { { indices, "indices" }, { values, "values" }, { mat1, "mat1" }, { mat2, "mat2" } } do
    if not binding.istensor(a[1]) then binding.error("tide.sparse.sampled_addmm: " .. a[2] .. " must be a tensor") end
  end
  if indices.ndim < 2 or indices.shape[indices.ndim] ~= 2 then
    binding.error(fmt("tide.sparse.sampled_addmm: indices must be [..., N, 2], got %s", tostring(indices.shape)))
  end
  if mat1.ndim ~= indices.ndim or mat2.ndim ~= indices.ndim then
    binding.error("tide.sparse.sampled_addmm: mat1 and mat2 must have indices' rank (matrices, batched alike)")
  end
  if mat1.shape[mat1.ndim] ~= mat2.shape[mat2.ndim - 1] then
    binding.error(fmt("tide.sparse.sampled_addmm: mat1 %s and mat2 %s do not multiply", tostring(mat1.shape),
      tostring(mat2.shape)))
  end
  local bd = indices.ndim - 2
  local idx = m.cast(indices, "int32")
  local row = s.gather(idx, 0, indices.ndim - 1)
  local col = s.gather(idx, 1, indices.ndim - 1)
  local a = s.gather(mat1, row, { axis = bd, batch_dims = bd })
  local b = s.gather(linalg_ops.matrix_transpose(mat2), col, { axis = bd, batch_dims = bd })
  local prod = r.reduce_sum(m.mul(a, b), -1)
  local out = m.add(m.mul(prod, opts.alpha or 1), m.mul(m.cast(values, prod.dtype), opts.beta or 1))
  return indices, out, dense_shape
end

-- segment_sum/mean/sqrt_n(data, indices, segment_ids, num_segments=None): the segment op over data's rows
-- picked by indices.
local function seg(op, f)
  return function(data, indices, ids, num_segments)
    if type(num_segments) == "table" then num_segments = num_segments.num_segments end
    for _, a in ipairs { { data, "data" }, { indices, "indices" }, { ids, "segment_ids" } } do
      if a[1] == nil then binding.error(fmt("tide.sparse.%s: %s is nil", op, a[2])) end
    end
    data = convert.arg(data, "tide.sparse." .. op)
    indices = convert.tensor(binding.istensor(indices) and indices:totable() or indices, "int32")
    ids = convert.tensor(binding.istensor(ids) and ids:totable() or ids, "int32")
    local rows = s.gather(data, indices)
    local n = num_segments or (r.reduce_max(ids):item() + 1)
    return f(rows, ids, n)
  end
end
M.segment_sum = seg("segment_sum", segment.unsorted_segment_sum)
M.segment_mean = seg("segment_mean", segment.unsorted_segment_mean)
M.segment_sqrt_n = seg("segment_sqrt_n", segment.unsorted_segment_sqrt_n)

-- bincount(values, weights=None, axis=0, minlength=None, maxlength=None, binary_output=False): the counts
-- (or summed weights) of a SparseTensor's (or a dense tensor's) values as a SparseTensor: of all values
-- (axis 0) or per row of a rank-2 input (axis -1); only nonzero counts are entries.
function M.bincount(values, opts)
  opts = opts or {}
  local sp = values
  if binding.istensor(values) then sp = sparse.from_dense(values) end
  sp_arg("bincount", sp, "values")
  local axis = opts.axis or 0
  local vals = sp.values:totable()
  local w = opts.weights and (sparse.is_sparse(opts.weights) and opts.weights.values or opts.weights):totable()
  local n = 0
  for _, v in ipairs(vals) do
    if v < 0 then binding.error("tide.sparse.bincount: values must be non-negative, got " .. v) end
    n = math.max(n, v + 1)
  end
  if opts.minlength then n = math.max(n, opts.minlength) end
  if opts.maxlength then n = math.min(n, opts.maxlength) end
  local per_row = axis == -1 or axis == 1
  if not per_row and axis ~= 0 then binding.error("tide.sparse.bincount: axis must be 0 or -1") end
  local counts, keys = {}, {}
  local idx = sp.indices:totable()
  for k, v in ipairs(vals) do
    if v < n then
      local kk = per_row and (idx[k][1] .. "," .. v) or tostring(v)
      if counts[kk] == nil then keys[#keys + 1] = { per_row and idx[k][1] or v, v, kk } end
      counts[kk] = (counts[kk] or 0) + (w and w[k] or 1)
    end
  end
  table.sort(keys, function(x, y) if x[1] ~= y[1] then return x[1] < y[1] end return x[2] < y[2] end)
  local rows, out = {}, {}
  for i, kv in ipairs(keys) do
    rows[i] = per_row and { kv[1], kv[2] } or { kv[2] }
    out[i] = opts.binary_output and 1 or counts[kv[3]]
  end
  local dt = w and (sparse.is_sparse(opts.weights) and opts.weights.values or opts.weights).dtype or sp.values.dtype
  local shape = per_row and { sp:shape_list()[1], n } or { n }
  local v = #out > 0 and convert.tensor(out, dt) or create_ops.zeros({ 0 }, dt)
  return SparseTensor(#rows > 0 and convert.tensor(rows, "int64") or create_ops.zeros({ 0, #shape }, "int64"), v,
    convert.tensor(shape, "int64"))
end

-- cross(inputs, separator="_X_"): per row, every combination of the inputs' string features joined (the
-- inputs SparseTensors or dense rank-2 string tensors of one batch size).
function M.cross(inputs, opts)
  local sep = (type(opts) == "table" and opts.separator) or (type(opts) == "string" and opts) or "_X_"
  if type(inputs) ~= "table" or #inputs == 0 then binding.error("tide.sparse.cross: inputs must be a non-empty list") end
  local per, batch = {}, nil
  for i, x in ipairs(inputs) do
    local rows = {}
    if sparse.is_sparse(x) then
      sp_arg("cross", x, "inputs[" .. i .. "]")
      local shp = x:shape_list()
      for r0 = 1, shp[1] do rows[r0] = {} end
      local vals = x.values:totable()
      for k, row in ipairs(x.indices:totable()) do table.insert(rows[row[1] + 1], tostring(vals[k])) end
    elseif binding.istensor(x) then
      if x.ndim ~= 2 then binding.error("tide.sparse.cross: a dense input must be rank 2 [batch, features]") end
      for r0, row in ipairs(x:totable()) do
        rows[r0] = {}
        for _, v in ipairs(row) do rows[r0][#rows[r0] + 1] = tostring(v) end
      end
    else binding.error("tide.sparse.cross: inputs[" .. i .. "] must be a SparseTensor or a tensor") end
    if batch and #rows ~= batch then binding.error("tide.sparse.cross: the inputs have different batch sizes") end
    batch = #rows
    per[i] = rows
  end
  local idx, vals, width = {}, {}, 0
  for b = 1, batch do
    local acc = { "" }
    for i = 1, #per do
      local nxt = {}
      for _, pre in ipairs(acc) do
        for _, v in ipairs(per[i][b]) do nxt[#nxt + 1] = i == 1 and v or (pre .. sep .. v) end
      end
      acc = nxt
    end
    for j, v in ipairs(acc) do
      idx[#idx + 1] = { b - 1, j - 1 }
      vals[#vals + 1] = v
    end
    width = math.max(width, #acc)
  end
  return SparseTensor(#idx > 0 and convert.tensor(idx, "int64") or create_ops.zeros({ 0, 2 }, "int64"),
    #vals > 0 and convert.tensor(vals, "string") or create_ops.zeros({ 0 }, "string"),
    convert.tensor({ batch, width }, "int64"))
end

return M
