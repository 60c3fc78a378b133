-- stdlib/tide/sparse/ops.lua — tf.sparse's ops on tide.SparseTensor that move indices: add, concat,
-- expand_dims, eye, fill_empty_rows, mask (of IndexedSlices), reset_shape, reshape, retain, slice, split,
-- transpose, to_indicator, maximum/minimum, the reductions, bincount and cross. Values go through tide ops
-- (they keep gradients); the index bookkeeping is Lua's, so these run eagerly (their result counts are data, as TF's).
local binding = require "tide.binding"
local convert = require "tide.convert"
local trace_context = require "tide.trace_context"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local sparse = require "tide.sparse_tensor"

local M = {}
local m, s = math_ops, shape_ops
local fmt = string.format
local SparseTensor = sparse.SparseTensor

-- The SparseTensor argument `what` of op, eager (an error names the op otherwise).
local function sp_arg(op, sp, what)
  if not sparse.is_sparse(sp) then
    binding.error(fmt("tide.sparse.%s: %s must be a tide.SparseTensor, got %s", op, what or "sp_input",
      binding.istensor(sp) and "a dense tensor" or type(sp)))
  end
  if trace_context.is_symbolic(sp.indices) or trace_context.is_symbolic(sp.dense_shape) then
    binding.error(fmt("tide.sparse.%s: works eagerly only (its indices are data)", op))
  end
  return sp
end
M.sp_arg = sp_arg

local function idx_table(sp) return sp.indices:totable() end
local function i64(list, rank)
  if #list == 0 then return create_ops.zeros({ 0, rank }, "int64") end
  return convert.tensor(list, "int64")
end
local function shape64(list)
  if #list == 0 then return create_ops.zeros({ 0 }, "int64") end
  return convert.tensor(list, "int64")
end
-- A SparseTensor of index rows (Lua lists), the values tensor picked from `values` at positions `take`
-- (0-based Lua list; nil: all) and a dense shape list.
local function build(rows, values, take, shape)
  local v = values
  if take then
    v = #take > 0 and s.gather(values, convert.tensor(take, "int32")) or values:slice { { 0, 0 } }
  end
  return SparseTensor(i64(rows, #shape), v, shape64(shape))
end
M.build = build

-- Row-major order of index rows: the permutation (1-based) that sorts them.
local function order_of(rows)
  local order = {}
  for k = 1, #rows do order[k] = k end
  table.sort(order, function(a, b)
    local ra, rb = rows[a], rows[b]
    for d = 1, #ra do
      if ra[d] ~= rb[d] then return ra[d] < rb[d] end
    end
    return a < b
  end)
  return order
end
local function key(row) return table.concat(row, ",") end

-- eye(num_rows, num_columns=None, dtype="float32")
function M.eye(n, cols, dt)
  if type(cols) == "table" then cols, dt = cols.num_columns, cols.dtype end
  n = math.floor(tonumber(n) or -1)
  cols = cols == nil and n or math.floor(tonumber(cols) or -1)
  if n < 0 or cols < 0 then binding.error("tide.sparse.eye: num_rows and num_columns must be whole numbers >= 0") end
  local rows = {}
  for i = 0, math.min(n, cols) - 1 do rows[#rows + 1] = { i, i } end
  local values = #rows > 0 and create_ops.ones({ #rows }, dt or "float32") or create_ops.zeros({ 0 }, dt or "float32")
  return SparseTensor(i64(rows, 2), values, shape64 { n, cols })
end

-- add(a, b, threshold=0): sparse + sparse is sparse (the union of indices; where both have an entry, a sum
-- whose magnitude is below threshold is dropped, as TF's); sparse + dense (either order) is dense.
function M.add(a, b, threshold)
  if type(threshold) == "table" then threshold = threshold.threshold end
  if binding.istensor(b) or binding.istensor(a) then
    local sp, dense = a, b
    if binding.istensor(a) then sp, dense = b, a end
    sp_arg("add", sp, "a")
    return m.add(sp:to_dense(), dense)
  end
  sp_arg("add", a, "a")
  sp_arg("add", b, "b")
  local sa, sb = a:shape_list(), b:shape_list()
  if table.concat(sa, ",") ~= table.concat(sb, ",") then
    binding.error(fmt("tide.sparse.add: the dense shapes differ: [%s] and [%s]", table.concat(sa, ", "),
      table.concat(sb, ", ")))
  end
  local rows, where_of = {}, {}
  local ia, ib = idx_table(a), idx_table(b)
  local seg_a, seg_b, in_a, both = {}, {}, {}, {}
  for k, row in ipairs(ia) do
    local kk = key(row)
    if not where_of[kk] then rows[#rows + 1] = row; where_of[kk] = #rows - 1 end
    seg_a[k] = where_of[kk]
    in_a[where_of[kk]] = true
  end
  for k, row in ipairs(ib) do
    local kk = key(row)
    if not where_of[kk] then rows[#rows + 1] = row; where_of[kk] = #rows - 1 end
    seg_b[k] = where_of[kk]
    if in_a[where_of[kk]] then both[where_of[kk]] = true end
  end
  -- the sums by a segment sum over both values lists (differentiable in both)
  local vals = s.concat({ a.values, m.cast(b.values, a.values.dtype) }, 0)
  local segs = {}
  for _, v in ipairs(seg_a) do segs[#segs + 1] = v end
  for _, v in ipairs(seg_b) do segs[#segs + 1] = v end
  local summed = #rows > 0 and require("tide.ops.segment").unsorted_segment_sum(vals, convert.tensor(segs, "int32"),
    #rows) or a.values
  -- row-major order, then the threshold
  local order = order_of(rows)
  local keep_rows, take = {}, {}
  local th = threshold or 0
  local sv = #rows > 0 and summed:totable() or {}
  for _, k in ipairs(order) do
    if th == 0 or not both[k - 1] or math.abs(sv[k]) >= th then
      keep_rows[#keep_rows + 1] = rows[k]
      take[#take + 1] = k - 1
    end
  end
  return build(keep_rows, summed, take, sa)
end

-- concat(axis, sp_inputs, expand_nonconcat_dims=False)
function M.concat(axis, inputs, expand)
  if type(expand) == "table" then expand = expand.expand_nonconcat_dims end
  if type(inputs) ~= "table" or #inputs == 0 then
    binding.error("tide.sparse.concat: sp_inputs must be a non-empty list of SparseTensors")
  end
  local shapes = {}
  for i, sp in ipairs(inputs) do
    sp_arg("concat", sp, "sp_inputs[" .. i .. "]")
    shapes[i] = sp:shape_list()
  end
  local rank = #shapes[1]
  if type(axis) ~= "number" or axis < -rank or axis >= rank then
    binding.error(fmt("tide.sparse.concat: axis %s out of range for rank %d", tostring(axis), rank))
  end
  if axis < 0 then axis = axis + rank end
  local out_shape = {}
  for d = 1, rank do out_shape[d] = shapes[1][d] end
  for i = 2, #shapes do
    if #shapes[i] ~= rank then binding.error("tide.sparse.concat: the inputs have different ranks") end
    for d = 1, rank do
      if d ~= axis + 1 then
        if expand then out_shape[d] = math.max(out_shape[d], shapes[i][d])
        elseif shapes[i][d] ~= out_shape[d] then
          binding.error(fmt("tide.sparse.concat: dim %d differs between the inputs (%d and %d)", d - 1, out_shape[d],
            shapes[i][d]))
        end
      end
    end
  end
  local rows, vals, offset = {}, {}, 0
  for i, sp in ipairs(inputs) do
    for _, row in ipairs(idx_table(sp)) do
      row[axis + 1] = row[axis + 1] + offset
      rows[#rows + 1] = row
    end
    vals[i] = sp.values
    offset = offset + shapes[i][axis + 1]
  end
  out_shape[axis + 1] = offset
  local order = order_of(rows)
  local sorted, take = {}, {}
  for j, k in ipairs(order) do sorted[j] = rows[k]; take[j] = k - 1 end
  return build(sorted, s.concat(vals, 0), take, out_shape)
end

-- expand_dims(sp_input, axis=-1... TF's default axis is -1): a dim of 1 at axis.
function M.expand_dims(sp, axis)
  sp_arg("expand_dims", sp)
  local shape = sp:shape_list()
  local rank = #shape
  axis = axis == nil and -1 or axis
  if type(axis) ~= "number" or axis < -(rank + 1) or axis > rank then
    binding.error(fmt("tide.sparse.expand_dims: axis %s out of range for rank %d", tostring(axis), rank))
  end
  if axis < 0 then axis = axis + rank + 1 end
  local rows = idx_table(sp)
  for _, row in ipairs(rows) do table.insert(row, axis + 1, 0) end
  table.insert(shape, axis + 1, 1)
  return build(rows, sp.values, nil, shape)
end

-- fill_empty_rows(sp_input, default_value): each empty row gets default_value at column 0; also the bool
-- indicator of the rows that were empty.
function M.fill_empty_rows(sp, default_value)
  sp_arg("fill_empty_rows", sp)
  local shape = sp:shape_list()
  if #shape < 1 then binding.error("tide.sparse.fill_empty_rows: sp_input must have rank 1 or more") end
  local rows = idx_table(sp)
  local has = {}
  for _, row in ipairs(rows) do has[row[1]] = true end
  local extra, empty = {}, {}
  for r = 0, shape[1] - 1 do
    empty[r + 1] = not has[r]
    if not has[r] then
      local row = { r }
      for d = 2, #shape do row[d] = 0 end
      extra[#extra + 1] = row
    end
  end
  local all = {}
  for _, row in ipairs(rows) do all[#all + 1] = row end
  for _, row in ipairs(extra) do all[#all + 1] = row end
  local fill = create_ops.fill({ #extra }, default_value, { dtype = sp.values.dtype })
  local values = s.concat({ sp.values, fill }, 0)
  local order = order_of(all)
  local sorted, take = {}, {}
  for j, k in ipairs(order) do sorted[j] = all[k]; take[j] = k - 1 end
  local indicator = shape[1] > 0 and convert.tensor(empty, "bool") or create_ops.zeros({ 0 }, "bool")
  return build(sorted, values, take, shape), indicator
end

-- reset_shape(sp_input, new_shape=None): the tight dense shape of the indices, or new_shape (no smaller).
function M.reset_shape(sp, new_shape)
  sp_arg("reset_shape", sp)
  local rows = idx_table(sp)
  local shape = sp:shape_list()
  local tight = {}
  for d = 1, #shape do tight[d] = 0 end
  for _, row in ipairs(rows) do
    for d = 1, #row do tight[d] = math.max(tight[d], row[d] + 1) end
  end
  if new_shape == nil then return build(rows, sp.values, nil, tight) end
  if binding.istensor(new_shape) then new_shape = new_shape:totable() end
  if type(new_shape) ~= "table" or #new_shape ~= #shape then
    binding.error(fmt("tide.sparse.reset_shape: new_shape must have %d dims", #shape))
  end
  for d = 1, #shape do
    if new_shape[d] < tight[d] then
      binding.error(fmt("tide.sparse.reset_shape: new_shape's dim %d (%d) is smaller than the indices need (%d)",
        d - 1, new_shape[d], tight[d]))
    end
  end
  return build(rows, sp.values, nil, new_shape)
end

-- reshape(sp_input, shape): the same values in a dense shape of as many elements (one dim may be -1).
function M.reshape(sp, shape)
  sp_arg("reshape", sp)
  if binding.istensor(shape) then shape = shape:totable() end
  if type(shape) ~= "table" then binding.error("tide.sparse.reshape: shape must be a list of sizes") end
  local old = sp:shape_list()
  local total = 1
  for _, d in ipairs(old) do total = total * d end
  local known, unknown = 1, nil
  local new = {}
  for i, d in ipairs(shape) do
    new[i] = d
    if d == -1 then
      if unknown then binding.error("tide.sparse.reshape: at most one dim may be -1") end
      unknown = i
    else known = known * d end
  end
  if unknown then
    if known == 0 or total % known ~= 0 then
      binding.error(fmt("tide.sparse.reshape: cannot reshape %d elements into [%s]", total, table.concat(shape, ", ")))
    end
    new[unknown] = total / known
  elseif known ~= total then
    binding.error(fmt("tide.sparse.reshape: cannot reshape %d elements into [%s]", total, table.concat(shape, ", ")))
  end
  local rows = {}
  for k, row in ipairs(idx_table(sp)) do
    local flat = 0
    for d = 1, #old do flat = flat * old[d] + row[d] end
    local out = {}
    for d = #new, 1, -1 do out[d] = flat % new[d]; flat = math.floor(flat / new[d]) end
    rows[k] = out
  end
  return build(rows, sp.values, nil, new)
end

-- retain(sp_input, to_retain): the entries whose to_retain (a bool list or 1-D tensor) is true.
function M.retain(sp, keep)
  sp_arg("retain", sp)
  if binding.istensor(keep) then keep = keep:totable() end
  local rows = idx_table(sp)
  if type(keep) ~= "table" or #keep ~= #rows then
    binding.error(fmt("tide.sparse.retain: to_retain must hold %d booleans (one per value)", #rows))
  end
  local out, take = {}, {}
  for k, row in ipairs(rows) do
    if keep[k] then out[#out + 1] = row; take[#take + 1] = k - 1 end
  end
  return build(out, sp.values, take, sp:shape_list())
end

-- mask(a, mask_indices) as tf.sparse.mask: a is TF's IndexedSlices as a table {values =, indices =, dense_shape =}
-- (tide has no IndexedSlices class); the result is one too, without the slices whose index is in mask_indices
-- (TF's setdiff1d: order and repeats of the others kept). The values are gathered (they keep gradients).
function M.mask(a, mask_indices)
  local op = "tide.sparse.mask"
  if type(a) ~= "table" or binding.istensor(a) or sparse.is_sparse(a) or a.values == nil or a.indices == nil then
    binding.error(op .. ": a must be IndexedSlices, a table {values =, indices =, dense_shape =}" ..
      (sparse.is_sparse(a) and " (got a tide.SparseTensor)" or ""))
  end
  local idx = convert.arg(a.indices, op)
  local vals = convert.arg(a.values, op)
  local mi = convert.arg(mask_indices, op)
  if trace_context.is_symbolic(idx) or trace_context.is_symbolic(mi) then
    binding.error(op .. ": works eagerly only (its result count is data)")
  end
  if idx.ndim ~= 1 or mi.ndim ~= 1 then
    binding.error(fmt("%s: indices and mask_indices must be 1-D, got shapes %s and %s", op, tostring(idx.shape),
      tostring(mi.shape)))
  end
  if idx.dtype ~= "int32" and idx.dtype ~= "int64" then
    binding.error(fmt("%s: indices must be int32 or int64, got %s", op, idx.dtype))
  end
  if mi.dtype ~= idx.dtype then
    binding.error(fmt("%s: mask_indices must have the indices' dtype %s, got %s", op, idx.dtype, mi.dtype))
  end
  if vals.ndim < 1 or tonumber(vals.dims[0]) ~= tonumber(idx.dims[0]) then
    binding.error(fmt("%s: values must have one slice per index (%d), got shape %s", op, tonumber(idx.dims[0]),
      tostring(vals.shape)))
  end
  local drop = {}
  for _, v in ipairs(mi:totable()) do drop[v] = true end
  local take = {}
  for k, v in ipairs(idx:totable()) do
    if not drop[v] then take[#take + 1] = k - 1 end
  end
  local t = convert.tensor(take, "int32")
  if #take == 0 then t = create_ops.zeros({ 0 }, "int32") end
  return { values = s.gather(vals, t, 0), indices = s.gather(idx, t, 0), dense_shape = a.dense_shape }
end

-- slice(sp_input, start, size): the entries inside the box, moved to its origin (the box clipped to the shape).
function M.slice(sp, start, size)
  sp_arg("slice", sp)
  local shape = sp:shape_list()
  if binding.istensor(start) then start = start:totable() end
  if binding.istensor(size) then size = size:totable() end
  if type(start) ~= "table" or type(size) ~= "table" or #start ~= #shape or #size ~= #shape then
    binding.error(fmt("tide.sparse.slice: start and size must have %d entries", #shape))
  end
  local out_shape = {}
  for d = 1, #shape do out_shape[d] = math.max(0, math.min(size[d], shape[d] - start[d])) end
  local out, take = {}, {}
  for k, row in ipairs(idx_table(sp)) do
    local inside = true
    local moved = {}
    for d = 1, #row do
      moved[d] = row[d] - start[d]
      if moved[d] < 0 or moved[d] >= out_shape[d] then inside = false end
    end
    if inside then out[#out + 1] = moved; take[#take + 1] = k - 1 end
  end
  return build(out, sp.values, take, out_shape)
end

-- split(sp_input, num_split, axis): num_split slices along axis (the first size % num_split one larger).
function M.split(sp, num_split, axis)
  if type(sp) == "table" and not sparse.is_sparse(sp) and sp.sp_input then
    sp, num_split, axis = sp.sp_input, sp.num_split, sp.axis
  end
  sp_arg("split", sp)
  local shape = sp:shape_list()
  if type(num_split) ~= "number" or num_split < 1 or num_split % 1 ~= 0 then
    binding.error("tide.sparse.split: num_split must be a whole number >= 1")
  end
  if type(axis) ~= "number" or axis < -#shape or axis >= #shape then
    binding.error(fmt("tide.sparse.split: axis %s out of range for rank %d", tostring(axis), #shape))
  end
  if axis < 0 then axis = axis + #shape end
  local n = shape[axis + 1]
  local base, extra = math.floor(n / num_split), n % num_split
  local out, at = {}, 0
  for i = 1, num_split do
    local len = base + (i <= extra and 1 or 0)
    local st, sz = {}, {}
    for d = 1, #shape do st[d] = 0; sz[d] = shape[d] end
    st[axis + 1], sz[axis + 1] = at, len
    out[i] = M.slice(sp, st, sz)
    at = at + len
  end
  return out
end

-- transpose(sp_input, perm=None): the dims permuted (reversed without perm), entries in row-major order.
function M.transpose(sp, perm)
  sp_arg("transpose", sp)
  local shape = sp:shape_list()
  local rank = #shape
  if perm == nil then
    perm = {}
    for d = 1, rank do perm[d] = rank - d end
  end
  if type(perm) ~= "table" or #perm ~= rank then
    binding.error(fmt("tide.sparse.transpose: perm must list the %d dims", rank))
  end
  local seen = {}
  for _, p in ipairs(perm) do
    if type(p) ~= "number" or p < 0 or p >= rank or seen[p] then
      binding.error("tide.sparse.transpose: perm must be a permutation of 0 .. " .. (rank - 1))
    end
    seen[p] = true
  end
  local rows = {}
  for k, row in ipairs(idx_table(sp)) do
    local out = {}
    for d = 1, rank do out[d] = row[perm[d] + 1] end
    rows[k] = out
  end
  local new_shape = {}
  for d = 1, rank do new_shape[d] = shape[perm[d] + 1] end
  local order = order_of(rows)
  local sorted, take = {}, {}
  for j, k in ipairs(order) do sorted[j] = rows[k]; take[j] = k - 1 end
  return build(sorted, sp.values, take, new_shape)
end

-- to_indicator(sp_input, vocab_size): a bool tensor, the last dim replaced by vocab_size, true at each
-- (row..., value).
function M.to_indicator(sp, vocab)
  sp_arg("to_indicator", sp)
  if sp.values.dtype ~= "int32" and sp.values.dtype ~= "int64" then
    binding.error("tide.sparse.to_indicator: the values must be int32 or int64 ids, got " .. sp.values.dtype)
  end
  local shape = sp:shape_list()
  local out = {}
  for d = 1, #shape - 1 do out[d] = shape[d] end
  out[#shape] = vocab
  local vals = sp.values:totable()
  local rows = {}
  for k, row in ipairs(idx_table(sp)) do
    if vals[k] < 0 or vals[k] >= vocab then
      binding.error(fmt("tide.sparse.to_indicator: id %d is outside [0, %d)", vals[k], vocab))
    end
    local r = {}
    for d = 1, #row - 1 do r[d] = row[d] end
    r[#row] = vals[k]
    rows[k] = r
  end
  local dense = create_ops.zeros(out, "bool")
  if #rows == 0 then return dense end
  return index_ops.tensor_scatter_nd_update(dense, convert.tensor(rows, "int64"),
    create_ops.ones({ #rows }, "bool"))
end

return M
