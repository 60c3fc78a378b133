-- tests/spec/ops/linop_fixtures_spec.lua — tide.linalg's LinearOperator classes against TF 2.21's values
-- (tests/fixtures/linalg/linop_cases.lua, written by linop_gen.py beside it): every method of every case.
local tide = require "tide"

local CASES = dofile("tests/fixtures/linalg/linop_cases.lua")
local L = tide.linalg
local TOL = 1e-9

-- A fixture value as tide's: tensors, {real, imag} pairs, operator descriptions, lists.
local function build(v)
  if type(v) ~= "table" then return v end
  if v.op then
    local cls = assert(L["LinearOperator" .. v.op], "no tide.linalg.LinearOperator" .. v.op)
    local a, o = {}, {}
    for i, x in ipairs(v.args) do a[i] = build(x) end
    for k, x in pairs(v) do
      if k ~= "op" and k ~= "args" then o[k] = build(x) end
    end
    a[#v.args + 1] = o
    return cls(unpack(a, 1, #v.args + 1))
  end
  if v.values then
    if #v.values == 0 then return tide.zeros(v.shape, v.dtype) end
    return tide.tensor(v.values, v.dtype):reshape(v.shape)
  end
  if v.real then return { real = build(v.real), imag = build(v.imag) } end
  local out = {}
  for i, x in ipairs(v) do out[i] = build(x) end
  return out
end

local function flat(t)
  if t.ndim == 0 then return { t:item() } end
  local vals = {}
  local function walk(x)
    if type(x) == "table" then for _, y in ipairs(x) do walk(y) end else vals[#vals + 1] = x end
  end
  walk(t:totable())
  return vals
end

local function matches(what, t, e)
  assert(tide.is_tensor(t), what .. ": not a tensor")
  local got = t.shape:as_list()
  assert(table.concat(got, ",") == table.concat(e.shape, ","), string.format("%s: shape (%s), TF gives (%s)", what,
    table.concat(got, ","), table.concat(e.shape, ",")))
  assert(t.dtype == "float64", what .. ": dtype " .. t.dtype)
  local vals = flat(t)
  for i, want in ipairs(e.values) do
    local v = vals[i]
    local ok = (want == v) or math.abs(v - want) <= TOL * math.max(1, math.abs(want))
    assert(ok, string.format("%s: value %d is %.17g, TF gives %.17g", what, i, v, want))
  end
end

-- What each recorded result is, computed by tide.
local METHODS = {
  to_dense = function(op) return op:to_dense() end,
  matmul = function(op, i) return op:matmul(i.x) end,
  matmul_adjoint = function(op, i) return op:matmul(i.y, { adjoint = true }) end,
  matmul_adjoint_arg = function(op, i) return op:matmul(i.xt, { adjoint_arg = true }) end,
  matvec = function(op, i) return op:matvec(i.v) end,
  matvec_adjoint = function(op, i) return op:matvec(i.w, { adjoint = true }) end,
  add_to_tensor = function(op, i) return op:add_to_tensor(i.mat) end,
  diag_part = function(op) return op:diag_part() end,
  trace = function(op) return op:trace() end,
  determinant = function(op) return op:determinant() end,
  log_abs_determinant = function(op) return op:log_abs_determinant() end,
  solve = function(op, i) return op:solve(i.y) end,
  solve_adjoint = function(op, i) return op:solve(i.x, { adjoint = true }) end,
  solve_adjoint_arg = function(op, i) return op:solve(i.yt, { adjoint_arg = true }) end,
  solvevec = function(op, i) return op:solvevec(i.w) end,
  inverse = function(op) return op:inverse():to_dense() end,
  adjoint = function(op) return op:adjoint():to_dense() end,
  cholesky = function(op) return op:cholesky():to_dense() end,
  eigvals = function(op) return tide.sort(op:eigvals(), -1) end,
}

-- The tide call behind each error case (linop_gen.py's lambdas).
local f64 = "float64"
local ERRORS = {
  ["solve non-square"] = function() L.LinearOperatorFullMatrix(tide.zeros({ 2, 3 }, f64)):solve(tide.ones({ 2, 1 }, f64)) end,
  ["matmul mismatched"] = function() L.LinearOperatorFullMatrix(tide.zeros({ 2, 3 }, f64)):matmul(tide.ones({ 2, 1 }, f64)) end,
  ["positive definite but singular hint"] = function()
    L.LinearOperatorFullMatrix(tide.linalg.eye(2, { dtype = f64 }), { is_positive_definite = true, is_non_singular = false })
  end,
  ["non-singular but not square"] = function()
    L.LinearOperatorFullMatrix(tide.linalg.eye(2, { dtype = f64 }), { is_non_singular = true, is_square = false })
  end,
  ["self-adjoint but not square"] = function()
    L.LinearOperatorFullMatrix(tide.linalg.eye(2, { dtype = f64 }), { is_self_adjoint = true, is_square = false })
  end,
  ["identity singular hint"] = function() L.LinearOperatorIdentity(2, { is_non_singular = false }) end,
  ["diag not square"] = function() L.LinearOperatorDiag(tide.ones({ 2 }, f64), { is_square = false }) end,
  ["cholesky not positive definite"] = function() L.LinearOperatorFullMatrix(tide.linalg.eye(2, { dtype = f64 })):cholesky() end,
  ["eigvals not self-adjoint"] = function() L.LinearOperatorFullMatrix(tide.linalg.eye(2, { dtype = f64 })):eigvals() end,
  ["composition mismatched"] = function()
    L.LinearOperatorComposition({ L.LinearOperatorFullMatrix(tide.zeros({ 2, 3 }, f64)),
      L.LinearOperatorFullMatrix(tide.zeros({ 2, 2 }, f64)) }):to_dense()
  end,
  ["kronecker not square solve"] = function()
    L.LinearOperatorKronecker({ L.LinearOperatorFullMatrix(tide.zeros({ 2, 3 }, f64)),
      L.LinearOperatorDiag(tide.ones({ 2 }, f64)) }):solve(tide.ones({ 4, 1 }, f64))
  end,
  ["zeros solve"] = function() L.LinearOperatorZeros(2, { dtype = f64 }):solve(tide.ones({ 2, 1 }, f64)) end,
}

local HINTS = { "is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square" }

describe("tide.linalg.LinearOperator* against TF 2.21", function()
  it("has a spec closure for every error case and a method for every result", function()
    for _, c in ipairs(CASES) do
      if c.error then assert(ERRORS[c.name], "no tide call for error case " .. c.name) end
      for k in pairs(c.results or {}) do assert(METHODS[k], "no method for result " .. k) end
    end
  end)

  for _, c in ipairs(CASES) do
    if c.error then
      it("raises: " .. c.name, function()
        local ok, err = pcall(ERRORS[c.name])
        assert(not ok, c.name .. ": tide did not raise (TF raised " .. c.tf_error .. ")")
        assert(tostring(err):find(c.error, 1, true), c.name .. ": message lacks '" .. c.error .. "': " .. tostring(err))
      end)
    else
      it(c.name, function()
        local op = build(c.op)
        local shape = op.shape:as_list()
        assert(table.concat(shape, ",") == table.concat(c.shape, ","), c.name .. ": shape " .. table.concat(shape, ","))
        assert(table.concat(op.batch_shape:as_list(), ",") == table.concat(c.batch_shape, ","), c.name .. ": batch_shape")
        assert(op.domain_dimension == c.domain_dimension and op.range_dimension == c.range_dimension, c.name .. ": dims")
        for _, h in ipairs(HINTS) do
          assert(op[h] == c[h], string.format("%s: %s is %s, TF's %s", c.name, h, tostring(op[h]), tostring(c[h])))
        end
        local inputs = {}
        for k, v in pairs(c["in"]) do inputs[k] = build(v) end
        local names = {}
        for k in pairs(c.results) do names[#names + 1] = k end
        table.sort(names)
        for _, k in ipairs(names) do
          local ok, got = pcall(METHODS[k], op, inputs)
          assert(ok, string.format("%s: %s raised: %s", c.name, k, tostring(got)))
          matches(c.name .. ": " .. k, got, c.results[k])
        end
        for _, k in ipairs { "inverse", "adjoint", "cholesky" } do
          if c[k .. "_class"] then
            local got = op[k](op)
            assert(getmetatable(got).__name == c[k .. "_class"], string.format("%s: %s() is a %s, TF's a %s", c.name, k,
              getmetatable(got).__name, c[k .. "_class"]))
          end
        end
      end)
    end
  end
end)
