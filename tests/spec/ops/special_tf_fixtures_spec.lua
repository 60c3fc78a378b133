-- tests/spec/ops/special_tf_fixtures_spec.lua — tf.math's trigonometric inverses, hyperbolics,
-- special functions and tf.math.special against TensorFlow's own results
-- (tests/fixtures/math/tf_special.lua, made by gen_special.py there), eagerly and traced.
local tide = require "tide"
local fx = require "tf_fixture"

local F = fx.load("tf_special.lua")

-- The plain elementwise ops (tide.ops.plain) under their registry names; the rest by hand.
local CALLS = {
  igamma_grad_a = function(i) return tide.raw_ops.igamma_grad_a(i[1], i[2]) end,
}
local plain = require "tide.ops.plain"
for _, e in ipairs(plain.list) do
  local f = plain.public(tide, e)
  CALLS[e.name] = CALLS[e.name] or function(i) return f(unpack(i, 1, e.nin)) end
end

-- What tide says where TF refused the call (a dtype without a kernel): the
-- registry's check names the dtypes the op takes and the one it got.
local ERRORS = setmetatable({}, { __index = function() return "float64 tensor, got" end })

-- Cases where tide differs from TF on purpose at a few values (docs/tf_differences.md): at[k] =
-- { tide = what tide gives, tf = what the fixture must still hold }; every other value as TF's.
local function same(a, b) return (a ~= a and b ~= b) or (a == b and (a ~= 0 or 1 / a == 1 / b)) end
local function differs_at(at)
  return {
    check = function(c, got)
      local tf = c.out[1].values
      local want = { dtype = c.out[1].dtype, shape = c.out[1].shape, values = {} }
      for k, v in ipairs(tf) do want.values[k] = v end
      for k, e in pairs(at) do
        assert(same(tf[k], e.tf), string.format("%s: TF's value %d is %.17g, no longer %.17g: update the docs",
          c.name, k, tf[k], e.tf))
        want.values[k] = e.tide
      end
      fx.match(c.name, got[1], want, true, nil, c.ref)
    end,
  }
end
local nan, inf = 0 / 0, math.huge
local DIFFERS = {
  -- erfinv of a tiny x: TF takes ndtri((x + 1) / 2) / sqrt 2, where x + 1 rounds to 1, so 0; tide
  -- gives the value, sqrt(pi)/2 x (x = -1e-20, and 1e-300 in float64).
  ["erfinv float32"] = differs_at { [10] = { tide = -8.8622692956382221e-21, tf = 0 } },
  ["erfinv float64"] = differs_at { [10] = { tide = -8.8622692545275788e-21, tf = 0 },
                                    [11] = { tide = 8.8622692545275801e-301, tf = 0 },
                                    -- and near 1 (x = 1 - 1e-15), TF's is off in the third digit
                                    -- (erfc(5.6759157397447) is 1 - x, to the last bit of both)
                                    [16] = { tide = 5.675915739744712, tf = 5.68612844131039 } },
}
-- bessel_y1(0): TF's float32 and float16 kernels give NaN, its float64 kernel -inf (the limit); tide
-- computes every dtype as float64 (values 4, 5 and 7 are +0, -0 and 1e-300 rounded to 0).
for _, dt in ipairs { "float16", "float32" } do
  local at = {}
  for _, k in ipairs { 4, 5, 7 } do at[k] = { tide = -inf, tf = nan } end
  DIFFERS["bessel_y1 " .. dt] = differs_at(at)
end
-- relu6(-0): TF gives +0 in float32 and float64 but -0 in its half kernels; tide gives +0 in all.
for _, dt in ipairs { "float16", "bfloat16" } do DIFFERS["relu6 " .. dt] = differs_at { [5] = { tide = 0, tf = -0.0 } } end

local SPEC = { calls = CALLS, errors = ERRORS, differs = DIFFERS, use_ref = true }

describe("tf.math's special functions against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_special.lua)",
  function()
    setup(function() tide.config.set_retracing_warning { enabled = false } end)
    teardown(function() tide.config.set_retracing_warning { enabled = true } end)

    it("has the fixture's cases, each known to the spec", function()
      assert.is_true(#F.cases > 200)
      fx.check_known(F, SPEC)
    end)

    for _, g in ipairs(fx.by_op(F)) do
      it(g.op .. " (" .. #g.cases .. " cases)", function()
        for _, c in ipairs(g.cases) do
          fx.check_case(c, false, SPEC)
          fx.check_case(c, true, SPEC)
        end
      end)
    end
  end)
