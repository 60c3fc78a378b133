-- tests/spec/ops/tf_top_ops_spec.lua — TF's top-level ops of stdlib/tide/ops/tf_top_ops.lua and tf_top_misc.lua
-- (slice, strided_slice, realdiv, batch_to_space, conv, edit_distance, ragged_fill_empty_rows ...) against
-- TensorFlow's own results (tests/fixtures/math/tf_top_ops.lua, made by gen_tf_top_ops.py there), eagerly and
-- traced, gradients by TF's and by finite differences; and their errors.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"
local h = require "helpers"

local F = fx.load("tf_top_ops.lua")

local function opts(a, keys)
  local o
  for _, k in ipairs(keys) do
    if a[k] ~= nil then o = o or {}; o[k] = a[k] end
  end
  return o or {}
end

local MASKS = { "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask" }

local CALLS = {
  slice = function(i, a) return tide.slice(i[1], a.begin, a.size) end,
  strided_slice = function(i, a) return tide.strided_slice(i[1], a.begin, a.end_, a.strides, opts(a, MASKS)) end,
  realdiv = function(i) return tide.realdiv(i[1], i[2]) end,
  batch_to_space = function(i, a) return tide.batch_to_space(i[1], a.block_shape, a.crops) end,
  required_space_to_batch_paddings = function(_, a)
    return tide.required_space_to_batch_paddings(a.input_shape, a.block_shape, a.base_paddings)
  end,
  broadcast_dynamic_shape = function(i) return tide.broadcast_dynamic_shape(i[1], i[2]) end,
  approx_top_k = function(i, a) return tide.approx_top_k(i[1], a.k, opts(a, { "reduction_dimension", "is_max_k" })) end,
  conv = function(i, a) return tide.conv(i[1], i[2], a.strides, a.padding, opts(a, { "explicit_paddings", "dilations" })) end,
  conv2d_backprop_filter_v2 = function(i, a) return tide.conv2d_backprop_filter_v2(i[1], i[2], i[3], a.strides, a.padding) end,
  conv2d_backprop_input_v2 = function(i, a) return tide.conv2d_backprop_input_v2(i[1], i[2], i[3], a.strides, a.padding) end,
  extract_volume_patches = function(i, a) return tide.extract_volume_patches(i[1], a.ksizes, a.strides, a.padding) end,
  edit_distance = function(i, a)
    return tide.edit_distance(tide.SparseTensor(i[1], i[2], i[3]), tide.SparseTensor(i[4], i[5], i[6]), a.normalize)
  end,
  ragged_fill_empty_rows = function(i) return tide.ragged_fill_empty_rows(i[1], i[2], i[3], i[4]) end,
  ragged_fill_empty_rows_grad = function(i) return tide.ragged_fill_empty_rows_grad(i[1], i[2]) end,
  bitcast = function(i, a) return tide.bitcast(i[1], a.type) end,
  fingerprint = function(i) return tide.fingerprint(i[1]) end,
  random_index_shuffle = function(i, a) return tide.random_index_shuffle(i[1], i[2], i[3], { rounds = a.rounds }) end,
}

local ERRORS = {
  slice = "slice: expected size[0] in [0, 1], but got 2",
  strided_slice = "strided_slice: ",
  realdiv = "realdiv: x must be a float tensor",
  batch_to_space = "batch_to_space: Input batch dimension (4) is not divisible by product of block sizes (3)",
  broadcast_dynamic_shape = "broadcast_dynamic_shape: Incompatible shapes: [2,3] vs. [4]",
  conv = "conv: The input must have 2 or 3 spatial dimensions but got 1",
  bitcast = "bitcast: cannot bitcast from uint8 to int32: shape [3] does not end in 4",
  fingerprint = "fingerprint: data must have rank at least 1",
}

-- Ops that read values to size their results: eager only (their traced refusal is checked below).
local EAGER_ONLY = { edit_distance = true, ragged_fill_empty_rows = true, broadcast_dynamic_shape = true,
  required_space_to_batch_paddings = true, random_index_shuffle = true }

local SPEC = { calls = CALLS, errors = ERRORS, differs = {} }

describe("tf's top-level ops against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_top_ops.lua)", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has the fixture's cases, each known to the spec", function()
    assert.is_true(#F.cases >= 72)
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

  it("strided_slice's errors name the entry", function()
    local x = tide.zeros { 2, 3 }
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("strided_slice: slice index 2 of dimension 0 out of bounds",
      err(tide.strided_slice, x, { 2 }, { 3 }, { 1 }, { shrink_axis_mask = 1 }))
    assert.matches("strided_slice: strides%[0%] must be non%-zero", err(tide.strided_slice, x, { 0 }, { 1 }, { 0 }))
    assert.matches("strided_slice: multiple ellipses", err(tide.strided_slice, x, { 0, 0 }, { 0, 0 }, { 1, 1 },
      { ellipsis_mask = 3 }))
    assert.matches("strided_slice: begin, end and strides must have the same length, got 1, 2 and 1",
      err(tide.strided_slice, x, { 0 }, { 1, 2 }, { 1 }))
    assert.matches("strided_slice: begin must be known while tracing", err(tide.trace(function(t, b)
      return tide.strided_slice(t, b, { 1 }, { 1 })
    end), x, tide.tensor { 0 }))
  end)

  it("differentiates in float64 by finite differences", function()
    local R = gc.random
    gc.check(function(x) return tide.slice(x, { 0, 1 }, { 2, -1 }) end, { R({ 2, 3 }, -1, 1, 1) })
    gc.check(function(x) return tide.strided_slice(x, { 1, 2 }, { 0, 0 }, { -1, -2 }, { begin_mask = 1 }) end,
      { R({ 2, 3 }, -1, 1, 2) })
    gc.check(function(x, y) return tide.realdiv(x, y) end, { R({ 3 }, -1, 1, 3), R({ 3 }, 0.5, 2, 4) })
    gc.check(function(x) return tide.batch_to_space(x, { 2 }, { { 0, 1 } }) end, { R({ 4, 2, 1 }, -1, 1, 5) },
      { none = false })
    gc.check(function(x, k) return tide.conv(x, k, { 1, 1, 1, 1 }, "SAME") end,
      { R({ 1, 3, 3, 2 }, -1, 1, 6), R({ 2, 2, 2, 2 }, -1, 1, 7) }, { none = false })
    gc.check(function(x) return tide.extract_volume_patches(x, { 1, 2, 1, 2, 1 }, { 1, 1, 1, 2, 1 }, "SAME") end,
      { R({ 1, 2, 2, 3, 1 }, -1, 1, 8) }, { none = false })
    gc.check(function(v, d)
      local _, out = tide.ragged_fill_empty_rows(tide.tensor({ 0, 2 }, "int64"), v, 3, d)
      return out
    end, { R({ 2 }, -1, 1, 9), R({}, -1, 1, 10) }, { none = false })
  end)

  it("conv takes channels-first data, leading batch dims and groups", function()
    local x = tide.reshape(tide.range(2 * 3 * 3 * 4, nil, nil, "float32"), { 2, 3, 3, 4 }) / 10
    local k = tide.reshape(tide.linspace(-1, 1, 2 * 2 * 2 * 6), { 2, 2, 2, 6 }):cast("float32")
    -- groups = 2: each half of the input's channels meets its half of the filters
    local y = tide.conv(x, k, { 1, 1, 1, 1 }, "VALID", { groups = 2 })
    local xs, ks = tide.split(x, 2, -1), tide.split(k, 2, -1)
    local want = tide.concat({ tide.nn.conv2d(xs[1], ks[1], 1, "VALID"), tide.nn.conv2d(xs[2], ks[2], 1, "VALID") }, -1)
    h.close(y, want:totable(), 1e-5)
    local k1 = tide.reshape(tide.linspace(-1, 1, 2 * 2 * 4 * 3), { 2, 2, 4, 3 }):cast("float32")
    local nchw = tide.conv(tide.transpose(x, { 0, 3, 1, 2 }), k1, { 1, 1, 1, 1 }, "VALID",
      { data_format = "CHANNELS_FIRST" })
    h.close(tide.transpose(nchw, { 0, 2, 3, 1 }), tide.nn.conv2d(x, k1, 1, "VALID"):totable(), 1e-5)
    local batched = tide.conv(tide.reshape(x, { 1, 2, 3, 3, 4 }), k1, { 1, 1, 1, 1 }, "VALID", { batch_dims = 2 })
    assert.are.same({ 1, 2, 2, 2, 3 }, batched.shape:as_list())
    h.close(tide.reshape(batched, { 2, 2, 2, 3 }), tide.nn.conv2d(x, k1, 1, "VALID"):totable(), 1e-5)
  end)

  it("fingerprint and bitcast read strided views as their contiguous copies", function()
    local x = tide.reshape(tide.range(12), { 3, 4 }):transpose()
    assert.are.same(tide.fingerprint(tide.contiguous(x)):totable(), tide.fingerprint(x):totable())
    local w = tide.tensor { { "a", "bb" }, { "ccc", "" } }:transpose()
    assert.are.same(tide.fingerprint(tide.contiguous(w)):totable(), tide.fingerprint(w):totable())
    local f = tide.reshape(tide.linspace(-1, 1, 6), { 2, 3 }):cast("float32"):transpose()
    assert.are.same(tide.bitcast(tide.contiguous(f), "int32"):totable(), tide.bitcast(f, "int32"):totable())
  end)

  it("grad_pass_through passes the output gradient straight to the input", function()
    local x = tide.tensor({ 0.2, 1.7, -0.6 }, "float64")
    local f = tide.grad_pass_through(function(t) return tide.round(t) end)
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x); return f(x) end)
    h.close(y, { 0, 2, -1 }, 0)
    h.close(tape:gradient(y, x, { output_gradients = tide.tensor({ 1, 2, 3 }, "float64") }), { 1, 2, 3 }, 0)
  end)

  it("group, tuple, guarantee_const, timestamp", function()
    local a, b = tide.tensor { 1, 2 }, tide.tensor(3.5)
    assert.is_nil(tide.group(a, { b, tide.Variable(1) }))
    local t = tide.tuple({ a, nil, b, n = 3 })
    assert.are.equal(3, t.n)
    assert.is_nil(t[2])
    h.close(t[1], { 1, 2 }, 0)
    assert.is_false(rawequal(a, t[1]))
    h.close(tide.guarantee_const(b), 3.5, 0)
    local now = tide.timestamp()
    assert.are.equal("float64", now.dtype)
    assert.is_true(math.abs(now:item() - os.time()) < 5)
    assert.is_true(tide.timestamp():item() >= now:item())
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("group: input 1 is a string", err(tide.group, "x"))
    assert.matches("tuple: tensors must be a Lua list of tensors, got a tensor", err(tide.tuple, a))
    assert.matches("tuple: tensors%[1%] is a number", err(tide.tuple, { 1 }))
    assert.matches("grad_pass_through: f must be a function", err(tide.grad_pass_through, 1))
  end)

  it("Assert, assert_greater and assert_less (eager and traced)", function()
    local x, y = tide.tensor { 2, 3 }, tide.tensor { 1, 2 }
    tide.assert_greater(x, y)
    tide.assert_less(y, x)
    tide.Assert(tide.tensor(true), { "fine", x })
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("assert_greater: Condition x > y did not hold", err(tide.assert_greater, y, x))
    assert.matches("assert_less: bad: Condition x < y did not hold", err(tide.assert_less, x, 2, { message = "bad" }))
    assert.matches("assertion failed:.*value.*%[2 3%]", err(tide.Assert, tide.tensor(false), { "value", x }))
    assert.matches("Assert: condition must be a bool scalar", err(tide.Assert, x, {}))
    assert.matches("Assert: data must be a Lua list", err(tide.Assert, tide.tensor(true), x))
    local f = tide.trace(function(c, v) tide.Assert(c, { "v =", v }); return v end)
    h.close(f(tide.tensor(true), x), { 2, 3 }, 0)
    assert.matches("assertion failed:", err(f, tide.tensor(false), x))
  end)

  it("refuses bad arguments with errors naming the op and argument", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    assert.matches("bitcast: type is required", err(tide.bitcast, tide.zeros { 1 }))
    local s3 = tide.tensor { 1, 2, 3 }
    assert.matches("random_index_shuffle: rounds must be an even number >= 4, got 5",
      err(tide.random_index_shuffle, 1, s3, 10, { rounds = 5 }))
    assert.matches("random_index_shuffle: index must be int32 or int64, got float32",
      err(tide.random_index_shuffle, tide.zeros { 1 }, s3, 10))
    assert.matches("random_index_shuffle: seed must be a vector of size %[3%] or a matrix of size %[2, 3%]",
      err(tide.random_index_shuffle, tide.tensor { 1, 2 }, tide.tensor { 1, 2 }, 10))
    assert.matches("random_index_shuffle: max_index must be in %[0, 2%^53%)",
      err(tide.random_index_shuffle, tide.tensor(1, "int64"), s3, tide.tensor(-1, "int64")))
    assert.matches("random_index_shuffle: index must be known while tracing",
      err(tide.trace(function(i) return tide.random_index_shuffle(i, s3, 9) end), tide.tensor(1)))
    assert.matches("bitcast: input 1 is a string tensor", err(tide.bitcast, tide.tensor { "a" }, "int32"))
    assert.matches("bitcast: type must be a numeric or bool dtype, got string", err(tide.bitcast, tide.zeros { 1 }, "string"))
    assert.matches("fingerprint: method must be \"farmhash64\"", err(tide.fingerprint, tide.zeros { 1 }, "md5"))
    local x = tide.zeros { 2, 3 }
    assert.matches("slice: begin and size must have one entry per dim", err(tide.slice, x, { 0 }, { 1 }))
    assert.matches("slice: begin%[1%] = 4 is outside", err(tide.slice, x, { 0, 4 }, { 1, 1 }))
    assert.matches("batch_to_space: crops must be %[1, 2%]", err(tide.batch_to_space, x, { 2 }, {}))
    assert.matches("required_space_to_batch_paddings: input_shape and block_shape must have the same length",
      err(tide.required_space_to_batch_paddings, { 2, 3 }, { 2 }))
    assert.matches("approx_top_k: k is required", err(tide.approx_top_k, x))
    assert.matches("conv: padding must be", err(tide.conv, tide.zeros { 1, 3, 3, 1 }, tide.zeros { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, "FULL"))
    assert.matches("conv: strides must have 4 entries", err(tide.conv, tide.zeros { 1, 3, 3, 1 }, tide.zeros { 1, 1, 1, 1 }, { 1 }, "SAME"))
    assert.matches("conv: groups = 2 must divide", err(tide.conv, tide.zeros { 1, 3, 3, 3 }, tide.zeros { 1, 1, 3, 2 },
      { 1, 1, 1, 1 }, "SAME", { groups = 2 }))
    assert.matches("extract_volume_patches: input must be 5%-D", err(tide.extract_volume_patches, x, { 1, 1, 1, 1, 1 },
      { 1, 1, 1, 1, 1 }, "VALID"))
    assert.matches("extract_volume_patches: ksizes must be %[1, planes, rows, cols, 1%]",
      err(tide.extract_volume_patches, tide.zeros { 1, 2, 2, 2, 1 }, { 2, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1 }, "VALID"))
    local sp = tide.SparseTensor({ { 0, 0 } }, tide.tensor { 1 }, { 1, 1 })
    assert.matches("edit_distance: hypothesis must be a tide.SparseTensor", err(tide.edit_distance, x, sp))
    assert.matches("edit_distance: hypothesis and truth values must have the same dtype",
      err(tide.edit_distance, sp, tide.SparseTensor({ { 0, 0 } }, tide.tensor { 1.5 }, { 1, 1 })))
    assert.matches("ragged_fill_empty_rows: value_rowids must be sorted",
      err(tide.ragged_fill_empty_rows, tide.tensor({ 1, 0 }, "int64"), tide.zeros { 2 }, 2, 0))
    assert.matches("ragged_fill_empty_rows: value_rowids%[0%] = 3 is outside %[0, 2%)",
      err(tide.ragged_fill_empty_rows, tide.tensor({ 3 }, "int64"), tide.zeros { 1 }, 2, 0))
    assert.matches("ragged_fill_empty_rows: value_rowids must be known while tracing", err(tide.trace(function(r)
      return tide.ragged_fill_empty_rows(r, tide.zeros { 1 }, 2, 0)
    end), tide.tensor({ 0 }, "int64")))
    assert.matches("ragged_fill_empty_rows_grad: reverse_index_map must be int64",
      err(tide.ragged_fill_empty_rows_grad, tide.tensor { 0 }, tide.zeros { 1 }))
  end)
end)
