-- tests/spec/ops/nn_pool_index_spec.lua — tf.nn's max_pool_with_argmax, fractional_max_pool/fractional_avg_pool
-- (ops/nn_pool_index.lua), with_space_to_batch and isotonic_regression (ops/nn_space.lua) against TF 2.21
-- (tests/fixtures/nn_index/cases.json, from gen.py beside it), traced, differentiated and refused.
local tide = require "tide"
local json = require "tide.json"
local gc = require "gradcheck"
local h = require "helpers"

local f = assert(io.open("tests/fixtures/nn_index/cases.json", "rb"))
local FIX = json.decode(f:read("*a"))
f:close()

local nn = tide.nn

local function make(e)
  local t = tide.tensor(e.v, e.dtype)
  if #e.shape ~= t.ndim then t = tide.reshape(t, e.shape) end
  return t
end

local function flatten(v, out)
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for _, x in ipairs(v) do flatten(x, out) end
  return out
end

local function matches(what, t, e, tol)
  assert(t.dtype == e.dtype, string.format("%s: dtype %s, TF gives %s", what, t.dtype, e.dtype))
  assert(table.concat(t.shape:as_list(), ",") == table.concat(e.shape, ","),
    string.format("%s: shape %s, TF gives (%s)", what, tostring(t.shape), table.concat(e.shape, ",")))
  local got, want = flatten(t:totable(), {}), flatten(e.v, {})
  for i, w in ipairs(want) do
    assert(math.abs(got[i] - w) <= (tol or 1e-5) * math.max(1, math.abs(w)),
      string.format("%s: value %d is %s, TF gives %s", what, i, tostring(got[i]), tostring(w)))
  end
end

local function maxabs(a, b) return tide.reduce_max(tide.abs(a - b)):item() end

describe("tf.nn pools with indices, with_space_to_batch, isotonic_regression", function()
  it("max_pool_with_argmax gives TF's values and flattened indices", function()
    for i, c in ipairs(FIX.argmax) do
      local y, idx = nn.max_pool_with_argmax(make(c.x), c.ksize, c.strides, c.padding, c.kwargs)
      matches("argmax case " .. i .. " y", y, c.y)
      matches("argmax case " .. i .. " argmax", idx, c.argmax)
    end
  end)

  it("fractional pools give TF's values for TF's pooling sequences", function()
    for i, c in ipairs(FIX.fractional) do
      local rows, cols = make(c.rows), make(c.cols)
      local y, r, cl = nn[c.fn](make(c.x), c.ratio, { overlapping = c.kwargs.overlapping,
        pooling_sequences = { rows, cols } })
      matches("fractional case " .. i .. " " .. c.fn, y, c.y)
      assert.are.same(c.rows.v, r:totable())
      assert.are.same(c.cols.v, cl:totable())
    end
  end)

  it("draws pooling sequences as TF's algorithm does: steps of k or k + 1, the same for the same seed", function()
    local x = gc.random({ 1, 23, 17, 1 }, -1, 1, 1)
    for _, pr in ipairs { false, true } do
      local _, r1, c1 = nn.fractional_max_pool(x, { 1, 1.7, 1.3, 1 }, { seed = 9, pseudo_random = pr })
      local _, r2, c2 = nn.fractional_max_pool(x, { 1, 1.7, 1.3, 1 }, { seed = 9, pseudo_random = pr })
      assert.are.same(r1:totable(), r2:totable())
      assert.are.same(c1:totable(), c2:totable())
      for _, pair in ipairs { { r1:totable(), 23, 13 }, { c1:totable(), 17, 13 } } do
        local seq, n, out = pair[1], pair[2], pair[3]
        assert.are.equal(out + 1, #seq)
        assert.are.equal(0, seq[1])
        assert.are.equal(n, seq[#seq])
        local k = math.floor(n / out)
        for j = 2, #seq do assert.is_true(seq[j] - seq[j - 1] == k or seq[j] - seq[j - 1] == k + 1) end
      end
    end
    local y = nn.fractional_avg_pool(x, 2)
    assert.are.same({ 1, 11, 8, 1 }, y.shape:as_list())
  end)

  it("isotonic_regression gives TF's fit and segments", function()
    for i, c in ipairs(FIX.isotonic) do
      local y, seg = nn.isotonic_regression(make(c.x), c.kwargs)
      matches("isotonic case " .. i .. " y", y, c.y)
      matches("isotonic case " .. i .. " segments", seg, c.segments)
    end
  end)

  it("with_space_to_batch gives TF's values around conv and pool ops", function()
    local W, W1 = make(FIX.W), make(FIX.W1)
    local ops = {
      conv2d = function(x, _, p) return nn.conv2d(x, W, 1, p) end,
      max_pool = function(x, _, p) return nn.max_pool2d(x, 2, 1, p) end,
      conv1d = function(x, _, p) return nn.conv1d(x, W1, 1, p) end,
      conv2d_nchw = function(x, _, p)
        return tide.transpose(nn.conv2d(tide.transpose(x, { 0, 2, 3, 1 }), W, 1, p), { 0, 3, 1, 2 })
      end,
    }
    for i, c in ipairs(FIX.space) do
      local y = nn.with_space_to_batch(make(c.x), c.rate, c.padding, ops[c.op], c.kwargs)
      matches("space case " .. i .. " " .. c.op, y, c.y, 1e-4)
    end
  end)

  it("traces with a None batch as it runs eagerly", function()
    local x = tide.cast(gc.random({ 2, 6, 7, 3 }, -1, 1, 2), "float32")
    local W = tide.cast(gc.random({ 3, 3, 3, 2 }, -1, 1, 3), "float32")
    local rows, cols = tide.tensor { 0, 1, 3, 4, 6 }, tide.tensor { 0, 1, 3, 4, 6, 7 }
    local function body(a)
      local y, idx = nn.max_pool_with_argmax(a, 3, 2, "SAME", { include_batch_in_index = true })
      local fy = nn.fractional_max_pool(a, { 1, 1.5, 1.4, 1 }, { pooling_sequences = { rows, cols } })
      local sb = nn.with_space_to_batch(a, { 2, 2 }, "SAME", function(v, _, p) return nn.conv2d(v, W, 1, p) end,
        { filter_shape = { 3, 3 } })
      return y, idx, fy, sb
    end
    local fn = tide.trace(body, { input_signature = { tide.TensorSpec({ tide.None, 6, 7, 3 }, "float32") } })
    local got, want = { fn(x) }, { body(x) }
    for k = 1, #want do
      assert.are.equal(want[k].dtype, got[k].dtype)
      assert.is_true(maxabs(tide.cast(got[k], "float64"), tide.cast(want[k], "float64")) < 1e-5, "result " .. k)
    end
  end)

  it("has float64 finite-difference gradients", function()
    local x = gc.random({ 2, 5, 6, 2 }, -1, 1, 4)
    gc.check(function(a) return (nn.max_pool_with_argmax(a, 2, 2, "SAME")) end, { x }, { none = false })
    local seq = { { 0, 1, 3, 4, 5 }, { 0, 2, 3, 5, 6 } }
    gc.check(function(a) return (nn.fractional_max_pool(a, { 1.25, 1.5 }, { pooling_sequences = seq, overlapping = true })) end,
      { x }, { none = false })
    gc.check(function(a) return (nn.fractional_avg_pool(a, { 1.25, 1.5 }, { pooling_sequences = seq })) end, { x },
      { none = false })
    local W = gc.random({ 2, 2, 2, 3 }, -1, 1, 5)
    gc.check(function(a, w)
      return nn.with_space_to_batch(a, { 2, 2 }, "SAME", function(v, _, p) return nn.conv2d(v, w, 1, p) end,
        { filter_shape = { 2, 2 } })
    end, { x, W }, { none = false })
    -- isotonic: eager only (its segments are data); the fit is the mean over each segment
    local v = tide.tensor({ { 0.3, 0.9, 0.1, 0.6, -0.4 }, { 1.2, 0.4, 0.5, -1, -0.8 } }, "float64")
    gc.check(function(a) return (nn.isotonic_regression(a)) end, { v }, { none = false })
  end)

  it("names the op and the argument in its errors", function()
    local x = tide.zeros({ 1, 4, 4, 1 })
    h.errors("max_pool_with_argmax: input must be 4-D", nn.max_pool_with_argmax, tide.zeros({ 4, 4 }), 2, 2, "VALID")
    h.errors("max_pool_with_argmax: padding must be \"VALID\" or \"SAME\"", nn.max_pool_with_argmax, x, 2, 2, "FULL")
    h.errors("max_pool_with_argmax: output_dtype must be int32 or int64", nn.max_pool_with_argmax, x, 2, 2, "VALID",
      { output_dtype = "float32" })
    h.errors("max_pool_with_argmax: a 5x5 window does not fit", nn.max_pool_with_argmax, x, 5, 1, "VALID")
    h.errors("fractional_max_pool: pooling_ratio must be >= 1", nn.fractional_max_pool, x, 0.5)
    h.errors("fractional_max_pool: pooling_ratio must be 1 in the batch and channel dims", nn.fractional_max_pool, x,
      { 2, 1.5, 1.5, 1 })
    h.errors("fractional_avg_pool: row_pooling_sequence must hold 3 boundaries from 0 to 4", nn.fractional_avg_pool, x,
      2, { pooling_sequences = { { 0, 4 }, { 0, 2, 4 } } })
    h.errors("fractional_avg_pool: col_pooling_sequence must increase", nn.fractional_avg_pool, x, 1.5,
      { pooling_sequences = { { 0, 2, 4 }, { 0, 4, 4 } } })
    h.errors("isotonic_regression: axis 2 is out of range for rank 2", nn.isotonic_regression, tide.zeros({ 2, 2 }),
      { axis = 2 })
    h.errors("isotonic_regression: inputs must be a real number tensor, got bool", nn.isotonic_regression,
      tide.tensor { true })
    h.errors("isotonic_regression: runs eagerly only", tide.trace(function(a) return (nn.isotonic_regression(a)) end),
      tide.zeros({ 3 }))
    local id = function(v) return v end
    h.errors("with_space_to_batch: filter_shape is required for padding \"SAME\"", nn.with_space_to_batch, x, { 2, 2 },
      "SAME", id)
    h.errors("with_space_to_batch: dilation_rate must be positive", nn.with_space_to_batch, x, { 0, 2 }, "VALID", id)
    h.errors("with_space_to_batch: op must be a function", nn.with_space_to_batch, x, { 2, 2 }, "VALID", 3)
  end)
end)
