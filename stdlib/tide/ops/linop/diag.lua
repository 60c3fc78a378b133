-- stdlib/tide/ops/linop/diag.lua — the diagonal operators: LinearOperatorDiag, LinearOperatorIdentity,
-- LinearOperatorScaledIdentity and LinearOperatorZeros. Products and solves are elementwise; nothing densifies.
local class = require "tide.class"
local args = require "tide.args"
local convert = require "tide.convert"
local base = require "tide.ops.linop.base"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local linalg = require "tide.ops.linalg"

local M = {}
local LO = base.LinearOperator
local copy = base.copy

local function col(t) return shape.expand_dims(t, -1) end
local function arg_t(x, adjoint_arg) return adjoint_arg and base.adj(x) or x end

-- x + D for each matrix of x, D diagonal with `d` [..., n] on it.
local function add_diag(x, d) return linalg.set_diag(x, linalg.diag_part(x) + d) end

-- LinearOperatorDiag(diag, {hints}): the [..., N, N] matrix with diag [..., N] on its diagonal.
local Diag = class("LinearOperatorDiag", LO)
M.Diag = Diag
function Diag:__init(diag, o)
  o = base.hints("LinearOperatorDiag", o)
  self.name = o.name or "LinearOperatorDiag"
  base.fixed_hint(self, o, "is_square", true, "only square diagonal operators are supported (is_square)")
  base.fixed_hint(self, o, "is_self_adjoint", true, "a real diagonal operator is always self-adjoint")
  diag = base.float_arg(self, diag, "diag")
  if diag.ndim < 1 then base.error(self, "diag must have rank 1 or more, got a scalar") end
  self.diag = diag
  local dims = base.dims(diag)
  dims[#dims + 1] = dims[#dims]
  o.dtype, o.shape = diag.dtype, dims
  LO.__init(self, o)
end
function Diag:_to_dense() return linalg.diag(self.diag) end
function Diag:_matmul(x, _, adjoint_arg) return col(self.diag) * arg_t(x, adjoint_arg) end
function Diag:_solve(rhs, _, adjoint_arg) return arg_t(rhs, adjoint_arg) / col(self.diag) end
function Diag:_determinant() return reduce.reduce_prod(self.diag, -1) end
function Diag:_log_abs_determinant() return reduce.reduce_sum(math_ops.log(math_ops.abs(self.diag)), -1) end
function Diag:_diag_part() return self.diag end
function Diag:_add_to_tensor(x) return add_diag(x, self.diag) end
function Diag:_eigvals() return self.diag end
function Diag:_cholesky() return Diag(math_ops.sqrt(self.diag), { is_non_singular = true, is_positive_definite = true }) end
function Diag:_inverse()
  return Diag(1 / self.diag, { is_non_singular = self.is_non_singular, is_positive_definite = self.is_positive_definite })
end

-- The (num_rows, batch_shape, dtype) of the identity-like constructors.
local function identity_dims(op, num_rows, o)
  num_rows = args.int(op.name, "num_rows", num_rows)
  if num_rows < 0 then base.error(op, "num_rows must be >= 0, got %d", num_rows) end
  local batch = o.batch_shape == nil and {} or args.int_list(op.name, "batch_shape", o.batch_shape)
  return num_rows, batch
end

-- A hint an identity-like operator fixes: the user may repeat it, not contradict it.
local function always(op, o, hint, value, what)
  base.fixed_hint(op, o, hint, value, "an " .. what .. " operator is always " ..
    ({ is_non_singular = "non-singular", is_self_adjoint = "self-adjoint", is_positive_definite = "positive definite",
       is_square = "square" })[hint])
end

-- LinearOperatorIdentity(num_rows, {batch_shape, dtype = "float32", hints}): I, batch_shape copies of it.
local Identity = class("LinearOperatorIdentity", LO)
M.Identity = Identity
function Identity:__init(num_rows, o)
  o = base.hints("LinearOperatorIdentity", o, { "batch_shape", "dtype", "assert_proper_shapes" })
  self.name = o.name or "LinearOperatorIdentity"
  for _, h in ipairs { "is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square" } do
    always(self, o, h, true, "identity")
  end
  local n, batch = identity_dims(self, num_rows, o)
  self.num_rows, self.batch = n, batch
  local dims = copy(batch)
  dims[#dims + 1], dims[#dims + 2] = n, n
  o.dtype, o.shape = o.dtype or "float32", dims
  LO.__init(self, o)
end
-- x broadcast against the batch shape (TF's identity broadcasts its argument).
function Identity:_bcast(x)
  local batch = base.broadcast(copy(self.batch), copy(base.dims(x), 1, x.ndim - 2), self.name)
  return base.to_batch(x, batch)
end
function Identity:_batch_fill(extra, value)
  local d = copy(self.batch)
  for _, e in ipairs(extra) do d[#d + 1] = e end
  return create.fill(d, value, self.dtype)
end
function Identity:_to_dense()
  if #self.batch == 0 then return create.eye(self.num_rows, { dtype = self.dtype }) end
  return create.eye(self.num_rows, { batch_shape = self.batch, dtype = self.dtype })
end
function Identity:_matmul(x, _, adjoint_arg) return self:_bcast(arg_t(x, adjoint_arg)) end
function Identity:_solve(rhs, _, adjoint_arg) return self:_bcast(arg_t(rhs, adjoint_arg)) end
function Identity:_determinant() return self:_batch_fill({}, 1) end
function Identity:_log_abs_determinant() return self:_batch_fill({}, 0) end
function Identity:_diag_part() return self:_batch_fill({ self.num_rows }, 1) end
function Identity:_trace() return self:_batch_fill({}, self.num_rows) end
function Identity:_add_to_tensor(x) return add_diag(self:_bcast(x), 1) end
function Identity:_eigvals() return self:_diag_part() end
function Identity:_cholesky() return self end
function Identity:_inverse() return self end

-- LinearOperatorScaledIdentity(num_rows, multiplier, {hints}): multiplier * I; its batch shape is the multiplier's.
local ScaledIdentity = class("LinearOperatorScaledIdentity", LO)
M.ScaledIdentity = ScaledIdentity
function ScaledIdentity:__init(num_rows, multiplier, o)
  o = base.hints("LinearOperatorScaledIdentity", o, { "assert_proper_shapes" })
  self.name = o.name or "LinearOperatorScaledIdentity"
  base.fixed_hint(self, o, "is_square", true, "a scaled identity operator is always square")
  base.fixed_hint(self, o, "is_self_adjoint", true, "a real scaled identity operator is always self-adjoint")
  local n = identity_dims(self, num_rows, {})
  if multiplier == nil then base.error(self, "multiplier is nil; expected a tensor") end
  -- a Lua number is float32 (TF's 3.0; Lua has no separate integer literal), a tensor keeps its dtype
  self.multiplier = type(multiplier) == "number" and convert.tensor(multiplier, "float32", self.name)
    or convert.arg(multiplier, self.name)
  self.num_rows = n
  local dims = base.dims(self.multiplier)
  dims[#dims + 1], dims[#dims + 2] = n, n
  o.dtype, o.shape = self.multiplier.dtype, dims
  LO.__init(self, o)
end
function ScaledIdentity:_m() return shape.expand_dims(col(self.multiplier), -1) end
function ScaledIdentity:_diag_part()
  return col(self.multiplier) * create.ones({ self.num_rows }, self.dtype)
end
function ScaledIdentity:_to_dense() return linalg.diag(self:_diag_part()) end
function ScaledIdentity:_matmul(x, _, adjoint_arg) return self:_m() * arg_t(x, adjoint_arg) end
function ScaledIdentity:_solve(rhs, _, adjoint_arg) return arg_t(rhs, adjoint_arg) / self:_m() end
function ScaledIdentity:_determinant() return self.multiplier ^ self.num_rows end
function ScaledIdentity:_log_abs_determinant() return math_ops.log(math_ops.abs(self.multiplier)) * self.num_rows end
function ScaledIdentity:_trace() return self.multiplier * self.num_rows end
function ScaledIdentity:_add_to_tensor(x) return add_diag(x, col(self.multiplier)) end
function ScaledIdentity:_eigvals() return self:_diag_part() end
function ScaledIdentity:_cholesky()
  return ScaledIdentity(self.num_rows, math_ops.sqrt(self.multiplier), { is_non_singular = true,
    is_self_adjoint = true, is_positive_definite = true })
end
function ScaledIdentity:_inverse()
  return ScaledIdentity(self.num_rows, 1 / self.multiplier, { is_non_singular = self.is_non_singular,
    is_self_adjoint = self.is_self_adjoint, is_positive_definite = self.is_positive_definite })
end

-- LinearOperatorZeros(num_rows, {num_columns, batch_shape, dtype = "float32", hints}): the zero matrix.
local Zeros = class("LinearOperatorZeros", LO)
M.Zeros = Zeros
function Zeros:__init(num_rows, o)
  o = base.hints("LinearOperatorZeros", o, { "num_columns", "batch_shape", "dtype", "assert_proper_shapes" })
  self.name = o.name or "LinearOperatorZeros"
  if o.is_non_singular then base.error(self, "a zeros operator is always singular") end
  if o.is_positive_definite then base.error(self, "a zeros operator is never positive definite") end
  if o.is_non_singular == nil then o.is_non_singular = false end
  if o.is_positive_definite == nil then o.is_positive_definite = false end
  local n, batch = identity_dims(self, num_rows, o)
  local cols = o.num_columns == nil and n or args.int(self.name, "num_columns", o.num_columns)
  if o.is_square == nil then o.is_square = n == cols end
  if o.is_self_adjoint == nil then o.is_self_adjoint = n == cols end
  self.num_rows, self.num_columns, self.batch = n, cols, batch
  local dims = copy(batch)
  dims[#dims + 1], dims[#dims + 2] = n, cols
  o.dtype, o.shape = o.dtype or "float32", dims
  LO.__init(self, o)
end
function Zeros:_to_dense()
  local d = copy(self.batch)
  d[#d + 1], d[#d + 2] = self.num_rows, self.num_columns
  return create.zeros(d, self.dtype)
end
function Zeros:_matmul(x, adjoint, adjoint_arg)
  local xd = base.dims(x)
  local d = base.broadcast(copy(self.batch), copy(xd, 1, #xd - 2), self.name)
  d[#d + 1] = adjoint and self.num_columns or self.num_rows
  d[#d + 1] = adjoint_arg and xd[#xd - 1] or xd[#xd]
  return create.zeros(d, self.dtype)
end
function Zeros:_batch_zeros(extra)
  local d = copy(self.batch)
  if extra then d[#d + 1] = extra end
  return create.zeros(d, self.dtype)
end
function Zeros:_determinant() return self:_batch_zeros() end
function Zeros:_log_abs_determinant() return math_ops.log(self:_batch_zeros()) end
function Zeros:_diag_part() return self:_batch_zeros(math.min(self.num_rows, self.num_columns)) end
function Zeros:_trace() return self:_batch_zeros() end
function Zeros:_add_to_tensor(x) return x + self:_to_dense() end
function Zeros:_eigvals() return self:_batch_zeros(self.num_rows) end

base.classes.Diag, base.classes.Identity, base.classes.ScaledIdentity, base.classes.Zeros = Diag, Identity,
  ScaledIdentity, Zeros
return M
