-- stdlib/tide/ops/linop/base.lua — tf.linalg.LinearOperator, the base of tide's structured operators:
-- static shapes and hints (with TF's checks), argument checks, and dense fallbacks each subclass may beat.
local class = require "tide.class"
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local tensor_shape = require "tide.tensor_shape"
local shape = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local linalg = require "tide.ops.linalg"
local decomp = require "tide.ops.linalg_decomp"
local Tensor = binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format

local M = {}

-- The operator classes by TF's short name ("Diag", "Composition" ...): filled by the modules that define
-- them, so the base can build an Inversion or a Composition without requiring the modules above it.
M.classes = {}

local LinearOperator = class("LinearOperator")
M.LinearOperator = LinearOperator

function M.error(op, msg, ...) binding.error(fmt("%s: " .. msg, op.name or "LinearOperator", ...)) end

-- The dims of tensor t as a Lua list (the operators need static shapes).
function M.dims(t)
  local d = t.shape:as_list()
  for _, n in ipairs(d) do
    if type(n) ~= "number" then binding.error("LinearOperator: needs tensors of known shape (operators are planned from static dims; " ..
        "trace with a signature of known dims), got " .. tostring(t.shape)) end
  end
  return d
end

-- Two batch shapes broadcast as numpy's (TF's), or an error naming `who`.
function M.broadcast(a, b, who)
  local out, na, nb = {}, #a, #b
  local n = math.max(na, nb)
  for i = 1, n do
    local x, y = a[na - n + i] or 1, b[nb - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then
      binding.error(fmt("%s: batch shapes (%s) and (%s) do not broadcast", who, table.concat(a, ","), table.concat(b, ",")))
    end
    out[i] = (x == 1) and y or x
  end
  return out
end

local function copy(t, i, j)
  local out = {}
  for k = i or 1, j or #t do out[#out + 1] = t[k] end
  return out
end
M.copy = copy

-- x broadcast to the batch shape `batch` (its last two dims kept).
function M.to_batch(x, batch)
  local d = M.dims(x)
  local want = copy(batch)
  want[#want + 1], want[#want + 2] = d[#d - 1], d[#d]
  if #want == #d then
    local same = true
    for i = 1, #d do same = same and d[i] == want[i] end
    if same then return x end
  end
  return shape.broadcast_to(x, want)
end

-- x (a tensor or Lua values) as a tensor of the operator's dtype.
function M.arg(op, x, what)
  if x == nil then M.error(op, "%s is nil; expected a tensor", what) end
  if not istype(Tensor, x) then
    if convert.is_variable(x) then x = convert.arg(x, op.name) else return convert.tensor(x, op.dtype, op.name) end
  end
  if op.dtype and x.dtype ~= op.dtype then
    M.error(op, "%s has dtype %s, the operator %s", what, x.dtype, op.dtype)
  end
  return x
end

-- A float tensor argument of a constructor; the first one fixes the operator's dtype, so the others must match.
local FLOAT = { float16 = true, bfloat16 = true, float32 = true, float64 = true }
function M.float_arg(op, x, what)
  x = M.arg(op, x, what)
  if not FLOAT[x.dtype] then
    M.error(op, "%s must be a float tensor (float16, bfloat16, float32 or float64), got %s", what, x.dtype)
  end
  op.dtype = op.dtype or x.dtype
  return x
end

M.adj = linalg.matrix_transpose -- real dtypes only: the adjoint is the transpose

-- Hints as TF's LinearOperator.__init__ checks and implies them. `o` holds the constructor's options;
-- `fixed` the hints the subclass decides (TF raises when a user's hint contradicts one).
local HINTS = { "is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square" }
function LinearOperator:__init(o)
  self.name = self.name or o.name or self.__name
  self.dtype = o.dtype
  local dims = o.shape
  for _, h in ipairs(HINTS) do
    if o[h] ~= nil and type(o[h]) ~= "boolean" then M.error(self, "%s must be a boolean or nil, got %s", h, type(o[h])) end
  end
  local nonsing, sa, pd, sq = o.is_non_singular, o.is_self_adjoint, o.is_positive_definite, o.is_square
  if pd then
    if nonsing == false then M.error(self, "a positive definite matrix is always non-singular") end
    nonsing = true
  end
  if nonsing then
    if sq == false then M.error(self, "a non-singular matrix is always square") end
    sq = true
  end
  if sa then
    if sq == false then M.error(self, "a self-adjoint matrix is always square") end
    sq = true
  end
  local m, n = dims[#dims - 1], dims[#dims]
  if sq == false and m == n then M.error(self, "is_square is false, but the operator is %d x %d", m, n) end
  if sq and m ~= n then M.error(self, "is_square is true, but the operator is %d x %d", m, n) end
  self.is_non_singular, self.is_self_adjoint, self.is_positive_definite = nonsing, sa, pd
  self.is_square = m == n
  self.shape = setmetatable(copy(dims), tensor_shape.Shape)
  self.batch_shape = setmetatable(copy(dims, 1, #dims - 2), tensor_shape.Shape)
  self.range_dimension, self.domain_dimension = m, n
  self.tensor_rank = #dims
end

-- A subclass's fixed hint: the user may repeat it but not contradict it (TF's messages).
function M.fixed_hint(op, o, hint, value, why)
  if o[hint] ~= nil and o[hint] ~= value then M.error(op, "%s", why) end
  o[hint] = value
end

function LinearOperator:__tostring()
  return fmt("tide.linalg.%s(shape=%s, dtype=%s)", self.__name, tostring(self.shape), self.dtype)
end

local function is_op(x) return class.is_instance(x, LinearOperator) end
M.is_op = is_op

-- The operator's dims as tensors (TF's *_tensor forms; shapes here are static).
function LinearOperator:shape_tensor() return convert.tensor(self.shape:as_list(), "int32") end
function LinearOperator:batch_shape_tensor() return convert.tensor(self.batch_shape:as_list(), "int32") end
function LinearOperator:domain_dimension_tensor() return convert.tensor(self.domain_dimension, "int32") end
function LinearOperator:range_dimension_tensor() return convert.tensor(self.range_dimension, "int32") end
function LinearOperator:tensor_rank_tensor() return convert.tensor(self.tensor_rank, "int32") end

-- The rows x must have for a product (adjoint: the range's) and its count in x (adjoint_arg: its last dim).
local function check_arg(self, x, what, adjoint, adjoint_arg, method)
  local d = M.dims(x)
  if #d < 2 then M.error(self, "%s: %s must be a matrix (or a batch of them), got shape (%s)", method, what, table.concat(d, ",")) end
  local k = adjoint_arg and d[#d] or d[#d - 1]
  local want = adjoint and self.range_dimension or self.domain_dimension
  if method == "solve" then want = adjoint and self.domain_dimension or self.range_dimension end
  if k ~= want then
    M.error(self, "%s: %s has %d rows where the operator's %s dimension is %d", method, what, k,
      ((method == "solve") ~= (adjoint == true)) and "range" or "domain", want)
  end
end

local function opts(method, ...)
  local o = args.parse(method, { "adjoint", "adjoint_arg", "name" }, ...)
  return args.bool(method, "adjoint", o.adjoint, false), args.bool(method, "adjoint_arg", o.adjoint_arg, false)
end

-- matmul(x, {adjoint, adjoint_arg}): op(A) @ op(x), batch dims broadcast; x may be an operator
-- (the result is then a Composition, as TF's).
function LinearOperator:matmul(x, ...)
  local adjoint, adjoint_arg = opts("LinearOperator.matmul", ...)
  if is_op(x) then
    local left = adjoint and self:adjoint() or self
    local right = adjoint_arg and x:adjoint() or x
    return M.classes.Composition({ left, right })
  end
  x = M.arg(self, x, "x")
  check_arg(self, x, "x", adjoint, adjoint_arg, "matmul")
  return self:_matmul(x, adjoint, adjoint_arg)
end

-- matvec(x, {adjoint}): op(A) @ x for vectors x [..., N].
function LinearOperator:matvec(x, ...)
  local o = args.parse("LinearOperator.matvec", { "adjoint", "name" }, ...)
  local adjoint = args.bool("LinearOperator.matvec", "adjoint", o.adjoint, false)
  x = M.arg(self, x, "x")
  if x.ndim < 1 then M.error(self, "matvec: x must be a vector (or a batch of them), got a scalar") end
  return shape.squeeze(self:matmul(shape.expand_dims(x, -1), { adjoint = adjoint }), -1)
end

function LinearOperator:_check_solvable(method)
  if not self.is_square then
    M.error(self, "%s: the operator is %d x %d; solve needs a square operator", method, self.range_dimension,
      self.domain_dimension)
  end
  if self.is_non_singular == false then M.error(self, "%s: the operator is singular (is_non_singular is false)", method) end
end

-- solve(rhs, {adjoint, adjoint_arg}): X with op(A) X = op(rhs).
function LinearOperator:solve(rhs, ...)
  local adjoint, adjoint_arg = opts("LinearOperator.solve", ...)
  self:_check_solvable("solve")
  if is_op(rhs) then
    local left = adjoint and self:adjoint() or self
    local right = adjoint_arg and rhs:adjoint() or rhs
    return M.classes.Composition({ left:inverse(), right })
  end
  rhs = M.arg(self, rhs, "rhs")
  check_arg(self, rhs, "rhs", adjoint, adjoint_arg, "solve")
  return self:_solve(rhs, adjoint, adjoint_arg)
end

-- solvevec(rhs, {adjoint}): x with op(A) x = rhs for vectors rhs [..., N].
function LinearOperator:solvevec(rhs, ...)
  local o = args.parse("LinearOperator.solvevec", { "adjoint", "name" }, ...)
  local adjoint = args.bool("LinearOperator.solvevec", "adjoint", o.adjoint, false)
  rhs = M.arg(self, rhs, "rhs")
  if rhs.ndim < 1 then M.error(self, "solvevec: rhs must be a vector (or a batch of them), got a scalar") end
  return shape.squeeze(self:solve(shape.expand_dims(rhs, -1), { adjoint = adjoint }), -1)
end

function LinearOperator:_check_square(method)
  if not self.is_square then
    M.error(self, "%s: the operator is %d x %d; %s needs a square operator", method, self.range_dimension,
      self.domain_dimension, method)
  end
end

function LinearOperator:to_dense() return self:_to_dense() end
function LinearOperator:determinant() self:_check_square("determinant"); return self:_determinant() end
function LinearOperator:log_abs_determinant()
  self:_check_square("log_abs_determinant")
  return self:_log_abs_determinant()
end
function LinearOperator:diag_part() return self:_diag_part() end
function LinearOperator:trace() return self:_trace() end
function LinearOperator:add_to_tensor(x)
  x = M.arg(self, x, "x")
  return self:_add_to_tensor(x)
end

-- inverse(): the inverse as an operator (a Diag's is a Diag, a Kronecker's a Kronecker ...).
function LinearOperator:inverse()
  self:_check_solvable("inverse")
  return self:_inverse()
end

-- adjoint() (also H): the adjoint operator; a self-adjoint operator is its own.
function LinearOperator:adjoint()
  if self.is_self_adjoint then return self end
  return self:_adjoint()
end
function LinearOperator:H() return self:adjoint() end

-- cholesky(): the lower triangular L with A = L L^H, for self-adjoint positive definite operators.
function LinearOperator:cholesky()
  if not (self.is_self_adjoint and self.is_positive_definite) then
    M.error(self, "cholesky: only a self-adjoint positive definite operator has one (set both hints)")
  end
  return self:_cholesky()
end

-- eigvals(): the eigenvalues of a self-adjoint operator (in no set order, as TF's).
function LinearOperator:eigvals()
  if not self.is_self_adjoint then M.error(self, "eigvals: only a self-adjoint operator's are computed (is_self_adjoint)") end
  return self:_eigvals()
end

-- cond(): the condition number, the ratio of the largest to the smallest singular value.
function LinearOperator:cond()
  local s = decomp.svd(self:to_dense(), { compute_uv = false })
  return reduce.reduce_max(s, -1) / reduce.reduce_min(s, -1)
end

-- The assertions raise now (eager) where TF's ops would fail when run.
function LinearOperator:assert_non_singular()
  local s = decomp.svd(self:to_dense(), { compute_uv = false })
  if reduce.reduce_any(math_ops.equal(reduce.reduce_min(s, -1), 0)):item() then
    M.error(self, "assert_non_singular: the operator is singular")
  end
end
function LinearOperator:assert_positive_definite()
  self:_check_square("assert_positive_definite")
  local ok, l = pcall(decomp.cholesky, self:to_dense())
  if not ok or reduce.reduce_any(math_ops.is_nan(l)):item() then -- NaN where not PD
    M.error(self, "assert_positive_definite: the operator is not positive definite")
  end
end
function LinearOperator:assert_self_adjoint()
  local d = self:to_dense()
  if reduce.reduce_any(math_ops.not_equal(d, M.adj(d))):item() then
    M.error(self, "assert_self_adjoint: the operator is not self-adjoint")
  end
end

---------------------------------------------------------------------------
-- Dense fallbacks: a subclass overrides what its structure makes cheaper.
---------------------------------------------------------------------------

function LinearOperator:_to_dense() M.error(self, "to_dense is not implemented") end

function LinearOperator:_matmul(x, adjoint, adjoint_arg)
  return linalg.matmul(self:to_dense(), x, { adjoint_a = adjoint, adjoint_b = adjoint_arg })
end

-- Solves against the dense matrix with batch dims broadcast (the solver wants equal batches).
function LinearOperator:_solve(rhs, adjoint, adjoint_arg)
  if adjoint_arg then rhs = M.adj(rhs) end
  local a = self:to_dense()
  local batch = M.broadcast(copy(self.batch_shape), copy(M.dims(rhs), 1, rhs.ndim - 2), self.name .. ".solve")
  return decomp.solve(M.to_batch(a, batch), M.to_batch(rhs, batch), { adjoint = adjoint })
end

function LinearOperator:_determinant() return decomp.det(self:to_dense()) end
function LinearOperator:_log_abs_determinant()
  local _, logabs = decomp.slogdet(self:to_dense())
  return logabs
end
function LinearOperator:_diag_part() return linalg.diag_part(self:to_dense()) end
function LinearOperator:_trace() return reduce.reduce_sum(self:diag_part(), -1) end
function LinearOperator:_add_to_tensor(x) return self:to_dense() + x end
function LinearOperator:_eigvals() return decomp.eigvalsh(self:to_dense()) end
function LinearOperator:_cholesky()
  return M.classes.LowerTriangular(decomp.cholesky(self:to_dense()), { is_non_singular = true })
end
function LinearOperator:_inverse() return M.classes.Inversion(self) end
function LinearOperator:_adjoint() return M.classes.Adjoint(self) end

-- The hint options every constructor takes, read from `o` (the user's table), as a fresh table.
function M.hints(op_name, o, extra)
  local names = { "is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square", "name" }
  for _, e in ipairs(extra or {}) do names[#names + 1] = e end
  return args.parse(op_name, names, o)
end

return M
