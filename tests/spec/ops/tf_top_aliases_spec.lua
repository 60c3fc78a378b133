-- tests/spec/ops/tf_top_aliases_spec.lua — TF's top-level names of functions from tide's namespaces (the alias
-- block of stdlib/tide/init.lua) and tide.tracing.tf_misc's helpers: same functions, loaded on first read.
local tide = require "tide"

describe("TF's top-level aliases", function()
  it("are the namespaces' own functions", function()
    local same = {
      eig = tide.linalg.eig, eigvals = tide.linalg.eigvals, matrix_square_root = tide.linalg.sqrtm,
      fftnd = tide.signal.fftnd, ifftnd = tide.signal.ifftnd, rfftnd = tide.signal.rfftnd,
      irfftnd = tide.signal.irfftnd, as_string = tide.strings.as_string,
      assert_equal = tide.debugging.assert_equal, assert_rank = tide.debugging.assert_rank,
      space_to_batch = tide.nn.space_to_batch, space_to_batch_nd = tide.nn.space_to_batch,
      scalar_mul = tide.math.scalar_mul,
      constant_initializer = tide.initializers.Constant, zeros_initializer = tide.initializers.Zeros,
      ones_initializer = tide.initializers.Ones, random_normal_initializer = tide.initializers.RandomNormal,
      random_uniform_initializer = tide.initializers.RandomUniform,
      meshgrid = tide.ops.meshgrid, ["repeat"] = tide.ops["repeat"], saturate_cast = tide.ops.saturate_cast,
      vectorized_map = tide.ops.vectorized_map,
    }
    for name, fn in pairs(same) do
      assert.is_not_nil(fn, name)
      assert.are.equal(fn, tide[name], name)
    end
    assert.are.equal(tide.float64, tide.double)
    assert.are.equal(tide.float16, tide.half)
  end)

  it("load nothing at require: a fresh state's require 'tide' keeps the namespaces unloaded", function()
    local code = [[local t = require "tide"
      for _, m in ipairs { "tide.tracing.tf_misc", "tide.ops.keras", "tide.initializers", "tide.debugging",
                           "tide.ops.strings", "tide.ops.signal" } do
        if package.loaded[m] then print("loaded " .. m) end
      end
      assert(t.matrix_square_root ~= nil and package.loaded["tide.ops.linalg_decomp"])
      print("ok")]]
    local f = assert(io.popen("build/tide -e '" .. code:gsub("'", "'\\''") .. "' 2>&1"))
    local out = f:read("*a")
    f:close()
    assert.are.equal("ok\n", out)
  end)

  it("work as TF's: repeat, meshgrid, initializers", function()
    assert.are.same({ 1, 1, 2, 2 }, tide["repeat"](tide.tensor { 1, 2 }, 2):totable())
    local gx, gy = table.unpack(tide.meshgrid(tide.tensor { 1, 2, 3 }, tide.tensor { 4, 5 }))
    assert.are.same({ 2, 3 }, gx.shape:as_list()) -- TF's default indexing "xy"
    assert.are.same({ { 4, 4, 4 }, { 5, 5, 5 } }, gy:totable())
    assert.are.same({ 2, 2 }, tide.constant_initializer(2)({ 2 }):totable())
  end)
end)

describe("tide.executing_eagerly and tide.inside_function", function()
  it("say whether tide.trace is building a graph", function()
    assert.is_true(tide.executing_eagerly())
    assert.is_false(tide.inside_function())
    local seen = {}
    local f = tide.trace(function(x)
      seen.eager, seen.inside = tide.executing_eagerly(), tide.inside_function()
      return x
    end)
    f(tide.tensor { 1.0 })
    assert.is_false(seen.eager)
    assert.is_true(seen.inside)
    assert.is_nil(tide.no_op())
  end)
end)

describe("tide.identity_n and tide.shape_n", function()
  it("map identity and shape over a list", function()
    local a, b = tide.tensor { 1.5, 2 }, tide.tensor(3)
    local r = tide.identity_n { a, b }
    assert.are.equal(2, #r)
    assert.are.same({ 1.5, 2 }, r[1]:totable())
    assert.are.equal(3, r[2]:item())
    local s = tide.shape_n({ tide.zeros { 2, 3 }, tide.zeros {} }, { out_type = "int64" })
    assert.are.same({ 2, 3 }, s[1]:totable())
    assert.are.equal("int64", s[1].dtype)
    assert.are.same({ 0 }, s[2].shape:as_list())
    assert.are.equal("int32", tide.shape_n({ a })[1].dtype)
  end)

  it("let gradients through identity_n", function()
    local x = tide.Variable(tide.tensor({ 1, 2 }, "float32"))
    local tape = tide.GradientTape()
    local y = tape:run(function() local z = tide.identity_n({ x })[1]; return tide.reduce_sum(z * z) end)
    assert.are.same({ 2, 4 }, tape:gradient(y, { x })[1]:totable())
  end)

  it("reject what is not a list of tensors", function()
    assert.has_error(function() tide.identity_n(tide.tensor { 1 }) end,
      "identity_n: input must be a list of tensors, got a tensor")
    assert.has_error(function() tide.shape_n({ tide.tensor { 1 }, "x" }) end,
      "shape_n: element 2 of input is a string, not a tensor")
    assert.has_error(function() tide.shape_n({ tide.tensor { 1 } }, { out_type = "float32" }) end)
  end)
end)

describe("tide.as_dtype and tide.get_static_value", function()
  it("give the DType constant for a name, an alias or a DType", function()
    assert.are.equal(tide.float32, tide.as_dtype("float32"))
    assert.is_true(rawequal(tide.float32, tide.as_dtype("float32")))
    assert.is_true(rawequal(tide.int64, tide.as_dtype(tide.int64)))
    assert.has_error(function() tide.as_dtype("complex64") end)
    assert.has_error(function() tide.as_dtype(3) end, "as_dtype: expected a dtype or its name, got number")
  end)

  it("give eager values and nil for traced tensors", function()
    local x = tide.tensor { 1, 2 }
    assert.is_true(rawequal(x, tide.get_static_value(x)))
    assert.are.same({ 3 }, tide.get_static_value({ 3 }):totable())
    local seen = "unset"
    tide.trace(function(t) seen = tide.get_static_value(t); return t end)(x)
    assert.is_nil(seen)
  end)
end)

describe("tide.broadcast_static_shape", function()
  it("broadcasts as TF does, with -1 or tide.None unknown", function()
    assert.are.same({ 2, 4, 3 }, tide.broadcast_static_shape({ 2, 1, 3 }, { 4, 1 }))
    assert.are.same({ -1, 3 }, tide.broadcast_static_shape({ -1, 3 }, { 1 }))
    assert.are.same({ 5, 3 }, tide.broadcast_static_shape({ tide.None, 3 }, { 5, 1 }))
    assert.are.same({}, tide.broadcast_static_shape({}, {}))
    assert.are.same({ 2, 3 }, tide.broadcast_static_shape(tide.zeros { 2, 3 }.shape, { 3 }))
  end)

  it("names incompatible shapes and bad sizes", function()
    assert.has_error(function() tide.broadcast_static_shape({ 2 }, { 3 }) end,
      "broadcast_static_shape: incompatible shapes [2] and [3] (dim 0: 2 vs 3)")
    assert.has_error(function() tide.broadcast_static_shape({ 1.5 }, { 3 }) end,
      "broadcast_static_shape: shape_x[1] must be a size >= 0 or -1 (unknown), got 1.5")
    assert.has_error(function() tide.broadcast_static_shape(3, { 3 }) end,
      "broadcast_static_shape: shape_x must be a list of sizes, got number")
  end)
end)
