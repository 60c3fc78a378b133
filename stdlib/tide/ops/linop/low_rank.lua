-- stdlib/tide/ops/linop/low_rank.lua — LinearOperatorLowRankUpdate: L + U D V^H with an operator L, U and V
-- [..., N, K] and D diagonal [..., K]; solves by Woodbury's identity and determinants by the determinant
-- lemma, through the K x K capacitance matrix C = D^-1 + V^H L^-1 U (never an N x N inverse).
local class = require "tide.class"
local args = require "tide.args"
local base = require "tide.ops.linop.base"
local shape = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local linalg = require "tide.ops.linalg"
local decomp = require "tide.ops.linalg_decomp"

local M = {}
local LO = base.LinearOperator
local copy = base.copy
local mm = linalg.matmul

-- LinearOperatorLowRankUpdate(base_operator, u, {diag_update, v, is_diag_update_positive, hints}).
local LowRankUpdate = class("LinearOperatorLowRankUpdate", LO)
M.LowRankUpdate = LowRankUpdate
function LowRankUpdate:__init(base_operator, u, o)
  o = base.hints("LinearOperatorLowRankUpdate", o, { "diag_update", "v", "is_diag_update_positive" })
  self.name = o.name or "LinearOperatorLowRankUpdate"
  if not base.is_op(base_operator) then base.error(self, "base_operator must be a LinearOperator") end
  if not base_operator.is_square then base.error(self, "base_operator must be square") end
  self.base_operator = base_operator
  self.dtype = base_operator.dtype
  self.u = base.float_arg(self, u, "u")
  self.v = o.v ~= nil and base.float_arg(self, o.v, "v") or nil
  local ud = base.dims(self.u)
  local n = base_operator.domain_dimension
  if #ud < 2 or ud[#ud - 1] ~= n then
    base.error(self, "u must be [..., %d, K] (the base operator's dimension %d), got shape (%s)", n, n,
      table.concat(ud, ","))
  end
  local k = ud[#ud]
  if self.v then
    local vd = base.dims(self.v)
    if #vd < 2 or vd[#vd - 1] ~= n or vd[#vd] ~= k then
      base.error(self, "v must have u's shape [..., %d, %d], got (%s)", n, k, table.concat(vd, ","))
    end
  end
  if o.diag_update ~= nil then
    self.diag_update = base.float_arg(self, o.diag_update, "diag_update")
    local dd = base.dims(self.diag_update)
    if #dd < 1 or dd[#dd] ~= k then
      base.error(self, "diag_update must be [..., %d] (u's K), got shape (%s)", k, table.concat(dd, ","))
    end
  end
  local positive = args.bool(self.name, "is_diag_update_positive", o.is_diag_update_positive, o.diag_update == nil)
  self.is_diag_update_positive = positive
  if self.v == nil then
    if base_operator.is_self_adjoint and o.is_self_adjoint == nil then o.is_self_adjoint = true end
    if base_operator.is_positive_definite and positive and o.is_positive_definite == nil then
      o.is_positive_definite = true
    end
  end
  -- the batch shape: the base's, u's, v's and diag_update's broadcast
  local batch = base.broadcast(copy(base_operator.batch_shape), copy(ud, 1, #ud - 2), self.name)
  if self.diag_update then
    local dd = base.dims(self.diag_update)
    batch = base.broadcast(batch, copy(dd, 1, #dd - 1), self.name)
  end
  batch[#batch + 1], batch[#batch + 2] = n, n
  o.dtype, o.shape = base_operator.dtype, batch
  LO.__init(self, o)
end
function LowRankUpdate:_vv() return self.v or self.u end
-- D @ x for x [..., K, R] (D = I without diag_update).
function LowRankUpdate:_d(x)
  if not self.diag_update then return x end
  return shape.expand_dims(self.diag_update, -1) * x
end
function LowRankUpdate:_to_dense()
  return self.base_operator:to_dense() + mm(self.u, self:_d(base.adj(self:_vv())))
end
function LowRankUpdate:_matmul(x, adjoint, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  local left, right = self.u, self:_vv()
  if adjoint then left, right = right, left end
  return self.base_operator:matmul(x, { adjoint = adjoint }) + mm(left, self:_d(mm(right, x, { adjoint_a = true })))
end
-- C = D^-1 + V^H L^-1 U (adjoint: U^H L^-H V).
function LowRankUpdate:_capacitance(adjoint)
  local left, right = self.u, self:_vv()
  if adjoint then left, right = right, left end
  local c = mm(right, self.base_operator:solve(left, { adjoint = adjoint }), { adjoint_a = true })
  if self.diag_update then return linalg.set_diag(c, linalg.diag_part(c) + 1 / self.diag_update) end
  return linalg.set_diag(c, linalg.diag_part(c) + 1)
end
-- Woodbury: A^-1 b = w - L^-1 U C^-1 V^H w with w = L^-1 b.
function LowRankUpdate:_solve(rhs, adjoint, adjoint_arg)
  if adjoint_arg then rhs = base.adj(rhs) end
  local left, right = self.u, self:_vv()
  if adjoint then left, right = right, left end
  local L = self.base_operator
  local w = L:solve(rhs, { adjoint = adjoint })
  local c = self:_capacitance(adjoint)
  local z = mm(right, w, { adjoint_a = true })
  local batch = base.broadcast(copy(base.dims(c), 1, c.ndim - 2), copy(base.dims(z), 1, z.ndim - 2), self.name)
  z = decomp.solve(base.to_batch(c, batch), base.to_batch(z, batch))
  return w - L:solve(mm(left, z), { adjoint = adjoint })
end
-- The determinant lemma: det(L + U D V^H) = det(C) det(D) det(L).
function LowRankUpdate:_determinant()
  local d = decomp.det(self:_capacitance(false)) * self.base_operator:determinant()
  if self.diag_update then d = d * reduce.reduce_prod(self.diag_update, -1) end
  return d
end
function LowRankUpdate:_log_abs_determinant()
  local _, c = decomp.slogdet(self:_capacitance(false))
  local d = c + self.base_operator:log_abs_determinant()
  if self.diag_update then d = d + reduce.reduce_sum(math_ops.log(math_ops.abs(self.diag_update)), -1) end
  return d
end
function LowRankUpdate:_diag_part()
  local ud = self.u * self:_vv()
  if self.diag_update then ud = ud * shape.expand_dims(self.diag_update, -2) end
  return self.base_operator:diag_part() + reduce.reduce_sum(ud, -1)
end

base.classes.LowRankUpdate = LowRankUpdate
return M
