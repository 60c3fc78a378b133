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
local dynamic_shape = require "tide.ops.dynamic_shape"
local C = binding.C
local band = bit.band
local unpack = unpack or table.unpack

local reg, dims = grad.register, util.dims
local convert = require "tide.convert"

-- A Lua list of integers as a 1-D int32 tensor.
local function tide_int32(list) return convert.tensor(list, "int32") end
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

-- concat: each input gets its slab of dy along the axis: a view when the
-- sizes along it are known while tracing, else a gather of the positions
-- each input held, counted when the graph runs.
reg("concat", function(node, dys)
  local inputs = node.inputs
  if #inputs == 1 then return dys[1] end
  local nd, ax = -1, node.attrs.axis
  for _, x in ipairs(inputs) do if x.ndim >= 0 then nd = x.ndim end end
  if ax < 0 and nd >= 0 then ax = ax + nd end
  local sizes, known = {}, nd >= 0 and ax >= 0
  for i, x in ipairs(inputs) do
    sizes[i] = x.ndim >= 0 and tonumber(x.dims[ax]) or -1
    known = known and sizes[i] >= 0
  end
  if known then return unpack(shape.split(dys[1], sizes, ax)) end
  local out, start = {}, nil
  for i, x in ipairs(inputs) do
    local n = dynamic_shape.size_along(x, ax)            -- a 0-d int32 tensor
    local idx = m.sub(reduce.cumsum(create.ones(shape.reshape(n, { 1 }), { dtype = "int32" })), 1)
    if start then idx = m.add(idx, start) end
    out[i] = shape.gather(dys[1], idx, { axis = ax })
    start = start and m.add(start, n) or n
  end
  return unpack(out, 1, #inputs)
end)

-- tile: dy viewed as [m0, d0, m1, d1, ...] and summed over the multiples
-- (TF's _TileGrad); dims tiled once are left whole. None dims of x are read
-- when the graph runs.
reg("tile", function(node, dys)
  local x, a = node.inputs[1], node.attrs
  local d = dims(x)
  if not d then -- x's rank comes when the graph runs: [m0, d0, m1, d1, ...] then (TF's _TileGrad)
    local mult, axes = {}, {}
    for i = 0, a.nints - 1 do
      mult[i + 1] = tonumber(a.ints[i])
      axes[i + 1] = 2 * i
    end
    if #mult == 0 then return dys[1] end
    local pairs_ = shape.stack({ tide_int32(mult), dynamic_shape.shape(x) }, 1)
    return reduce.reduce_sum(shape.reshape(dys[1], shape.reshape(pairs_, { -1 })), axes)
  end
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

-- pad (CONSTANT; the mirror modes are gathers): the slice of dy that holds x,
-- its end counted from dy's end (so x's dims need not be known).
reg("pad", function(node, dys)
  local a = node.attrs
  local spec = {}
  for i = 0, a.nints / 2 - 1 do
    local before, after = tonumber(a.ints[2 * i]), tonumber(a.ints[2 * i + 1])
    spec[i + 1] = { before, after > 0 and -after or nil }
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
-- With an operand of unknown rank, whether it is a vector is known only when
-- the graph runs: the same steps then reshape with shapes computed then (a
-- vector gets its size-1 row or column, 0 or 1 of them counted from its rank).
local function matmul_unknown_rank(node, g, need_a, need_b)
  local a, b = node.inputs[1], node.inputs[2]
  local flags = node.attrs.flags
  local ta = band(flags, C.TIDE_ATTR_TRANSPOSE_A) ~= 0 and a.ndim ~= 1
  local tb = band(flags, C.TIDE_ATTR_TRANSPOSE_B) ~= 0 and b.ndim ~= 1
  local S = dynamic_shape.shape
  -- ones of length max(2 - rank(t), 0): the dims a vector lacks of a matrix
  local function lacking(t)
    local n = m.maximum(m.sub(2, dynamic_shape.rank(t)), 0)
    return create.ones(shape.reshape(n, { 1 }), { dtype = "int32" })
  end
  local ea, eb = lacking(a), lacking(b)
  local A = shape.reshape(a, shape.concat({ ea, S(a) }, 0))        -- a vector: [1, k]
  local B = shape.reshape(b, shape.concat({ S(b), eb }, 0))        -- a vector: [k, 1]
  g = shape.reshape(g, shape.concat({ S(g), eb }, 0))              -- the column dim b's vector lost
  local gs = S(g)
  g = shape.reshape(g, shape.concat({ gs:slice { { 0, -1 } }, ea, gs:slice { { -1, nil } } }, 0)) -- and a's row
  local mm = linalg.matmul
  local da, db
  if need_a then
    if not ta then da = tb and mm(g, B) or mm(g, B, false, true)
    else da = tb and mm(B, g, true, true) or mm(B, g, false, true) end
    da = shape.reshape(util.unbroadcast(da, A), S(a))
  end
  if need_b then
    if not tb then db = ta and mm(A, g) or mm(A, g, true, false)
    else db = ta and mm(g, A, true, true) or mm(g, A, true, false) end
    db = shape.reshape(util.unbroadcast(db, B), S(b))
  end
  return da, db
end

reg("matmul", function(node, dys, needs)
  local a, b, g = node.inputs[1], node.inputs[2], dys[1]
  local na, nb = util.needs(needs, a), util.needs(needs, b)
  if a.ndim < 0 or b.ndim < 0 then return matmul_unknown_rank(node, g, na, nb) end
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
