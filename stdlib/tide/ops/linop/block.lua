-- stdlib/tide/ops/linop/block.lua — block operators: LinearOperatorBlockDiag (diag(A1, ..., Ak)) and
-- LinearOperatorBlockLowerTriangular (square diagonal blocks, operators below them); each block keeps its
-- own structure: products and solves split the argument's rows and call the blocks.
local class = require "tide.class"
local base = require "tide.ops.linop.base"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local reduce = require "tide.ops.reduce"

local M = {}
local LO = base.LinearOperator
local copy = base.copy

-- The common batch shape of tensors (or operators' batch shapes) and the tensors broadcast to it.
local function common(parts, who)
  local batch = {}
  for _, p in ipairs(parts) do
    local d = base.dims(p)
    batch = base.broadcast(batch, copy(d, 1, #d - 2), who)
  end
  local out = {}
  for i, p in ipairs(parts) do out[i] = base.to_batch(p, batch) end
  return out
end

-- Vectors [..., n_i] broadcast to one batch shape and joined.
local function concat_vectors(parts, who)
  local mats = {}
  for i, p in ipairs(parts) do mats[i] = shape.expand_dims(p, -1) end
  return shape.squeeze(shape.concat(common(mats, who), { axis = -2 }), -1)
end

local function sizes(ops, dim)
  local s = {}
  for i, op in ipairs(ops) do s[i] = op[dim] end
  return s
end

local function zeros(batch, m, n, dtype)
  local d = copy(batch)
  d[#d + 1], d[#d + 2] = m, n
  return create.zeros(d, dtype)
end

local function check_ops(self, ops, what)
  for i, op in ipairs(ops) do
    if not base.is_op(op) then base.error(self, "%s[%d] must be a LinearOperator", what, i) end
    if op.dtype ~= ops[1].dtype then base.error(self, "%s[%d] has dtype %s, the first %s", what, i, op.dtype, ops[1].dtype) end
  end
end

local function imply_all(self, o, ops, hints)
  for _, h in ipairs(hints) do
    local all = true
    for _, op in ipairs(ops) do all = all and op[h] == true end
    if all then base.fixed_hint(self, o, h, true, "every block has " .. h .. ", so has the operator") end
  end
end

-- LinearOperatorBlockDiag(operators, {hints}).
local BlockDiag = class("LinearOperatorBlockDiag", LO)
M.BlockDiag = BlockDiag
function BlockDiag:__init(operators, o)
  o = base.hints("LinearOperatorBlockDiag", o)
  self.name = o.name or "LinearOperatorBlockDiag"
  if type(operators) ~= "table" or #operators == 0 then base.error(self, "operators must be a non-empty list") end
  check_ops(self, operators, "operators")
  imply_all(self, o, operators, { "is_non_singular", "is_self_adjoint", "is_positive_definite" })
  local batch, m, n = {}, 0, 0
  for _, op in ipairs(operators) do
    batch = base.broadcast(batch, copy(op.batch_shape), self.name)
    m, n = m + op.range_dimension, n + op.domain_dimension
  end
  self.operators = operators
  self.batch = copy(batch)
  batch[#batch + 1], batch[#batch + 2] = m, n
  o.dtype, o.shape = operators[1].dtype, batch
  LO.__init(self, o)
end
function BlockDiag:_to_dense()
  local rows, ops = {}, self.operators
  for i, op in ipairs(ops) do
    local row = {}
    for j, other in ipairs(ops) do
      row[j] = i == j and op:to_dense() or zeros(self.batch, op.range_dimension, other.domain_dimension, self.dtype)
    end
    rows[i] = shape.concat(common(row, self.name), { axis = -1 })
  end
  return shape.concat(common(rows, self.name), { axis = -2 })
end
-- Rows of x split by block, `f(op, part)` applied to each, the results joined.
function BlockDiag:_each(x, dim, f)
  local parts = shape.split(x, sizes(self.operators, dim), { axis = -2 })
  local out = {}
  for i, op in ipairs(self.operators) do out[i] = f(op, parts[i]) end
  return shape.concat(common(out, self.name), { axis = -2 })
end
function BlockDiag:_matmul(x, adjoint, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  return self:_each(x, adjoint and "range_dimension" or "domain_dimension",
    function(op, p) return op:matmul(p, { adjoint = adjoint }) end)
end
function BlockDiag:_all_square()
  for _, op in ipairs(self.operators) do if not op.is_square then return false end end
  return true
end
function BlockDiag:_solve(rhs, adjoint, adjoint_arg)
  if not self:_all_square() then return LO._solve(self, rhs, adjoint, adjoint_arg) end
  if adjoint_arg then rhs = base.adj(rhs) end
  return self:_each(rhs, "range_dimension", function(op, p) return op:solve(p, { adjoint = adjoint }) end)
end
function BlockDiag:_fold(method, combine)
  local r
  for _, op in ipairs(self.operators) do
    local t = op[method](op)
    r = r and combine(r, t) or t
  end
  return r
end
function BlockDiag:_determinant()
  if not self:_all_square() then return LO._determinant(self) end
  return self:_fold("determinant", function(a, b) return a * b end)
end
function BlockDiag:_log_abs_determinant()
  if not self:_all_square() then return LO._log_abs_determinant(self) end
  return self:_fold("log_abs_determinant", function(a, b) return a + b end)
end
function BlockDiag:_collect(method)
  local parts = {}
  for i, op in ipairs(self.operators) do parts[i] = op[method](op) end
  return concat_vectors(parts, self.name)
end
function BlockDiag:_diag_part()
  if not self:_all_square() then return LO._diag_part(self) end
  return self:_collect("diag_part")
end
function BlockDiag:_trace()
  if not self:_all_square() then return LO._trace(self) end
  return self:_fold("trace", function(a, b) return a + b end)
end
function BlockDiag:_eigvals() return self:_collect("eigvals") end
local function map(self, method, o)
  local ops = {}
  for i, op in ipairs(self.operators) do ops[i] = op[method](op) end
  return BlockDiag(ops, o)
end
function BlockDiag:_inverse() return map(self, "inverse") end
function BlockDiag:_adjoint() return map(self, "adjoint") end
function BlockDiag:_cholesky() return map(self, "cholesky", { is_non_singular = true }) end

-- LinearOperatorBlockLowerTriangular(operators, {hints}): operators is a list of rows, row i holding i
-- operators (the blocks left of the diagonal, then the diagonal one, which must be square).
local BlockLowerTriangular = class("LinearOperatorBlockLowerTriangular", LO)
M.BlockLowerTriangular = BlockLowerTriangular
function BlockLowerTriangular:__init(operators, o)
  o = base.hints("LinearOperatorBlockLowerTriangular", o)
  self.name = o.name or "LinearOperatorBlockLowerTriangular"
  base.fixed_hint(self, o, "is_square", true, "a block lower triangular operator is always square")
  if type(operators) ~= "table" or #operators == 0 then base.error(self, "operators must be a non-empty list of rows") end
  local diag, batch, n = {}, {}, 0
  for i, row in ipairs(operators) do
    if type(row) ~= "table" or #row ~= i then
      base.error(self, "row %d of operators must hold %d operators (the blocks up to the diagonal)", i, i)
    end
    check_ops(self, row, "operators[" .. i .. "]")
    diag[i] = row[i]
    if not row[i].is_square then base.error(self, "the diagonal block operators[%d][%d] must be square", i, i) end
    for _, op in ipairs(row) do batch = base.broadcast(batch, copy(op.batch_shape), self.name) end
    n = n + row[i].domain_dimension
  end
  for i, row in ipairs(operators) do
    for j = 1, i - 1 do
      local op = row[j]
      if op.range_dimension ~= diag[i].range_dimension or op.domain_dimension ~= diag[j].domain_dimension then
        base.error(self, "operators[%d][%d] is %d x %d; its row and column need %d x %d (dimension mismatch)", i, j,
          op.range_dimension, op.domain_dimension, diag[i].range_dimension, diag[j].domain_dimension)
      end
      if op.dtype ~= diag[1].dtype then base.error(self, "operators[%d][%d] has dtype %s, not %s", i, j, op.dtype, diag[1].dtype) end
    end
  end
  imply_all(self, o, diag, { "is_non_singular" })
  self.operators, self.diag, self.batch = operators, diag, copy(batch)
  batch[#batch + 1], batch[#batch + 2] = n, n
  o.dtype, o.shape = diag[1].dtype, batch
  LO.__init(self, o)
end
function BlockLowerTriangular:_to_dense()
  local rows, k = {}, #self.diag
  for i, row in ipairs(self.operators) do
    local parts = {}
    for j = 1, k do
      parts[j] = j <= i and row[j]:to_dense() or
        zeros(self.batch, self.diag[i].range_dimension, self.diag[j].domain_dimension, self.dtype)
    end
    rows[i] = shape.concat(common(parts, self.name), { axis = -1 })
  end
  return shape.concat(common(rows, self.name), { axis = -2 })
end
function BlockLowerTriangular:_split(x) return shape.split(x, sizes(self.diag, "domain_dimension"), { axis = -2 }) end
function BlockLowerTriangular:_matmul(x, adjoint, adjoint_arg)
  if adjoint_arg then x = base.adj(x) end
  local xs, out, k = self:_split(x), {}, #self.diag
  if adjoint then -- y_j = sum over i >= j of A_ij^H x_i
    for j = 1, k do
      local y
      for i = j, k do
        local t = self.operators[i][j]:matmul(xs[i], { adjoint = true })
        y = y and y + t or t
      end
      out[j] = y
    end
  else -- y_i = sum over j <= i of A_ij x_j
    for i, row in ipairs(self.operators) do
      local y
      for j = 1, i do
        local t = row[j]:matmul(xs[j])
        y = y and y + t or t
      end
      out[i] = y
    end
  end
  return shape.concat(common(out, self.name), { axis = -2 })
end
-- Block forward substitution (backward for the adjoint).
function BlockLowerTriangular:_solve(rhs, adjoint, adjoint_arg)
  if adjoint_arg then rhs = base.adj(rhs) end
  local bs, xs, k = self:_split(rhs), {}, #self.diag
  if adjoint then
    for j = k, 1, -1 do
      local b = bs[j]
      for i = j + 1, k do b = b - self.operators[i][j]:matmul(xs[i], { adjoint = true }) end
      xs[j] = self.diag[j]:solve(b, { adjoint = true })
    end
  else
    for i, row in ipairs(self.operators) do
      local b = bs[i]
      for j = 1, i - 1 do b = b - row[j]:matmul(xs[j]) end
      xs[i] = self.diag[i]:solve(b)
    end
  end
  return shape.concat(common(xs, self.name), { axis = -2 })
end
function BlockLowerTriangular:_determinant()
  local r
  for _, op in ipairs(self.diag) do r = r and r * op:determinant() or op:determinant() end
  return r
end
function BlockLowerTriangular:_log_abs_determinant()
  local r
  for _, op in ipairs(self.diag) do r = r and r + op:log_abs_determinant() or op:log_abs_determinant() end
  return r
end
function BlockLowerTriangular:_diag_part()
  local parts = {}
  for i, op in ipairs(self.diag) do parts[i] = op:diag_part() end
  return concat_vectors(parts, self.name)
end
function BlockLowerTriangular:_trace() return reduce.reduce_sum(self:_diag_part(), -1) end
-- The inverse is block lower triangular too: its diagonal blocks are the blocks' inverses and the rest
-- (L^-1)_ij = -A_ii^-1 sum over j <= m < i of A_im (L^-1)_mj, kept dense.
function BlockLowerTriangular:_inverse()
  local k, inv, rows = #self.diag, {}, {}
  for i = 1, k do
    inv[i] = {}
    for j = 1, i - 1 do
      local s
      for m = j, i - 1 do
        local t = self.operators[i][m]:matmul(inv[m][j])
        s = s and s + t or t
      end
      inv[i][j] = -self.diag[i]:solve(s)
    end
    inv[i][i] = self.diag[i]:inverse():to_dense()
    rows[i] = {}
    for j = 1, i - 1 do rows[i][j] = base.classes.FullMatrix(inv[i][j]) end
    rows[i][i] = self.diag[i]:inverse()
  end
  return BlockLowerTriangular(rows, { is_non_singular = true })
end

base.classes.BlockDiag, base.classes.BlockLowerTriangular = BlockDiag, BlockLowerTriangular
return M
