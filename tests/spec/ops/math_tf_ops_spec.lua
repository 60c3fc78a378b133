-- tests/spec/ops/math_tf_ops_spec.lua — the math ops added after TF's tf.math and
-- tf.bitwise (truncatediv ... cumulative_logsumexp, tide.bitwise.*): their
-- names and method forms, dtype rules, errors, and fused traced chains. Their
-- values against TF are tests/spec/ops/math_tf_fixtures_spec.lua's concern.
local tide = require "tide"
local h = require "helpers"

local f32 = function(v) return tide.tensor(v, "float32") end

describe("the TF math ops", function()
  it("are tide.<name>, tide.math.<name> and methods, with TF's other spellings", function()
    for _, name in ipairs { "truncatediv", "truncatemod", "divide_no_nan", "is_inf", "rint", "log_sigmoid", "atan2",
                            "squared_difference", "xlogy", "xlog1py", "xdivy", "tan", "erfc",
                            "reduce_euclidean_norm", "count_nonzero", "cumulative_logsumexp" } do
      assert.is_function(tide[name], name)
      assert.are.equal(tide[name], tide.math[name], name)
    end
    assert.are.equal(tide.is_nan, tide.isnan)
    assert.are.equal(tide.is_finite, tide.isfinite)
    assert.are.equal(tide.isinf, tide.is_inf)
    assert.are.equal(tide.div_no_nan, tide.divide_no_nan)
    local x = f32 { { 3, 4 }, { 0, 0 } }
    h.close(x:reduce_euclidean_norm(1), { 5, 0 })
    h.close(x:count_nonzero(), { 2 })
    h.close(x:tan(), { math.tan(3), math.tan(4), 0, 0 }, 1e-6)
    assert.are.same({ true, false }, f32({ 1 / 0, 1 }):is_inf():totable())
  end)

  it("writes bool bytes of 0 and 1 only for the predicates, -inf included (glibc's isinf gives -1 there)", function()
    local ffi = require "ffi"
    for _, dt in ipairs { "float32", "float64" } do
      local x = tide.tensor({ -1 / 0, 1 / 0, 0 / 0, 0, -2.5 }, dt)
      for _, name in ipairs { "is_inf", "isnan", "isfinite" } do
        local b = tide.contiguous(tide[name](x))
        local bytes = ffi.cast("const uint8_t *", b.data)
        for i = 0, 4 do
          assert.is_true(bytes[i] == 0 or bytes[i] == 1, name .. " " .. dt .. " element " .. i .. ": byte " .. bytes[i])
        end
      end
    end
  end)

  it("tide.bitwise holds and, or, xor, invert and the shifts (not methods, as in TF)", function()
    for _, name in ipairs { "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift" } do
      assert.is_function(tide.bitwise[name], name)
      assert.is_nil(tide[name], name)
    end
    local a, b = tide.tensor { 12, -6 }, tide.tensor { 10, 3 }
    assert.are.same({ 8, 2 }, tide.bitwise.bitwise_and(a, b):totable())
    assert.are.same({ 14, -5 }, tide.bitwise.bitwise_or(a, b):totable())
    assert.are.same({ 6, -7 }, tide.bitwise.bitwise_xor(a, b):totable())
    assert.are.same({ -13, 5 }, tide.bitwise.invert(a):totable())
    assert.are.same({ 48, -24 }, tide.bitwise.left_shift(a, 2):totable())
    assert.are.same({ 3, -2 }, tide.bitwise.right_shift(a, 2):totable())
  end)

  it("clamp shift counts into [0, bits - 1] as TF's CPU kernels do", function()
    local one = tide.tensor({ 1, 1, 1, -8, -8 }, "int32")
    local n = tide.tensor({ 31, 32, 1000, -5, 40 }, "int32")
    assert.are.same({ -2 ^ 31, -2 ^ 31, -2 ^ 31, -8, 0 }, tide.bitwise.left_shift(one, n):totable())
    assert.are.same({ 0, 0, 0, -8, -1 }, tide.bitwise.right_shift(one, n):totable())
    local u = tide.tensor({ 255, 1 }, "uint8")
    assert.are.same({ 1, 1 }, tide.bitwise.right_shift(u, tide.tensor({ 200, 0 }, "uint8")):totable())
    assert.are.same({ 128, 128 }, tide.bitwise.left_shift(tide.tensor({ 1, 1 }, "uint8"),
      tide.tensor({ 7, 255 }, "uint8")):totable())
  end)

  it("give integer division by zero a clear error, eagerly, traced and fused", function()
    local x, zero = tide.tensor { 7, -7 }, tide.tensor { 2, 0 }
    h.errors("truncatediv: integer division by zero", tide.truncatediv, x, zero)
    h.errors("truncatemod: integer division by zero", tide.truncatemod, x, 0)
    local chain = tide.trace(function(a, b) return tide.truncatediv(a * 3, b) + tide.truncatemod(a, b) end)
    assert.are.same({ 10 + 1, -10 - 1 }, chain(x, tide.tensor { 2, 2 }):totable())
    assert.truthy(chain:get_concrete_function(x, zero):graph_text():find("fused", 1, true))
    h.errors("integer division by zero", chain, x, zero)
    -- MIN / -1 wraps, as in TF (no trap, no undefined behaviour)
    assert.are.same({ -2 ^ 31 }, tide.truncatediv(tide.tensor({ -2 ^ 31 }, "int32"), -1):totable())
    assert.are.same({ 0 }, tide.truncatemod(tide.tensor({ -2 ^ 31 }, "int32"), -1):totable())
  end)

  it("round towards zero (truncatediv) and keep x's sign (truncatemod), unlike floordiv and mod", function()
    local x, y = tide.tensor { 7, -7, 7, -7 }, tide.tensor { 2, 2, -2, -2 }
    assert.are.same({ 3, -3, -3, 3 }, tide.truncatediv(x, y):totable())
    assert.are.same({ 1, -1, 1, -1 }, tide.truncatemod(x, y):totable())
    assert.are.same({ 3, -4, -4, 3 }, tide.floordiv(x, y):totable())
    h.close(tide.truncatediv(f32 { 7.5, -7.5 }, 2), { 3, -3 })
    h.close(tide.truncatemod(f32 { 7.5, -7.5 }, 2), { 1.5, -1.5 })
  end)

  it("follow TF's dtype rules", function()
    local ints, floats = tide.tensor { 1, 2 }, f32 { 1, 2 }
    assert.are.equal("float64", tide.divide_no_nan(ints, ints).dtype) -- truediv's rule
    assert.are.equal("float32", tide.divide_no_nan(ints:cast("int8"), ints:cast("int8")).dtype)
    assert.are.equal("float32", tide.nn.leaky_relu(ints).dtype) -- TF casts integers to float32
    assert.are.equal("float32", tide.nn.leaky_relu(ints:cast("int64")).dtype)
    assert.are.equal("int32", tide.squared_difference(ints, 5).dtype)
    assert.are.equal("int64", tide.count_nonzero(floats).dtype)
    assert.are.equal("int32", tide.reduce_euclidean_norm(ints).dtype)
    h.errors("leaky_relu: input must be a float tensor", tide.nn.leaky_relu, tide.tensor { true })
    h.errors("truncatediv: x must be a numeric tensor (not bool), got bool", tide.truncatediv, tide.tensor { true },
      tide.tensor { true })
    h.errors("truncatediv: dtype mismatch: x is int32 but y is int64", tide.truncatediv, ints, ints:cast("int64"))
    for _, name in ipairs { "atan2", "xlogy", "xlog1py", "xdivy" } do
      h.errors(name .. ": x must be a float tensor", tide[name], ints, ints)
    end
    h.errors("tan: input must be a float tensor", tide.tan, ints)
    h.errors("erfc: input must be a float tensor", tide.erfc, ints)
    h.errors("isinf: input must be a float tensor", tide.is_inf, ints)
    h.errors("rint: x must be a float tensor", tide.rint, ints)
    h.errors("log_sigmoid: x must be a float tensor", tide.log_sigmoid, ints)
    h.errors("cumulative_logsumexp: input must be a float tensor", tide.cumulative_logsumexp, ints)
    h.errors("reduce_euclidean_norm: input must be a numeric tensor (not bool)", tide.reduce_euclidean_norm,
      tide.tensor { true })
    for _, name in ipairs { "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift" } do
      h.errors(name .. ": x must be an integer tensor, got float32", tide.bitwise[name], floats, floats)
    end
    h.errors("invert: input must be an integer tensor, got bool", tide.bitwise.invert, tide.tensor { true })
    h.errors("left_shift: 300 is out of range for int8", tide.bitwise.left_shift, ints:cast("int8"), 300)
  end)

  it("give divide_no_nan 0 wherever y is 0, whatever x is", function()
    h.close(tide.divide_no_nan(f32 { 1, 0 / 0, 1 / 0, 6 }, f32 { 0, 0, 0, 3 }), { 0, 0, 0, 2 })
    h.close(tide.divide_no_nan(f32 { 1 }, f32 { 0 / 0 }), { 0 / 0 })
  end)

  it("reduce_euclidean_norm and count_nonzero take axis, keepdims and (count_nonzero) dtype", function()
    local x = f32 { { { 3, 0 }, { 4, 0 } }, { { 0, 1 }, { 0, 0 / 0 } } }
    h.close(tide.reduce_euclidean_norm(x, { 0, 1 }), { 5, 0 / 0 })
    assert.are.same({ 2, 1, 2 }, tide.reduce_euclidean_norm(x, 1, true).shape:as_list())
    local c = tide.count_nonzero(f32 { { 0, 1, -0.0 }, { 0 / 0, 2, 3 } }, -1, { dtype = "int32" })
    assert.are.equal("int32", c.dtype)
    assert.are.same({ 1, 3 }, c:totable()) -- -0.0 is zero, NaN is not
    assert.are.same({ 1, 2, 1 }, tide.count_nonzero(x, { axis = { 0, 2 }, keepdims = true }).shape:as_list())
    -- an empty axis list reduces nothing, as TF's axis=[]
    assert.are.same({ 2, 2, 2 }, tide.count_nonzero(x, {}).shape:as_list())
    h.errors("count_nonzero: unknown dtype 'int3'", tide.count_nonzero, x, { dtype = "int3" })
    h.errors("reduce_euclidean_norm: axis 3 is out of range", tide.reduce_euclidean_norm, x, 3)
    h.errors("count_nonzero: axis -1 is repeated", tide.count_nonzero, x, { 2, -1 })
    h.errors("count_nonzero: axis must be an integer", tide.count_nonzero, x, 0.5)
  end)

  it("cumulative_logsumexp keeps small terms a large one would swamp, and checks its axis", function()
    local x = tide.tensor({ -1000, 0, 1000 }, "float64")
    h.close(tide.cumulative_logsumexp(x), { -1000, 0, 1000 }, 1e-12)
    h.close(tide.cumulative_logsumexp(x, 0, true), { -1 / 0, -1000, math.log(1 + math.exp(-1000)) }, 1e-12)
    h.close(tide.cumulative_logsumexp(x, { reverse = true }), { 1000, 1000, 1000 }, 1e-12)
    h.errors("cumulative_logsumexp: axis 1 is out of range", tide.cumulative_logsumexp, x, 1)
    h.errors("cumulative_logsumexp: axis 0 is out of range", tide.cumulative_logsumexp, tide.tensor(1.5))
    h.errors("cumulative_logsumexp: exclusive must be", tide.cumulative_logsumexp, x, 0, 1)
  end)

  it("traced with None dims and fused, give what they give eagerly", function()
    local a = f32 { { 0.5, -2, 3 }, { 0, 1.5, -0.25 } }
    local b = f32 { 2, 0.75, -1.5 }
    local function f(x, y)
      local t = tide.atan2(x, y) + tide.squared_difference(x, y) * tide.tan(x * 0.1)
      t = t + tide.xlogy(tide.abs(x), tide.abs(y)) + tide.xdivy(x, y) + tide.xlog1py(x, tide.abs(y))
      return t + tide.divide_no_nan(x, y) + tide.erfc(x) + tide.log_sigmoid(x) + tide.truncatemod(x, y)
    end
    local want = f(a, b)
    local tf = tide.trace(f, { input_signature = { tide.TensorSpec({ tide.None, tide.None }, "float32"),
                                                   tide.TensorSpec({ tide.None }, "float32") } })
    h.close(tf(a, b), h.values(want), 1e-6)
    assert.truthy(tf:get_concrete_function(a, b):graph_text():find("fused", 1, true))
    local reduce = tide.trace(function(x)
      return tide.reduce_euclidean_norm(x, 1), tide.count_nonzero(x, 0, { keepdims = true }), tide.rint(x)
    end, { input_signature = { tide.TensorSpec({ tide.None, tide.None }, "float32") } })
    local n1, c0, r = reduce(a)
    h.close(n1, h.values(tide.reduce_euclidean_norm(a, 1)), 1e-6)
    assert.are.same(tide.count_nonzero(a, 0, { keepdims = true }):totable(), c0:totable())
    h.close(r, h.values(tide.rint(a)))
    local bits = tide.trace(function(x, n)
      return tide.bitwise.bitwise_xor(tide.bitwise.left_shift(x, n), tide.bitwise.invert(x)) + 1
    end)
    local x, n = tide.tensor({ 1, -7, 100 }, "int8"), tide.tensor({ 1, 3, 9 }, "int8")
    assert.are.same(tide.bitwise.bitwise_xor(tide.bitwise.left_shift(x, n), tide.bitwise.invert(x)):totable(),
      (bits(x, n) - 1):totable())
  end)
end)
