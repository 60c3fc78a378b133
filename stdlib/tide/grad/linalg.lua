-- stdlib/tide/grad/linalg.lua — gradients of matmul and of the ops that select
-- or rearrange elements (slice, slice_update, concat, tile, pad, reverse), as
-- TF's math_grad.py and array_grad.py compute them. split, unstack and stack
-- need none of their own: they are slices, expand_dims and concat.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local shape = require "tide.ops.shape"
local linalg = require "tide.ops.linalg"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local tensor = require "tide.tensor"
local m = require "tide.ops.math"
local C = binding.C
local band = bit.band
local unpack = unpack or table.unpack

local reg, dims = grad.register, util.dims
local SLICE, SLICE_UPDATE = C.TIDE_OP_SLICE, C.TIDE_OP_SLICE_UPDATE

-- Zeros shaped and typed like t (with None dims, t's shape when the graph runs).
local zeros_of = create.zeros_like

---------------------------------------------------------------------------
-- slice and slice_update: the node's own slice attributes, reused
---------------------------------------------------------------------------

-- slice (x[i], x:slice{...}, and so split and unstack): dy written into
-- zeros of x's shape at the slice (TF's StridedSliceGrad). tide.newaxis
-- entries are expand_dims nodes of their own, so dy has the slice's shape.
reg("slice", function(node, dys)
  return dispatch.run(SLICE_UPDATE, node.attrs, { zeros_of(node.inputs[1]), dys[1] })
end)

-- slice_update(x, update): x's gradient is dy with the slice zeroed (those
-- elements were overwritten); update's is dy's slice.
reg("slice_update", function(node, dys, needs)
  local dy, x, u = dys[1], node.inputs[1], node.inputs[2]
  local dx = util.needs(needs, x) and dispatch.run(SLICE_UPDATE, node.attrs, { dy, zeros_of(u) }) or nil
  return dx, util.needs(needs, u) and dispatch.run_view(SLICE, node.attrs, dy) or nil
end)

---------------------------------------------------------------------------
-- Ops that copy
---------------------------------------------------------------------------

-- dy's elements [begin, begin + size) along axis ax, where begin and size are
-- Lua numbers or 0-d int64 tensors (util.dim's): a slice, or when either is
-- known only at run time a gather of those positions.
local function slab(dy, ax, begin, size)
  if type(begin) == "number" and type(size) == "number" then
    local spec = {}
    for d = 1, ax do spec[d] = {} end
    spec[ax + 1] = { begin, begin + size }
    return tensor.slice(dy, spec)
  end
  local n = type(size) == "number" and { size } or shape.stack { size }
  local at = m.add(reduce.cumsum(create.ones(n, "int64"), 0, true), begin) -- begin, begin + 1, ...
  return shape.gather(dy, at, { axis = ax })
end

-- concat: each input gets its slab of dy along the axis (at offsets known
-- when the graph runs where inputs have a None size there).
reg("concat", function(node, dys)
  local inputs = node.inputs
  local nd = inputs[1].ndim
  local ax = node.attrs.axis
  if ax < 0 then ax = ax + nd end
  if #inputs == 1 then return dys[1] end
  local sizes, known = {}, true
  for i, x in ipairs(inputs) do
    sizes[i] = util.dim(x, ax)
    known = known and type(sizes[i]) == "number"
  end
  if known then return unpack(shape.split(dys[1], sizes, ax)) end
  local out, begin = {}, 0
  for i, size in ipairs(sizes) do
    out[i] = slab(dys[1], ax, begin, size)
    begin = (type(begin) == "number" and type(size) == "number") and begin + size or m.add(begin, size)
  end
  return unpack(out)
end)

-- tile: dy viewed as [m0, d0, m1, d1, ...] and summed over the multiples
-- (TF's _TileGrad); dims tiled once are left whole. None dims of x are read
-- when the graph runs.
reg("tile", function(node, dys)
  local x, a = node.inputs[1], node.attrs
  local split_dims, axes = {}, {}
  for i = 0, x.ndim - 1 do
    local copies = tonumber(a.ints[i])
    if copies ~= 1 then
      axes[#axes + 1] = #split_dims
      split_dims[#split_dims + 1] = copies
    end
    split_dims[#split_dims + 1] = util.dim(x, i)
  end
  if #axes == 0 then return dys[1] end
  return reduce.reduce_sum(util.reshape_to(dys[1], split_dims), axes)
end)

-- pad (CONSTANT; the mirror modes are gathers): the slice of dy that holds x
-- (a None dim of x: up to `after` from the end).
reg("pad", function(node, dys)
  local x, a = node.inputs[1], node.attrs
  local spec = {}
  for i = 0, x.ndim - 1 do
    local before, after, d = tonumber(a.ints[2 * i]), tonumber(a.ints[2 * i + 1]), tonumber(x.dims[i])
    if d >= 0 then spec[i + 1] = { before, before + d }
    else spec[i + 1] = { before, after > 0 and -after or nil } end
  end
  return tensor.slice(dys[1], spec)
end)

-- reverse: dy reversed along the same axes.
reg("reverse", function(node, dys)
  local a = node.attrs
  local axes = {}
  for i = 0, a.nints - 1 do axes[i + 1] = tonumber(a.ints[i]) end
  return shape.reverse(dys[1], { axis = axes })   -- a bare {} would read as options
end)

---------------------------------------------------------------------------
-- matmul
---------------------------------------------------------------------------

-- C = op(A) @ op(B): dA and dB by TF's _BatchMatMulV2 rule for each pair of
-- transpose flags, summed over the batch dims an operand was broadcast along.
-- A 1-D operand is a matrix of one row (a) or one column (b) whose dim left
-- the result (numpy); its gradient has its own 1-D shape. Transpose flags on
-- a 1-D operand are ignored, as the forward op ignores them.
reg("matmul", function(node, dys, needs)
  local a, b, g = node.inputs[1], node.inputs[2], dys[1]
  local na, nb = util.needs(needs, a), util.needs(needs, b)
  local flags = node.attrs.flags
  local a_vec, b_vec = a.ndim == 1, b.ndim == 1
  local ta = not a_vec and band(flags, C.TIDE_ATTR_TRANSPOSE_A) ~= 0
  local tb = not b_vec and band(flags, C.TIDE_ATTR_TRANSPOSE_B) ~= 0
  local A, B = a, b
  if a_vec then
    A = shape.reshape(a, { 1, tonumber(a.dims[0]) })
    g = shape.expand_dims(g, b_vec and g.ndim or g.ndim - 1)   -- the row dim the result lost
  end
  if b_vec then
    B = shape.reshape(b, { tonumber(b.dims[0]), 1 })
    g = shape.expand_dims(g, g.ndim)                           -- the column dim the result lost
  end
  local mm = linalg.matmul
  local da, db
  if na then -- dA = g B^T (the transposes follow TF's table)
    if not ta then da = tb and mm(g, B) or mm(g, B, false, true)
    else da = tb and mm(B, g, true, true) or mm(B, g, false, true) end
    da = util.unbroadcast(da, A)
    if a_vec then da = shape.reshape(da, dims(a)) end
  end
  if nb then -- dB = A^T g
    if not tb then db = ta and mm(A, g) or mm(A, g, true, false)
    else db = ta and mm(g, A, true, true) or mm(g, A, true, false) end
    db = util.unbroadcast(db, B)
    if b_vec then db = shape.reshape(db, dims(b)) end
  end
  return da, db
end)

return {}
