-- tests/support/trace_ops_cases_linalg.lua — tf.linalg's cases for
-- tests/support/trace_ops_cases.lua (which merges them; same add() contract):
-- each op eager, traced, with None dims and with unknown ranks.
local tide = require "tide"

local L = tide.linalg

-- The cases, given trace_ops_cases' module (its data helpers and dtype lists).
return function(T)
  local data, cases = T.data, {}
  local LAPACK = { "float32", "float64" }
  -- A well-conditioned square matrix (its diagonal dominant), and a symmetric positive definite one.
  local function square(n, dt, batch)
    local shape = { n, n }
    if batch then table.insert(shape, 1, batch) end
    local x = data(shape, dt)
    return L.set_diag(x, L.diag_part(x) + 40)
  end
  local function spd(n, dt)
    local x = data({ n, n }, dt)
    return tide.matmul(x, x, { transpose_b = true }) + L.eye(n, { dtype = dt }) * n
  end
  local static_grad = { grad_rank_error = "its gradient needs the matrices' dims known" }

  -- Ops of every dtype that move elements.
  cases.matrix_transpose = function(add)
    for _, dt in ipairs(T.DTYPES) do
      add(dt, L.matrix_transpose, { data({ 2, 3 }, dt) })
      add(dt .. " batch, strided", L.matrix_transpose, { data({ 3, 2, 4 }, dt):transpose { 1, 0, 2 } })
    end
  end
  cases.matrix_band_part = function(add)
    for _, dt in ipairs(T.DTYPES) do
      add(dt .. " lower", function(x) return L.band_part(x, -1, 0) end, { data({ 3, 4 }, dt) })
      add(dt .. " (1, 2) batch", function(x) return L.band_part(x, 1, 2) end, { data({ 2, 4, 4 }, dt) })
    end
  end
  cases.matrix_diag = function(add)
    for _, dt in ipairs(T.DTYPES) do
      add(dt, L.diag, { data({ 2, 3 }, dt) })
      add(dt .. " k (-1, 1) 4 x 5", function(d) return L.diag(d, { k = { -1, 1 }, num_rows = 4, num_cols = 5 }) end,
        { data({ 3, 4 }, dt) })
    end
  end
  cases.matrix_diag_part = function(add)
    for _, dt in ipairs(T.DTYPES) do
      add(dt, L.diag_part, { data({ 2, 3, 4 }, dt) })
      add(dt .. " k (-1, 2) LEFT_LEFT", function(x) return L.diag_part(x, { k = { -1, 2 }, align = "LEFT_LEFT" }) end,
        { data({ 4, 3 }, dt) })
    end
  end
  cases.matrix_set_diag = function(add)
    for _, dt in ipairs(T.DTYPES) do
      add(dt, L.set_diag, { data({ 3, 4 }, dt), data({ 3 }, dt) })
      add(dt .. " k (0, 1)", function(x, d) return L.set_diag(x, d, { k = { 0, 1 } }) end,
        { data({ 2, 3, 3 }, dt), data({ 2, 2, 3 }, dt) })
    end
  end

  -- The LAPACK ops, float32 and float64.
  local function each(name, f)
    cases[name] = function(add)
      for _, dt in ipairs(LAPACK) do f(add, dt) end
    end
  end
  local approx = { approx = true }
  each("cholesky", function(add, dt)
    add(dt, L.cholesky, { spd(3, dt) }, approx)
    add(dt .. " logdet", L.logdet, { spd(4, dt) }, approx)
  end)
  each("matrix_inverse", function(add, dt)
    add(dt, L.inv, { square(3, dt) }, approx)
    add(dt .. " adjoint, batch", function(x) return L.inv(x, { adjoint = true }) end, { square(3, dt, 2) }, approx)
  end)
  each("matrix_determinant", function(add, dt) add(dt, L.det, { square(3, dt, 2) }, approx) end)
  each("log_matrix_determinant", function(add, dt) add(dt, L.slogdet, { square(3, dt) }, approx) end)
  each("lu", function(add, dt)
    add(dt, L.lu, { square(3, dt) }, approx)
    add(dt .. " int64", function(x) return L.lu(x, { output_idx_type = "int64" }) end, { square(3, dt, 2) }, approx)
  end)
  each("matrix_solve", function(add, dt)
    add(dt, L.solve, { square(3, dt), data({ 3, 2 }, dt) }, approx)
    add(dt .. " adjoint", function(a, b) return L.solve(a, b, { adjoint = true }) end,
      { square(3, dt, 2), data({ 2, 3, 1 }, dt) }, approx)
  end)
  each("matrix_triangular_solve", function(add, dt)
    add(dt, L.triangular_solve, { square(3, dt), data({ 3, 2 }, dt) }, approx)
    add(dt .. " upper, adjoint, broadcast", function(a, b) return L.triangular_solve(a, b, false, true) end,
      { square(3, dt, 2), data({ 3, 2 }, dt) }, approx)
  end)
  each("matrix_solve_ls", function(add, dt)
    add(dt .. " fast", L.lstsq, { data({ 4, 2 }, dt), data({ 4, 1 }, dt) }, { approx = true, grad_rank_error =
      static_grad.grad_rank_error })
    add(dt .. " complete orthogonal", function(a, b) return L.lstsq(a, b, { fast = false }) end,
      { data({ 2, 3 }, dt), data({ 2, 2 }, dt) }, { approx = true, grad = false })
  end)
  each("qr", function(add, dt)
    add(dt, L.qr, { data({ 4, 3 }, dt) }, { approx = true, grad_rank_error = static_grad.grad_rank_error })
    add(dt .. " full", function(x) return L.qr(x, { full_matrices = true }) end, { data({ 2, 2, 3 }, dt) },
      { approx = true, grad_rank_error = static_grad.grad_rank_error })
  end)
  each("svd", function(add, dt)
    add(dt, L.svd, { data({ 3, 4 }, dt) }, { approx = true, grad_rank_error = static_grad.grad_rank_error })
    add(dt .. " values", function(x) return L.svd(x, { compute_uv = false }) end, { data({ 2, 3, 2 }, dt) }, approx)
  end)
  each("self_adjoint_eig", function(add, dt)
    add(dt, L.eigh, { spd(3, dt) }, approx)
    add(dt .. " values", L.eigvalsh, { spd(4, dt) }, approx)
  end)
  each("eig", function(add, dt)
    add(dt, function(x)
      local e, v = L.eig(x)
      return e.real, e.imag, v.real, v.imag
    end, { tide.tensor({ { 0, 1 }, { -1, 0 } }, dt) }, approx)
    add(dt .. " values", function(x)
      local e = L.eigvals(x)
      return e.real, e.imag
    end, { square(3, dt) }, approx)
  end)
  each("matrix_exponential", function(add, dt)
    add(dt, L.expm, { data({ 3, 3 }, dt) * 0.1 }, approx)
    add(dt .. " batch", L.expm, { data({ 2, 2, 2 }, dt) * 0.01 }, approx)
  end)
  each("matrix_square_root", function(add, dt)
    add(dt, L.sqrtm, { square(3, dt) }, approx)
    add(dt .. " batch", L.sqrtm, { data({ 2, 2, 2 }, dt) * 0.1 + tide.eye(2, { dtype = dt }) }, approx)
  end)
  local tri = { approx = true, grad_rank_error = "its gradient needs the diagonals' rank known" }
  each("tridiagonal_solve", function(add, dt)
    add(dt, L.tridiagonal_solve, { data({ 3, 4 }, dt, "pos") * tide.tensor({ { 1 }, { 8 }, { 1 } }, dt),
      data({ 4, 2 }, dt) }, tri)
    add(dt .. " no pivoting", function(d, b) return L.tridiagonal_solve(d, b, { partial_pivoting = false }) end,
      { data({ 2, 3, 3 }, dt, "pos") * tide.tensor({ { 1 }, { 8 }, { 1 } }, dt), data({ 2, 3, 1 }, dt) }, tri)
  end)
  return cases
end
