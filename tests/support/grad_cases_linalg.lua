-- tests/support/grad_cases_linalg.lua — the float64 finite-difference cases of
-- tf.linalg's ops (tests/support/grad_cases.lua merges them): transposes, band
-- parts, diagonals, decompositions and solvers. Inputs are kept well
-- conditioned (a matrix plus a multiple of the identity; symmetric ones made
-- so inside f, since cholesky and eigh read one triangle and their gradients
-- are symmetric, as TF's); decompositions' vectors are made sign-free.
local tide = require "tide"
local gc = require "gradcheck"

local M = {}
local R = gc.random
local L = tide.linalg
local mm = tide.matmul

-- x + c I for each matrix of x (square; its dims may be None while tracing).
local function shift(x, c) return L.set_diag(x, L.diag_part(x) + c) end
-- The symmetric part of x, plus c I.
local function sym(x, c) return shift((x + L.matrix_transpose(x)) * 0.5, c or 0) end
-- Columns of v with signs fixed by their first row (their sign is arbitrary).
local function signed(v) return v * tide.sign(v:slice { "...", { 0, 1 }, {} }) end

function M.matrix_transpose(add)
  add("2-d", L.matrix_transpose, { R({ 2, 3 }, -1, 1, 1) })
  add("batch, strided", L.matrix_transpose, { R({ 3, 2, 4 }, -1, 1, 2):transpose { 1, 0, 2 } })
end

function M.matrix_band_part(add)
  local x = R({ 4, 5 }, -1, 1, 3)
  add("lower", function(v) return L.band_part(v, -1, 0) end, { x })
  add("upper", function(v) return L.band_part(v, 0, -1) end, { x })
  add("tridiagonal, batch", function(v) return L.band_part(v, 1, 1) end, { R({ 2, 3, 4 }, -1, 1, 4) })
  add("transposed", function(v) return L.band_part(v, 2, 0) end, { R({ 5, 4 }, -1, 1, 5):transpose() })
end

function M.matrix_diag(add)
  add("vector", L.diag, { R({ 3 }, -1, 1, 6) })
  add("batch", L.diag, { R({ 2, 3 }, -1, 1, 7) })
  add("k 1, 4 x 5", function(v) return L.diag(v, { k = 1, num_rows = 4, num_cols = 5 }) end, { R({ 4 }, -1, 1, 8) })
  add("k (-1, 1), padding", function(v) return L.diag(v, { k = { -1, 1 }, padding_value = 9 }) end,
    { R({ 2, 3, 3 }, -1, 1, 9) })
  add("k (-2, 0), LEFT_LEFT", function(v) return L.diag(v, { k = { -2, 0 }, align = "LEFT_LEFT" }) end,
    { R({ 3, 3 }, -1, 1, 10) })
end

function M.matrix_diag_part(add)
  add("square", L.diag_part, { R({ 3, 3 }, -1, 1, 11) })
  add("wide, batch", L.diag_part, { R({ 2, 3, 4 }, -1, 1, 12) })
  add("k (-1, 2)", function(v) return L.diag_part(v, { k = { -1, 2 }, padding_value = 3 }) end, { R({ 4, 3 }, -1, 1, 13) })
  add("k 1, transposed", function(v) return L.diag_part(v, { k = 1 }) end, { R({ 4, 3 }, -1, 1, 14):transpose() })
end

function M.matrix_set_diag(add)
  add("main", L.set_diag, { R({ 3, 4 }, -1, 1, 15), R({ 3 }, -1, 1, 16) })
  add("batch", L.set_diag, { R({ 2, 3, 3 }, -1, 1, 17), R({ 2, 3 }, -1, 1, 18) })
  add("k (0, 1), RIGHT_RIGHT", function(x, d) return L.set_diag(x, d, { k = { 0, 1 }, align = "RIGHT_RIGHT" }) end,
    { R({ 3, 3 }, -1, 1, 19), R({ 2, 3 }, -1, 1, 20) })
end

function M.cholesky(add)
  add("3 x 3", function(x) return L.cholesky(sym(x, 3)) end, { R({ 3, 3 }, -1, 1, 21) }, { second_order = true })
  add("batch", function(x) return L.cholesky(sym(x, 3)) end, { R({ 2, 4, 4 }, -1, 1, 22) })
  add("x x^T + I", function(x) return L.cholesky(shift(mm(x, x, { transpose_b = true }), 1)) end,
    { R({ 3, 3 }, -1, 1, 23) })
  add("logdet", function(x) return L.logdet(sym(x, 3)) end, { R({ 3, 3 }, -1, 1, 32) })
end

function M.matrix_inverse(add)
  add("3 x 3", function(x) return L.inv(shift(x, 3)) end, { R({ 3, 3 }, -1, 1, 24) }, { second_order = true })
  add("adjoint, batch", function(x) return L.inv(shift(x, 3), { adjoint = true }) end, { R({ 2, 3, 3 }, -1, 1, 25) })
  add("transposed input", function(x) return L.inv(x) end, { shift(R({ 3, 3 }, -1, 1, 26), 2):transpose() })
end

function M.matrix_determinant(add)
  add("3 x 3", L.det, { R({ 3, 3 }, -1, 1, 27) }, { second_order = true })
  add("batch", L.det, { R({ 2, 2, 2 }, -1, 1, 28) })
end

function M.log_matrix_determinant(add)
  local function logabs(x)
    local _, l = L.slogdet(x)
    return l
  end
  add("3 x 3", logabs, { R({ 3, 3 }, -1, 1, 29) }, { second_order = true })
  add("batch", logabs, { shift(R({ 2, 3, 3 }, -1, 1, 30), 2) })
  add("sign times log", function(x)
    local s, l = L.slogdet(x)
    return s * l
  end, { R({ 3, 3 }, -1, 1, 31) })
end

function M.matrix_solve(add)
  add("3 x 3, k 2", function(a, b) return L.solve(shift(a, 3), b) end, { R({ 3, 3 }, -1, 1, 33), R({ 3, 2 }, -1, 1, 34) },
    { second_order = true })
  add("adjoint, batch", function(a, b) return L.solve(shift(a, 3), b, { adjoint = true }) end,
    { R({ 2, 3, 3 }, -1, 1, 35), R({ 2, 3, 1 }, -1, 1, 36) })
end

function M.matrix_triangular_solve(add)
  local ts = L.triangular_solve
  local a, b = R({ 3, 3 }, -1, 1, 37), R({ 3, 2 }, -1, 1, 38)
  add("lower", function(x, y) return ts(shift(x, 3), y) end, { a, b }, { second_order = true })
  add("upper", function(x, y) return ts(shift(x, 3), y, { lower = false }) end, { a, b })
  add("lower, adjoint", function(x, y) return ts(shift(x, 3), y, { adjoint = true }) end, { a, b })
  add("upper, adjoint", function(x, y) return ts(shift(x, 3), y, false, true) end, { a, b })
  add("batch broadcast", function(x, y) return ts(shift(x, 3), y) end, { R({ 2, 3, 3 }, -1, 1, 39), b })
  add("rhs batch broadcast", function(x, y) return ts(shift(x, 3), y, { lower = false }) end,
    { a, R({ 2, 1, 3, 2 }, -1, 1, 40) })
  add("cholesky_solve", function(x, y) return L.cholesky_solve(L.cholesky(sym(x, 3)), y) end, { a, b })
end

function M.matrix_solve_ls(add)
  add("overdetermined", function(a, b) return L.lstsq(a, b) end, { R({ 4, 2 }, -1, 1, 41), R({ 4, 2 }, -1, 1, 42) },
    { none = false })
  add("underdetermined", function(a, b) return L.lstsq(a, b) end, { R({ 2, 4 }, -1, 1, 43), R({ 2, 1 }, -1, 1, 44) },
    { none = false })
  add("l2 0.5, batch", function(a, b) return L.lstsq(a, b, 0.5) end,
    { R({ 2, 3, 2 }, -1, 1, 45), R({ 2, 3, 2 }, -1, 1, 46) }, { none = false })
  add("l2 0.25, underdetermined", function(a, b) return L.lstsq(a, b, { l2_regularizer = 0.25 }) end,
    { R({ 2, 3 }, -1, 1, 47), R({ 2, 2 }, -1, 1, 48) }, { none = false })
end

function M.qr(add)
  local function q_of(x) return (L.qr(x)) end
  local function r_of(x)
    local _, r = L.qr(x)
    return r
  end
  local function both(x)
    local q, r = L.qr(x)
    return tide.concat({ tide.reshape(q, { -1 }), tide.reshape(r, { -1 }) }, 0)
  end
  local no = { none = false }
  add("square q", q_of, { R({ 3, 3 }, -1, 1, 49) }, no)
  add("square r", r_of, { R({ 3, 3 }, -1, 1, 50) }, no)
  add("tall q and r", both, { R({ 4, 2 }, -1, 1, 51) }, no)
  add("wide q and r", both, { R({ 2, 4 }, -1, 1, 52) }, no)
  add("full, wide, batch", function(x) return (L.qr(x, { full_matrices = true })) end, { R({ 2, 2, 3 }, -1, 1, 53) }, no)
end

function M.svd(add)
  local no = { none = false }
  local function uv(full)
    return function(x)
      local s, u, v = L.svd(x, { full_matrices = full })
      return tide.concat({ tide.reshape(signed(u), { -1 }), s, tide.reshape(signed(v), { -1 }) }, 0)
    end
  end
  add("values only", function(x) return L.svd(x, { compute_uv = false }) end, { R({ 3, 3 }, -1, 1, 54) })
  add("values of a batch", function(x) return (L.svd(x)) end, { R({ 2, 3, 2 }, -1, 1, 55) }, no)
  add("square, vectors", uv(false), { R({ 3, 3 }, -1, 1, 56) }, no)
  add("tall, vectors", uv(false), { R({ 4, 3 }, -1, 1, 57) }, no)
  add("wide, vectors", uv(false), { R({ 2, 4 }, -1, 1, 58) }, no)
  add("full, 3 x 4", uv(true), { R({ 3, 4 }, -1, 1, 59) }, no)
  add("full, 4 x 3", uv(true), { R({ 4, 3 }, -1, 1, 60) }, no)
  add("pinv", function(x) return L.pinv(x) end, { R({ 3, 2 }, -1, 1, 61) }, no)
  add("norm 2", function(x) return L.norm(x, { ord = 2, axis = { -2, -1 } }) end, { R({ 2, 3, 3 }, -1, 1, 62) }, no)
end

function M.self_adjoint_eig(add)
  local function ev(x)
    local e, v = L.eigh(sym(x))
    return tide.concat({ e, tide.reshape(signed(v), { -1 }) }, 0)
  end
  add("values and vectors", ev, { R({ 3, 3 }, -1, 1, 63) })
  add("values, batch", function(x) return (L.eigh(sym(x))) end, { R({ 2, 3, 3 }, -1, 1, 64) })
  add("eigvalsh", function(x) return L.eigvalsh(sym(x)) end, { R({ 4, 4 }, -1, 1, 65) })
  add("second order", function(x) return (L.eigh(sym(x))) end, { R({ 3, 3 }, -1, 1, 66) }, { second_order = true })
end

function M.matrix_exponential(add)
  add("small norm (Pade 3)", L.expm, { R({ 3, 3 }, -0.003, 0.003, 67) })
  add("Pade 9", L.expm, { R({ 3, 3 }, -0.6, 0.6, 68) })
  add("scaled and squared, batch", L.expm, { R({ 2, 3, 3 }, -3, 3, 69) }, { rtol = 1e-4 })
  add("second order", L.expm, { R({ 2, 2 }, -1, 1, 70) }, { second_order = true })
end

function M.matrix_square_root(add)
  add("symmetric positive definite", function(x) return L.sqrtm(sym(mm(x, x, { transpose_b = true }), 1)) end,
    { R({ 3, 3 }, -1, 1, 77) })
  add("complex eigenvalues, batch", function(x) return L.sqrtm(shift(x, 2)) end, { R({ 2, 3, 3 }, -1, 1, 78) })
  add("second order", function(x) return L.sqrtm(shift(x, 3)) end, { R({ 3, 3 }, -1, 1, 79) }, { second_order = true })
end

function M.tridiagonal_solve(add)
  local function dom(d) -- a dominant main diagonal
    return d + tide.tensor({ { 0 }, { 4 }, { 0 } }, "float64")
  end
  add("partial pivoting", function(d, b) return L.tridiagonal_solve(dom(d), b) end,
    { R({ 3, 4 }, -1, 1, 71), R({ 4, 2 }, -1, 1, 72) })
  add("no pivoting, batch", function(d, b) return L.tridiagonal_solve(dom(d), b, { partial_pivoting = false }) end,
    { R({ 2, 3, 3 }, -1, 1, 73), R({ 2, 3, 1 }, -1, 1, 74) })
  add("matrix format", function(m, b) return L.tridiagonal_solve(shift(m, 4), b, { diagonals_format = "matrix" }) end,
    { R({ 4, 4 }, -1, 1, 75), R({ 4, 1 }, -1, 1, 76) })
end

return M
