-- stdlib/tide/ops/linalg.lua — tf.linalg's products and structure: matmul
-- (numpy batch broadcasting, 1-D operands as vectors, transpose flags),
-- matvec, tensordot, cross, transposes, band parts, diagonals and trace.
-- The decompositions are in ops/linalg_decomp.lua, norms in ops/linalg_norm.lua.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local math_ops = require "tide.ops.math"
local dynamic_shape = require "tide.ops.dynamic_shape"
local bit = require "bit"
local C, Tensor = binding.C, binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format

local M = {}

local MATMUL, MATRIX_TRANSPOSE, BAND_PART = C.TIDE_OP_MATMUL, C.TIDE_OP_MATRIX_TRANSPOSE, C.TIDE_OP_MATRIX_BAND_PART
local MATRIX_DIAG, DIAG_PART, SET_DIAG = C.TIDE_OP_MATRIX_DIAG, C.TIDE_OP_MATRIX_DIAG_PART, C.TIDE_OP_MATRIX_SET_DIAG

-- matmul(a, b, transpose_a=false, transpose_b=false) as tf.linalg.matmul:
-- the product of the last two dims, batch dims broadcast; a 1-D operand is a
-- vector whose dim leaves the result (numpy). adjoint_a/adjoint_b are the same
-- as transposes here (no complex dtypes). A Lua table takes the other's dtype.
function M.matmul(a, b, ...)
  local o = args.parse("matmul", { "transpose_a", "transpose_b", "adjoint_a", "adjoint_b" }, ...)
  if a == nil or b == nil then binding.error("matmul: expects two operands a and b") end
  if not istype(Tensor, a) then a = convert.coerce(a, b, "matmul", 1) end
  if not istype(Tensor, b) then b = convert.coerce(b, a, "matmul", 2) end
  local ta = args.bool("matmul", "transpose_a", o.transpose_a, false)
    or args.bool("matmul", "adjoint_a", o.adjoint_a, false)
  local tb = args.bool("matmul", "transpose_b", o.transpose_b, false)
    or args.bool("matmul", "adjoint_b", o.adjoint_b, false)
  local at = dispatch.attrs()
  at.flags = bit.bor(ta and C.TIDE_ATTR_TRANSPOSE_A or 0, tb and C.TIDE_ATTR_TRANSPOSE_B or 0)
  return dispatch.run(MATMUL, at, { a, b })
end

-- The input of `op` as a tensor (a Lua table or number converts); nil is an error.
local function input(x, op, what)
  if x == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what or "the input")) end
  return convert.arg(x, op)
end

-- matvec(a, b, transpose_a=false, adjoint_a=false) as tf.linalg.matvec: a [..., M, N] times the vectors b [..., N].
function M.matvec(a, b, ...)
  local o = args.parse("matvec", { "transpose_a", "adjoint_a", "a_is_sparse", "b_is_sparse" }, ...)
  a = input(a, "matvec", "a")
  if not istype(Tensor, b) then b = convert.coerce(b, a, "matvec", 2) end
  local t = args.bool("matvec", "transpose_a", o.transpose_a, false) or args.bool("matvec", "adjoint_a", o.adjoint_a, false)
  if b.ndim == 0 then binding.error("matvec: b must be a vector (or a batch of them), got a scalar") end
  local y = M.matmul(a, shape.expand_dims(b, -1), { transpose_a = t })
  return shape.squeeze(y, -1)
end

-- matrix_transpose(a, {conjugate=false}) as tf.linalg.matrix_transpose: the
-- last two dims swapped (a copy; tide.transpose gives views of known ranks).
function M.matrix_transpose(a, ...)
  args.parse("matrix_transpose", { "conjugate" }, ...)
  return dispatch.run1(MATRIX_TRANSPOSE, dispatch.attrs(), input(a, "matrix_transpose", "a"))
end

-- adjoint(matrix) as tf.linalg.adjoint: the conjugate transpose, which is the
-- transpose for tide's real dtypes.
function M.adjoint(matrix) return M.matrix_transpose(matrix) end

-- band_part(input, num_lower, num_upper) as tf.linalg.band_part: the band of
-- num_lower subdiagonals and num_upper superdiagonals kept, zeros elsewhere
-- (a negative count keeps the whole triangle): band_part(ones, -1, 0) is a
-- causal mask.
function M.band_part(x, num_lower, num_upper)
  x = input(x, "band_part")
  local a = dispatch.attrs()
  a.ints[0] = args.int("band_part", "num_lower", num_lower)
  a.ints[1] = args.int("band_part", "num_upper", num_upper)
  a.nints = 2
  return dispatch.run1(BAND_PART, a, x)
end

-- TF's align strings as the bits the diagonal ops read: 1 superdiagonals left-aligned, 2 subdiagonals.
local ALIGN = { RIGHT_LEFT = 2, LEFT_RIGHT = 1, LEFT_LEFT = 3, RIGHT_RIGHT = 0 }
local function align_code(op, align)
  if align == nil then return ALIGN.RIGHT_LEFT end
  local m = ALIGN[align]
  if m == nil then
    binding.error(fmt("%s: align must be one of \"LEFT_RIGHT\", \"RIGHT_LEFT\", \"LEFT_LEFT\", \"RIGHT_RIGHT\", got %s",
      op, tostring(align)))
  end
  return m
end

-- k as a (lo, hi) pair: a number, a list of one or two, or an int tensor of them.
local function diag_range(op, k)
  if k == nil then return 0, 0 end
  local list = args.int_list(op, "k", k)
  if #list < 1 or #list > 2 then
    binding.error(fmt("%s: k must be a number or a pair (lower, upper), got %d values", op, #list))
  end
  return list[1], list[2] or list[1]
end

-- attrs for the diagonal ops: k's range, then the ints, the padding value and align.
local function diag_attrs(op, k, align, padding, extra)
  local a = dispatch.attrs()
  local lo, hi = diag_range(op, k)
  a.ints[0], a.ints[1], a.nints = lo, hi, 2
  for i, v in ipairs(extra or {}) do a.ints[1 + i], a.nints = v, 2 + i end
  a.m = align_code(op, align)
  if padding ~= nil then a.scalars[0] = args.number(op, "padding_value", padding) end
  return a
end

-- diag(diagonal, {k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"})
-- as tf.linalg.diag: matrices with the given diagonals (k a number or a range
-- (lo, hi), whose diagonals are the rows of diagonal's second-last dim).
function M.diag(diagonal, ...)
  local o = args.parse("diag", { "k", "num_rows", "num_cols", "padding_value", "align" }, ...)
  diagonal = input(diagonal, "diag", "diagonal")
  local rows = o.num_rows == nil and -1 or args.int("diag", "num_rows", o.num_rows)
  local cols = o.num_cols == nil and -1 or args.int("diag", "num_cols", o.num_cols)
  return dispatch.run1(MATRIX_DIAG, diag_attrs("diag", o.k, o.align, o.padding_value, { rows, cols }), diagonal)
end

-- diag_part(input, {k=0, padding_value=0, align="RIGHT_LEFT"}) as tf.linalg.diag_part.
function M.diag_part(x, ...)
  local o = args.parse("diag_part", { "k", "padding_value", "align" }, ...)
  return dispatch.run1(DIAG_PART, diag_attrs("diag_part", o.k, o.align, o.padding_value), input(x, "diag_part"))
end

-- set_diag(input, diagonal, {k=0, align="RIGHT_LEFT"}) as tf.linalg.set_diag.
function M.set_diag(x, diagonal, ...)
  local o = args.parse("set_diag", { "k", "align" }, ...)
  x = input(x, "set_diag")
  if not istype(Tensor, diagonal) then diagonal = convert.coerce(diagonal, x, "set_diag", 2) end
  return dispatch.run(SET_DIAG, diag_attrs("set_diag", o.k, o.align), { x, diagonal })
end

-- trace(x) as tf.linalg.trace: the sum of each matrix's main diagonal
-- (tide.trace is tf.function; this is tide.linalg.trace).
function M.trace(x)
  return reduce.reduce_sum(M.diag_part(input(x, "trace")), -1)
end

-- x's dims as a list of Lua numbers (unknown ones as 0-d int32 tensors read when the graph runs).
local function dims_of(x, op)
  if x.ndim < 0 then binding.error(fmt("%s: needs the input's rank (it is unknown while tracing)", op)) end
  local d = {}
  for i = 0, x.ndim - 1 do
    local v = tonumber(x.dims[i])
    d[i + 1] = v >= 0 and v or dynamic_shape.size_along(x, i)
  end
  return d
end

-- Reshape x to parts (Lua numbers, or 0-d int32 tensors for dims known when the graph runs).
local function reshape_parts(x, parts)
  local known = true
  for _, p in ipairs(parts) do known = known and type(p) == "number" end
  if known then return shape.reshape(x, parts) end
  local vals = {}
  for i, p in ipairs(parts) do vals[i] = type(p) == "number" and convert.tensor(p, "int32") or math_ops.cast(p, "int32") end
  return shape.reshape(x, shape.stack(vals))
end

-- The product of parts (numbers, or tensors where unknown).
local function product(parts)
  local p = 1
  for _, v in ipairs(parts) do p = p * v end
  return p
end

-- tensor_diag(diagonal) as tf.linalg.tensor_diag: a tensor of shape d + d with
-- the diagonal's elements where the two halves' indices agree.
function M.tensor_diag(diagonal)
  diagonal = input(diagonal, "tensor_diag", "diagonal")
  local d = dims_of(diagonal, "tensor_diag")
  if #d * 2 > C.TIDE_MAX_DIMS then
    binding.error(fmt("tensor_diag: the result would have rank %d (at most %d)", 2 * #d, C.TIDE_MAX_DIMS))
  end
  local flat = reshape_parts(diagonal, { product(d) })
  local parts = {}
  for i = 1, #d do parts[i], parts[#d + i] = d[i], d[i] end
  return reshape_parts(M.diag(flat), parts)
end

-- tensor_diag_part(input) as tf.linalg.tensor_diag_part: input of shape d + d gives the d-shaped diagonal.
function M.tensor_diag_part(x)
  x = input(x, "tensor_diag_part")
  local d = dims_of(x, "tensor_diag_part")
  local r = #d
  if r % 2 ~= 0 then binding.error(fmt("tensor_diag_part: the input must have even rank, got rank %d", r)) end
  local half = {}
  for i = 1, r / 2 do
    local a, b = d[i], d[r / 2 + i]
    if type(a) == "number" and type(b) == "number" and a ~= b then
      binding.error(fmt("tensor_diag_part: dims %d and %d differ (%d and %d): the input must have shape d + d", i - 1,
        r / 2 + i - 1, a, b))
    end
    half[i] = type(a) == "number" and a or b
  end
  local n = product(half)
  return reshape_parts(M.diag_part(reshape_parts(x, { n, n })), half)
end

-- Axes of tensordot: a count n (a's last n with b's first n), or a pair of lists (or numbers).
local function tensordot_axes(a_rank, b_rank, axes)
  if axes == nil then binding.error("tensordot: axes is required") end
  if type(axes) == "number" or (istype(Tensor, axes) and axes.ndim == 0) then
    local n = args.int("tensordot", "axes", axes)
    if n < 0 or n > a_rank or n > b_rank then
      binding.error(fmt("tensordot: axes %d must be between 0 and the ranks %d and %d", n, a_rank, b_rank))
    end
    local ax, bx = {}, {}
    for i = 1, n do ax[i], bx[i] = a_rank - n + i - 1, i - 1 end
    return ax, bx
  end
  local list = istype(Tensor, axes) and axes:totable() or axes
  if type(list) ~= "table" or #list ~= 2 then
    binding.error("tensordot: axes must be a number or a pair of axis lists {a_axes, b_axes}")
  end
  local ax, bx = args.int_list("tensordot", "axes", list[1]), args.int_list("tensordot", "axes", list[2])
  if #ax ~= #bx then
    binding.error(fmt("tensordot: the two axis lists differ in length (%d and %d)", #ax, #bx))
  end
  local function norm(list_, rank, which)
    for i, v in ipairs(list_) do
      if v < -rank or v >= rank then
        binding.error(fmt("tensordot: axis %d of %s is out of range for rank %d", v, which, rank))
      end
      list_[i] = v < 0 and v + rank or v
    end
  end
  norm(ax, a_rank, "a")
  norm(bx, b_rank, "b")
  return ax, bx
end

-- tensordot(a, b, axes) as tf.linalg.tensordot: the sum over a's axes and b's
-- paired with them, as one matmul of the reshaped operands; the result has
-- a's free dims, then b's.
function M.tensordot(a, b, ...)
  local axes = args.parse("tensordot", { "axes", lists = { axes = true } }, ...).axes
  a = input(a, "tensordot", "a")
  if not istype(Tensor, b) then b = convert.coerce(b, a, "tensordot", 2) end
  local ad, bd = dims_of(a, "tensordot"), dims_of(b, "tensordot")
  local ax, bx = tensordot_axes(#ad, #bd, axes)
  local in_a, in_b = {}, {}
  for i, v in ipairs(ax) do
    if in_a[v] then binding.error(fmt("tensordot: axis %d of a is repeated", v)) end
    in_a[v] = true
    local da, db = ad[v + 1], bd[bx[i] + 1]
    if type(da) == "number" and type(db) == "number" and da ~= db then
      binding.error(fmt("tensordot: a's axis %d (size %d) does not match b's axis %d (size %d)", v, da, bx[i], db))
    end
  end
  for _, v in ipairs(bx) do
    if in_b[v] then binding.error(fmt("tensordot: axis %d of b is repeated", v)) end
    in_b[v] = true
  end
  local free_a, free_b, perm_a, perm_b, fa, fb = {}, {}, {}, {}, {}, {}
  for i = 0, #ad - 1 do
    if not in_a[i] then perm_a[#perm_a + 1], free_a[#free_a + 1] = i, ad[i + 1] end
  end
  for _, v in ipairs(ax) do perm_a[#perm_a + 1], fa[#fa + 1] = v, ad[v + 1] end
  for _, v in ipairs(bx) do perm_b[#perm_b + 1], fb[#fb + 1] = v, bd[v + 1] end
  for i = 0, #bd - 1 do
    if not in_b[i] then perm_b[#perm_b + 1], free_b[#free_b + 1] = i, bd[i + 1] end
  end
  local k = product(fa)
  local am = reshape_parts(shape.transpose(a, perm_a), { product(free_a), k })
  local bm = reshape_parts(shape.transpose(b, perm_b), { k, product(free_b) })
  local out = {}
  for _, v in ipairs(free_a) do out[#out + 1] = v end
  for _, v in ipairs(free_b) do out[#out + 1] = v end
  return reshape_parts(M.matmul(am, bm), out)
end

-- cross(a, b) as tf.linalg.cross: the cross products of 3-vectors along the
-- last dim of two tensors of one shape.
function M.cross(a, b)
  a = input(a, "cross", "a")
  if not istype(Tensor, b) then b = convert.coerce(b, a, "cross", 2) end
  local same = a.ndim == b.ndim or a.ndim < 0 or b.ndim < 0
  for i = 0, (same and a.ndim >= 0 and b.ndim >= 0) and a.ndim - 1 or -1 do
    local x, y = tonumber(a.dims[i]), tonumber(b.dims[i])
    if x >= 0 and y >= 0 and x ~= y then same = false end
  end
  if not same then
    binding.error(fmt("cross: Both inputs must be of same shape: %s vs. %s", tostring(a.shape), tostring(b.shape)))
  end
  if a.ndim == 0 or (a.ndim > 0 and tonumber(a.dims[a.ndim - 1]) >= 0 and tonumber(a.dims[a.ndim - 1]) ~= 3) then
    binding.error(fmt("cross: Arguments must have 3 elements in the last dimension, got shape %s", tostring(a.shape)))
  end
  -- c_i = a_(i+1) b_(i+2) - a_(i+2) b_(i+1), the indices cycled
  local r1, r2 = convert.tensor({ 1, 2, 0 }, "int32"), convert.tensor({ 2, 0, 1 }, "int32")
  local g = shape.gather
  return g(a, r1, -1) * g(b, r2, -1) - g(a, r2, -1) * g(b, r1, -1)
end

return M
