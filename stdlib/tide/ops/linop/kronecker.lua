-- stdlib/tide/ops/linop/kronecker.lua — LinearOperatorKronecker: A1 ⊗ A2 ⊗ ... ⊗ Ak, applied one factor at a
-- time through reshapes (never the N x N product); determinants, traces and eigenvalues from the factors'.
local class = require "tide.class"
local base = require "tide.ops.linop.base"
local shape = require "tide.ops.shape"

local M = {}
local LO = base.LinearOperator
local copy = base.copy

local function prod(t, i, j)
  local p = 1
  for k = i, j do p = p * t[k] end
  return p
end

-- The Kronecker product of vectors a [..., p] and b [..., q]: [..., p * q], batch dims broadcast.
local function outer(a, b)
  local r = shape.expand_dims(a, -1) * shape.expand_dims(b, -2)
  local d = base.dims(r)
  local n = #d
  local out = copy(d, 1, n - 2)
  out[#out + 1] = d[n - 1] * d[n]
  return shape.reshape(r, out)
end

-- The Kronecker product of matrices a [..., m1, n1] and b [..., m2, n2]: [..., m1 m2, n1 n2].
local function kron(a, b)
  local r = shape.expand_dims(shape.expand_dims(a, -1), -3) * shape.expand_dims(shape.expand_dims(b, -3), -2)
  local d = base.dims(r) -- [..., m1, m2, n1, n2]
  local n = #d
  local out = copy(d, 1, n - 4)
  out[#out + 1], out[#out + 2] = d[n - 3] * d[n - 2], d[n - 1] * d[n]
  return shape.reshape(r, out)
end

-- LinearOperatorKronecker(operators, {hints}).
local Kronecker = class("LinearOperatorKronecker", LO)
M.Kronecker = Kronecker
function Kronecker:__init(operators, o)
  o = base.hints("LinearOperatorKronecker", o)
  self.name = o.name or "LinearOperatorKronecker"
  if type(operators) ~= "table" or #operators == 0 then base.error(self, "operators must be a non-empty list") end
  local batch, m, n = {}, 1, 1
  for i, op in ipairs(operators) do
    if not base.is_op(op) then base.error(self, "operators[%d] must be a LinearOperator", i) end
    if op.dtype ~= operators[1].dtype then
      base.error(self, "operators[%d] has dtype %s, operators[1] %s", i, op.dtype, operators[1].dtype)
    end
    batch = base.broadcast(batch, copy(op.batch_shape), self.name)
    m, n = m * op.range_dimension, n * op.domain_dimension
  end
  for _, h in ipairs { "is_non_singular", "is_self_adjoint", "is_positive_definite" } do
    local all = true
    for _, op in ipairs(operators) do all = all and op[h] == true end
    if all then base.fixed_hint(self, o, h, true, "a Kronecker product of operators with " .. h .. " has it too") end
  end
  self.operators = operators
  batch[#batch + 1], batch[#batch + 2] = m, n
  o.dtype, o.shape = operators[1].dtype, batch
  LO.__init(self, o)
end

function Kronecker:_to_dense()
  local r = self.operators[1]:to_dense()
  for i = 2, #self.operators do r = kron(r, self.operators[i]:to_dense()) end
  return r
end

-- Applies `f(op, x)` (a product or a solve, mapping op's `from` dim to its `to` dim) factor by factor:
-- x [..., n1 n2 ... nk, R] is seen as [..., P, nk', Q] for each factor, its axis moved to the front.
function Kronecker:_apply(x, f, from, to)
  local ops = self.operators
  local done = {} -- the dims already mapped (to), then the rest (from)
  for i, op in ipairs(ops) do done[i] = op[from] end
  for i, op in ipairs(ops) do
    local d = base.dims(x)
    local nd = #d
    local R = d[nd]
    local batch = copy(d, 1, nd - 2)
    local P, Q = prod(done, 1, i - 1), prod(done, i + 1, #ops) * R
    local nb = #batch
    local shp = copy(batch)
    shp[nb + 1], shp[nb + 2], shp[nb + 3] = P, done[i], Q
    local perm = {}
    for k = 0, nb - 1 do perm[#perm + 1] = k end
    perm[#perm + 1], perm[#perm + 2], perm[#perm + 3] = nb + 1, nb, nb + 2
    local y = shape.transpose(shape.reshape(x, shp), perm) -- [..., nk, P, Q]
    shp = copy(batch)
    shp[nb + 1], shp[nb + 2] = done[i], P * Q
    y = f(op, shape.reshape(shape.contiguous(y), shp)) -- [..., mk, P Q]
    local yd = base.dims(y)
    batch = copy(yd, 1, #yd - 2)
    nb = #batch
    done[i] = op[to]
    shp = copy(batch)
    shp[nb + 1], shp[nb + 2], shp[nb + 3] = done[i], P, Q
    perm = {}
    for k = 0, nb - 1 do perm[#perm + 1] = k end
    perm[#perm + 1], perm[#perm + 2], perm[#perm + 3] = nb + 1, nb, nb + 2
    y = shape.contiguous(shape.transpose(shape.reshape(y, shp), perm)) -- [..., P, mk, Q]
    shp = copy(batch)
    shp[nb + 1], shp[nb + 2] = prod(done, 1, #ops), R
    x = shape.reshape(y, shp)
  end
  return x
end

function Kronecker:_matmul(x, adjoint, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  if adjoint then
    return self:_apply(x, function(op, v) return op:matmul(v, { adjoint = true }) end, "range_dimension",
      "domain_dimension")
  end
  return self:_apply(x, function(op, v) return op:matmul(v) end, "domain_dimension", "range_dimension")
end

function Kronecker:_all_square()
  for _, op in ipairs(self.operators) do if not op.is_square then return false end end
  return true
end

-- (A1 ⊗ ... ⊗ Ak)^-1 = A1^-1 ⊗ ... ⊗ Ak^-1 when every factor is square.
function Kronecker:_check_solvable(method)
  LO._check_solvable(self, method)
  if not self:_all_square() then base.error(self, "%s: every factor must be square", method) end
end
function Kronecker:_solve(rhs, adjoint, adjoint_arg)
  if adjoint_arg then rhs = base.adj(rhs) end
  return self:_apply(rhs, function(op, v) return op:solve(v, { adjoint = adjoint }) end, "range_dimension",
    "domain_dimension")
end

-- det(A1 ⊗ ... ⊗ Ak) = prod det(Ai)^(N / ni); the log of its size likewise.
function Kronecker:_determinant()
  if not self:_all_square() then return LO._determinant(self) end
  local r
  for _, op in ipairs(self.operators) do
    local t = op:determinant() ^ (self.domain_dimension / op.domain_dimension)
    r = r and r * t or t
  end
  return r
end
function Kronecker:_log_abs_determinant()
  if not self:_all_square() then return LO._log_abs_determinant(self) end
  local r
  for _, op in ipairs(self.operators) do
    local t = op:log_abs_determinant() * (self.domain_dimension / op.domain_dimension)
    r = r and r + t or t
  end
  return r
end
function Kronecker:_fold(method)
  local r = self.operators[1][method](self.operators[1])
  for i = 2, #self.operators do r = outer(r, self.operators[i][method](self.operators[i])) end
  return r
end
function Kronecker:_diag_part()
  if not self:_all_square() then return LO._diag_part(self) end
  return self:_fold("diag_part")
end
function Kronecker:_trace()
  if not self:_all_square() then return LO._trace(self) end
  local r = self.operators[1]:trace()
  for i = 2, #self.operators do r = r * self.operators[i]:trace() end
  return r
end
function Kronecker:_eigvals() return self:_fold("eigvals") end
local function map(self, method, o)
  local ops = {}
  for i, op in ipairs(self.operators) do ops[i] = op[method](op) end
  return Kronecker(ops, o)
end
function Kronecker:_inverse() return map(self, "inverse") end
function Kronecker:_adjoint() return map(self, "adjoint") end
function Kronecker:_cholesky() return map(self, "cholesky", { is_non_singular = true }) end

base.classes.Kronecker = Kronecker
return M
