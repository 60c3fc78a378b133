-- tests/spec/ops/math_more_tf_fixtures_spec.lua — the rest of tf.math (stdlib/tide/ops/math_more.lua:
-- compositions) against TensorFlow's own results (tests/fixtures/math/tf_math_more.lua, made by
-- gen_math_more.py there), eagerly and traced, float64 gradients by TF's and by finite differences.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_math_more.lua")
local M = tide.math

local CALLS = {
  add_n = function(i) return M.add_n(i) end,
  accumulate_n = function(i) return M.accumulate_n(i) end,
  scalar_mul = function(i, a) return M.scalar_mul(a.scalar, i[1]) end,
  reciprocal_no_nan = function(i) return M.reciprocal_no_nan(i[1]) end,
  lbeta = function(i) return M.lbeta(i[1]) end,
  erfcinv = function(i) return M.erfcinv(i[1]) end,
  polyval = function(i)
    local coeffs = {}
    for k = 1, #i - 1 do coeffs[k] = i[k] end
    return M.polyval(coeffs, i[#i])
  end,
  is_non_decreasing = function(i) return M.is_non_decreasing(i[1]) end,
  is_strictly_increasing = function(i) return M.is_strictly_increasing(i[1]) end,
  zero_fraction = function(i) return M.zero_fraction(i[1]) end,
  invert_permutation = function(i) return M.invert_permutation(i[1]) end,
  in_top_k = function(i, a) return M.in_top_k(i[1], i[2], a.k) end,
  bincount = function(i, a)
    return M.bincount(i[1], { weights = i[2], minlength = a.minlength, maxlength = a.maxlength,
      binary_output = a.binary_output })
  end,
  confusion_matrix = function(i, a)
    return M.confusion_matrix(i[1], i[2], { num_classes = a.num_classes, weights = i[3], dtype = a.dtype })
  end,
  real = function(i) return M.real(i[1]) end,
  imag = function(i) return M.imag(i[1]) end,
  conj = function(i) return M.conj(i[1]) end,
  l2_normalize = function(i, a) -- no attrs: no options table (an empty {} would be the empty axis list, TF's [])
    if a.axis == nil and a.epsilon == nil then return M.l2_normalize(i[1]) end
    return M.l2_normalize(i[1], { axis = a.axis, epsilon = a.epsilon })
  end,
  angle = function(i) return M.angle(i[1]) end,
  approx_max_k = function(i, a) return M.approx_max_k(i[1], a.k, { reduction_dimension = a.reduction_dimension }) end,
  approx_min_k = function(i, a) return M.approx_min_k(i[1], a.k, { reduction_dimension = a.reduction_dimension }) end,
}

-- What tide's error says where TF refused the call.
local ERRORS = {
  invert_permutation = "invert_permutation: ",
  bincount = "bincount: arr must be non-negative",
  confusion_matrix = "must be below num_classes",
}

-- Ops that need values to size their result (bincount, confusion_matrix, invert_permutation): eager only.
local EAGER_ONLY = { bincount = true, confusion_matrix = true, invert_permutation = true }

local SPEC = { calls = CALLS, errors = ERRORS, differs = {} }

describe("the rest of tf.math against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_math_more.lua)",
  function()
    setup(function() tide.config.set_retracing_warning { enabled = false } end)
    teardown(function() tide.config.set_retracing_warning { enabled = true } end)

    it("has the fixture's cases, each known to the spec", function()
      assert.is_true(#F.cases > 40)
      fx.check_known(F, SPEC)
    end)

    for _, g in ipairs(fx.by_op(F)) do
      it(g.op .. " (" .. #g.cases .. " cases)", function()
        for _, c in ipairs(g.cases) do
          fx.check_case(c, false, SPEC)
          if not EAGER_ONLY[c.op] then fx.check_case(c, true, SPEC) end
        end
      end)
    end

    it("differentiates in float64 by finite differences (and traced with None dims)", function()
      local R = gc.random
      gc.check(function(a, b) return M.add_n { a, b, a } end, { R({ 2, 3 }, -1, 1, 1), R({ 2, 3 }, -1, 1, 2) })
      gc.check(M.reciprocal_no_nan, { R({ 2, 3 }, 0.5, 2, 3) })
      gc.check(M.lbeta, { R({ 2, 3 }, 0.5, 3, 4) })
      gc.check(M.erfcinv, { R({ 2, 3 }, 0.2, 1.8, 5) })
      gc.check(function(a, x) return M.polyval({ a, 2, a }, x) end, { R({ 3 }, -1, 1, 6), R({ 2, 3 }, -1, 1, 7) })
      gc.check(function(x) return M.l2_normalize(x, 1) end, { R({ 2, 3 }, 0.5, 2, 8) })
      gc.check(function(x) return M.scalar_mul(1.5, x) end, { R({ 2, 3 }, -1, 1, 9) })
      gc.check(function(w) return M.bincount(tide.tensor { 0, 2, 2, 1 }, { weights = w }) end, { R({ 4 }, -1, 1, 10) })
    end)

    it("refuses bad arguments with errors naming the op and argument", function()
      local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
      assert.matches("add_n: inputs must be a non%-empty list", err(M.add_n, {}))
      assert.matches("add_n: inputs%[2%] has shape", err(M.add_n, { tide.zeros { 2 }, tide.zeros { 3 } }))
      assert.matches("add_n: inputs%[2%] is int32 but inputs%[1%] is float32",
        err(M.add_n, { tide.zeros { 2 }, tide.tensor { 1, 2 } }))
      assert.matches("lbeta: x must be a float tensor", err(M.lbeta, tide.tensor { 1, 2 }))
      assert.matches("lbeta: x must have at least one dim", err(M.lbeta, tide.tensor(1.5)))
      assert.matches("polyval: coeffs must be a list", err(M.polyval, tide.zeros { 2 }, tide.zeros { 2 }))
      assert.matches("in_top_k: predictions must be 2%-D", err(M.in_top_k, tide.tensor { 0 }, tide.zeros { 3 }, 1))
      assert.matches("in_top_k: targets must be an integer tensor", err(M.in_top_k, tide.zeros { 1 }, tide.zeros { 1, 3 }, 1))
      assert.matches("invert_permutation: x must be int32 or int64", err(M.invert_permutation, tide.zeros { 2 }))
      assert.matches("confusion_matrix: labels has 2 values but predictions 1",
        err(M.confusion_matrix, tide.tensor { 0, 1 }, tide.tensor { 0 }))
      assert.matches("bincount: arr must be an integer tensor", err(M.bincount, tide.zeros { 2 }))
      assert.matches("bincount: weights must have arr's shape %(2,%), got %(3,%)",
        err(M.bincount, tide.tensor { 0, 1 }, { weights = tide.zeros { 3 } }))
      assert.matches("scalar_mul: scalar must be a 0%-d tensor", err(M.scalar_mul, tide.zeros { 2 }, tide.zeros { 2 }))
      assert.matches("approx_max_k: reduction_dimension 2 is out of range for rank 2",
        err(M.approx_max_k, tide.zeros { 2, 3 }, 1, { reduction_dimension = 2 }))
      assert.matches("angle: x must be a float tensor", err(M.angle, tide.tensor { 1 }))
      -- the shared names
      assert.are.equal(tide.math.l2_normalize, tide.nn.l2_normalize)
      assert.are.equal(tide.math.softmax, tide.nn.softmax)
      assert.are.equal(tide.add_n, tide.math.add_n)
    end)
  end)
