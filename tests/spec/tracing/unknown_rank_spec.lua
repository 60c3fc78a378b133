-- tests/spec/tracing/unknown_rank_spec.lua — traced functions whose tensors
-- have an unknown rank (TensorSpec(nil), TF's TensorShape(None)): one trace
-- for every rank, shapes that say <unknown>, the Lua API on such tensors (and
-- what refuses it, naming why), gradients, control flow and reduce_retracing.
-- Each op's own unknown-rank run is in ops_spec.lua.
local tide = require "tide"
local h = require "helpers"

local S, None = tide.TensorSpec, tide.None

local function f32(v) return tide.tensor(v, "float32") end
local function pack(...) return { n = select("#", ...), ... } end

-- Float tensors of ranks 0 to 3 with distinct values.
local function by_rank()
  return {
    f32(0.5),
    f32 { 1, -2, 3 },
    f32 { { 1, 2, 3 }, { -4, 5, 0.5 } },
    f32 { { { 1, 2 }, { 3, 4 } }, { { -1, 0 }, { 2, -3 } }, { { 0.25, 1 }, { 1, 2 } } },
  }
end

-- fn traced with every argument TensorSpec(nil) (dtypes from the first call's
-- arguments; `shapes` may give some a shape), called on each list of
-- arguments: the results must be the eager ones, and one trace serves them all.
local function same_as_eager(fn, calls, approx, shapes)
  local sig = {}
  for i, x in ipairs(calls[1]) do sig[i] = S(shapes and shapes[i], x.dtype) end
  local tr = tide.trace(fn, { input_signature = sig })
  for k, args in ipairs(calls) do
    local want = pack(fn(unpack(args)))
    local got = pack(tr(unpack(args)))
    assert.are.equal(want.n, got.n)
    for i = 1, want.n do
      assert.are.same(want[i].shape:as_list(), got[i].shape:as_list(), "call " .. k .. ", result " .. i)
      assert.are.equal(want[i].dtype, got[i].dtype)
      h.close(got[i], want[i], approx and 1e-5 or 0)
    end
  end
  assert.are.equal(1, tr:trace_count())
  return tr
end

-- Each rank's tensor as a one-argument call.
local function one_each(list)
  local calls = {}
  for i, x in ipairs(list) do calls[i] = { x } end
  return calls
end

describe("a TensorSpec of unknown rank", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("traces once for tensors of every rank", function()
    local seen = {}
    local f = tide.trace(function(x)
      seen[#seen + 1] = { shape = tostring(x.shape), rank = x.shape.rank, ndim = x.ndim, text = tostring(x) }
      return x * 2 + 1
    end, { input_signature = { S(nil, "float32") } })
    for _, x in ipairs(by_rank()) do h.close(f(x), x * 2 + 1) end
    assert.are.equal(1, f:trace_count())
    assert.are.same({ shape = "<unknown>", ndim = -1, text = 'tide.Tensor("%0:0", shape=<unknown>, dtype=float32, symbolic)' },
      seen[1])
    h.errors("the arguments of f do not match its input_signature: argument 1 (x) is an int32 tensor of shape (2,) " ..
      "where the signature has dtype float32", f, tide.tensor { 1, 2 })
  end)

  it("prints and compares as TF's TensorShape(None), and refuses what needs the dims", function()
    local f = tide.trace(function(x)
      local s = x.shape
      assert.are.equal("<unknown>", tostring(s))
      assert.is_nil(s.rank)
      assert.are.equal(tide.Shape.unknown(), s)
      assert.are_not.equal(tide.Shape.unknown(), tide.ones { 2 }.shape)
      h.errors("Shape:as_list: the shape has an unknown rank (<unknown>)", function() return s:as_list() end)
      h.errors("Shape:num_elements: the shape has an unknown rank", function() return s:num_elements() end)
      h.errors("#: the tensor's rank is unknown until its graph runs", function() return #x end)
      assert.are.equal("TensorSpec(shape=<unknown>, dtype=tide.float32, name=None)", tostring(S.from_tensor(x)))
      return x
    end, { input_signature = { S(nil) } })
    f(f32 { 1 })
    assert.are.equal(2, tide.ones { 2, 3 }.shape.rank)
  end)

  it("gives a concrete function whose signature and graph say <unknown>", function()
    local f = tide.trace(function(x, w) return tide.reduce_sum(x * w, -1) end, { name = "dot",
      input_signature = { S(nil, "float32"), S({ 3 }, "float32") } })
    local cf = f:get_concrete_function()
    assert.are.equal("dot(x, w)\n  Args:\n    x: float32 Tensor, shape=<unknown>\n    w: float32 Tensor, shape=(3,)\n" ..
      "  Returns:\n    float32 Tensor, shape=<unknown>", cf:pretty_printed_signature())
    assert.are.equal("TensorSpec(shape=<unknown>, dtype=tide.float32, name=None)",
      tostring(cf.structured_input_signature[1]))
    assert.are.equal("<unknown>", tostring(cf.structured_outputs[1].shape))
    assert.truthy(cf:graph_text():find("graph dot(%0: float32<unknown>, %1: float32[3])", 1, true))
    local w = f32 { 1, 2, 3 }
    h.close(cf(f32 { 1, 1, 1 }, w), 6)
    h.close(cf(f32 { { 1, 0, 0 }, { 0, 1, 1 } }, w), { 1, 5 })
    h.errors("ConcreteFunction dot(x, w): argument 1 (x) is an int32 tensor of shape (3,) but the graph takes a " ..
      "float32 tensor of shape <unknown>", cf, tide.tensor { 1, 2, 3 }, w)
    h.errors("mul: incompatible shapes [1, 2] and [3]", cf, f32 { { 1, 2 } }, w)
    assert.are.equal(1, f:trace_count())
  end)

  it("works in get_concrete_function without an input_signature", function()
    local f = tide.trace(function(x) return tide.nn.softmax(x) end)
    local cf = f:get_concrete_function(S(nil, "float64"))
    local x = tide.tensor({ { 1, 2, 3 }, { 0, 0, 0 } }, "float64")
    h.close(cf(x), tide.nn.softmax(x), 1e-12)
    h.close(cf(x[0]), tide.nn.softmax(x[0]), 1e-12)
    assert.are.equal(cf, f:get_concrete_function(S(nil, "float64")))
    -- a later call of f with a tensor takes the general trace (the most specific fitting one)
    h.close(f(x), tide.nn.softmax(x), 1e-12)
    assert.are.equal(1, f:trace_count())
  end)
end)

describe("reduce_retracing over ranks", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  -- TF 2.21 traces (2,), then <unknown> for a second rank, then nothing more.
  it("generalizes a rank that changes to an unknown rank, as TF", function()
    local shapes = {}
    local g = tide.trace(function(x) shapes[#shapes + 1] = tostring(x.shape); return x * 2 end,
      { reduce_retracing = true })
    h.close(g(f32 { 1, 2 }), { 2, 4 })
    h.close(g(f32 { { 1, 2 } }), { { 2, 4 } })
    h.close(g(f32(3)), 6)
    h.close(g(f32 { { { 1 } } }), { { { 2 } } })
    assert.are.same({ "(2,)", "<unknown>" }, shapes)
    assert.truthy(g:pretty_printed_concrete_signatures():find("x: float32 Tensor, shape=<unknown>", 1, true))
  end)

  -- TF 2.21: (2,), (None,), <unknown>: three traces.
  it("relaxes dims first, then the rank", function()
    local shapes = {}
    local g = tide.trace(function(x) shapes[#shapes + 1] = tostring(x.shape); return x end, { reduce_retracing = true })
    g(f32 { 1, 2 }); g(f32 { 1, 2, 3 }); g(f32 { { 1 } }); g(f32 { { 1, 2 } }); g(f32 { 5, 6, 7, 8 })
    assert.are.same({ "(2,)", "(None,)", "<unknown>" }, shapes)
  end)
end)

describe("the Lua API on tensors of unknown rank", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("elementwise math broadcasts against known ranks", function()
    same_as_eager(function(x, b) return tide.tanh(x) * b + 1 - x / 2 end,
      { { f32 { { 1, 2, 3 } }, f32 { 1, 2, 3 } }, { f32 { 1, 2, 3 }, f32(2) }, { f32(1), f32 { { 1 }, { 2 } } } }, true)
    same_as_eager(function(x) return tide.maximum(x, 0):cast("int32"), x:gt(0) end, one_each(by_rank()))
    same_as_eager(function(c, x, y) return tide.where(c, x, y) end,
      { { tide.tensor { true, false }, f32 { 1, 2 }, f32 { { 3 }, { 4 } } } })
  end)

  it("reductions: all axes (a scalar), negative axes, keepdims", function()
    local tr = same_as_eager(function(x)
      return tide.reduce_sum(x), tide.reduce_mean(x, -1), tide.reduce_max(x, -1, { keepdims = true }),
        tide.reduce_logsumexp(x, { 0, -1 }), tide.argmax(x, -1)
    end, { { by_rank()[3] }, { by_rank()[4] } }, true)
    assert.are.equal("()", tostring(tr:get_concrete_function().structured_outputs[1].shape))
    same_as_eager(function(x) return tide.reduce_variance(x), tide.reduce_std(x, -1) end, { { by_rank()[3] } }, true)
    same_as_eager(function(x) return tide.nn.moments(x, { -1 }) end, { { by_rank()[3] }, { by_rank()[4] } }, true)
  end)

  it("softmax and log_softmax on the last axis, and the cross-entropies", function()
    same_as_eager(function(x) return tide.nn.softmax(x), tide.nn.log_softmax(x) end,
      { { by_rank()[2] }, { by_rank()[3] }, { by_rank()[4] } }, true)
    same_as_eager(function(labels, logits) return tide.nn.sparse_softmax_cross_entropy_with_logits(labels, logits) end,
      { { tide.tensor { 0, 2 }, by_rank()[3] }, { tide.tensor { { 1, 0 }, { 0, 0 }, { 1, 1 } }, by_rank()[4] } }, true)
    same_as_eager(function(labels, logits) return tide.nn.softmax_cross_entropy_with_logits(labels, logits) end,
      { { tide.nn.softmax(by_rank()[3]), by_rank()[3] } }, true)
    local tr = tide.trace(tide.nn.sparse_softmax_cross_entropy_with_logits,
      { input_signature = { S(nil, "int32"), S(nil) } })
    -- shapes that do not line up fail when the graph runs (labels' shape must be logits' without its last dim)
    h.errors("cannot broadcast", tr, tide.tensor { 0, 1, 1 }, by_rank()[3])
  end)

  it("matmul of matrices, batches and vectors", function()
    local a, b = by_rank()[3], f32 { { 1, 0 }, { 2, 1 }, { 0, 3 } }
    same_as_eager(function(x, y) return tide.matmul(x, y) end,
      { { a, b }, { f32 { 1, 2, 3 }, b }, { a, f32 { 1, 1, 1 } }, { by_rank()[4], f32 { { 1 }, { 2 } } } })
  end)

  it("reshape, cast, shape, rank and num_elements", function()
    local tr = same_as_eager(function(x)
      return x:reshape { -1 }, x:reshape { 1, -1 }:cast("float64"), tide.shape(x), tide.rank(x), tide.num_elements(x),
        tide.reshape(x, tide.shape(x)), tide.zeros_like(x), tide.ones(tide.shape(x), { dtype = "int32" })
    end, one_each(by_rank()))
    local outs = tr:get_concrete_function().structured_outputs
    assert.are.equal("(None,)", tostring(outs[1].shape))     -- TF: reshape to [-1] of any rank is (None,)
    assert.are.equal("(1, None)", tostring(outs[2].shape))
    assert.are.equal("(None,)", tostring(outs[3].shape))     -- tf.shape: a vector of unknown length
    assert.are.equal("()", tostring(outs[4].shape))
    assert.are.equal("<unknown>", tostring(outs[6].shape))
  end)

  it("indexing and slicing the leading dims", function()
    local calls = { { by_rank()[2] }, { by_rank()[3] }, { by_rank()[4] } }
    same_as_eager(function(x) return x[0], x[-1], x:slice { { 1, nil } }, x:slice { { nil, nil, -1 } } end, calls)
    same_as_eager(function(x) return x:slice { 1, "..." }, x:slice { tide.newaxis, 0 } end, calls)
    local tr = tide.trace(function(x) return x[2] end, { input_signature = { S(nil) } })
    h.errors("slice: index 2 is out of range for dimension 0 of size 2", tr, by_rank()[3])
    h.errors("slice: the spec names 1 dim(s) but the tensor has rank 0 (shape [])", tr, f32(1))
  end)

  it("concat, stack, squeeze, expand_dims, transpose, tile and pad", function()
    local m = by_rank()[3]
    same_as_eager(function(x, y) return tide.concat({ x, y }, 0), tide.concat({ x, y }, -1), tide.stack({ x, y }, -1) end,
      { { m, m * 2 }, { m[0], m[1] } })
    same_as_eager(function(x) return tide.squeeze(tide.expand_dims(x, 0)), tide.transpose(x) end, one_each(by_rank()))
    same_as_eager(function(x) return tide.tile(x, { 2, 1 }), tide.pad(x, { { 1, 0 }, { 0, 2 } }),
        tide.transpose(x, { 1, 0 }) end, { { m } })
  end)

  it("cond, while_loop and for_range", function()
    same_as_eager(function(x)
      return tide.cond(tide.reduce_sum(x):gt(0), function() return x * 2 end, function() return -x end)
    end, one_each(by_rank()))
    -- branches of different ranks: a result of unknown rank
    local tr = tide.trace(function(p, x) return tide.cond(p, function() return x end, function() return x[0] end) end,
      { input_signature = { S({}, "bool"), S({ 2, 3 }) } })
    h.close(tr(tide.tensor(false), by_rank()[3]), { 1, 2, 3 })
    assert.are.equal("<unknown>", tostring(tr:get_concrete_function().structured_outputs[1].shape))
    same_as_eager(function(x)
      local _, y = tide.while_loop(function(i) return i:lt(3) end, function(i, y) return i + 1, y * 2 + 1 end,
        { tide.tensor(0), x })
      return y
    end, one_each(by_rank()))
    -- a loop variable whose rank changes needs the invariant tide.Shape.unknown() (TF's TensorShape(None))
    local grow = function(x)
      local _, y = tide.while_loop(function(i) return i:lt(2) end, function(i, y) return i + 1, tide.expand_dims(y, 0) end,
        { tide.tensor(0), x }, { shape_invariants = { nil, tide.Shape.unknown() } })
      return y
    end
    h.close(tide.trace(grow)(f32 { 1, 2 }), { { { 1, 2 } } })
    h.errors("its rank must not change: give it the shape invariant tide.Shape.unknown()", tide.trace(function(x)
      return select(2, tide.while_loop(function(i) return i:lt(2) end,
        function(i, y) return i + 1, tide.expand_dims(y, 0) end, { tide.tensor(0), x }))
    end), f32 { 1, 2 })
    same_as_eager(function(x) return tide.for_range(3, function(i, acc) return acc + x end, { x }) end,
      one_each(by_rank()))
  end)

  it("nn helpers: bias_add, layer_norm, dropout off, embedding_lookup, boolean_mask", function()
    local m = by_rank()[3]
    same_as_eager(function(x, b) return tide.nn.bias_add(x, b) end,
      { { m, f32 { 1, 2, 3 } }, { tide.stack { m, m }, f32 { 1, 2, 3 } } }, false, { nil, { 3 } })
    same_as_eager(function(x, g) return tide.nn.layer_norm(x, { gamma = g }) end,
      { { m, f32 { 1, 2, 3 } }, { by_rank()[4][0] * f32 { 1, 1 }, f32 { 1, 2 } } }, true, { nil, { None } })
    same_as_eager(function(x) return tide.nn.dropout(x, 0.5, { training = false }) end, one_each(by_rank()))
    same_as_eager(function(p, i) return tide.nn.embedding_lookup(p, i, { max_norm = 2 }) end,
      { { f32 { { 3, 4 }, { 0.5, 0 } }, tide.tensor { { 1, 0 }, { 0, 0 } } }, { f32 { { 3, 4 } }, tide.tensor { 0 } } },
      true, { { None, None } }) -- ids of unknown rank
    same_as_eager(function(x, mask) return tide.boolean_mask(x, mask) end,
      { { m, tide.tensor { true, false } }, { by_rank()[4], tide.tensor { false, true, true } } }, false, { nil, { None } })
    local tr = tide.trace(function(x, mask) return tide.boolean_mask(x, mask) end,
      { input_signature = { S(nil), S({ None }, "bool") } })
    h.errors("cannot broadcast", tr, m, tide.tensor { true, false, true }) -- the mask must have the dims it covers
    local bad = tide.trace(function(x, b) return tide.nn.bias_add(x, b) end, { input_signature = { S(nil), S({ 2 }) } })
    h.errors("reshape: cannot reshape", bad, m, f32 { 1, 2 })       -- bias's length must be the last dim's
    h.errors("slice: index -2 is out of range", bad, f32 { 1, 2 }, f32 { 1, 2 }) -- and value at least 2-D
  end)

  it("dropout draws a mask of the input's shape when it runs", function()
    local tr = tide.trace(function(x) return tide.nn.dropout(x, 0.5, { seed = 3 }) end, { input_signature = { S(nil) } })
    for _, x in ipairs(by_rank()) do
      local y = tr(x)
      assert.are.same(x.shape:as_list(), y.shape:as_list())
      assert.truthy(tide.reduce_all(tide.logical_or(tide.equal(y, 0), tide.equal(y, x * 2))):item())
    end
  end)

  it("refuses what needs a rank while tracing, naming the op and what to do", function()
    local function refuses(msg, fn, x)
      local tr = tide.trace(fn, { input_signature = { S(nil) } })
      h.errors(msg, tr, x or by_rank()[3])
    end
    refuses("split: the number of results depends on the size of dimension 0, and the input's rank is unknown",
      function(x) return tide.split(x, 2)[1] end)
    refuses("unstack: the number of results depends on the size of dimension 0", function(x) return tide.unstack(x)[1] end)
    refuses("pad: REFLECT padding needs the input's dims, and its rank is unknown",
      function(x) return tide.pad(x, { { 1, 1 }, { 0, 0 } }, "REFLECT") end)
    refuses("slice: '...' followed by more entries needs the tensor's rank", function(x) return x:slice { "...", 0 } end)
    refuses("batch_norm: x has an unknown rank (shape <unknown>) until the traced function runs",
      function(x) return tide.nn.batch_norm(x, { training = true }) end)
    refuses("layer_norm: x has an unknown rank", function(x) return tide.nn.layer_norm(x, { axis = 0 }) end)
    refuses("bias_add: value has an unknown rank", function(x) return tide.nn.bias_add(x, f32 { 1, 2 }, "NCHW") end)
    refuses("embedding_lookup: params has an unknown rank",
      function(x) return tide.nn.embedding_lookup(x, tide.tensor { 0 }, { max_norm = 1 }) end)
    refuses("TensorArray.write: the value's rank is unknown until the traced function runs", function(x)
      return tide.TensorArray("float32", { size = 1 }):write(0, x):stack()
    end)
    refuses("boolean_mask: the mask's rank must be known while tracing", function(x) return tide.boolean_mask(x, x:gt(0)) end)
    refuses("zeros: shape is a shape of unknown rank (<unknown>), which has no dims until the graph runs; pass " ..
      "tide.shape(x)", function(x) return tide.zeros(x.shape) end)
    refuses("reshape: shape is a shape of unknown rank", function(x) return x:reshape(x.shape) end)
    refuses("boolean_mask: a negative axis (-1) counts from the end of a tensor whose rank is unknown",
      function(x) return tide.boolean_mask(x, tide.tensor { true, false, true }, { axis = -1 }) end)
  end)
end)

describe("gradients through unknown ranks", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  -- The gradients of loss(x, w) with respect to x and w, by a tape.
  local function grads(loss, x, w)
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x); tape:watch(w); return loss(x, w) end)
    return unpack(tape:gradient(y, { x, w }))
  end

  it("a tape inside the traced function gives the eager gradients", function()
    local function loss(x, w)
      local z = tide.nn.log_softmax(tide.matmul(tide.tanh(x), w) + 0.5)
      return tide.reduce_mean(z * z) + tide.reduce_sum(tide.reduce_max(x, -1) * 0.1)
    end
    local w = f32 { { 1, -1 }, { 0.5, 2 }, { -1, 0 } }
    local tr = tide.trace(function(x, w) return grads(loss, x, w) end, { input_signature = { S(nil), S(nil) } })
    for _, x in ipairs { f32 { 1, 2, 3 }, by_rank()[3], tide.stack { by_rank()[3], by_rank()[3] * 2 } } do
      local ex, ew = grads(loss, x, w)
      local gx, gw = tr(x, w)
      h.close(gx, ex, 1e-5)
      h.close(gw, ew, 1e-5)
    end
    assert.are.equal(1, tr:trace_count())
  end)

  it("sums a broadcast gradient back with sum_to when the ranks are known only at run", function()
    local tr = tide.trace(function(x, b) return grads(function(u, v) return tide.reduce_sum((u + v) ^ 2) end, x, b) end,
      { input_signature = { S(nil), S(nil) } })
    for _, c in ipairs { { by_rank()[4], f32 { 1, 2 } }, { by_rank()[3], f32(1) }, { f32 { 1, 2 }, f32 { { 1 }, { 2 } } } } do
      local ex, eb = grads(function(u, v) return tide.reduce_sum((u + v) ^ 2) end, c[1], c[2])
      local gx, gb = tr(c[1], c[2])
      h.close(gx, ex, 1e-5)
      h.close(gb, eb, 1e-5)
      assert.are.same(c[2].shape:as_list(), gb.shape:as_list())
    end
    assert.truthy(tr:get_concrete_function():graph_text():find("sum_to(", 1, true))
  end)

  it("a tape outside a traced call with an unknown-rank signature", function()
    local f = tide.trace(function(x) return tide.reduce_sum(tide.nn.softmax(x) * x) end,
      { input_signature = { S(nil) } })
    for _, x in ipairs { by_rank()[2], by_rank()[3] } do
      local tape = tide.GradientTape()
      local y = tape:run(function() tape:watch(x); return f(x) end)
      local g = tape:gradient(y, x)
      local t2 = tide.GradientTape()
      local y2 = t2:run(function() t2:watch(x); return tide.reduce_sum(tide.nn.softmax(x) * x) end)
      h.close(g, t2:gradient(y2, x), 1e-5)
    end
  end)

  it("refuses the gradients that need a rank while tracing", function()
    local function refuses(msg, fn)
      local tr = tide.trace(function(x) return grads(function(u) return tide.reduce_sum(fn(u)) end, x, f32(0)) end,
        { input_signature = { S(nil) } })
      h.errors(msg, tr, by_rank()[3])
    end
    refuses("reduce_prod's gradient moves the reduced axes to the front, which needs the input's rank",
      function(x) return tide.reduce_prod(x, 0) end)
    refuses("sort's gradient along an axis other than -1", function(x) return tide.sort(x, 0) end)
  end)
end)
