-- stdlib/tide/ops/linop/structured.lua — operators with a closed form: LinearOperatorToeplitz (products by a
-- circulant embedding and FFTs), LinearOperatorHouseholder (I - 2 v v^T / v^T v), LinearOperatorPermutation
-- (gathers) and LinearOperatorTridiag (tide.linalg's tridiagonal product and solver).
local class = require "tide.class"
local base = require "tide.ops.linop.base"
local signal = require "tide.ops.signal"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local linalg = require "tide.ops.linalg"
local decomp = require "tide.ops.linalg_decomp"

local M = {}
local LO = base.LinearOperator
local copy = base.copy

local function vector_arg(op, v, what)
  v = base.float_arg(op, v, what)
  if v.ndim < 1 then base.error(op, "%s must have rank 1 or more, got a scalar", what) end
  return v
end

-- The operator dims from a vector argument [..., n]: batch + {n, n}.
local function square_dims(v)
  local d = base.dims(v)
  d[#d + 1] = d[#d]
  return d
end

---------------------------------------------------------------------------
-- LinearOperatorToeplitz(col, row, {hints}): A[i, j] = col[i - j] below the diagonal, row[j - i] above it;
-- the diagonal is col[0] (row[0] is not read, as TF's).
---------------------------------------------------------------------------
local Toeplitz = class("LinearOperatorToeplitz", LO)
M.Toeplitz = Toeplitz
function Toeplitz:__init(col, row, o)
  o = base.hints("LinearOperatorToeplitz", o)
  self.name = o.name or "LinearOperatorToeplitz"
  base.fixed_hint(self, o, "is_square", true, "a Toeplitz operator is always square")
  self.col, self.row = vector_arg(self, col, "col"), vector_arg(self, row, "row")
  local cd, rd = base.dims(self.col), base.dims(self.row)
  if cd[#cd] ~= rd[#rd] then base.error(self, "col has %d entries and row %d; they must agree", cd[#cd], rd[#rd]) end
  self.n = cd[#cd]
  local batch = base.broadcast(copy(cd, 1, #cd - 1), copy(rd, 1, #rd - 1), self.name)
  self.batch = copy(batch)
  batch[#batch + 1], batch[#batch + 2] = self.n, self.n
  o.dtype, o.shape = self.col.dtype, batch
  LO.__init(self, o)
end
-- The first column of the 2n circulant that holds A in its top-left block: [col, 0, row[n-1], ..., row[1]].
function Toeplitz:_embedding()
  local n = self.n
  local rest = shape.reverse(self.row:slice { "...", { 1, nil } }, { -1 })
  local col, z = self.col, create.zeros_like(self.col:slice { "...", { 0, 1 } })
  local parts = { col, z, rest }
  local batch = {}
  for _, p in ipairs(parts) do batch = base.broadcast(batch, copy(base.dims(p), 1, p.ndim - 1), self.name) end
  for i, p in ipairs(parts) do
    local d = copy(batch)
    d[#d + 1] = base.dims(p)[p.ndim]
    parts[i] = shape.broadcast_to(p, d)
  end
  return shape.concat(parts, { axis = -1 })
end
function Toeplitz:_matmul(x, adjoint, adjoint_arg)
  if adjoint then return Toeplitz(self.row, self.col):_matmul(x, false, adjoint_arg) end
  if adjoint_arg then x = base.adj(x) end
  local n = self.n
  local cols = base.adj(x) -- [..., R, n]
  cols = shape.concat({ cols, create.zeros_like(cols) }, { axis = -1 }) -- [..., R, 2n]
  local s = signal.fft(self:_embedding())
  s = { real = shape.expand_dims(s.real, -2), imag = shape.expand_dims(s.imag, -2) }
  local z = signal.fft(cols)
  local y = signal.ifft({ real = z.real * s.real - z.imag * s.imag, imag = z.real * s.imag + z.imag * s.real }).real
  return base.adj(y:slice { "...", { 0, n } })
end
function Toeplitz:_to_dense()
  local eye = create.eye(self.n, { dtype = self.dtype })
  local d = self:_matmul(eye, false, false)
  if #self.batch == 0 then return d end
  return base.to_batch(d, self.batch)
end
function Toeplitz:_diag_part()
  local c0 = self.col:slice { "...", { 0, 1 } }
  local d = copy(self.batch)
  d[#d + 1] = self.n
  return shape.broadcast_to(c0, d)
end

---------------------------------------------------------------------------
-- LinearOperatorHouseholder(reflection_axis, {hints}): the reflection through the hyperplane normal to v.
---------------------------------------------------------------------------
local Householder = class("LinearOperatorHouseholder", LO)
M.Householder = Householder
function Householder:__init(reflection_axis, o)
  o = base.hints("LinearOperatorHouseholder", o)
  self.name = o.name or "LinearOperatorHouseholder"
  base.fixed_hint(self, o, "is_self_adjoint", true, "a Householder operator is always self-adjoint")
  base.fixed_hint(self, o, "is_positive_definite", false, "a Householder operator is never positive definite")
  self.reflection_axis = vector_arg(self, reflection_axis, "reflection_axis")
  o.dtype, o.shape = self.reflection_axis.dtype, square_dims(self.reflection_axis)
  LO.__init(self, o)
end
-- v / |v| as a column [..., n, 1].
function Householder:_unit()
  local v = self.reflection_axis
  return shape.expand_dims(v / math_ops.sqrt(reduce.reduce_sum(v * v, -1, true)), -1)
end
function Householder:_matmul(x, _, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  local u = self:_unit()
  return x - 2 * u * reduce.reduce_sum(u * x, -2, true)
end
function Householder:_solve(rhs, adjoint, adjoint_arg) return self:_matmul(rhs, adjoint, adjoint_arg) end
function Householder:_to_dense()
  local u = self:_unit()
  local n = self.domain_dimension
  return create.eye(n, { dtype = self.dtype }) - 2 * linalg.matmul(u, u, { transpose_b = true })
end
function Householder:_batch_fill(v)
  return create.fill(copy(self.batch_shape), v, self.dtype)
end
function Householder:_determinant() return self:_batch_fill(-1) end
function Householder:_log_abs_determinant() return self:_batch_fill(0) end
function Householder:_diag_part()
  local u = shape.squeeze(self:_unit(), -1)
  return 1 - 2 * u * u
end
function Householder:_trace() return self:_batch_fill(self.domain_dimension - 2) end
function Householder:_eigvals()
  local d = copy(self.batch_shape)
  d[#d + 1] = self.domain_dimension - 1
  local ones = create.ones(d, self.dtype)
  d[#d] = 1
  return shape.concat({ -create.ones(d, self.dtype), ones }, { axis = -1 })
end
function Householder:_inverse() return self end

---------------------------------------------------------------------------
-- LinearOperatorPermutation(perm, {dtype = "float32", hints}): (P x)[i] = x[perm[i]].
---------------------------------------------------------------------------
local Permutation = class("LinearOperatorPermutation", LO)
M.Permutation = Permutation
function Permutation:__init(perm, o)
  o = base.hints("LinearOperatorPermutation", o, { "dtype" })
  self.name = o.name or "LinearOperatorPermutation"
  base.fixed_hint(self, o, "is_square", true, "a permutation operator is always square")
  if perm == nil then base.error(self, "perm is nil; expected an integer tensor") end
  self.dtype = o.dtype or "float32"
  perm = require("tide.convert").arg(perm, self.name)
  if perm.dtype ~= "int32" and perm.dtype ~= "int64" then
    base.error(self, "perm must be an int32 or int64 tensor, got %s", perm.dtype)
  end
  if perm.ndim < 1 then base.error(self, "perm must have rank 1 or more, got a scalar") end
  self.perm = perm
  o.dtype, o.shape = self.dtype, square_dims(perm)
  LO.__init(self, o)
end
-- Rows of x gathered by idx [..., n] (batch dims broadcast).
function Permutation:_gather(x, idx)
  local xd = base.dims(x)
  local batch = base.broadcast(copy(xd, 1, #xd - 2), copy(base.dims(idx), 1, idx.ndim - 1), self.name)
  local xb = base.to_batch(x, batch)
  local d = copy(batch)
  d[#d + 1] = self.domain_dimension
  local ib = shape.broadcast_to(idx, d)
  return shape.gather(xb, ib, { axis = #batch, batch_dims = #batch })
end
function Permutation:_inverse_perm() return reduce.argsort(self.perm, { axis = -1 }) end
function Permutation:_matmul(x, adjoint, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  return self:_gather(x, adjoint and self:_inverse_perm() or self.perm)
end
function Permutation:_solve(rhs, adjoint, adjoint_arg) return self:_matmul(rhs, not adjoint, adjoint_arg) end
function Permutation:_to_dense() return shape.one_hot(self.perm, self.domain_dimension, { dtype = self.dtype }) end
-- det P = (-1)^(the number of inversions, pairs i < j with perm[i] > perm[j]): O(n^2), no factorization.
function Permutation:_determinant()
  local p = self.perm
  local gt = math_ops.cast(math_ops.greater(shape.expand_dims(p, -1), shape.expand_dims(p, -2)), self.dtype)
  local count = reduce.reduce_sum(linalg.band_part(gt, 0, -1), { -2, -1 })
  return 1 - 2 * math_ops.floormod(count, 2)
end
function Permutation:_log_abs_determinant() return create.zeros(copy(self.batch_shape), self.dtype) end
function Permutation:_diag_part()
  local ar = create.range(0, self.domain_dimension, 1, self.perm.dtype)
  return math_ops.cast(math_ops.equal(self.perm, ar), self.dtype)
end

---------------------------------------------------------------------------
-- LinearOperatorTridiag(diagonals, {diagonals_format = "compact", hints}): compact is [..., 3, N]
-- (superdiagonal, its last entry unread; main; subdiagonal, its first unread), as tf.linalg.tridiagonal_*.
---------------------------------------------------------------------------
local Tridiag = class("LinearOperatorTridiag", LO)
M.Tridiag = Tridiag
local FORMATS = { compact = true, sequence = true, matrix = true }
function Tridiag:__init(diagonals, o)
  o = base.hints("LinearOperatorTridiag", o, { "diagonals_format" })
  self.name = o.name or "LinearOperatorTridiag"
  base.fixed_hint(self, o, "is_square", true, "a tridiagonal operator is always square")
  local fmt_ = o.diagonals_format or "compact"
  if not FORMATS[fmt_] then
    base.error(self, "diagonals_format must be \"compact\", \"sequence\" or \"matrix\", got %s", tostring(fmt_))
  end
  local c
  if fmt_ == "sequence" then
    if type(diagonals) ~= "table" or #diagonals ~= 3 then
      base.error(self, "diagonals_format \"sequence\" takes a list of three tensors {superdiag, maindiag, subdiag}")
    end
    c = shape.stack({ vector_arg(self, diagonals[1], "superdiag"), vector_arg(self, diagonals[2], "maindiag"),
      vector_arg(self, diagonals[3], "subdiag") }, -2)
  elseif fmt_ == "matrix" then
    local m = base.float_arg(self, diagonals, "diagonals")
    local d = base.dims(m)
    if #d < 2 or d[#d] ~= d[#d - 1] then base.error(self, "a matrix of diagonals must be square, got shape (%s)", table.concat(d, ",")) end
    c = linalg.diag_part(m, { k = { -1, 1 }, align = "LEFT_RIGHT" })
  else
    c = base.float_arg(self, diagonals, "diagonals")
    local d = base.dims(c)
    if #d < 2 or d[#d - 1] ~= 3 then base.error(self, "compact diagonals must be [..., 3, N], got shape (%s)", table.concat(d, ",")) end
  end
  self.diagonals, self.diagonals_format = c, fmt_
  local d = base.dims(c)
  local dims = copy(d, 1, #d - 2)
  dims[#dims + 1], dims[#dims + 2] = d[#d], d[#d]
  o.dtype, o.shape = c.dtype, dims
  LO.__init(self, o)
end
-- The compact diagonals of the transpose: its superdiagonal is the subdiagonal moved left, and back.
function Tridiag:_transposed()
  local c = self.diagonals
  local sup, main, sub = c:slice { "...", 0, {} }, c:slice { "...", 1, {} }, c:slice { "...", 2, {} }
  local z = create.zeros_like(main:slice { "...", { 0, 1 } })
  local new_sup = shape.concat({ sub:slice { "...", { 1, nil } }, z }, { axis = -1 })
  local new_sub = shape.concat({ z, sup:slice { "...", { nil, -1 } } }, { axis = -1 })
  return shape.stack({ new_sup, main, new_sub }, -2)
end
function Tridiag:_compact(adjoint) return adjoint and self:_transposed() or self.diagonals end
function Tridiag:_matmul(x, adjoint, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  local c = self:_compact(adjoint)
  local batch = base.broadcast(copy(self.batch_shape), copy(base.dims(x), 1, x.ndim - 2), self.name)
  return decomp.tridiagonal_matmul(base.to_batch(c, batch), base.to_batch(x, batch))
end
function Tridiag:_solve(rhs, adjoint, adjoint_arg)
  if adjoint_arg then rhs = base.adj(rhs) end
  local c = self:_compact(adjoint)
  local batch = base.broadcast(copy(self.batch_shape), copy(base.dims(rhs), 1, rhs.ndim - 2), self.name)
  return decomp.tridiagonal_solve(base.to_batch(c, batch), base.to_batch(rhs, batch))
end
function Tridiag:_to_dense()
  local n = self.domain_dimension
  return self:_matmul(base.to_batch(create.eye(n, { dtype = self.dtype }), copy(self.batch_shape)), false, false)
end
function Tridiag:_diag_part() return self.diagonals:slice { "...", 1, {} } end

base.classes.Toeplitz, base.classes.Householder = Toeplitz, Householder
base.classes.Permutation, base.classes.Tridiag = Permutation, Tridiag
return M
