-- tests/spec/tracing/shapes_spec.lua — traced functions on inputs with unknown
-- (None) dims: the symbolic shapes each op family reports inside the trace
-- (TF's shape functions), and the results when the graph runs with several
-- concrete shapes (compared with the same function run eagerly, and by hand).
local tide = require "tide"
local h = require "helpers"

local None = tide.None

-- A tensor of `shape` with distinct values (sin of the position, times 10),
-- floored for integer dtypes; deterministic.
local function data(shape, dt)
  dt = dt or "float32"
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local flat = {}
  for i = 1, n do
    local v = math.sin(i) * 10
    if dt ~= "float32" and dt ~= "float64" then v = math.floor(v) end
    flat[i] = v
  end
  if n == 0 then return tide.zeros(shape, dt) end
  return tide.tensor(flat, dt):reshape(shape)
end

-- Trace f under input_signature `specs` (a list of {dims, dtype}); returns the
-- traced function and the list of shapes (as lists) f's results had while tracing.
local function trace(f, specs)
  local sig = {}
  for i, s in ipairs(specs) do sig[i] = tide.TensorSpec(s[1], s[2] or "float32") end
  local seen = {}
  local tf = tide.trace(function(...)
    local r = { f(...) }
    for i, y in ipairs(r) do seen[i] = y.shape:as_list() end
    return unpack(r)
  end, { input_signature = sig })
  tf:get_concrete_function()
  return tf, seen
end

-- Values of t as a flat list (booleans kept), for comparing results.
local function values(t) return h.values(t) end

-- Trace f on `specs`, check the symbolic shape(s) `want`, then run it on each
-- list of inputs in `runs` and compare every result with f run eagerly.
local function check(f, specs, want, runs)
  local tf, seen = trace(f, specs)
  -- one shape ({None, 3}, {} for 0-d) or a list of shapes for several results
  if not (type(want[1]) == "table" and want[1] ~= None) then want = { want } end
  assert.are.same(want, seen)
  for _, inputs in ipairs(runs) do
    local got = { tf(unpack(inputs)) }
    local expect = { f(unpack(inputs)) }
    assert.are.equal(#expect, #got)
    for i = 1, #expect do
      assert.are.same(expect[i].shape:as_list(), got[i].shape:as_list())
      assert.are.equal(expect[i].dtype, got[i].dtype)
      h.close(values(got[i]), values(expect[i]), 1e-6)
    end
  end
  assert.are.equal(1, tf:trace_count())
  return tf
end

local function x23() return { data { 2, 3 } } end
local function x53() return { data { 5, 3 } } end
local function x13() return { data { 1, 3 } } end
local function x03() return { data { 0, 3 } } end
local ROWS = { x23(), x53(), x13() }
local ROWS0 = { x23(), x53(), x13(), x03() }

describe("traced shapes with unknown dims: elementwise", function()
  it("broadcasts None with known and unknown dims as TF", function()
    local c = data { 3 }
    check(function(x) return x + c end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    check(function(x) return x * 2 - 1 end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    -- None with 1 stays None; None with 4 becomes 4
    check(function(a, b) return a * b end, { { { None, 1 } }, { { 1, 4 } } }, { None, 4 },
      { { data { 2, 1 }, data { 1, 4 } }, { data { 3, 1 }, data { 1, 4 } } })
    check(function(a, b) return a + b end, { { { None } }, { { 4 } } }, { 4 },
      { { data { 4 }, data { 4 } }, { data { 1 }, data { 4 } } })
    check(function(a, b) return a - b end, { { { None, 1 } }, { { None, 3 } } }, { None, 3 },
      { { data { 2, 1 }, data { 2, 3 } }, { data { 4, 1 }, data { 4, 3 } } })
    check(function(a, b) return a - b end, { { { None } }, { { None } } }, { None },
      { { data { 3 }, data { 3 } }, { data { 1 }, data { 5 } } })
  end)

  it("keeps None through unary ops, casts, comparisons, where and clip", function()
    check(function(x) return tide.exp(x:relu()) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return x:cast("int32") end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return x:gt(0) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return tide.where(x:gt(0), x, tide.zeros { 3 }) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return tide.clip_by_value(x, -1, 1) end, { { { None, 3 } } }, { None, 3 }, ROWS)
  end)

  it("checks the values by hand", function()
    local tf = trace(function(x) return x + tide.tensor({ 10, 20, 30 }, "float32") end, { { { None, 3 } } })
    h.close(tf(tide.tensor({ { 1, 2, 3 } }, "float32")), { { 11, 22, 33 } })
    h.close(tf(tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32")), { { 11, 22, 33 }, { 14, 25, 36 } })
  end)

  it("raises known mismatches while tracing and unknown ones when the graph runs", function()
    h.errors("incompatible shapes", trace, function(x) return x + tide.zeros { 4 } end, { { { None, 3 } } })
    local tf = trace(function(a, b) return a + b end, { { { None } }, { { 4 } } })
    h.errors("incompatible shapes", tf, data { 3 }, data { 4 })
  end)
end)

describe("traced shapes with unknown dims: reductions and ordering", function()
  it("keeps None on kept axes", function()
    check(function(x) return tide.reduce_sum(x, 1) end, { { { None, 3 } } }, { None }, ROWS0)
    check(function(x) return tide.reduce_mean(x, 0) end, { { { None, 3 } } }, { 3 }, ROWS)
    check(function(x) return tide.reduce_max(x, -1, { keepdims = true }) end, { { { None, 3 } } }, { None, 1 }, ROWS)
    check(function(x) return tide.reduce_sum(x) end, { { { None, 3 } } }, {}, ROWS0)
    check(function(x) return tide.reduce_logsumexp(x, 1) end, { { { None, 3 } } }, { None }, ROWS)
    check(function(x) return tide.reduce_variance(x, 0) end, { { { None, 3 } } }, { 3 }, ROWS)
  end)

  it("argmax, cumsum, sort and argsort keep None", function()
    check(function(x) return tide.argmax(x, 1) end, { { { None, 3 } } }, { None }, ROWS)
    check(function(x) return tide.argmin(x, 0) end, { { { None, 3 } } }, { 3 }, ROWS)
    check(function(x) return tide.cumsum(x, 0) end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    check(function(x) return tide.sort(x, 0) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return tide.argsort(x, -1, "DESCENDING") end, { { { 2, None } } }, { 2, None },
      { { data { 2, 4 } }, { data { 2, 1 } } })
    local tf = trace(function(x) return tide.argmax(x, 0) end, { { { None } } })
    assert.are.same({ 2 }, { tf(tide.tensor({ 1, 5, 9, 2 }, "float32")):item() })
    h.errors("empty", tf, tide.zeros { 0 })
  end)

  it("top_k keeps None and takes any k while the last dim is unknown", function()
    check(function(x) return tide.top_k(x, 2) end, { { { None, 3 } } }, { { None, 2 }, { None, 2 } }, ROWS)
    local tf = check(function(x) return tide.top_k(x, 2) end, { { { 2, None } } }, { { 2, 2 }, { 2, 2 } },
      { { data { 2, 3 } }, { data { 2, 5 } } })
    h.errors("k = 2 must be between 0 and the last dimension 1", tf, data { 2, 1 })
    h.errors("k = 5", trace, function(x) return tide.top_k(x, 5) end, { { { None, 3 } } })
  end)
end)

describe("traced shapes with unknown dims: matmul", function()
  it("merges the inner dims and broadcasts the batch dims", function()
    local w = data { 3, 4 }
    check(function(x) return tide.matmul(x, w) end, { { { None, 3 } } }, { None, 4 }, ROWS0)
    check(function(x) return x:matmul(x, { transpose_b = true }) end, { { { None, 3 } } }, { None, None }, ROWS)
    check(function(x) return tide.matmul(x, w) end, { { { None, 2, 3 } } }, { None, 2, 4 },
      { { data { 1, 2, 3 } }, { data { 3, 2, 3 } } })
    check(function(a, b) return tide.matmul(a, b) end, { { { 2, None } }, { { None, 5 } } }, { 2, 5 },
      { { data { 2, 3 }, data { 3, 5 } }, { data { 2, 1 }, data { 1, 5 } } })
    h.errors("inner dimensions do not match", trace, function(x) return tide.matmul(x, data { 4, 2 }) end,
      { { { None, 3 } } })
    local tf = trace(function(a, b) return tide.matmul(a, b) end, { { { 2, None } }, { { None, 5 } } })
    h.errors("inner dimensions do not match", tf, data { 2, 3 }, data { 4, 5 })
  end)
end)

describe("traced shapes with unknown dims: views", function()
  it("reshape: -1 stays unknown; a known target is checked when the graph runs", function()
    check(function(x) return x:reshape(-1) end, { { { None, 3 } } }, { None }, ROWS0)
    check(function(x) return x:reshape(-1, 6) end, { { { None, 3 } } }, { None, 6 },
      { { data { 2, 3 } }, { data { 4, 3 } } })
    local tf = check(function(x) return x:reshape(3, 2) end, { { { None, 3 } } }, { 3, 2 }, { { data { 2, 3 } } })
    h.errors("cannot reshape a tensor of shape [3, 3]", tf, data { 3, 3 })
    h.errors("a multiple of 3 elements", trace, function(x) return x:reshape(4) end, { { { None, 3 } } })
  end)

  it("transpose, expand_dims and broadcast_to", function()
    check(function(x) return x:transpose() end, { { { None, 3 } } }, { 3, None }, ROWS0)
    check(function(x) return tide.transpose(x, { 1, 2, 0 }) end, { { { None, 2, 3 } } }, { 2, 3, None },
      { { data { 1, 2, 3 } }, { data { 4, 2, 3 } } })
    check(function(x) return tide.expand_dims(x, 0) end, { { { None, 3 } } }, { 1, None, 3 }, ROWS)
    local tf = check(function(x) return tide.broadcast_to(x, { 4, 3 }) end, { { { None, 1 } } }, { 4, 3 },
      { { data { 4, 1 } }, { data { 1, 1 } } })
    h.errors("cannot broadcast shape [2, 1] to [4, 3]", tf, data { 2, 1 })
  end)

  it("squeeze: a named unknown axis is checked at run; no axes with unknown dims gives an unknown rank", function()
    check(function(x) return tide.squeeze(x, 1) end, { { { None, 1, 3 } } }, { None, 3 },
      { { data { 2, 1, 3 } }, { data { 1, 1, 3 } } })
    local tf = check(function(x) return tide.squeeze(x, 0) end, { { { None, 3 } } }, { 3 }, { { data { 1, 3 } } })
    h.errors("cannot squeeze axis 0 of size 2", tf, data { 2, 3 })
    local sq = tide.trace(function(x) return tide.squeeze(x) end, { input_signature = { tide.TensorSpec({ None, 1, 3 }) } })
    assert.are.equal("<unknown>", tostring(sq:get_concrete_function().structured_outputs[1].shape))
    assert.are.same({ 2, 3 }, sq(data { 2, 1, 3 }).shape:as_list())
    assert.are.same({ 3 }, sq(data { 1, 1, 3 }).shape:as_list()) -- TF: the dims of size 1 go, whichever they are
  end)

  it("indexing and slicing", function()
    local tf = check(function(x) return x[0] end, { { { None, 3 } } }, { 3 }, ROWS)
    h.errors("index 0 is out of range", tf, data { 0, 3 })
    check(function(x) return x[-1] end, { { { None, 3 } } }, { 3 }, ROWS)
    check(function(x) return x:slice { { 1, -1 } } end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    check(function(x) return x:slice { {}, { 0, 2 } } end, { { { None, 3 } } }, { None, 2 }, ROWS0)
    check(function(x) return x:slice { { nil, nil, -1 } } end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    check(function(x) return x:slice { { 3, 1 } } end, { { { None, 3 } } }, { 0, 3 }, ROWS0)
    check(function(x) return x:slice { {}, 1 } end, { { { None, 3 } } }, { None }, ROWS0)
    local tf2 = trace(function(x) return x[4] end, { { { None, 3 } } })
    h.close(tf2(data { 5, 3 }), data { 5, 3 }[4])
    h.errors("index 4 is out of range", tf2, data { 3, 3 })
  end)
end)

describe("traced shapes with unknown dims: shape ops that copy", function()
  it("concat sums the axis and merges the other dims; stack and split", function()
    local c = data { 2, 3 }
    check(function(x) return tide.concat({ x, x }, 0) end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    check(function(x) return tide.concat({ x, c }, 0) end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    check(function(x) return tide.concat({ x, x }, 1) end, { { { None, 3 } } }, { None, 6 }, ROWS0)
    check(function(a, b) return tide.concat({ a, b }, 1) end, { { { None, 3 } }, { { 2, None } } }, { 2, None },
      { { data { 2, 3 }, data { 2, 1 } }, { data { 2, 3 }, data { 2, 4 } } })
    check(function(x) return tide.stack({ x, x }, 1) end, { { { None, 3 } } }, { None, 2, 3 }, ROWS)
    check(function(x) return unpack(tide.split(x, 3, 1)) end, { { { None, 3 } } },
      { { None, 1 }, { None, 1 }, { None, 1 } }, ROWS)
    h.errors("concat: dimension 1 of input 2 is 4 but input 1 has 3", trace,
      function(x) return tide.concat({ x, data { 2, 4 } }, 0) end, { { { None, 3 } } })
    h.errors("split: dimension 0 of shape (None, 3) is unknown (None)", trace,
      function(x) return tide.split(x, 2)[1] end, { { { None, 3 } } })
    h.errors("unstack: dimension 0", trace, function(x) return tide.unstack(x)[1] end, { { { None, 3 } } })
  end)

  it("tile, pad, reverse", function()
    check(function(x) return tide.tile(x, { 2, 2 }) end, { { { None, 3 } } }, { None, 6 }, ROWS0)
    check(function(x) return tide.tile(x, { 0, 1 }) end, { { { None, 3 } } }, { 0, 3 }, ROWS)
    check(function(x) return tide.pad(x, { { 1, 1 }, { 0, 2 } }) end, { { { None, 3 } } }, { None, 5 }, ROWS0)
    check(function(x) return tide.pad(x, { { 0, 0 }, { 1, 1 } }, "REFLECT") end, { { { None, 3 } } }, { None, 5 }, ROWS)
    h.errors("needs its size, unknown (None)", trace,
      function(x) return tide.pad(x, { { 1, 1 }, { 0, 0 } }, "SYMMETRIC") end, { { { None, 3 } } })
    check(function(x) return tide.reverse(x, { 0 }) end, { { { None, 3 } } }, { None, 3 }, ROWS0)
  end)

  it("gather, one_hot, scatter_add and slice_update", function()
    local idx = tide.tensor { 0, 2 }
    check(function(x) return tide.gather(x, idx, { axis = 1 }) end, { { { None, 3 } } }, { None, 2 }, ROWS0)
    local params = data { 5, 3 }
    check(function(i) return tide.gather(params, i) end, { { { None }, "int32" } }, { None, 3 },
      { { tide.tensor { 4, 0, 1 } }, { tide.tensor { 2 } } })
    local tf = check(function(i) return tide.one_hot(i, 4) end, { { { None }, "int32" } }, { None, 4 },
      { { tide.tensor { 3, 0, 1 } }, { tide.tensor { 2 } } })
    h.close(tf(tide.tensor { 1, 3 }), { { 0, 1, 0, 0 }, { 0, 0, 0, 1 } })
    check(function(x) return tide.scatter_add(x, tide.tensor { 0, 1 }, tide.ones { 2, 3 }) end, { { { None, 3 } } },
      { None, 3 }, { x23(), x53() })
    check(function(x) return tide.slice_update(x, { 0 }, tide.ones { 3 }) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x, u) return tide.slice_update(x, { { 0, 2 } }, u) end, { { { None, 3 } }, { { None, 3 } } },
      { None, 3 }, { { data { 2, 3 }, data { 2, 3 } }, { data { 4, 3 }, data { 2, 3 } } })
  end)
end)

describe("traced shapes with unknown dims: neural-network ops", function()
  it("softmax and the cross-entropies keep the batch unknown", function()
    check(function(x) return tide.nn.softmax(x) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return tide.nn.log_softmax(x, 0) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(l, x) return tide.nn.sparse_softmax_cross_entropy_with_logits(l, x) end,
      { { { None }, "int32" }, { { None, 3 } } }, { None },
      { { tide.tensor { 0, 2 }, data { 2, 3 } }, { tide.tensor { 1 }, data { 1, 3 } } })
    check(function(l, x) return tide.nn.sigmoid_cross_entropy_with_logits(l, x) end,
      { { { None, 3 } }, { { None, 3 } } }, { None, 3 }, { { data { 2, 3 }, data { 2, 3 } } })
    check(function(x) return tide.nn.bias_add(x, tide.ones { 3 }) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return tide.nn.layer_norm(x) end, { { { None, 3 } } }, { None, 3 }, ROWS)
    check(function(x) return tide.nn.moments(x, { 0 }) end, { { { None, 3 } } }, { { 3 }, { 3 } }, ROWS)
  end)

  it("convolutions and pooling with unknown batch and spatial dims", function()
    local f = data { 3, 3, 2, 4 }
    check(function(x) return tide.nn.conv2d(x, f, 1, "SAME") end, { { { None, 5, 5, 2 } } }, { None, 5, 5, 4 },
      { { data { 1, 5, 5, 2 } }, { data { 2, 5, 5, 2 } } })
    check(function(x) return tide.nn.conv2d(x, f, 2, "SAME") end, { { { None, None, 7, 2 } } }, { None, None, 4, 4 },
      { { data { 1, 5, 7, 2 } }, { data { 2, 6, 7, 2 } } })
    check(function(x) return tide.nn.conv2d(x, f, 1, "VALID") end, { { { None, None, None, 2 } } },
      { None, None, None, 4 }, { { data { 1, 5, 5, 2 } }, { data { 2, 6, 4, 2 } } })
    check(function(x) return tide.nn.depthwise_conv2d(x, data { 3, 3, 2, 2 }, 1, "VALID") end,
      { { { None, 5, 5, 2 } } }, { None, 3, 3, 4 }, { { data { 2, 5, 5, 2 } } })
    check(function(x) return tide.nn.max_pool2d(x, 2) end, { { { None, 4, 4, 2 } } }, { None, 2, 2, 2 },
      { { data { 1, 4, 4, 2 } }, { data { 3, 4, 4, 2 } } })
    check(function(x) return tide.nn.avg_pool2d(x, 2, { padding = "SAME" }) end, { { { None, None, 5, 2 } } },
      { None, None, 3, 2 }, { { data { 1, 4, 5, 2 } }, { data { 2, 5, 5, 2 } } })
    h.errors("the input has 3 channel(s) but the filters expect 2", trace,
      function(x) return tide.nn.conv2d(x, f, 1, "SAME") end, { { { None, 5, 5, 3 } } })
    local tf = trace(function(x) return tide.nn.conv2d(x, f, 1, "VALID") end, { { { None, None, 5, 2 } } })
    h.errors("larger than the padded input", tf, data { 1, 1, 5, 2 })
    assert.are.same({ 1, 0, 3, 4 }, tf(data { 1, 2, 5, 2 }).shape:as_list()) -- TF: a window 1 larger gives 0 rows
  end)
end)

describe("traced shapes with unknown dims: creation from a traced shape", function()
  it("zeros_like and ones_like take the shape when the graph runs", function()
    local tf = check(function(x) return tide.zeros_like(x) end, { { { None, 3 } } }, { None, 3 }, ROWS0)
    h.close(tf(data { 2, 3 }), { { 0, 0, 0 }, { 0, 0, 0 } })
    local t2 = check(function(x) return tide.ones_like(x, "int32") end, { { { None, 3 } } }, { None, 3 }, ROWS)
    assert.are.same({ { 1, 1, 1 } }, t2(tide.tensor({ { 0 / 0, 1, 2 } }, "float32")):totable())
    -- a fill of x's shape, which reads no value of x
    local text = tf:get_concrete_function():graph_text()
    assert.truthy(text:find("fill(", 1, true), text)
    assert.falsy(text:find("where", 1, true), text)
    local t3 = check(function(x) return tide.zeros_like(x, "bool") end, { { { None, 2, None }, "int64" } },
      { None, 2, None }, { { tide.ones({ 3, 2, 1 }, "int64") } })
    assert.are.same({ { { false }, { false } }, { { false }, { false } }, { { false }, { false } } },
      t3(tide.ones({ 3, 2, 1 }, "int64")):totable())
  end)
end)
