-- stdlib/tide/grad/linalg_decomp.lua — the gradients of ops/linalg_decomp.lua's
-- decompositions and solvers, as TF's linalg_grad.py computes them (real dtypes).
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local binding = require "tide.binding"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local m = require "tide.ops.math"
local linalg = require "tide.ops.linalg"
local decomp = require "tide.ops.linalg_decomp"
local C = binding.C
local band = bit.band

local reg, dims = grad.register, util.dims
local mm, T = linalg.matmul, linalg.matrix_transpose
local ADJOINT, LOWER, FULL, VALUES_ONLY =
  C.TIDE_ATTR_ADJOINT, C.TIDE_ATTR_LOWER, C.TIDE_ATTR_FULL_MATRICES, C.TIDE_ATTR_VALUES_ONLY

local function flag(node, f) return band(node.attrs.flags, f) ~= 0 end

-- x / (x^2 + eps): 1/x away from 0, 0 at 0 (TF's _SafeReciprocal: degenerate
-- eigen- and singular values give no NaN).
local function safe_reciprocal(x) return x * m.reciprocal(x * x + 1e-20) end

-- f[i, j] = 1 / (e[j] - e[i]) off the diagonal, 0 on it.
local function gap_inverses(e)
  return linalg.set_diag(safe_reciprocal(shape.expand_dims(e, -2) - shape.expand_dims(e, -1)), create.zeros_like(e))
end

-- An identity shaped as each square matrix of x.
local function eye_like(x)
  return linalg.set_diag(create.zeros_like(x), create.ones_like(linalg.diag_part(x)))
end

-- The last two dims of t, which must be known (TF's QR and SVD gradients need them too).
local function matrix_dims(t, op)
  local d = dims(t)
  local r, c = d and d[#d - 1], d and d[#d]
  if not d or r < 0 or c < 0 then
    util.error(op .. ": its gradient needs the matrices' dims known while tracing (TF's raises NotImplementedError " ..
      "for dynamic shapes too); give the traced function an input_signature with them")
  end
  return r, c
end

---------------------------------------------------------------------------
-- inverse, determinants, cholesky
---------------------------------------------------------------------------

reg("matrix_inverse", function(node, dys)
  local ainv, g, adj = node.outputs[1], dys[1], flag(node, ADJOINT)
  return -mm(ainv, mm(g, ainv, { transpose_a = adj, transpose_b = not adj }), { transpose_a = not adj })
end)

-- d det(A) = det(A) A^-T; d log|det(A)| = A^-T.
local function det_grad(a, multiplier)
  return shape.expand_dims(shape.expand_dims(multiplier, -1), -1) * decomp.inv(a, { adjoint = true })
end

reg("matrix_determinant", function(node, dys) return det_grad(node.inputs[1], dys[1] * node.outputs[1]) end)

reg("log_matrix_determinant", function(node, dys)
  if dys[2] == nil then return nil end -- the sign is piecewise constant
  return det_grad(node.inputs[1], dys[2])
end)

-- L^-T (tril(L^T g) with its diagonal halved) L^-1, symmetrized (TF's _CholeskyGrad),
-- the inverses applied as triangular solves.
reg("cholesky", function(node, dys)
  local l = node.outputs[1]
  local mid = mm(l, dys[1], { transpose_a = true })
  mid = linalg.band_part(linalg.set_diag(mid, linalg.diag_part(mid) * 0.5), -1, 0)
  local y = decomp.triangular_solve(l, mid, { lower = true, adjoint = true })             -- L^-T mid
  local x = T(decomp.triangular_solve(l, T(y), { lower = true, adjoint = true }))        -- y L^-1
  return (x + T(x)) * 0.5
end)

---------------------------------------------------------------------------
-- solvers
---------------------------------------------------------------------------

reg("matrix_solve", function(node, dys, needs)
  local a, c, adj = node.inputs[1], node.outputs[1], flag(node, ADJOINT)
  local gb = decomp.solve(a, dys[1], { adjoint = not adj })
  local ga
  if util.needs(needs, a) then
    ga = adj and -mm(c, gb, { transpose_b = true }) or -mm(gb, c, { transpose_b = true })
  end
  return ga, gb
end)

reg("matrix_triangular_solve", function(node, dys, needs)
  local a, b, c = node.inputs[1], node.inputs[2], node.outputs[1]
  local adj, lower = flag(node, ADJOINT), flag(node, LOWER)
  local gb = decomp.triangular_solve(a, dys[1], { lower = lower, adjoint = not adj })
  local ga
  if util.needs(needs, a) then
    ga = adj and -mm(c, gb, { transpose_b = true }) or -mm(gb, c, { transpose_b = true })
    ga = lower and linalg.band_part(ga, -1, 0) or linalg.band_part(ga, 0, -1)
    ga = util.unbroadcast(ga, a) -- the batch dims a was broadcast along
  end
  return ga, util.unbroadcast(gb, b)
end)

-- TF's _MatrixSolveLsGrad: the normal equations of the first kind (M >= N) or
-- the second (M < N), through the regularized Gramian's Cholesky factor.
reg("matrix_solve_ls", function(node, dys)
  if node.attrs.n == 0 then util.error("lstsq: Gradient not defined for fast=False (as TF's)") end
  local a, b, x, g = node.inputs[1], node.inputs[2], node.outputs[1], dys[1]
  local rows, cols = matrix_dims(a, "lstsq")
  local l2 = tonumber(node.attrs.scalars[0])
  local over = rows >= cols
  local gram = over and mm(a, a, { transpose_a = true }) or mm(a, a, { transpose_b = true })
  if l2 ~= 0 then gram = gram + eye_like(gram) * l2 end
  local chol = decomp.cholesky(gram)
  if over then
    local z = decomp.cholesky_solve(chol, g)
    local xzt = mm(x, z, { transpose_b = true })
    return -mm(a, xzt + T(xzt)) + mm(b, z, { transpose_b = true }), mm(a, z)
  end
  local gb = decomp.cholesky_solve(chol, mm(a, g))
  local tmp = decomp.cholesky_solve(chol, b)
  local a1 = -mm(gb, mm(tmp, a, { transpose_a = true }))
  local a2 = mm(tmp, g - mm(a, gb, { transpose_a = true }), { transpose_b = true })
  return a1 + a2, gb
end)

-- The compact diagonals of the transposed tridiagonal matrices (TF's _TransposeTridiagonalMatrix).
local function shift_last(v, by) -- [..., M]: +1 moves element i + 1 to i, -1 element i - 1 to i; zeros in
  local z = create.zeros_like(v:slice { "...", { 0, 1 } })
  if by > 0 then return shape.concat({ v:slice { "...", { 1, nil } }, z }, -1) end
  return shape.concat({ z, v:slice { "...", { nil, -1 } } }, -1)
end

-- x [..., M, K] with its rows moved as shift_last moves elements.
local function shift_rows(x, by)
  local z = create.zeros_like(x:slice { "...", { 0, 1 }, {} })
  if by > 0 then return shape.concat({ x:slice { "...", { 1, nil }, {} }, z }, -2) end
  return shape.concat({ z, x:slice { "...", { nil, -1 }, {} } }, -2)
end

reg("tridiagonal_solve", function(node, dys, needs)
  local d, x, g = node.inputs[1], node.outputs[1], dys[1]
  if d.ndim < 0 or x.ndim < 0 then
    util.error("tridiagonal_solve: its gradient needs the diagonals' rank known while tracing (it slices their rows)")
  end
  local row = function(i) return d:slice { "...", i, {} } end
  local dt = shape.stack({ shift_last(row(2), 1), row(1), shift_last(row(0), -1) }, -2)
  local gr = decomp.tridiagonal_solve(dt, g, { partial_pivoting = node.attrs.n ~= 0 })
  local gd
  if util.needs(needs, d) then -- minus the three diagonals of gr x^T (TF's _MatmulExtractingThreeDiagonals)
    local function sum(y) return reduce.reduce_sum(gr * y, -1) end
    gd = -shape.stack({ sum(shift_rows(x, 1)), sum(x), sum(shift_rows(x, -1)) }, -2)
  end
  return gd, gr
end)

---------------------------------------------------------------------------
-- qr, svd, eigh, expm
---------------------------------------------------------------------------

-- matmul(x, r^-T) for r upper triangular.
local function right_solve(x, r) return T(decomp.triangular_solve(r, T(x), { lower = false })) end

-- TF's _QrGradSquareAndDeepMatrices (M >= N, q [M, N]).
local function qr_square(q, r, dq, dr)
  local qdq = mm(q, dq, { transpose_a = true })
  local rdr = mm(r, dr, { transpose_b = true })
  local tril = linalg.band_part(qdq - T(qdq) + rdr - T(rdr), -1, 0)
  return mm(q, dr + right_solve(tril, r)) + right_solve(dq - mm(q, qdq), r)
end

reg("qr", function(node, dys)
  local q, r = node.outputs[1], node.outputs[2]
  local dq, dr = dys[1] or create.zeros_like(q), dys[2] or create.zeros_like(r)
  local rows = matrix_dims(q, "qr")
  local r_rows, cols = matrix_dims(r, "qr")
  if r_rows > cols and flag(node, FULL) then
    util.error(string.format("qr: the gradient is not implemented when nrows > ncols and full_matrices is true " ..
      "(as TF's): r has shape %s", tostring(r.shape)))
  end
  if rows >= cols then return qr_square(q, r, dq, dr) end
  -- wide: a = [x, y], r = [u, v]: the square case for x, then y's part
  local a = node.inputs[1]
  local y, u = a:slice { "...", {}, { rows, nil } }, r:slice { "...", {}, { 0, rows } }
  local dv, du = dr:slice { "...", {}, { rows, nil } }, dr:slice { "...", {}, { 0, rows } }
  local dx = qr_square(q, u, dq + mm(y, dv, { transpose_b = true }), du)
  return shape.concat({ dx, mm(q, dv) }, -1)
end)

-- TF's _SvdGrad for real matrices (Giles; Townsend for full_matrices=false).
reg("svd", function(node, dys)
  local a = node.inputs[1]
  local gs = dys[1]
  if flag(node, VALUES_ONLY) then -- the vectors, computed again
    local _, u, v = decomp.svd(a)
    return mm(u, mm(linalg.diag(gs), v, { transpose_b = true }))
  end
  local s, u, v = node.outputs[1], node.outputs[2], node.outputs[3]
  gs = gs or create.zeros_like(s)
  local gu, gv = dys[2] or create.zeros_like(u), dys[3] or create.zeros_like(v)
  local rows, cols = matrix_dims(a, "svd")
  local full = flag(node, FULL)
  local adjoint = rows > cols -- A^T = V S U^T: the same steps, the result transposed
  if adjoint then rows, cols, u, v, gu, gv = cols, rows, v, u, gv, gu end
  if full and cols - rows > 1 then
    util.error(string.format("svd: the gradient is not implemented for abs(m - n) > 1 when full_matrices is true " ..
      "(as TF's): m=%d and n=%d", rows, cols))
  end
  local s_mat = linalg.diag(s)
  local f = gap_inverses(s * s)
  local v1, gv1 = v:slice { "...", {}, { 0, rows } }, gv:slice { "...", {}, { 0, rows } }
  local f_u = f * mm(u, gu, { transpose_a = true })
  local f_v = f * mm(v1, gv1, { transpose_a = true })
  local inner = linalg.diag(gs) + mm(f_u + T(f_u), s_mat) + mm(s_mat, f_v + T(f_v))
  local ga = mm(u, mm(inner, v1, { transpose_b = true }))
  if rows ~= cols then
    local gv1t = T(gv1)
    local rest = gv1t - mm(mm(gv1t, v1), v1, { transpose_b = true })
    if full then
      local v2, gv2 = v:slice { "...", {}, { rows, cols } }, gv:slice { "...", {}, { rows, cols } }
      rest = rest - mm(mm(v1, gv2, { transpose_a = true }), v2, { transpose_b = true })
    end
    ga = ga + mm(mm(u, linalg.diag(safe_reciprocal(s))), rest)
  end
  if adjoint then return T(ga) end
  return ga
end)

-- TF's _SelfAdjointEigV2Grad: the forward op reads the lower triangle, so the
-- gradient lands there, symmetrized.
reg("self_adjoint_eig", function(node, dys)
  local a, ge, gv = node.inputs[1], dys[1], dys[2]
  local e, v = node.outputs[1], node.outputs[2]
  if flag(node, VALUES_ONLY) then
    local _, v2 = decomp.eigh(a)
    v, gv = v2, nil
  end
  local mid = linalg.diag(ge or create.zeros_like(e))
  if gv ~= nil then mid = mid + gap_inverses(e) * mm(v, gv, { transpose_a = true }) end
  local ga = mm(v, mm(mid, v, { transpose_b = true }))
  ga = linalg.band_part(ga + T(ga), -1, 0)
  return linalg.set_diag(ga, linalg.diag_part(ga) * 0.5)
end)

-- The gradient of a primary matrix function f with a real power series: the
-- adjoint of its Frechet derivative at A, which is L_f(A^T, G), the top right
-- block of f([[A^T, G], [0, A^T]]) (Najfeld and Havel; Higham's Functions of
-- Matrices, 3.2).
local function frechet_adjoint(f, a, g)
  local at, z = T(a), create.zeros_like(a)
  local e = f(shape.concat({ shape.concat({ at, g }, -1), shape.concat({ z, at }, -1) }, -2))
  local d = dims(a)
  local n = d and d[#d]
  if n and n >= 0 then return e:slice { "...", { 0, n }, { n, nil } } end
  local eye = eye_like(a) -- unknown n: the block picked by [I 0] e [0; I]
  return mm(mm(shape.concat({ eye, z }, -1), e), shape.concat({ z, eye }, -2))
end

reg("matrix_exponential", function(node, dys) return frechet_adjoint(decomp.expm, node.inputs[1], dys[1]) end)

-- sqrtm's: L(A^T, G) as well. TF solves the same Sylvester
-- equation (R^T X + X R^T = G, R = sqrtm(A)) as one n^2 x n^2 system; the
-- block form costs a 2n x 2n root instead, and needs no known dims.
reg("matrix_square_root", function(node, dys)
  return frechet_adjoint(decomp.sqrtm, node.inputs[1], dys[1])
end)

return {}
