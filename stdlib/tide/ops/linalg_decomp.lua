-- stdlib/tide/ops/linalg_decomp.lua — tf.linalg's decompositions and solvers
-- over LAPACK (kernels/cpu/linalg_*.c) and the compositions TF builds on them:
-- cholesky, inv, det, slogdet, logdet, lu and its solvers, qr, svd, eigh,
-- eig, solve, triangular_solve, cholesky_solve, lstsq, expm, pinv,
-- matrix_rank, tridiagonal and banded solves. Gradients: grad/linalg_decomp.lua.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local math_ops = require "tide.ops.math"
local create = require "tide.ops.create"
local linalg = require "tide.ops.linalg"
local dyn = require "tide.ops.dynamic_shape"
local bit = require "bit"
local C, Tensor = binding.C, binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format

local M = {}

local ADJOINT, LOWER, FULL, VALUES_ONLY =
  C.TIDE_ATTR_ADJOINT, C.TIDE_ATTR_LOWER, C.TIDE_ATTR_FULL_MATRICES, C.TIDE_ATTR_VALUES_ONLY

-- The input of `op` as a tensor (a Lua table or number converts); nil is an error.
local function input(x, op, what)
  if x == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what or "the input")) end
  return convert.arg(x, op)
end

-- The second operand of `op`: a Lua table or number takes the first's dtype.
local function operand(v, like, op, what)
  if v == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what)) end
  if istype(Tensor, v) then return v end
  return convert.coerce(v, like, op, 2)
end

-- Run registry op `code` on inputs with flags (and attrs set by `more`), giving nout outputs.
local function run(code, inputs, flags, nout, more)
  local a = dispatch.attrs()
  a.flags = flags or 0
  if more then more(a) end
  return dispatch.run(code, a, inputs, nout or 1)
end

---------------------------------------------------------------------------
-- Factorizations
---------------------------------------------------------------------------

-- cholesky(input) as tf.linalg.cholesky: the lower factor L (L L^T = input)
-- of each symmetric positive definite matrix, read from its lower triangle;
-- one that is not positive definite gives NaN, as TF's.
function M.cholesky(x) return run(C.TIDE_OP_CHOLESKY, { input(x, "cholesky") }) end

-- inv(input, adjoint=false) as tf.linalg.inv: a singular matrix is an error ("Input is not invertible").
function M.inv(x, ...)
  local o = args.parse("inv", { "adjoint" }, ...)
  local adj = args.bool("inv", "adjoint", o.adjoint, false)
  return run(C.TIDE_OP_MATRIX_INVERSE, { input(x, "inv") }, adj and ADJOINT or 0)
end

-- det(input) as tf.linalg.det: one determinant per matrix (0 for a singular one).
function M.det(x) return run(C.TIDE_OP_MATRIX_DETERMINANT, { input(x, "det") }) end

-- slogdet(input) as tf.linalg.slogdet: sign, log|det| (0 and -inf for a singular matrix).
function M.slogdet(x) return run(C.TIDE_OP_LOG_MATRIX_DETERMINANT, { input(x, "slogdet") }, 0, 2) end

-- logdet(matrix) as tf.linalg.logdet: log det of Hermitian positive definite
-- matrices, through their Cholesky factors (2 sum(log(diag(L)))).
function M.logdet(x)
  local l = M.cholesky(input(x, "logdet", "matrix"))
  return reduce.reduce_sum(math_ops.log(linalg.diag_part(l)), -1) * 2
end

-- lu(input, output_idx_type="int32") as tf.linalg.lu: L and U packed in one
-- matrix (L's unit diagonal implied) and the row permutation p: row i of L U
-- is row p[i] of the input. A singular matrix is an error, as TF's.
function M.lu(x, ...)
  local o = args.parse("lu", { "output_idx_type" }, ...)
  local idx = dtype.code(o.output_idx_type or "int32", "lu")
  return run(C.TIDE_OP_LU, { input(x, "lu") }, 0, 2, function(a) a.dtype = idx end)
end

-- qr(input, full_matrices=false) as tf.linalg.qr: q with orthonormal columns, r upper triangular.
function M.qr(x, ...)
  local o = args.parse("qr", { "full_matrices" }, ...)
  local full = args.bool("qr", "full_matrices", o.full_matrices, false)
  return run(C.TIDE_OP_QR, { input(x, "qr") }, full and FULL or 0, 2)
end

-- svd(tensor, full_matrices=false, compute_uv=true) as tf.linalg.svd: s
-- (descending), u, v with tensor = u diag(s) v^T (TF's order, and v, not
-- v^T); only s when compute_uv is false.
function M.svd(x, ...)
  local o = args.parse("svd", { "full_matrices", "compute_uv" }, ...)
  local full = args.bool("svd", "full_matrices", o.full_matrices, false)
  local uv = args.bool("svd", "compute_uv", o.compute_uv, true)
  local s, u, v = run(C.TIDE_OP_SVD, { input(x, "svd", "tensor") }, bit.bor(full and FULL or 0, uv and 0 or VALUES_ONLY),
    3)
  if not uv then return s end
  return s, u, v
end

-- eigh(tensor) as tf.linalg.eigh: eigenvalues ascending and eigenvectors (the
-- columns) of symmetric matrices, read from their lower triangles.
function M.eigh(x) return run(C.TIDE_OP_SELF_ADJOINT_EIG, { input(x, "eigh", "tensor") }, 0, 2) end

-- eigvalsh(tensor) as tf.linalg.eigvalsh.
function M.eigvalsh(x)
  return (run(C.TIDE_OP_SELF_ADJOINT_EIG, { input(x, "eigvalsh", "tensor") }, VALUES_ONLY, 2))
end

-- eig(tensor) as tf.linalg.eig, for real matrices: TF's results are complex,
-- and tide has no complex dtype, so each is a table {real = ..., imag = ...}
-- of two tensors: the eigenvalues [..., N] and the eigenvectors [..., N, N]
-- (column j for eigenvalue j, unit norm). Not differentiable here.
function M.eig(x)
  local er, ei, vr, vi = run(C.TIDE_OP_EIG, { input(x, "eig", "tensor") }, 0, 4)
  return { real = er, imag = ei }, { real = vr, imag = vi }
end

-- eigvals(tensor) as tf.linalg.eigvals: {real = ..., imag = ...} (see eig).
function M.eigvals(x)
  local er, ei = run(C.TIDE_OP_EIG, { input(x, "eigvals", "tensor") }, VALUES_ONLY, 4)
  return { real = er, imag = ei }
end

-- expm(input) as tf.linalg.expm: the matrix exponential (TF's Pade
-- approximants, scaling and squaring).
function M.expm(x) return run(C.TIDE_OP_MATRIX_EXPONENTIAL, { input(x, "expm") }) end

-- sqrtm(input) as tf.linalg.sqrtm: the principal square root (Eigen's real
-- Schur method, as TF's); a matrix with a negative real eigenvalue has no real
-- root and gives NaN throughout, as TF's does.
function M.sqrtm(x) return run(C.TIDE_OP_MATRIX_SQUARE_ROOT, { input(x, "sqrtm") }) end

-- logm(input): TF's takes complex matrices only; tide has no complex dtype.
function M.logm(x)
  input(x, "logm")
  binding.error("logm: TF's logm takes complex64 or complex128 matrices (a real matrix's logarithm may be complex), " ..
    "and tide has no complex dtype: not supported")
end

---------------------------------------------------------------------------
-- Solvers
---------------------------------------------------------------------------

-- solve(matrix, rhs, adjoint=false) as tf.linalg.solve: matrix [..., N, N],
-- rhs [..., N, K] with the same batch dims; singular: "Input matrix is not invertible".
function M.solve(matrix, rhs, ...)
  local o = args.parse("solve", { "adjoint" }, ...)
  matrix = input(matrix, "solve", "matrix")
  local adj = args.bool("solve", "adjoint", o.adjoint, false)
  return run(C.TIDE_OP_MATRIX_SOLVE, { matrix, operand(rhs, matrix, "solve", "rhs") }, adj and ADJOINT or 0)
end

-- triangular_solve(matrix, rhs, lower=true, adjoint=false) as
-- tf.linalg.triangular_solve: only the named triangle is read; batch dims broadcast.
function M.triangular_solve(matrix, rhs, ...)
  local o = args.parse("triangular_solve", { "lower", "adjoint" }, ...)
  matrix = input(matrix, "triangular_solve", "matrix")
  local lower = args.bool("triangular_solve", "lower", o.lower, true)
  local adj = args.bool("triangular_solve", "adjoint", o.adjoint, false)
  return run(C.TIDE_OP_MATRIX_TRIANGULAR_SOLVE, { matrix, operand(rhs, matrix, "triangular_solve", "rhs") },
    bit.bor(lower and LOWER or 0, adj and ADJOINT or 0))
end

-- cholesky_solve(chol, rhs) as tf.linalg.cholesky_solve: solves A X = rhs given A's Cholesky factor.
function M.cholesky_solve(chol, rhs)
  chol = input(chol, "cholesky_solve", "chol")
  local y = M.triangular_solve(chol, operand(rhs, chol, "cholesky_solve", "rhs"), { lower = true })
  return M.triangular_solve(chol, y, { lower = true, adjoint = true })
end

-- lstsq(matrix, rhs, l2_regularizer=0, fast=true) as tf.linalg.lstsq: the
-- least-squares solutions [..., N, K] of matrix [..., M, N] X = rhs [..., M, K];
-- fast: the regularized normal equations (Cholesky; NaN where their Gramian is
-- singular, as TF), else the complete orthogonal decomposition (l2 ignored).
function M.lstsq(matrix, rhs, ...)
  local o = args.parse("lstsq", { "l2_regularizer", "fast" }, ...)
  matrix = input(matrix, "lstsq", "matrix")
  local l2 = o.l2_regularizer == nil and 0 or args.number("lstsq", "l2_regularizer", o.l2_regularizer)
  local fast = args.bool("lstsq", "fast", o.fast, true)
  return run(C.TIDE_OP_MATRIX_SOLVE_LS, { matrix, operand(rhs, matrix, "lstsq", "rhs") }, 0, 1, function(a)
    a.scalars[0] = l2
    a.n = fast and 1 or 0
  end)
end

-- The rows of x [..., M, K] reordered by perm [..., M]: row i is x's row perm[i] (batch dims equal).
local function permute_rows(x, perm)
  if x.ndim < 0 or perm.ndim < 0 then
    binding.error("lu_solve: needs the ranks of rhs and perm (unknown while tracing)")
  end
  return shape.gather(x, perm, { axis = -2, batch_dims = perm.ndim - 1 })
end

-- L with its unit diagonal from lu's packed factors.
local function unit_lower(lower_upper)
  local d = linalg.diag_part(lower_upper)
  return linalg.set_diag(linalg.band_part(lower_upper, -1, 0), create.ones_like(d))
end

-- lu_solve(lower_upper, perm, rhs) as tf.linalg.lu_solve: solves with lu's factors.
function M.lu_solve(lower_upper, perm, rhs, ...)
  args.parse("lu_solve", { "validate_args" }, ...)
  lower_upper = input(lower_upper, "lu_solve", "lower_upper")
  perm = input(perm, "lu_solve", "perm")
  rhs = operand(rhs, lower_upper, "lu_solve", "rhs")
  local y = M.triangular_solve(unit_lower(lower_upper), permute_rows(rhs, perm), { lower = true })
  return M.triangular_solve(lower_upper, y, { lower = false })
end

-- lu_reconstruct(lower_upper, perm) as tf.linalg.lu_reconstruct: the matrix lu factored.
function M.lu_reconstruct(lower_upper, perm, ...)
  args.parse("lu_reconstruct", { "validate_args" }, ...)
  lower_upper = input(lower_upper, "lu_reconstruct", "lower_upper")
  perm = input(perm, "lu_reconstruct", "perm")
  local x = linalg.matmul(unit_lower(lower_upper), linalg.band_part(lower_upper, 0, -1))
  return permute_rows(x, reduce.argsort(perm, -1)) -- row perm[i] of the input is row i of L U
end

-- An identity the shape of each square matrix of x.
local function eye_like(x)
  return linalg.set_diag(create.zeros_like(x), create.ones_like(linalg.diag_part(x)))
end

-- lu_matrix_inverse(lower_upper, perm) as tf.linalg.lu_matrix_inverse.
function M.lu_matrix_inverse(lower_upper, perm, ...)
  args.parse("lu_matrix_inverse", { "validate_args" }, ...)
  lower_upper = input(lower_upper, "lu_matrix_inverse", "lower_upper")
  return M.lu_solve(lower_upper, perm, eye_like(lower_upper))
end

-- pinv(a, rcond=10 max(M, N) eps) as tf.linalg.pinv: the Moore-Penrose
-- pseudo-inverse through the SVD, singular values at or below rcond times the
-- largest dropped.
function M.pinv(a, ...)
  local o = args.parse("pinv", { "rcond", "validate_args" }, ...)
  a = input(a, "pinv", "a")
  if a.dt ~= C.TIDE_FLOAT32 and a.dt ~= C.TIDE_FLOAT64 then
    binding.error(fmt("pinv: a must be float32 or float64, got %s", dtype.names[tonumber(a.dt)]))
  end
  local eps = a.dt == C.TIDE_FLOAT64 and 2.220446049250313e-16 or 1.1920928955078125e-07
  local rcond = o.rcond
  if rcond == nil then
    if a.ndim < 2 then binding.error("pinv: a must have rank >= 2, got " .. tostring(a.shape)) end
    local m, n = tonumber(a.dims[a.ndim - 2]), tonumber(a.dims[a.ndim - 1])
    if m >= 0 and n >= 0 then
      rcond = 10 * math.max(m, n) * eps
    else
      rcond = math_ops.cast(math_ops.maximum(dyn.size_along(a, -2), dyn.size_along(a, -1)), dtype.names[tonumber(a.dt)])
        * (10 * eps)
    end
  end
  local s, u, v = M.svd(a)
  local cutoff = shape.expand_dims(reduce.reduce_max(s, -1) * rcond, -1)
  s = math_ops.where(s:gt(cutoff), s, math.huge) -- 1 / inf = 0 without NaN gradients (TF's)
  return linalg.matmul(v / shape.expand_dims(s, -2), u, { transpose_b = true })
end

-- matrix_rank(a, tol=eps max(M, N) max(s)) as tf.linalg.matrix_rank: the
-- singular values above tol, counted (int32).
function M.matrix_rank(a, ...)
  local o = args.parse("matrix_rank", { "tol", "validate_args" }, ...)
  a = input(a, "matrix_rank", "a")
  local s = M.svd(a, { compute_uv = false })
  local tol = o.tol
  if tol == nil then
    local eps = a.dt == C.TIDE_FLOAT64 and 2.220446049250313e-16 or 1.1920928955078125e-07
    local m = math_ops.cast(math_ops.maximum(dyn.size_along(a, -2), dyn.size_along(a, -1)), dtype.names[tonumber(a.dt)])
    tol = reduce.reduce_max(s, -1, true) * m * eps
  elseif not istype(Tensor, tol) then
    tol = args.number("matrix_rank", "tol", tol)
  end
  return reduce.reduce_sum(math_ops.cast(s:gt(tol), "int32"), -1)
end

---------------------------------------------------------------------------
-- Tridiagonal and banded systems
---------------------------------------------------------------------------

-- The compact diagonals [..., 3, M] of a tridiagonal system given as
-- `format` ("compact", "sequence": {super, main, sub}, or "matrix").
local function compact(op, diagonals, format)
  format = format or "compact"
  if format == "compact" then return input(diagonals, op, "diagonals") end
  if format == "sequence" then
    if type(diagonals) ~= "table" or istype(Tensor, diagonals) or #diagonals ~= 3 then
      binding.error(op .. ": diagonals_format \"sequence\" takes a list of three tensors {superdiag, maindiag, subdiag}")
    end
    return shape.stack({ input(diagonals[1], op), input(diagonals[2], op), input(diagonals[3], op) }, -2)
  end
  if format == "matrix" then
    local m = input(diagonals, op, "diagonals")
    return linalg.diag_part(m, { k = { -1, 1 }, align = "LEFT_RIGHT" })
  end
  binding.error(fmt("%s: diagonals_format must be \"compact\", \"sequence\" or \"matrix\", got %s", op, tostring(format)))
end

-- tridiagonal_solve(diagonals, rhs, diagonals_format="compact",
-- transpose_rhs=false, conjugate_rhs=false, partial_pivoting=true,
-- perturb_singular=false) as tf.linalg.tridiagonal_solve: compact diagonals
-- are [..., 3, M] (superdiagonal, its last element ignored; main; subdiagonal,
-- its first ignored); rhs [..., M, K], or [..., M] (one right-hand side); a
-- singular system gives NaN, as TF's.
function M.tridiagonal_solve(diagonals, rhs, ...)
  local o = args.parse("tridiagonal_solve", { "diagonals_format", "transpose_rhs", "conjugate_rhs", "name",
    "partial_pivoting", "perturb_singular" }, ...)
  local op = "tridiagonal_solve"
  local d = compact(op, diagonals, o.diagonals_format)
  rhs = operand(rhs, d, op, "rhs")
  if args.bool(op, "perturb_singular", o.perturb_singular, false) then
    binding.error("tridiagonal_solve: perturb_singular is not supported")
  end
  local pivot = args.bool(op, "partial_pivoting", o.partial_pivoting, true)
  local transpose = args.bool(op, "transpose_rhs", o.transpose_rhs, false)
  args.bool(op, "conjugate_rhs", o.conjugate_rhs, false) -- no complex dtypes: nothing to conjugate
  local vector = d.ndim >= 0 and rhs.ndim >= 0 and rhs.ndim == d.ndim - 1
  if vector then rhs = shape.expand_dims(rhs, -1)
  elseif transpose then rhs = linalg.matrix_transpose(rhs) end
  local x = run(C.TIDE_OP_TRIDIAGONAL_SOLVE, { d, rhs }, 0, 1, function(a) a.n = pivot and 1 or 0 end)
  if vector then return shape.squeeze(x, -1) end
  return x
end

-- x [..., M, K] with its rows moved by `by` (+1: row i gets row i + 1; -1: row i - 1), zeros shifted in.
local function shift_rows(x, by)
  local z = create.zeros_like(x:slice { "...", { 0, 1 }, {} })
  if by > 0 then return shape.concat({ x:slice { "...", { 1, nil }, {} }, z }, -2) end
  return shape.concat({ z, x:slice { "...", { nil, -1 }, {} } }, -2)
end

-- tridiagonal_matmul(diagonals, rhs, diagonals_format="compact") as
-- tf.linalg.tridiagonal_matmul: the tridiagonal matrices times rhs [..., M, N].
function M.tridiagonal_matmul(diagonals, rhs, ...)
  local o = args.parse("tridiagonal_matmul", { "diagonals_format" }, ...)
  local d = compact("tridiagonal_matmul", diagonals, o.diagonals_format)
  rhs = operand(rhs, d, "tridiagonal_matmul", "rhs")
  local function row(i) return shape.expand_dims(d:slice { "...", i, {} }, -1) end
  return row(1) * rhs + row(0) * shift_rows(rhs, 1) + row(2) * shift_rows(rhs, -1)
end

-- banded_triangular_solve(bands, rhs, lower=true, adjoint=false) as
-- tf.linalg.banded_triangular_solve: bands [..., K, M] holds the main
-- diagonal and K - 1 sub- (lower) or superdiagonals (TF's LEFT_RIGHT
-- alignment); solved as the full triangular matrix they describe.
function M.banded_triangular_solve(bands, rhs, ...)
  local o = args.parse("banded_triangular_solve", { "lower", "adjoint" }, ...)
  local op = "banded_triangular_solve"
  bands = input(bands, op, "bands")
  local lower = args.bool(op, "lower", o.lower, true)
  if bands.ndim < 2 then binding.error(op .. ": bands must have rank >= 2, got shape " .. tostring(bands.shape)) end
  local k, m = tonumber(bands.dims[bands.ndim - 2]), tonumber(bands.dims[bands.ndim - 1])
  if k < 0 or m < 0 then binding.error(op .. ": needs the bands' shape [K, M] known while tracing") end
  if k < 1 or k > math.max(m, 1) then
    binding.error(fmt("%s: bands has %d rows but the matrices are %d x %d", op, k, m, m))
  end
  local range = lower and { -(k - 1), 0 } or { 0, k - 1 }
  local full = k == 1 and linalg.diag(bands:slice { "...", 0, {} })
    or linalg.diag(bands, { k = range, num_rows = m, num_cols = m, align = "LEFT_RIGHT" })
  return M.triangular_solve(full, operand(rhs, bands, op, "rhs"), { lower = lower, adjoint = o.adjoint })
end

-- eigh_tridiagonal(alpha, beta, eigvals_only=true) as
-- tf.linalg.eigh_tridiagonal with select="a": the eigen decomposition of the
-- symmetric tridiagonal matrix of main diagonal alpha [N] and off-diagonal
-- beta [N - 1] (built and passed to eigh).
function M.eigh_tridiagonal(alpha, beta, ...)
  local o = args.parse("eigh_tridiagonal", { "eigvals_only", "select", "select_range", "tol" }, ...)
  local op = "eigh_tridiagonal"
  alpha = input(alpha, op, "alpha")
  beta = operand(beta, alpha, op, "beta")
  if (o.select or "a") ~= "a" then binding.error(op .. ": only select=\"a\" (every eigenvalue) is supported") end
  if alpha.ndim ~= 1 or beta.ndim ~= 1 then
    binding.error(fmt("%s: alpha and beta must be vectors, got shapes %s and %s", op, tostring(alpha.shape),
      tostring(beta.shape)))
  end
  local n = tonumber(alpha.dims[0])
  local t = linalg.diag(alpha)
  if n > 1 then
    t = t + linalg.diag(beta, { k = -1, num_rows = n, num_cols = n }) + linalg.diag(beta, { k = 1, num_rows = n,
      num_cols = n })
  end
  if args.bool(op, "eigvals_only", o.eigvals_only, true) then return M.eigvalsh(t) end
  return M.eigh(t)
end

return M
