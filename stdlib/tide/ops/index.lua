-- stdlib/tide/ops/index.lua — TF's index-driven ops: gather_nd, scatter_nd and
-- tensor_scatter_nd_update/add/sub, boolean_mask and unique (tide.where(cond) is in ops/math).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local format = require "tide.format"
local shape_ops = require "tide.ops.shape"
local reduce_ops = require "tide.ops.reduce"
local create = require "tide.ops.create"
local dynamic_shape = require "tide.ops.dynamic_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local GATHER_ND, WHERE_INDICES, UNIQUE = C.TIDE_OP_GATHER_ND, C.TIDE_OP_WHERE_INDICES, C.TIDE_OP_UNIQUE
local SCATTER_ND_ADD, SCATTER_ND_UPDATE = C.TIDE_OP_TENSOR_SCATTER_ND_ADD, C.TIDE_OP_TENSOR_SCATTER_ND_UPDATE

local fmt = string.format
local shape_text = function(t) return format.shape_text(tensor.shape_of(t)) end

-- A tensor argument (Lua numbers and tables convert); nil is an error naming it.
local function input(v, op, pos, what)
  if istype(Tensor, v) then return v end
  if v == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what)) end
  return convert.arg(v, op, pos)
end

-- The batch_dims option: a non-negative integer (TF refuses negative ones).
local function batch_dims_opt(op, v)
  if v == nil then return 0 end
  local bd = args.int(op, "batch_dims", v)
  if bd < 0 then binding.error(fmt("%s: batch_dims must not be negative, got %d", op, bd)) end
  return bd
end

-- gather_nd(params, indices, batch_dims=0) as tf.gather_nd: each row of the
-- last dim of indices (int32 or int64) is an index tuple naming an element or
-- slice of params; the result has shape indices.shape[:-1] +
-- params.shape[batch_dims + K:] (K = indices.shape[-1]). The first batch_dims
-- dims of params and indices are batch dims, paired one to one. An index
-- outside its dim is an error (TF on CPU).
function M.gather_nd(params, indices, ...)
  local o = args.parse("gather_nd", { "batch_dims" }, ...)
  params = input(params, "gather_nd", 1, "params")
  indices = input(indices, "gather_nd", 2, "indices")
  local a = dispatch.attrs()
  a.n = batch_dims_opt("gather_nd", o.batch_dims)
  return dispatch.run(GATHER_ND, a, { params, indices })
end

-- The tensor_scatter_nd_* call: tensor, indices and updates (Lua values take
-- tensor's dtype), the batch_dims option (tide's: gather_nd's gradient uses it).
local function scatter_nd_call(op, code, t, indices, updates, ...)
  local o = args.parse(op, { "batch_dims" }, ...)
  t = input(t, op, 1, "tensor")
  indices = input(indices, op, 2, "indices")
  if updates == nil then binding.error(op .. ": updates is nil; expected a tensor") end
  if not istype(Tensor, updates) then updates = convert.coerce(updates, t, op, 3) end
  local a = dispatch.attrs()
  a.n = batch_dims_opt(op, o.batch_dims)
  return dispatch.run(code, a, { t, indices, updates })
end

-- tensor_scatter_nd_update(tensor, indices, updates) as TF's: a copy of tensor
-- with the elements or slices that the index tuples (the last dim of indices)
-- name replaced by updates, shaped indices.shape[:-1] + tensor.shape[K:]. Of
-- repeated indices the last update wins (TF on CPU).
function M.tensor_scatter_nd_update(t, indices, updates, ...)
  return scatter_nd_call("tensor_scatter_nd_update", SCATTER_ND_UPDATE, t, indices, updates, ...)
end

-- tensor_scatter_nd_add(tensor, indices, updates): the same with updates
-- added; repeated indices accumulate.
function M.tensor_scatter_nd_add(t, indices, updates, ...)
  return scatter_nd_call("tensor_scatter_nd_add", SCATTER_ND_ADD, t, indices, updates, ...)
end

-- tensor_scatter_nd_sub(tensor, indices, updates): the same with updates subtracted.
function M.tensor_scatter_nd_sub(t, indices, updates, ...)
  t = input(t, "tensor_scatter_nd_sub", 1, "tensor")
  if updates == nil then binding.error("tensor_scatter_nd_sub: updates is nil; expected a tensor") end
  if not istype(Tensor, updates) then updates = convert.coerce(updates, t, "tensor_scatter_nd_sub", 3) end
  if updates.dt == C.TIDE_BOOL then
    binding.error("tensor_scatter_nd_sub: updates must be numeric, got bool")
  end
  local neg = dispatch.run1(C.TIDE_OP_NEG, nil, updates)
  return scatter_nd_call("tensor_scatter_nd_sub", SCATTER_ND_ADD, t, indices, neg, ...)
end

-- scatter_nd(indices, updates, shape) as tf.scatter_nd: zeros of `shape` (a
-- list or an int tensor, tide.shape(x) in a trace) and updates' dtype, with
-- updates added where the index tuples say; repeated indices accumulate.
function M.scatter_nd(indices, updates, shape, ...)
  args.parse("scatter_nd", {}, ...)
  indices = input(indices, "scatter_nd", 1, "indices")
  updates = input(updates, "scatter_nd", 2, "updates")
  if updates.dt == C.TIDE_BOOL then binding.error("scatter_nd: updates must be numeric, got bool") end
  if shape == nil then binding.error("scatter_nd: shape is nil; expected the result's shape") end
  local zeros = create.zeros(shape, dtype.names[updates.dt])
  return scatter_nd_call("scatter_nd", SCATTER_ND_ADD, zeros, indices, updates)
end

-- The int64 [N, rank] coordinates of cond's nonzero elements (tide.where(cond),
-- in ops/math.lua, is the public face).
local function where_indices(cond)
  return dispatch.run1(WHERE_INDICES, nil, cond)
end

local dims_of = dynamic_shape.dims_of

-- boolean_mask of a tensor of unknown rank: its masked dims merged into one
-- by its shape when the graph runs (TF's composition). The mask must have
-- those dims: broadcasting it to them and something of their shape to the
-- mask's both succeed only then (where() keeps both in the graph).
local function mask_unknown_rank(t, mask, axis, nm)
  local s = dynamic_shape.shape(t)
  local covered = s:slice { { axis, axis + nm } }
  local probe = shape_ops.broadcast_to(create.zeros(covered, { dtype = "int32" }), dynamic_shape.shape(mask))
  local fits = dispatch.run(C.TIDE_OP_EQUAL, nil, { probe, probe }, 1)
  local spread = shape_ops.broadcast_to(mask, covered)
  mask = dispatch.run(C.TIDE_OP_WHERE, nil, { fits, spread, spread }, 1)
  local parts = { reduce_ops.reduce_prod(s:slice { { axis, axis + nm } }, 0, true) }
  if axis > 0 then table.insert(parts, 1, s:slice { { 0, axis } }) end
  parts[#parts + 1] = s:slice { { axis + nm, nil } }
  local merged = shape_ops.reshape(t, shape_ops.concat(parts, 0))
  local positions = shape_ops.reshape(where_indices(shape_ops.reshape(mask, { -1 })), { -1 })
  return shape_ops.gather(merged, positions, { axis = axis })
end

-- boolean_mask(tensor, mask, axis=0) as tf.boolean_mask: the slices of tensor
-- where mask is true. mask (bool, or numbers: nonzero is true) covers the dims
-- axis .. axis + rank(mask) - 1 of tensor, which become one dim of the true
-- count (TF's composition: a reshape, where(mask) and a gather, so its
-- gradient is gather's). A negative axis counts from the end (TF rejects one).
function M.boolean_mask(t, mask, ...)
  local o = args.parse("boolean_mask", { "axis" }, ...)
  t = input(t, "boolean_mask", 1, "tensor")
  mask = input(mask, "boolean_mask", 2, "mask")
  local nm, nt = mask.ndim, t.ndim
  if nm == 0 then binding.error("boolean_mask: mask cannot be a scalar (0-d)") end
  if nm < 0 then -- TF: "Number of mask dimensions must be specified"
    binding.error("boolean_mask: the mask's rank must be known while tracing (it says how many of the tensor's " ..
      "dims it covers), and it is unknown (a TensorSpec of shape nil); give it a shape, tide.None for unknown dims")
  end
  local axis = o.axis == nil and 0 or args.int("boolean_mask", "axis", o.axis)
  if nt < 0 then
    if axis < 0 then
      binding.error(fmt("boolean_mask: a negative axis (%d) counts from the end of a tensor whose rank is unknown " ..
        "until the traced function runs; give a non-negative axis", axis))
    end
    return mask_unknown_rank(t, mask, axis, nm)
  end
  if axis < 0 then axis = axis + nt end
  if axis < 0 or axis + nm > nt then
    binding.error(fmt("boolean_mask: a mask of rank %d at axis %s does not fit a tensor of rank %d (shape %s)", nm,
      tostring(o.axis), nt, shape_text(t)))
  end
  local td, known = dims_of(t)
  local md = dims_of(mask)
  for i = 1, nm do
    local a, b = td[axis + i], md[i]
    if a >= 0 and b >= 0 and a ~= b then
      binding.error(fmt("boolean_mask: mask of shape %s does not match the tensor's dims %d..%d (tensor shape %s)",
        shape_text(mask), axis, axis + nm - 1, shape_text(t)))
    end
  end
  -- the masked dims merged into one: by a list when t's dims are known, else
  -- by its shape as a tensor when the graph runs
  local merged
  if known then
    local list, lead = {}, 1
    for i = 1, axis do list[#list + 1] = td[i] end
    for i = axis + 1, axis + nm do lead = lead * td[i] end
    list[#list + 1] = lead
    for i = axis + nm + 1, nt do list[#list + 1] = td[i] end
    merged = shape_ops.reshape(t, list)
  else
    local s = dynamic_shape.shape(t)
    local parts = { reduce_ops.reduce_prod(s:slice { { axis, axis + nm } }, 0, true) }
    if axis > 0 then table.insert(parts, 1, s:slice { { 0, axis } }) end
    if axis + nm < nt then parts[#parts + 1] = s:slice { { axis + nm, nt } } end
    merged = shape_ops.reshape(t, shape_ops.concat(parts, 0))
  end
  local positions = shape_ops.reshape(where_indices(shape_ops.reshape(mask, { -1 })), { -1 })
  return shape_ops.gather(merged, positions, { axis = axis })
end

-- unique(x, out_idx="int32") as tf.unique: y, the distinct values of the 1-D
-- x in order of first occurrence, and idx (x's shape, int32 or int64) with
-- x = gather(y, idx). NaNs are each distinct; float32/float64 -0.0 and 0.0 are
-- one value, float16/bfloat16 ones two (as TF). y's length is known when it runs.
function M.unique(x, ...)
  local o = args.parse("unique", { "out_idx" }, ...)
  x = input(x, "unique", 1, "x")
  local a = dispatch.attrs()
  a.dtype = dtype.code(o.out_idx or "int32", "unique")
  if a.dtype ~= C.TIDE_INT32 and a.dtype ~= C.TIDE_INT64 then
    binding.error(fmt("unique: out_idx must be int32 or int64, got %s", dtype.names[a.dtype]))
  end
  return dispatch.run(UNIQUE, a, { x }, 2)
end

return M
