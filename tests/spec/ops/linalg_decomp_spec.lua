-- tests/spec/ops/linalg_decomp_spec.lua — tide.linalg's decompositions by
-- their invariants (reconstructions, orthogonality, A v = lambda v for eig's
-- complex pairs), batches split over the pool, the names TF exports, and bad
-- input: errors that name the op and the shape, LAPACK's 32-bit limits, never a crash.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local L = tide.linalg
local mm = tide.matmul
local T = L.matrix_transpose
local R = gc.random

-- The identity the shape of each square matrix of x.
local function eye_like(x) return L.set_diag(tide.zeros_like(x), tide.ones_like(L.diag_part(x))) end

describe("tide.linalg's decompositions", function()
  it("reconstruct their inputs, with orthonormal factors", function()
    local a = R({ 2, 4, 3 }, -1, 1, 1)
    local q, r = L.qr(a)
    h.close(mm(q, r), a, 1e-12)
    h.close(mm(q, q, { transpose_a = true }), eye_like(L.matrix_transpose(r)), 1e-12)
    h.close(L.band_part(r, 0, -1), r, 0)
    local qf, rf = L.qr(a, { full_matrices = true })
    assert.are.same({ 2, 4, 4 }, qf.shape:as_list())
    h.close(mm(qf, rf), a, 1e-12)
    h.close(mm(qf, qf, { transpose_a = true }), eye_like(qf), 1e-12)
    for _, full in ipairs { false, true } do
      for _, shape in ipairs { { 3, 5 }, { 5, 3 } } do
        local x = R(shape, -1, 1, 2)
        local s, u, v = L.svd(x, { full_matrices = full })
        local k = math.min(shape[1], shape[2])
        local us = u:slice { {}, { 0, k } } * s
        h.close(mm(us, v:slice { {}, { 0, k } }, { transpose_b = true }), x, 1e-12)
        h.close(mm(v, v, { transpose_a = true }), eye_like(mm(v, v, { transpose_a = true })), 1e-12)
        h.close(mm(u, u, { transpose_a = true }), eye_like(mm(u, u, { transpose_a = true })), 1e-12)
      end
    end
    local sym = R({ 4, 4 }, -1, 1, 3)
    sym = sym + T(sym)
    local e, v = L.eigh(sym)
    h.close(mm(v * e, v, { transpose_b = true }), sym, 1e-12)
    local lu, p = L.lu(sym)
    h.close(L.lu_reconstruct(lu, p), sym, 1e-12)
  end)

  it("give eig's complex eigenpairs as real and imaginary parts: A v = lambda v", function()
    local a = tide.tensor({ { 1, -2, 0.5 }, { 3, 0.25, -1 }, { 0.5, 2, 1.5 } }, "float64")
    local e, v = L.eig(a)
    local vr, vi = v.real, v.imag
    -- A (vr + i vi) = (er + i ei)(vr + i vi), column by column
    h.close(mm(a, vr), vr * e.real - vi * e.imag, 1e-12)
    h.close(mm(a, vi), vi * e.real + vr * e.imag, 1e-12)
    local im = h.values(e.imag)
    assert.is_true(math.abs(im[1]) + math.abs(im[2]) + math.abs(im[3]) > 0.5, "the example has a complex pair")
    local only = L.eigvals(a)
    h.close(only.real, e.real, 1e-12)
    h.close(only.imag, e.imag, 1e-12)
  end)

  it("give sqrtm's principal root: R R = A, complex eigenvalue pairs and a batch too", function()
    -- 2x2 and 1x1 blocks in the real Schur form, and matrices past the pool's split
    local a = R({ 5, 6, 6 }, -1, 1, 4)
    a = L.set_diag(a, L.diag_part(a) + 3)
    local ev = L.eigvals(a[0])
    assert.is_true(h.values(ev.imag)[1] ~= 0 or h.values(ev.imag)[3] ~= 0, "the example has a complex pair")
    local r = L.sqrtm(a)
    h.close(mm(r, r), a, 1e-12)
    h.close(L.sqrtm(a:cast("float32")), r:cast("float32"), 1e-4)
    -- the principal root: eigenvalues in the right half plane (sqrtm of a rotation by 90 degrees is one by 45)
    local c = math.sqrt(0.5)
    h.close(L.sqrtm(tide.tensor({ { 0, 1 }, { -1, 0 } }, "float64")), tide.tensor({ { c, c }, { -c, c } }, "float64"),
      1e-14)
    assert.are.same({ 3, 0, 0 }, L.sqrtm(tide.zeros({ 3, 0, 0 }, "float64")).shape:as_list())
  end)

  it("split a batch over the pool and give each matrix's own result", function()
    local batch = R({ 64, 6, 6 }, -1, 1, 4) + L.eye(6, { dtype = "float64" }) * 4
    local inv = L.inv(batch)
    local dets = h.values(L.det(batch))
    for i = 0, 63, 9 do
      h.close(inv[i], L.inv(batch[i]), 1e-13)
      h.close(dets[i + 1], L.det(batch[i]):item(), 1e-12)
    end
    local chol = L.cholesky(mm(batch, batch, { transpose_b = true }))
    h.close(mm(chol, chol, { transpose_b = true }), mm(batch, batch, { transpose_b = true }), 1e-10)
  end)

  it("read strided and broadcast inputs", function()
    local a = R({ 3, 3 }, -1, 1, 5) + L.eye(3, { dtype = "float64" }) * 3
    h.close(L.inv(a:transpose()), T(L.inv(a)), 1e-13)
    local b = tide.broadcast_to(a, { 2, 3, 3 })
    local x = L.solve(b, tide.ones({ 2, 3, 1 }, "float64"))
    h.close(x[1], L.solve(a, tide.ones({ 3, 1 }, "float64")), 1e-13)
  end)

  it("keep tide.trace as tf.function and give TF's top-level names", function()
    assert.are.equal(tide.trace, require("tide.tracing.function").trace)
    assert.is_function(L.trace)
    assert.are.equal(L.norm, tide.norm)
    assert.are.equal(L.tensordot, tide.tensordot)
    assert.are.equal(L.matmul, tide.matmul)
    assert.are.equal(L.l2_normalize, tide.nn.l2_normalize)
    assert.are.equal(L.l2_normalize, tide.math.l2_normalize)
    assert.are.equal(L.eye, tide.eye)
    assert.is_nil(rawget(tide, "cholesky"), "decompositions are tide.linalg's only, as TF's")
  end)
end)

describe("tide.linalg's bad input", function()
  local f32 = function(v) return tide.tensor(v, "float32") end

  it("names the op, the shape and the matrix of a batch", function()
    local err = h.errors("Input is not invertible", L.inv, tide.tensor({ { { 1, 0 }, { 0, 1 } }, { { 1, 2 }, { 2, 4 } } },
      "float32"))
    assert.truthy(err:find("matrix_inverse", 1, true) and err:find("matrix 1 of the batch of shape [2, 2, 2]", 1, true),
      err)
    h.errors("matrix_inverse: Input matrix must be square: input has shape [2, 3]", L.inv, tide.ones { 2, 3 })
    h.errors("cholesky: input must have rank >= 2", L.cholesky, tide.ones { 3 })
    h.errors("must be a float32 or float64 tensor, got int32", L.det, tide.tensor { { 1, 2 }, { 3, 4 } })
    h.errors("must be a float32 or float64 tensor, got float16", L.qr, tide.ones({ 2, 2 }, "float16"))
    h.errors("Input matrix and rhs are incompatible", L.triangular_solve, tide.ones { 2, 2 }, tide.ones { 3, 1 })
    h.errors("batch dimensions do not broadcast", L.triangular_solve, tide.ones { 2, 2, 2 }, tide.ones { 3, 2, 1 })
    h.errors("output_idx_type must be int32 or int64", L.lu, tide.ones { 2, 2 }, { output_idx_type = "float32" })
    h.errors("align must be one of", L.diag_part, tide.ones { 2, 2 }, { align = "MIDDLE" })
    h.errors("l2_regularizer must be >= 0", L.lstsq, tide.ones { 3, 2 }, tide.ones { 3, 1 }, -1)
    h.errors("matrix_square_root: Input matrix must be square", L.sqrtm, tide.ones { 2, 3 })
    h.errors("must be a float32 or float64 tensor, got int32", L.sqrtm, tide.tensor { { 1, 2 }, { 3, 4 } })
    h.errors("logm: TF's logm takes complex64 or complex128", L.logm, tide.ones { 2, 2 })
  end)

  it("gives NaN where TF does, and no crash on NaN or Inf", function()
    local nan = f32 { { 0 / 0, 0 }, { 0, 1 } }
    for _, f in ipairs { L.svd, L.det, L.expm, L.sqrtm, L.cholesky, function(x) return L.eigvals(x).real end } do
      local r = f(nan)
      assert.is_true(h.values(r)[1] ~= h.values(r)[1], "NaN in, NaN out")
    end
    h.errors("Self-adjoint eigen decomposition was not successful", L.eigh, f32 { { 1 / 0, 0 }, { 0, 1 } })
    -- a negative real eigenvalue: no real root, NaN throughout (TF's)
    for _, x in ipairs(h.values(L.sqrtm(f32 { { 1, 2 }, { 2, 1 } }))) do assert.is_true(x ~= x) end
    local l = L.cholesky(f32 { { 1, 2 }, { 2, 1 } })
    local v = h.values(l)
    assert.is_true(v[1] ~= v[1] and v[3] ~= v[3] and v[4] ~= v[4] and v[2] == 0)
  end)

  it("refuses matrices past LAPACK's 32-bit indices before calling it", function()
    -- one element of a heap storage, viewed (an inline tensor's broadcast would be a copy)
    local huge = tide.broadcast_to(tide.ones({ 16, 16 }, "float32"):slice { { 0, 1 }, { 0, 1 } }, { 50000, 50000 })
    h.errors("past LAPACK's limit", L.det, huge)
    h.errors("past LAPACK's limit", L.triangular_solve, huge, tide.ones({ 50000, 1 }, "float32"))
    h.errors("past LAPACK's limit", L.svd, huge, { compute_uv = false })
  end)

  it("refuses gradients TF refuses", function()
    local a, b = R({ 3, 2 }, -1, 1, 6), R({ 3, 1 }, -1, 1, 7)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(a)
      return tide.reduce_sum(L.lstsq(a, b, { fast = false }))
    end)
    h.errors("Gradient not defined for fast=False", function() return tape:gradient(y, a) end)
    local f = tide.trace(function(x)
      local t = tide.GradientTape()
      local s = t:run(function()
        t:watch(x)
        return tide.reduce_sum((L.qr(x)))
      end)
      return t:gradient(s, x)
    end, { input_signature = { tide.TensorSpec({ tide.None, tide.None }, "float64") } })
    h.errors("its gradient needs the matrices' dims known while tracing", f, a)
  end)
end)
