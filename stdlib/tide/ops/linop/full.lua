-- stdlib/tide/ops/linop/full.lua — LinearOperatorFullMatrix (a dense [..., M, N] matrix) and
-- LinearOperatorLowerTriangular (its lower triangle: triangular solves, determinant from the diagonal).
local class = require "tide.class"
local base = require "tide.ops.linop.base"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local linalg = require "tide.ops.linalg"
local decomp = require "tide.ops.linalg_decomp"

local M = {}
local LO = base.LinearOperator

-- The matrix argument of a constructor: a float tensor of rank 2 or more.
local function matrix_arg(op, m, what)
  m = base.float_arg(op, m, what)
  if m.ndim < 2 then base.error(op, "%s must have rank 2 or more, got shape %s", what, tostring(m.shape)) end
  return m
end
M.matrix_arg = matrix_arg

-- LinearOperatorFullMatrix(matrix, {is_non_singular, is_self_adjoint, is_positive_definite, is_square, name}).
local FullMatrix = class("LinearOperatorFullMatrix", LO)
M.FullMatrix = FullMatrix
function FullMatrix:__init(matrix, o)
  o = base.hints("LinearOperatorFullMatrix", o)
  self.name = o.name or "LinearOperatorFullMatrix"
  self.matrix = matrix_arg(self, matrix, "matrix")
  o.dtype, o.shape = self.matrix.dtype, base.dims(self.matrix)
  LO.__init(self, o)
end
function FullMatrix:_to_dense() return self.matrix end
-- A self-adjoint positive definite matrix solves through its Cholesky factor.
function FullMatrix:_solve(rhs, adjoint, adjoint_arg)
  if self.is_self_adjoint and self.is_positive_definite then
    if adjoint_arg then rhs = base.adj(rhs) end
    local batch = base.broadcast(base.copy(self.batch_shape), base.copy(base.dims(rhs), 1, rhs.ndim - 2), self.name)
    return decomp.cholesky_solve(base.to_batch(decomp.cholesky(self.matrix), batch), base.to_batch(rhs, batch))
  end
  return LO._solve(self, rhs, adjoint, adjoint_arg)
end

-- LinearOperatorLowerTriangular(tril, {hints}): only the lower triangle of tril is read.
local LowerTriangular = class("LinearOperatorLowerTriangular", LO)
M.LowerTriangular = LowerTriangular
function LowerTriangular:__init(tril, o)
  o = base.hints("LinearOperatorLowerTriangular", o)
  self.name = o.name or "LinearOperatorLowerTriangular"
  base.fixed_hint(self, o, "is_square", true, "only square lower triangular operators are supported")
  tril = matrix_arg(self, tril, "tril")
  self.tril = linalg.band_part(tril, -1, 0)
  o.dtype, o.shape = tril.dtype, base.dims(tril)
  LO.__init(self, o)
end
function LowerTriangular:_to_dense() return self.tril end
function LowerTriangular:_solve(rhs, adjoint, adjoint_arg)
  if adjoint_arg then rhs = base.adj(rhs) end
  local batch = base.broadcast(base.copy(self.batch_shape), base.copy(base.dims(rhs), 1, rhs.ndim - 2), self.name)
  return decomp.triangular_solve(base.to_batch(self.tril, batch), base.to_batch(rhs, batch),
    { lower = true, adjoint = adjoint })
end
function LowerTriangular:_diag_part() return linalg.diag_part(self.tril) end
function LowerTriangular:_determinant() return reduce.reduce_prod(self:_diag_part(), -1) end
function LowerTriangular:_log_abs_determinant()
  return reduce.reduce_sum(math_ops.log(math_ops.abs(self:_diag_part())), -1)
end
function LowerTriangular:_eigvals() return self:_diag_part() end

base.classes.FullMatrix, base.classes.LowerTriangular = FullMatrix, LowerTriangular
return M
