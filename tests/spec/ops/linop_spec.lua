-- tests/spec/ops/linop_spec.lua — tide.linalg's LinearOperator classes beyond TF's fixed values
-- (linop_fixtures_spec.lua): batch broadcasting, operator products, errors, and float64 finite-difference
-- gradients through matmul, solve and log_abs_determinant of the structured paths.
local tide = require "tide"
local gc = require "gradcheck"

local L = tide.linalg
local f64 = "float64"
local R = gc.random

local function close(a, b, tol)
  local d = tide.reduce_max(tide.abs(a - b)):item()
  assert(d <= (tol or 1e-10), "max difference " .. d)
end

local function raises(fragment, f)
  local ok, err = pcall(f)
  assert(not ok, "expected an error with '" .. fragment .. "'")
  assert(tostring(err):find(fragment, 1, true), "message lacks '" .. fragment .. "': " .. tostring(err))
end

-- m + c I
local function shift(m, c) return L.set_diag(m, L.diag_part(m) + c) end

describe("tide.linalg.LinearOperator", function()
  it("tide.linalg names every class, loaded on first use", function()
    local names = getmetatable(L).__lazy
    for name, cls in pairs(require "tide.ops.linop") do
      assert(names[name], "tide.linalg does not list " .. name)
      assert.equal(cls, L[name])
    end
    for name in pairs(names) do
      if name:find("^LinearOperator") then assert(require("tide.ops.linop")[name], name .. " is no class") end
    end
  end)

  it("broadcasts batch shapes as TF", function()
    local d = L.LinearOperatorDiag(R({ 2, 3 }, 1, 2, 1))
    local x = R({ 3, 4 }, -1, 1, 2)
    local y = d:matmul(x)
    assert.same({ 2, 3, 4 }, y.shape:as_list())
    close(y, tide.matmul(d:to_dense(), x))
    local a = L.LinearOperatorFullMatrix(shift(R({ 3, 3 }, -1, 1, 3), 4))
    local rhs = R({ 5, 3, 2 }, -1, 1, 4)
    local s = a:solve(rhs)
    assert.same({ 5, 3, 2 }, s.shape:as_list())
    close(tide.matmul(a:to_dense(), s), rhs)
    local k = L.LinearOperatorKronecker({ L.LinearOperatorFullMatrix(shift(R({ 2, 2, 2 }, -1, 1, 5), 3)),
      L.LinearOperatorDiag(R({ 3 }, 1, 2, 6)) })
    assert.same({ 2, 6, 6 }, k.shape:as_list())
    local kx = R({ 6, 2 }, -1, 1, 7)
    close(k:matmul(kx), tide.matmul(k:to_dense(), kx))
    close(k:solve(kx), L.solve(k:to_dense(), tide.broadcast_to(kx, { 2, 6, 2 })))
    local id = L.LinearOperatorIdentity(3, { batch_shape = { 2 }, dtype = f64 })
    assert.same({ 2, 3, 4 }, id:matmul(x).shape:as_list())
  end)

  it("multiplies and solves by operators as compositions", function()
    local a = L.LinearOperatorFullMatrix(shift(R({ 3, 3 }, -1, 1, 8), 4))
    local d = L.LinearOperatorDiag(R({ 3 }, 1, 2, 9))
    local c = a:matmul(d)
    assert.equal("LinearOperatorComposition", getmetatable(c).__name)
    close(c:to_dense(), tide.matmul(a:to_dense(), d:to_dense()))
    close(a:solve(d):to_dense(), L.solve(a:to_dense(), d:to_dense()))
    close(a:matmul(d, { adjoint = true }):to_dense(), tide.matmul(a:to_dense(), d:to_dense(), { transpose_a = true }))
    assert.truthy(tostring(c):find("LinearOperatorComposition(shape=(3, 3), dtype=float64)", 1, true))
  end)

  it("gives shapes as tensors and checks hints with assert_*", function()
    local d = L.LinearOperatorDiag(tide.tensor({ { 1, 2 }, { 3, 4 } }, f64))
    assert.same({ 2, 2, 2 }, d:shape_tensor():totable())
    assert.same({ 2 }, d:batch_shape_tensor():totable())
    assert.equal(2, d:domain_dimension_tensor():item())
    d:assert_non_singular()
    d:assert_positive_definite()
    d:assert_self_adjoint()
    raises("singular", function() L.LinearOperatorDiag(tide.tensor({ 1, 0 }, f64)):assert_non_singular() end)
    raises("not positive definite", function() L.LinearOperatorDiag(tide.tensor({ 1, -1 }, f64)):assert_positive_definite() end)
    raises("not self-adjoint", function()
      L.LinearOperatorFullMatrix(tide.tensor({ { 1, 2 }, { 3, 4 } }, f64)):assert_self_adjoint()
    end)
    close(L.LinearOperatorDiag(tide.tensor({ 2, -8 }, f64)):cond(), tide.tensor(4, f64))
  end)

  it("traces with known dims, and says so for None dims", function()
    local d = tide.tensor({ 1.5, -2, 3 }, f64)
    local f = tide.trace(function(x)
      local op = L.LinearOperatorKronecker({ L.LinearOperatorDiag(d), L.LinearOperatorIdentity(2, { dtype = f64 }) })
      return op:solve(x)
    end)
    local x = R({ 6, 2 }, -1, 1, 30)
    close(f(x), L.solve(tide.linalg.diag(tide.tensor({ 1.5, 1.5, -2, -2, 3, 3 }, f64)), x))
    local g = tide.trace(function(v) return L.LinearOperatorDiag(v):log_abs_determinant() end,
      { tide.TensorSpec({ tide.None }, f64) })
    raises("needs tensors of known shape", function() g(d) end)
  end)

  it("gives a permutation's determinant from its inversions", function()
    for _, p in ipairs { { 2, 0, 1 }, { 1, 0, 2 }, { 0, 1, 2 }, { 3, 1, 0, 2 }, { 4, 3, 2, 1, 0 }, { 1, 0, 3, 2, 5, 4 } } do
      local op = L.LinearOperatorPermutation(tide.tensor(p, "int32"), { dtype = f64 })
      close(op:determinant(), L.det(op:to_dense()))
    end
    local batch = L.LinearOperatorPermutation(tide.tensor({ { 2, 0, 1 }, { 1, 0, 2 } }, "int32"))
    assert.same({ 1, -1 }, batch:determinant():totable())
  end)

  it("keeps float32, and makes a Lua number multiplier float32", function()
    local c = L.LinearOperatorCirculant(tide.signal.fft(tide.tensor({ 4, 1, 0.5, 0.25 })))
    assert.equal("float32", c:to_dense().dtype)
    assert.equal("float32", c:solve(tide.ones({ 4, 1 })).dtype)
    local s = L.LinearOperatorScaledIdentity(2, 3)
    assert.equal("float32", s.dtype)
    assert.same({ { 3, 3 }, { 3, 3 } }, s:matmul(tide.ones({ 2, 2 })):totable())
  end)

  it("can be subclassed: a class with _to_dense gets every method", function()
    local class = require "tide.class"
    local My = class("MyOperator", L.LinearOperator)
    function My:__init(m)
      self.m = m
      L.LinearOperator.__init(self, { dtype = m.dtype, shape = m.shape:as_list(), is_self_adjoint = true })
    end
    function My:_to_dense() return self.m end
    local m = tide.tensor({ { 2, 1 }, { 1, 3 } }, f64)
    local op = My(m)
    assert.is_true(op.is_square)
    close(op:solve(tide.ones({ 2, 1 }, f64)), tide.tensor({ { 0.4 }, { 0.2 } }, f64))
    close(op:determinant(), tide.tensor(5, f64))
    close(op:inverse():to_dense(), L.inv(m))
    close(tide.sort(op:eigvals()), L.eigvalsh(m))
  end)

  it("refuses bad arguments with messages naming them", function()
    local a = L.LinearOperatorFullMatrix(tide.linalg.eye(2, { dtype = f64 }))
    raises("operators[2] must be a LinearOperator", function() L.LinearOperatorComposition({ a, 3 }) end)
    raises("operators must be a non-empty list", function() L.LinearOperatorKronecker({}) end)
    raises("diagonals_format must be", function()
      L.LinearOperatorTridiag(tide.zeros({ 3, 3 }, f64), { diagonals_format = "banded" })
    end)
    raises("compact diagonals must be [..., 3, N]", function() L.LinearOperatorTridiag(tide.zeros({ 2, 3 }, f64)) end)
    raises("diag must be a float tensor (float16, bfloat16, float32 or float64), got int32", function()
      L.LinearOperatorDiag(tide.tensor({ 1, 2 }, "int32"))
    end)
    raises("row has dtype float32, the operator float64", function()
      L.LinearOperatorToeplitz(tide.ones({ 3 }, f64), tide.ones({ 3 }))
    end)
    raises("perm must be an int32 or int64 tensor", function() L.LinearOperatorPermutation(tide.zeros({ 3 }, f64)) end)
    raises("matvec: x must be a vector", function() a:matvec(tide.tensor(1, f64)) end)
    raises("x has dtype float32, the operator float64", function() a:matmul(tide.ones({ 2, 2 })) end)
    raises("input_output_dtype must be the spectrum's real dtype", function()
      L.LinearOperatorCirculant(tide.ones({ 4 }, f64), { input_output_dtype = "complex128" })
    end)
    raises("u must be [..., 2, K]", function()
      L.LinearOperatorLowRankUpdate(a, tide.ones({ 3, 1 }, f64))
    end)
    raises("the operator is singular", function()
      L.LinearOperatorInversion(L.LinearOperatorFullMatrix(tide.zeros({ 2, 2 }, f64), { is_non_singular = false }))
    end)
    raises("is_self_adjoint must be a boolean", function()
      L.LinearOperatorFullMatrix(tide.zeros({ 2, 2 }, f64), { is_self_adjoint = 1 })
    end)
    raises("unknown option 'is_sqare'", function() L.LinearOperatorDiag(tide.ones({ 2 }, f64), { is_sqare = true }) end)
    raises("a real diagonal operator is always self-adjoint", function()
      L.LinearOperatorDiag(tide.ones({ 2 }, f64), { is_self_adjoint = false })
    end)
    raises("row 2 of operators must hold 2 operators", function()
      L.LinearOperatorBlockLowerTriangular({ { a }, { a } })
    end)
    raises("dimension mismatch", function()
      L.LinearOperatorBlockLowerTriangular({ { a }, { L.LinearOperatorFullMatrix(tide.zeros({ 2, 3 }, f64)), a } })
    end)
    raises("log_abs_determinant needs a square operator", function()
      L.LinearOperatorFullMatrix(tide.zeros({ 2, 3 }, f64)):log_abs_determinant()
    end)
  end)

  describe("gradients (float64 finite differences)", function()
    local NO_NONE = { none = false } -- the operators read static shapes: no None-dim trace

    it("FullMatrix: matmul, solve, log_abs_determinant", function()
      gc.check(function(m, x)
        local op = L.LinearOperatorFullMatrix(shift(m, 3))
        return op:matmul(x) + op:solve(x) + op:log_abs_determinant()
      end, { R({ 3, 3 }, -1, 1, 10), R({ 3, 2 }, -1, 1, 11) }, NO_NONE)
    end)

    it("Diag and ScaledIdentity: elementwise paths", function()
      gc.check(function(d, s, x)
        local a = L.LinearOperatorDiag(d)
        local b = L.LinearOperatorScaledIdentity(3, s)
        return a:solve(x) + b:matmul(x) + a:log_abs_determinant() + b:log_abs_determinant() + a:trace()
      end, { R({ 3 }, 1, 2, 12), R({}, 1, 2, 13), R({ 3, 2 }, -1, 1, 14) }, NO_NONE)
    end)

    it("Kronecker: products and solves by reshapes, determinant from the factors", function()
      gc.check(function(a, b, x)
        local k = L.LinearOperatorKronecker({ L.LinearOperatorFullMatrix(shift(a, 3)),
          L.LinearOperatorFullMatrix(shift(b, 3)) })
        return k:matmul(x) + k:solve(x, { adjoint = true }) + k:log_abs_determinant()
      end, { R({ 2, 2 }, -1, 1, 15), R({ 3, 3 }, -1, 1, 16), R({ 6, 2 }, -1, 1, 17) }, NO_NONE)
    end)

    it("LowRankUpdate: Woodbury solve and the determinant lemma", function()
      gc.check(function(d, u, x)
        local op = L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag(d), u, { diag_update = tide.tensor({ 1, 0.5 }, f64) })
        return op:solve(x) + op:log_abs_determinant() + op:matmul(x, { adjoint = true })
      end, { R({ 3 }, 2, 3, 18), R({ 3, 2 }, -1, 1, 19), R({ 3, 2 }, -1, 1, 20) }, NO_NONE)
    end)

    it("Circulant and Toeplitz: products by FFT", function()
      gc.check(function(h, x)
        local s = tide.signal.fft(h)
        local c = L.LinearOperatorCirculant(s)
        return c:matmul(x) + c:solve(x) + c:log_abs_determinant()
      end, { tide.tensor({ 4, 1, -0.5, 0.25 }, f64), R({ 4, 2 }, -1, 1, 21) }, NO_NONE)
      gc.check(function(col, row, x)
        return L.LinearOperatorToeplitz(col, row):matmul(x, { adjoint = true })
      end, { R({ 3 }, -1, 1, 22), R({ 3 }, -1, 1, 23), R({ 3, 2 }, -1, 1, 24) }, NO_NONE)
    end)

    it("BlockLowerTriangular and Tridiag: block substitution, tridiagonal solver", function()
      gc.check(function(a, b, c, x)
        local op = L.LinearOperatorBlockLowerTriangular({ { L.LinearOperatorFullMatrix(shift(a, 3)) },
          { L.LinearOperatorFullMatrix(b), L.LinearOperatorLowerTriangular(shift(c, 3)) } })
        return op:solve(x) + op:log_abs_determinant()
      end, { R({ 2, 2 }, -1, 1, 25), R({ 3, 2 }, -1, 1, 26), R({ 3, 3 }, -1, 1, 27), R({ 5, 2 }, -1, 1, 28) }, NO_NONE)
      gc.check(function(d, x)
        return L.LinearOperatorTridiag(d):solve(x, { adjoint = true })
      end, { tide.tensor({ { 1, -0.5, 0 }, { 3, 4, 5 }, { 0, 2, 1 } }, f64), R({ 3, 2 }, -1, 1, 29) }, NO_NONE)
    end)
  end)
end)
