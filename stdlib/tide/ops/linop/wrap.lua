-- stdlib/tide/ops/linop/wrap.lua — operators made of other operators without new numbers:
-- LinearOperatorAdjoint (A^H), LinearOperatorInversion (A^-1) and LinearOperatorComposition (A1 A2 ... Ak).
local class = require "tide.class"
local base = require "tide.ops.linop.base"

local M = {}
local LO = base.LinearOperator
local copy = base.copy
local HINTS = { "is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square" }

local function op_arg(self, v, what)
  if not base.is_op(v) then base.error(self, "%s must be a LinearOperator, got %s", what, type(v)) end
  return v
end

-- The hints a wrapper takes from its operator: the user may repeat them, not contradict them.
local function inherit(self, o, inner)
  for _, h in ipairs(HINTS) do
    if inner[h] ~= nil and h ~= "is_square" then
      base.fixed_hint(self, o, h, inner[h], "the operator's " .. h .. " is " .. tostring(inner[h]) ..
        ", the hint given contradicts it")
    end
  end
end

-- LinearOperatorAdjoint(operator, {hints}): the adjoint (here: transpose) of operator.
local Adjoint = class("LinearOperatorAdjoint", LO)
M.Adjoint = Adjoint
function Adjoint:__init(operator, o)
  o = base.hints("LinearOperatorAdjoint", o)
  self.name = o.name or "LinearOperatorAdjoint"
  self.operator = op_arg(self, operator, "operator")
  inherit(self, o, operator)
  local d = copy(operator.shape)
  d[#d - 1], d[#d] = d[#d], d[#d - 1]
  o.dtype, o.shape = operator.dtype, d
  LO.__init(self, o)
end
function Adjoint:_to_dense() return base.adj(self.operator:to_dense()) end
function Adjoint:_matmul(x, adjoint, adjoint_arg)
  return self.operator:matmul(x, { adjoint = not adjoint, adjoint_arg = adjoint_arg })
end
function Adjoint:_solve(rhs, adjoint, adjoint_arg)
  return self.operator:solve(rhs, { adjoint = not adjoint, adjoint_arg = adjoint_arg })
end
function Adjoint:_determinant() return self.operator:determinant() end
function Adjoint:_log_abs_determinant() return self.operator:log_abs_determinant() end
function Adjoint:_diag_part() return self.operator:diag_part() end
function Adjoint:_trace() return self.operator:trace() end
function Adjoint:_eigvals() return self.operator:eigvals() end
function Adjoint:_cholesky() return self.operator:cholesky() end
function Adjoint:_adjoint() return self.operator end

-- LinearOperatorInversion(operator, {hints}): the inverse of a square, non-singular operator; its products
-- are the operator's solves and its solves the operator's products.
local Inversion = class("LinearOperatorInversion", LO)
M.Inversion = Inversion
function Inversion:__init(operator, o)
  o = base.hints("LinearOperatorInversion", o)
  self.name = o.name or "LinearOperatorInversion"
  self.operator = op_arg(self, operator, "operator")
  if operator.is_non_singular == false then base.error(self, "the operator is singular (is_non_singular is false)") end
  if not operator.is_square then base.error(self, "the operator is %d x %d; only a square one has an inverse",
    operator.range_dimension, operator.domain_dimension) end
  inherit(self, o, operator)
  o.dtype, o.shape = operator.dtype, copy(operator.shape)
  LO.__init(self, o)
end
function Inversion:_to_dense()
  local eye = base.classes.Identity(self.domain_dimension, { batch_shape = copy(self.batch_shape), dtype = self.dtype })
  return self.operator:solve(eye:to_dense())
end
function Inversion:_matmul(x, adjoint, adjoint_arg)
  return self.operator:solve(x, { adjoint = adjoint, adjoint_arg = adjoint_arg })
end
function Inversion:_solve(rhs, adjoint, adjoint_arg)
  return self.operator:matmul(rhs, { adjoint = adjoint, adjoint_arg = adjoint_arg })
end
function Inversion:_determinant() return 1 / self.operator:determinant() end
function Inversion:_log_abs_determinant() return -self.operator:log_abs_determinant() end
function Inversion:_inverse() return self.operator end

-- LinearOperatorComposition(operators, {hints}): the product of a list of operators, applied right to left.
local Composition = class("LinearOperatorComposition", LO)
M.Composition = Composition
function Composition:__init(operators, o)
  o = base.hints("LinearOperatorComposition", o)
  self.name = o.name or "LinearOperatorComposition"
  if type(operators) ~= "table" or #operators == 0 then base.error(self, "operators must be a non-empty list") end
  local batch = {}
  for i, op in ipairs(operators) do
    op_arg(self, op, "operators[" .. i .. "]")
    if op.dtype ~= operators[1].dtype then
      base.error(self, "operators[%d] has dtype %s, operators[1] %s", i, op.dtype, operators[1].dtype)
    end
    if i > 1 and operators[i - 1].domain_dimension ~= op.range_dimension then
      base.error(self, "operators[%d]'s domain dimension %d does not match operators[%d]'s range dimension %d",
        i - 1, operators[i - 1].domain_dimension, i, op.range_dimension)
    end
    batch = base.broadcast(batch, copy(op.batch_shape), self.name)
  end
  local all_nonsing = true
  for _, op in ipairs(operators) do all_nonsing = all_nonsing and op.is_non_singular == true end
  if all_nonsing then
    base.fixed_hint(self, o, "is_non_singular", true, "a composition of non-singular operators is non-singular")
  end
  self.operators = operators
  batch[#batch + 1], batch[#batch + 2] = operators[1].range_dimension, operators[#operators].domain_dimension
  o.dtype, o.shape = operators[1].dtype, batch
  LO.__init(self, o)
end
function Composition:_to_dense()
  local ops = self.operators
  local r = ops[#ops]:to_dense()
  for i = #ops - 1, 1, -1 do r = ops[i]:matmul(r) end
  return r
end
function Composition:_matmul(x, adjoint, adjoint_arg)
  local ops = self.operators
  if adjoint_arg then x = base.adj(x) end
  if adjoint then
    for i = 1, #ops do x = ops[i]:matmul(x, { adjoint = true }) end
  else
    for i = #ops, 1, -1 do x = ops[i]:matmul(x) end
  end
  return x
end
function Composition:_all_square()
  for _, op in ipairs(self.operators) do if not op.is_square then return false end end
  return true
end
function Composition:_solve(rhs, adjoint, adjoint_arg)
  if not self:_all_square() then return LO._solve(self, rhs, adjoint, adjoint_arg) end
  local ops = self.operators
  if adjoint_arg then rhs = base.adj(rhs) end
  if adjoint then
    for i = #ops, 1, -1 do rhs = ops[i]:solve(rhs, { adjoint = true }) end
  else
    for i = 1, #ops do rhs = ops[i]:solve(rhs) end
  end
  return rhs
end
function Composition:_determinant()
  if not self:_all_square() then return LO._determinant(self) end
  local d = self.operators[1]:determinant()
  for i = 2, #self.operators do d = d * self.operators[i]:determinant() end
  return d
end
function Composition:_log_abs_determinant()
  if not self:_all_square() then return LO._log_abs_determinant(self) end
  local d = self.operators[1]:log_abs_determinant()
  for i = 2, #self.operators do d = d + self.operators[i]:log_abs_determinant() end
  return d
end

base.classes.Adjoint, base.classes.Inversion, base.classes.Composition = Adjoint, Inversion, Composition
return M
