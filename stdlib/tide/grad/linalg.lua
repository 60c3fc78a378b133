-- stdlib/tide/grad/linalg.lua — the gradients of ops/linalg.lua's ops: matmul,
-- as TF's math_grad.py computes it for every pair of transpose flags, and the
-- transposes, band parts and diagonals, as TF's array_grad.py.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local binding = require "tide.binding"
local shape = require "tide.ops.shape"
local linalg = require "tide.ops.linalg"
local create = require "tide.ops.create"
local m = require "tide.ops.math"
local dynamic_shape = require "tide.ops.dynamic_shape"
local C = binding.C
local band = bit.band

local reg, dims = grad.register, util.dims

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

---------------------------------------------------------------------------
-- transposes, band parts and diagonals
---------------------------------------------------------------------------

reg("matrix_transpose", function(_, dys) return linalg.matrix_transpose(dys[1]) end)

reg("matrix_band_part", function(node, dys)
  return linalg.band_part(dys[1], tonumber(node.attrs.ints[0]), tonumber(node.attrs.ints[1]))
end)

-- The attrs' k range and align as the Lua functions take them.
local ALIGN = { [0] = "RIGHT_RIGHT", "LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT" }
local function diag_opts(node)
  local a = node.attrs
  return { k = { tonumber(a.ints[0]), tonumber(a.ints[1]) }, align = ALIGN[tonumber(a.m)] }
end

-- diag: the diagonals the result was built from (the padding has no input).
reg("matrix_diag", function(node, dys) return linalg.diag_part(dys[1], diag_opts(node)) end)

-- diag_part: g placed on the diagonals of zeros shaped as the input.
reg("matrix_diag_part", function(node, dys)
  return linalg.set_diag(create.zeros_like(node.inputs[1]), dys[1], diag_opts(node))
end)

-- set_diag: g off the diagonals for the input, on them for the diagonal.
reg("matrix_set_diag", function(node, dys, needs)
  local g, d = dys[1], node.inputs[2]
  local o = diag_opts(node)
  local gx = util.needs(needs, node.inputs[1]) and linalg.set_diag(g, create.zeros_like(d), o) or nil
  local gd = util.needs(needs, d) and linalg.diag_part(g, o) or nil
  return gx, gd
end)

return {}
