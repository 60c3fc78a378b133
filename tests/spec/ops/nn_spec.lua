-- tests/spec/ops/nn_spec.lua — tide.nn's ops other than convolution and pooling:
-- softmax, log_softmax, the cross-entropies, l2_loss, bias_add, moments, the
-- normalizations, dropout and embedding_lookup: values against hand-computed
-- references, float64 gradient checks (strided inputs, other axes, second
-- order), and errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local C = binding.C
local nn = tide.nn

local exp, log = math.exp, math.log
local NAN, INF = 0 / 0, math.huge

local function f32(v) return tide.tensor(v, "float32") end
local function f64(v) return tide.tensor(v, "float64") end

-- softmax of a Lua list, in Lua doubles.
local function lsoftmax(row)
  local mx = -INF
  for _, v in ipairs(row) do mx = math.max(mx, v) end
  local s, out = 0, {}
  for i, v in ipairs(row) do
    out[i] = exp(v - mx)
    s = s + out[i]
  end
  for i = 1, #out do out[i] = out[i] / s end
  return out
end

-- log(sum(exp(row))), in Lua doubles.
local function llse(row)
  local mx = -INF
  for _, v in ipairs(row) do mx = math.max(mx, v) end
  local s = 0
  for _, v in ipairs(row) do s = s + exp(v - mx) end
  return mx + log(s)
end

-- A reference softmax written with separate tide ops (max, exp, sum, div).
local function ref_softmax(x, axis)
  local e = tide.exp(x - tide.reduce_max(x, axis, true))
  return e / tide.reduce_sum(e, axis, true)
end

local function same_values(a, b)
  local va, vb = h.values(a), h.values(b)
  assert.are.equal(#vb, #va)
  for i = 1, #va do assert.are.equal(vb[i], va[i]) end
end

---------------------------------------------------------------------------
describe("nn.softmax", function()
  it("matches exp(x) / sum(exp(x)) along the last axis; rows sum to 1", function()
    local rows = { { 1, 2, 3 }, { -1, 0.5, 4 } }
    local y = nn.softmax(f32(rows))
    assert.are.equal("float32", y.dtype)
    assert.are.same({ 2, 3 }, y.shape:as_list())
    h.close(y, { lsoftmax(rows[1]), lsoftmax(rows[2]) }, 1e-6)
    h.close(tide.reduce_sum(y, -1), { 1, 1 }, 1e-6)
    h.close(nn.softmax(f32{ 1, 2, 3 }), lsoftmax{ 1, 2, 3 }, 1e-6)
  end)

  it("takes the axis positionally, as an option, or negative", function()
    local x = f64{ { 1, 2 }, { 3, 5 } }
    local want = { { lsoftmax{ 1, 3 }[1], lsoftmax{ 2, 5 }[1] }, { lsoftmax{ 1, 3 }[2], lsoftmax{ 2, 5 }[2] } }
    h.close(nn.softmax(x, 0), want, 1e-12)
    h.close(nn.softmax(x, { axis = 0 }), want, 1e-12)
    h.close(nn.softmax(x, -2), want, 1e-12)
    h.close(nn.softmax(x, tide.tensor(0)), want, 1e-12)
  end)

  it("stays finite for large logits and gives -inf logits probability 0", function()
    h.close(nn.softmax(f32{ 1000, 1001, 1002 }), lsoftmax{ 0, 1, 2 }, 1e-6)
    h.close(nn.softmax(f32{ -1e30, 0 }), { 0, 1 }, 0)
    h.close(nn.softmax(f32{ -INF, 0, 0 }), { 0, 0.5, 0.5 }, 1e-7)
  end)

  it("turns a row holding NaN into NaN, other rows untouched (as TF)", function()
    local y = nn.softmax(f32{ { 1, NAN, 2 }, { 0, 0, 0 } })
    h.close(y, { { NAN, NAN, NAN }, { 1 / 3, 1 / 3, 1 / 3 } }, 1e-6)
  end)

  it("works on float64, float16 and bfloat16", function()
    local rows = { { 0.5, -1, 2, 0 } }
    h.close(nn.softmax(f64(rows)), { lsoftmax(rows[1]) }, 1e-14)
    local y16 = nn.softmax(tide.tensor(rows, "float16"))
    assert.are.equal("float16", y16.dtype)
    h.close(y16:cast("float32"), { lsoftmax(rows[1]) }, 2e-3)
    local yb = nn.softmax(tide.tensor(rows, "bfloat16"))
    assert.are.equal("bfloat16", yb.dtype)
    h.close(yb:cast("float32"), { lsoftmax(rows[1]) }, 1e-2)
  end)

  it("reads strided views (transposed, sliced)", function()
    local x = gc.random({ 5, 7 }, -3, 3, 11)
    h.close(nn.softmax(x:transpose()), ref_softmax(x:transpose():contiguous(), -1), 1e-14)
    local s = x:slice{ { 1, 5 }, { 0, 7, 2 } }
    h.close(nn.softmax(s, 0), ref_softmax(s:contiguous(), 0), 1e-14)
  end)

  it("handles any axis of a larger tensor (row and column paths, several strips, threads)", function()
    local x = gc.random({ 3, 40, 300 }, -5, 5, 3):cast("float32")
    for _, ax in ipairs{ 0, 1, 2 } do
      h.close(nn.softmax(x, ax), ref_softmax(x, ax), 1e-6)
      h.close(nn.log_softmax(x, ax), tide.log(ref_softmax(x, ax)), 1e-5)
    end
    local big = gc.random({ 512, 1000 }, -20, 20, 5):cast("float32")
    h.close(nn.softmax(big), ref_softmax(big, -1), 1e-6)
    h.close(tide.reduce_sum(nn.softmax(big, 0), 0), tide.ones({ 1000 }), 1e-5)
  end)

  it("keeps the shape of an empty tensor", function()
    assert.are.same({ 0, 3 }, nn.softmax(tide.zeros({ 0, 3 })).shape:as_list())
    assert.are.same({ 2, 0 }, nn.log_softmax(tide.zeros({ 2, 0 })).shape:as_list())
  end)

  it("rejects integer logits, bad axes, scalars and nil", function()
    h.errors("softmax: logits must be a float tensor", nn.softmax, tide.tensor{ 1, 2 })
    h.errors("log_softmax: logits must be a float tensor", nn.log_softmax, tide.tensor{ true })
    h.errors("out of range", nn.softmax, f32{ { 1, 2 } }, 2)
    h.errors("out of range", nn.softmax, f32{ { 1, 2 } }, -3)
    h.errors("at least 1 dimension", nn.softmax, f32(1))
    h.errors("softmax: logits is nil", nn.softmax, nil)
    h.errors("axis must be an integer", nn.softmax, f32{ 1 }, 0.5)
  end)
end)

describe("nn.log_softmax", function()
  it("is x - logsumexp(x), finite for large logits", function()
    local rows = { { 1, 2, 3 }, { 1000, 0, -1000 } }
    local y = nn.log_softmax(f32(rows))
    local want = {}
    for r, row in ipairs(rows) do
      want[r] = {}
      for i, v in ipairs(row) do want[r][i] = v - llse(row) end
    end
    h.close(y, want, 1e-6)
    assert.is_true(tide.reduce_all(tide.isfinite(y)):item())
    h.close(nn.log_softmax(f64{ 1e300, 0 }), { 0, -1e300 }, 1e-12)
  end)

  it("takes the axis of a 3-D tensor", function()
    local x = gc.random({ 2, 3, 4 }, -2, 2, 9)
    h.close(nn.log_softmax(x, 1), tide.log(ref_softmax(x, 1)), 1e-12)
  end)
end)

---------------------------------------------------------------------------
describe("nn.sigmoid_cross_entropy_with_logits", function()
  -- z * -log(sigmoid(x)) + (1 - z) * -log(1 - sigmoid(x)), in Lua doubles.
  local function explicit(z, x)
    local s = 1 / (1 + exp(-x))
    return -z * log(s) - (1 - z) * log(1 - s)
  end

  it("matches the explicit formula, elementwise", function()
    local z, x = { { 0, 1, 0.3 }, { 1, 0, 0.5 } }, { { 0.5, -1.5, 2 }, { 3, -0.25, 0 } }
    local want = {}
    for r = 1, 2 do
      want[r] = {}
      for c = 1, 3 do want[r][c] = explicit(z[r][c], x[r][c]) end
    end
    h.close(nn.sigmoid_cross_entropy_with_logits(f32(z), f32(x)), want, 1e-6)
    h.close(nn.sigmoid_cross_entropy_with_logits{ labels = f64(z), logits = f64(x) }, want, 1e-12)
    h.close(nn.sigmoid_cross_entropy_with_logits(z, f64(x)), want, 1e-12) -- labels from a Lua table
  end)

  it("stays finite for large logits", function()
    h.close(nn.sigmoid_cross_entropy_with_logits(f32{ 0, 1, 1, 0 }, f32{ 100, -100, 100, -100 }),
      { 100, 100, 0, 0 }, 1e-6)
  end)

  it("rejects mismatched shapes and dtypes, integer logits and nil", function()
    h.errors("must have the same shape", nn.sigmoid_cross_entropy_with_logits, f32{ 1, 0 }, f32{ 1, 2, 3 })
    h.errors("must have the same dtype", nn.sigmoid_cross_entropy_with_logits, f64{ 1, 0 }, f32{ 1, 2 })
    h.errors("logits must be a float tensor", nn.sigmoid_cross_entropy_with_logits, tide.tensor{ 1 }, tide.tensor{ 1 })
    h.errors("logits is nil", nn.sigmoid_cross_entropy_with_logits, f32{ 1 })
    h.errors("labels is nil", nn.sigmoid_cross_entropy_with_logits, nil, f32{ 1 })
  end)
end)

describe("nn.softmax_cross_entropy_with_logits", function()
  it("is -sum(labels * log(softmax(logits))) along the axis", function()
    local labels = { { 0, 0, 1 }, { 0.2, 0.3, 0.5 } }
    local logits = { { 1, 2, 3 }, { 4, -1, 0.5 } }
    local want = {}
    for r = 1, 2 do
      local sm = lsoftmax(logits[r])
      want[r] = 0
      for c = 1, 3 do want[r] = want[r] - labels[r][c] * log(sm[c]) end
    end
    local loss = nn.softmax_cross_entropy_with_logits(f32(labels), f32(logits))
    assert.are.same({ 2 }, loss.shape:as_list())
    h.close(loss, want, 1e-6)
    -- the class axis first
    local t = nn.softmax_cross_entropy_with_logits(f64(labels):transpose(), f64(logits):transpose(), 0)
    h.close(t, want, 1e-12)
    h.close(nn.softmax_cross_entropy_with_logits{ labels = labels, logits = f64(logits), axis = -1 }, want, 1e-12)
  end)

  it("stays finite for large logits", function()
    h.close(nn.softmax_cross_entropy_with_logits(f32{ 1, 0 }, f32{ 1000, 0 }), 0, 1e-6)
    h.close(nn.softmax_cross_entropy_with_logits(f32{ 0, 1 }, f32{ 1000, 0 }), 1000, 1e-6)
  end)

  it("rejects mismatched shapes and dtypes, integer logits and scalars", function()
    h.errors("must have the same shape", nn.softmax_cross_entropy_with_logits, f32{ { 1, 0 } }, f32{ 1, 2 })
    h.errors("must have the same dtype", nn.softmax_cross_entropy_with_logits, f64{ 1, 0 }, f32{ 1, 2 })
    h.errors("logits must be a float tensor", nn.softmax_cross_entropy_with_logits, { 1 }, tide.tensor{ 1 })
    h.errors("at least 1 dimension", nn.softmax_cross_entropy_with_logits, f32(1), f32(1))
    h.errors("out of range", nn.softmax_cross_entropy_with_logits, f32{ 1, 0 }, f32{ 1, 2 }, 1)
  end)
end)

describe("nn.sparse_softmax_cross_entropy_with_logits", function()
  local logits = { { 1, 2, 3 }, { 4, -1, 0.5 }, { 0, 0, 0 } }
  local labels = { 2, 0, 1 }
  local function want()
    local w = {}
    for r = 1, 3 do w[r] = llse(logits[r]) - logits[r][labels[r] + 1] end
    return w
  end

  it("is -log(softmax(logits)[label]) with 0-based int32 or int64 labels", function()
    local loss = nn.sparse_softmax_cross_entropy_with_logits(tide.tensor(labels), f32(logits))
    assert.are.equal("float32", loss.dtype)
    assert.are.same({ 3 }, loss.shape:as_list())
    h.close(loss, want(), 1e-6)
    h.close(nn.sparse_softmax_cross_entropy_with_logits(tide.tensor(labels, "int64"), f64(logits)), want(), 1e-12)
    h.close(nn.sparse_softmax_cross_entropy_with_logits{ labels = labels, logits = f64(logits) }, want(), 1e-12)
  end)

  it("gives the fused op's backprop as softmax - onehot", function()
    local loss, bp = dispatch.run(C.TIDE_OP_SPARSE_SOFTMAX_XENT, nil, { tide.tensor(labels), f64(logits) }, 2)
    h.close(loss, want(), 1e-12)
    local wbp = {}
    for r = 1, 3 do
      wbp[r] = lsoftmax(logits[r])
      wbp[r][labels[r] + 1] = wbp[r][labels[r] + 1] - 1
    end
    h.close(bp, wbp, 1e-12)
  end)

  it("takes labels of any leading shape with logits [..., K]", function()
    local x = gc.random({ 2, 2, 3 }, -2, 2, 4)
    local lab = tide.tensor{ { 0, 2 }, { 1, 1 } }
    local loss = nn.sparse_softmax_cross_entropy_with_logits(lab, x)
    assert.are.same({ 2, 2 }, loss.shape:as_list())
    local flat = nn.sparse_softmax_cross_entropy_with_logits(tide.tensor{ 0, 2, 1, 1 }, x:reshape{ 4, 3 })
    h.close(loss:reshape{ 4 }, flat, 1e-14)
    -- a scalar label with a vector of logits
    h.close(nn.sparse_softmax_cross_entropy_with_logits(tide.tensor(1), f64{ 1, 2, 3 }),
      llse{ 1, 2, 3 } - 2, 1e-12)
  end)

  it("stays finite for large logits and reads strided logits", function()
    h.close(nn.sparse_softmax_cross_entropy_with_logits(tide.tensor{ 0, 1 }, f32{ { 1000, 0 }, { 1000, 0 } }),
      { 0, 1000 }, 1e-6)
    local x = gc.random({ 4, 3 }, -2, 2, 8)
    local got = nn.sparse_softmax_cross_entropy_with_logits(tide.tensor{ 0, 3, 1 }, x:transpose())
    local want2 = nn.sparse_softmax_cross_entropy_with_logits(tide.tensor{ 0, 3, 1 }, x:transpose():contiguous())
    h.close(got, want2, 1e-14)
    local loss16 = nn.sparse_softmax_cross_entropy_with_logits(tide.tensor(labels), tide.tensor(logits, "float16"))
    assert.are.equal("float16", loss16.dtype)
    h.close(loss16:cast("float32"), want(), 3e-3)
  end)

  it("names a label outside [0, K) and K", function()
    local err = h.errors("label 3", nn.sparse_softmax_cross_entropy_with_logits, tide.tensor{ 0, 3 }, f32{ { 1, 2, 3 }, { 1, 2, 3 } })
    assert.truthy(err:find("[0, 3)", 1, true))
    h.errors("label -1", nn.sparse_softmax_cross_entropy_with_logits, tide.tensor{ -1 }, f32{ { 1, 2 } })
    h.errors("label 2", nn.sparse_softmax_cross_entropy_with_logits, tide.tensor({ { 2 } }, "int64"), f32{ { { 1, 2 } } })
  end)

  it("rejects wrong shapes, float labels, integer logits and no classes", function()
    h.errors("should equal the shape of logits except for the last", nn.sparse_softmax_cross_entropy_with_logits,
      tide.tensor{ 0, 1, 2 }, f32{ { 1, 2, 3 }, { 1, 2, 3 } })
    h.errors("should equal the shape of logits except for the last", nn.sparse_softmax_cross_entropy_with_logits,
      tide.tensor{ { 0, 1 } }, f32{ 1, 2, 3 })
    h.errors("labels must be int32 or int64", nn.sparse_softmax_cross_entropy_with_logits, f32{ 0 }, f32{ { 1, 2 } })
    h.errors("logits must be a float tensor", nn.sparse_softmax_cross_entropy_with_logits, { 0 }, tide.tensor{ { 1, 2 } })
    h.errors("at least one class", nn.sparse_softmax_cross_entropy_with_logits, tide.tensor{ 0 }, (tide.zeros({ 1, 0 })))
    h.errors("at least 1 dimension", nn.sparse_softmax_cross_entropy_with_logits, tide.tensor(0), f32(1))
    h.errors("labels is nil", nn.sparse_softmax_cross_entropy_with_logits, nil, f32{ 1 })
    -- the C op's own checks
    h.errors("same first dimension", dispatch.run, C.TIDE_OP_SPARSE_SOFTMAX_XENT, nil,
      { tide.tensor{ 0 }, f32{ { 1, 2 }, { 3, 4 } } }, 2)
    h.errors("logits must be 2-D", dispatch.run, C.TIDE_OP_SPARSE_SOFTMAX_XENT, nil, { tide.tensor{ 0 }, f32{ 1, 2 } }, 2)
  end)
end)

---------------------------------------------------------------------------
describe("nn.l2_loss", function()
  it("is sum(t ^ 2) / 2", function()
    local y = nn.l2_loss(f32{ { 1, 2 }, { 3, -4 } })
    assert.are.same({}, y.shape:as_list())
    assert.are.equal(15, y:item())
    h.close(nn.l2_loss(f64{ 0.5 }), 0.125, 0)
  end)

  it("rejects integer tensors and nil", function()
    h.errors("l2_loss: t must be a float tensor", nn.l2_loss, tide.tensor{ 1, 2 })
    h.errors("l2_loss: t is nil", nn.l2_loss, nil)
  end)
end)

describe("nn.bias_add", function()
  it("adds bias along the last axis (NHWC) or dim 1 (NCHW)", function()
    local x = f32{ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }
    h.close(nn.bias_add(x, f32{ 10, 20 }), { { { 11, 22 }, { 13, 24 } }, { { 15, 26 }, { 17, 28 } } }, 0)
    h.close(nn.bias_add(x, { 10, 20 }, "NCHW"), { { { 11, 12 }, { 23, 24 } }, { { 15, 16 }, { 27, 28 } } }, 0)
    h.close(nn.bias_add(x, { 10, 20 }, { data_format = "NCW" }), { { { 11, 12 }, { 23, 24 } }, { { 15, 16 }, { 27, 28 } } }, 0)
    h.close(nn.bias_add(f32{ { 1, 2, 3 } }:transpose(), { 5 }), { { 6 }, { 7 }, { 8 } }, 0)
  end)

  it("rejects a bias that is not 1-D matching the channel dim", function()
    local x = f32{ { 1, 2, 3 }, { 4, 5, 6 } }
    h.errors("bias must be 1-D", nn.bias_add, x, f32{ { 1, 2, 3 } })
    h.errors("bias has 2 values but the channel dim (1)", nn.bias_add, x, f32{ 1, 2 })
    h.errors("value must be at least 2-D", nn.bias_add, f32{ 1, 2 }, f32{ 1, 2 })
    h.errors("must have the same dtype", nn.bias_add, x, f64{ 1, 2, 3 })
    h.errors("data_format", nn.bias_add, x, f32{ 1, 2, 3 }, "HWCN")
    h.errors("bias is nil", nn.bias_add, x, nil)
  end)
end)

describe("nn.moments", function()
  local x = { { 1, 2 }, { 3, 5 }, { 5, 11 } }

  it("gives the mean and the biased variance over axes", function()
    local mean, var = nn.moments(f32(x), { 0 })
    h.close(mean, { 3, 6 }, 1e-6)
    h.close(var, { 8 / 3, 14 }, 1e-6)
    mean, var = nn.moments(f64(x), { 0, 1 })
    assert.are.same({}, mean.shape:as_list())
    h.close(mean, 27 / 6, 1e-12)
    local s = 0
    for _, r in ipairs(x) do for _, v in ipairs(r) do s = s + (v - 27 / 6) ^ 2 end end
    h.close(var, s / 6, 1e-12)
  end)

  it("keeps dims, takes a negative axis and strided input", function()
    local mean, var = nn.moments(f64(x), -1, { keepdims = true })
    assert.are.same({ 3, 1 }, mean.shape:as_list())
    assert.are.same({ 3, 1 }, var.shape:as_list())
    h.close(mean, { { 1.5 }, { 4 }, { 8 } }, 1e-12)
    h.close(var, { { 0.25 }, { 1 }, { 9 } }, 1e-12)
    local m2, v2 = nn.moments(f64(x):transpose(), { 1 })
    h.close(m2, { 3, 6 }, 1e-12)
    h.close(v2, { 8 / 3, 14 }, 1e-12)
  end)

  it("computes float16 through float32 and returns float16", function()
    local mean, var = nn.moments(tide.tensor(x, "float16"), { 0 })
    assert.are.equal("float16", mean.dtype)
    assert.are.equal("float16", var.dtype)
    h.close(var:cast("float32"), { 8 / 3, 14 }, 1e-3)
  end)

  it("rejects missing axes, bad axes and integer input", function()
    h.errors("axes is required", nn.moments, f32(x))
    h.errors("out of range", nn.moments, f32(x), { 2 })
    h.errors("repeated", nn.moments, f32(x), { 0, -2 })
    h.errors("x must be a float tensor", nn.moments, tide.tensor(x), { 0 })
  end)
end)

describe("nn.batch_normalization", function()
  it("is (x - mean) * scale / sqrt(variance + eps) + offset, offset and scale optional", function()
    local x = f64{ { 1, 2 }, { 3, 4 } }
    local mean, var = f64{ 2, 3 }, f64{ 1, 4 }
    local eps = 0.01
    local y = nn.batch_normalization(x, mean, var, f64{ 0.5, -1 }, f64{ 2, 3 }, eps)
    h.close(y, { { (1 - 2) * 2 / math.sqrt(1.01) + 0.5, (2 - 3) * 3 / math.sqrt(4.01) - 1 },
                 { (3 - 2) * 2 / math.sqrt(1.01) + 0.5, (4 - 3) * 3 / math.sqrt(4.01) - 1 } }, 1e-12)
    local y2 = nn.batch_normalization(x, mean, var, nil, nil, eps)
    h.close(y2, { { -1 / math.sqrt(1.01), -1 / math.sqrt(4.01) }, { 1 / math.sqrt(1.01), 1 / math.sqrt(4.01) } }, 1e-12)
  end)

  it("requires variance_epsilon and float x", function()
    h.errors("variance_epsilon is required", nn.batch_normalization, f32{ 1 }, f32{ 0 }, f32{ 1 })
    h.errors("x must be a float tensor", nn.batch_normalization, tide.tensor{ 1 }, 0, 1, nil, nil, 1e-3)
  end)
end)

describe("nn.batch_norm", function()
  local x = { { 1, 10 }, { 3, 20 }, { 5, 60 } }

  it("in training normalizes with the batch statistics and returns them", function()
    local y, mean, var = nn.batch_norm(f64(x), { training = true, epsilon = 0 })
    h.close(mean, { 3, 30 }, 1e-12)
    h.close(var, { 8 / 3, (400 + 100 + 900) / 3 }, 1e-12)
    local s0, s1 = math.sqrt(8 / 3), math.sqrt(1400 / 3)
    h.close(y, { { -2 / s0, -20 / s1 }, { 0, -10 / s1 }, { 2 / s0, 30 / s1 } }, 1e-12)
    local y2 = nn.batch_norm(f64(x), { training = true, offset = { 1, 2 }, scale = { 10, 100 } })
    h.close(y2, { { -2 / math.sqrt(8 / 3 + 1e-3) * 10 + 1, -20 / math.sqrt(1400 / 3 + 1e-3) * 100 + 2 },
                  { 1, -10 / math.sqrt(1400 / 3 + 1e-3) * 100 + 2 },
                  { 2 / math.sqrt(8 / 3 + 1e-3) * 10 + 1, 30 / math.sqrt(1400 / 3 + 1e-3) * 100 + 2 } }, 1e-12)
  end)

  it("in inference uses the moving statistics (the default)", function()
    local y = nn.batch_norm(f64(x), { moving_mean = { 1, 10 }, moving_variance = { 4, 100 }, epsilon = 0 })
    h.close(y, { { 0, 0 }, { 1, 1 }, { 2, 5 } }, 1e-12)
    local y2 = nn.batch_norm(f64(x), { training = false, moving_mean = f64{ 1, 10 }, moving_variance = f64{ 4, 100 },
      offset = f64{ 1, 1 }, scale = f64{ 2, 2 }, epsilon = 0 })
    h.close(y2, { { 1, 1 }, { 3, 3 }, { 5, 11 } }, 1e-12)
  end)

  it("normalizes a channel axis other than the last (NCHW)", function()
    local t = gc.random({ 2, 3, 2, 2 }, -1, 1, 5)
    local y, mean, var = nn.batch_norm(t, { training = true, axis = 1 })
    assert.are.same({ 3 }, mean.shape:as_list())
    local m2, v2 = nn.moments(t, { 0, 2, 3 })
    h.close(mean, m2, 1e-14)
    h.close(var, v2, 1e-14)
    local ym = nn.moments(y, { 0, 2, 3 })
    h.close(ym, { 0, 0, 0 }, 1e-12)
    local yi = nn.batch_norm(t, { axis = 1, moving_mean = mean, moving_variance = var })
    h.close(yi, y, 1e-12)
  end)

  it("rejects inference without moving statistics and mismatched parameters", function()
    h.errors("needs moving_mean and moving_variance", nn.batch_norm, f32(x))
    h.errors("offset has shape", nn.batch_norm, f32(x), { training = true, offset = f32{ 1, 2, 3 } })
    h.errors("x must be a float tensor", nn.batch_norm, tide.tensor(x), { training = true })
    h.errors("unknown option", nn.batch_norm, f32(x), { trainnig = true })
  end)
end)

describe("nn.layer_norm", function()
  it("normalizes each row over the last axis, then gamma and beta", function()
    local x = { { 1, 2, 3, 6 }, { -1, -1, 1, 1 } }
    local y = nn.layer_norm(f64(x), { epsilon = 0 })
    local s0 = math.sqrt((4 + 1 + 0 + 9) / 4)
    h.close(y, { { -2 / s0, -1 / s0, 0, 3 / s0 }, { -1, -1, 1, 1 } }, 1e-12)
    local y2 = nn.layer_norm(f64(x), { gamma = { 1, 2, 3, 4 }, beta = { 0, 0, 1, 1 }, epsilon = 0 })
    h.close(y2, { { -2 / s0, -2 / s0, 1, 12 / s0 + 1 }, { -1, -2, 4, 5 } }, 1e-12)
  end)

  it("normalizes over a list of axes", function()
    local t = gc.random({ 2, 3, 4 }, -1, 1, 6)
    local y = nn.layer_norm(t, { axis = { 1, 2 }, epsilon = 0 })
    local mean, var = nn.moments(y, { 1, 2 })
    h.close(mean, { 0, 0 }, 1e-12)
    h.close(var, { 1, 1 }, 1e-12)
    local g = gc.random({ 3, 4 }, 0.5, 1.5, 2)
    h.close(nn.layer_norm(t, { axis = { 1, 2 }, gamma = g, epsilon = 0 }), y * g, 1e-12)
  end)

  it("rejects bad axes and parameters", function()
    h.errors("out of range", nn.layer_norm, f32{ { 1, 2 } }, { axis = 2 })
    h.errors("gamma has shape", nn.layer_norm, f32{ { 1, 2 } }, { gamma = f32{ 1, 2, 3 } })
    h.errors("x must be a float tensor", nn.layer_norm, tide.tensor{ { 1, 2 } })
  end)
end)

---------------------------------------------------------------------------
describe("nn.dropout", function()
  it("zeroes a fraction rate and scales the rest by 1 / (1 - rate)", function()
    local n = 100000
    local y = nn.dropout(tide.ones({ n }), 0.3)
    local zeros = tide.reduce_sum(tide.equal(y, 0):cast("float32")):item()
    assert.is_true(math.abs(zeros / n - 0.3) < 0.01, "zero fraction " .. zeros / n)
    local kept = tide.reduce_sum(tide.equal(y, 1 / 0.7):cast("float32")):item()
    assert.are.equal(n, zeros + kept)
    assert.is_true(math.abs(tide.reduce_mean(y):item() - 1) < 0.02)
  end)

  it("is reproducible with seeds and draws new masks on each call", function()
    local x = tide.ones({ 64 })
    tide.random.set_seed(5)
    local a = nn.dropout(x, 0.5, { seed = 1 })
    local b = nn.dropout(x, 0.5, { seed = 1 })
    tide.random.set_seed(5)
    local a2 = nn.dropout(x, 0.5, { seed = 1 })
    same_values(a2, a)
    assert.is_false(tide.reduce_all(tide.equal(a, b)):item())
    tide.random.set_seed(7)
    local c = nn.dropout(x, 0.5)
    tide.random.set_seed(7)
    same_values(nn.dropout(x, 0.5), c)
  end)

  it("shares the mask along noise_shape's size-1 dims", function()
    local y = nn.dropout(tide.ones({ 50, 8 }, { dtype = "float64" }), 0.5, { noise_shape = { 50, 1 } })
    for _, row in ipairs(y:totable()) do
      for j = 2, 8 do assert.are.equal(row[1], row[j]) end
    end
    assert.are.equal("float64", y.dtype)
  end)

  it("is the identity when not training or when rate is 0", function()
    local x = f32{ 1, 2, 3 }
    assert.is_true(rawequal(x, nn.dropout(x, 0.5, { training = false })))
    assert.is_true(rawequal(x, nn.dropout(x, 0)))
  end)

  it("rejects rates outside [0, 1), integer x and bad noise shapes", function()
    local x = f32{ 1, 2, 3 }
    h.errors("rate must be a number in the range [0, 1), got 1", nn.dropout, x, 1)
    h.errors("rate must be a number in the range [0, 1)", nn.dropout, x, -0.1)
    h.errors("rate must be a number in the range [0, 1)", nn.dropout, x, "0.5")
    h.errors("rate must be a number in the range [0, 1)", nn.dropout, x, nil)
    h.errors("x has to be a float tensor", nn.dropout, tide.tensor{ 1, 2 }, 0.5)
    h.errors("noise_shape", nn.dropout, x, 0.5, { noise_shape = { 2 } })
  end)
end)

describe("nn.embedding_lookup", function()
  local params = { { 0, 1 }, { 10, 11 }, { 20, 21 } }

  it("gathers rows along axis 0 for ids of any shape", function()
    local y = nn.embedding_lookup(f32(params), tide.tensor{ { 2, 0 }, { 1, 1 } })
    assert.are.same({ 2, 2, 2 }, y.shape:as_list())
    h.close(y, { { { 20, 21 }, { 0, 1 } }, { { 10, 11 }, { 10, 11 } } }, 0)
    h.close(nn.embedding_lookup({ f32(params) }, tide.tensor(1, "int64")), { 10, 11 }, 0)
    h.close(nn.embedding_lookup(f32(params), { 2 }), { { 20, 21 } }, 0)
  end)

  it("clips embeddings to max_norm", function()
    local y = nn.embedding_lookup(f64{ { 3, 4 }, { 0.3, 0.4 }, { 0, 0 } }, tide.tensor{ 0, 1, 2 }, { max_norm = 1 })
    h.close(y, { { 0.6, 0.8 }, { 0.3, 0.4 }, { 0, 0 } }, 1e-12)
  end)

  it("rejects float ids, ids out of range and sharded params", function()
    h.errors("ids must be an integer tensor", nn.embedding_lookup, f32(params), f32{ 1 })
    h.errors("gather", nn.embedding_lookup, f32(params), tide.tensor{ 3 })
    h.errors("sharded params", nn.embedding_lookup, { f32(params), f32(params) }, tide.tensor{ 0 })
    h.errors("ids is nil", nn.embedding_lookup, f32(params), nil)
  end)
end)

---------------------------------------------------------------------------
describe("gradients of tide.nn (float64 finite differences)", function()
  local x34 = function() return gc.random({ 3, 4 }, -2, 2, 21) end

  -- softmax's, log_softmax's and the fused sparse cross-entropy's cases are
  -- tests/support/grad_cases_nn.lua's.
  it("gives labels no gradient in the sparse cross-entropy", function()
    local x = x34()
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      tape:watch(x)
      return nn.sparse_softmax_cross_entropy_with_logits(tide.tensor{ 1, 0, 3 }, x)
    end)
    local g = tape:gradient(loss, x)
    local _, bp = dispatch.run(C.TIDE_OP_SPARSE_SOFTMAX_XENT, nil, { tide.tensor{ 1, 0, 3 }, x }, 2)
    h.close(g, bp, 1e-14)
  end)

  it("sigmoid and softmax cross-entropies, for labels and logits", function()
    local z = gc.random({ 3, 4 }, 0, 1, 3)
    local x = gc.random({ 3, 4 }, 0.1, 2, 4) * tide.tensor({ { 1, -1, 1, -1 } }, "float64")
    gc.check(function(a, b) return nn.sigmoid_cross_entropy_with_logits(a, b) end, { z, x })
    gc.check(function(a, b) return nn.softmax_cross_entropy_with_logits(a, b) end, { z, x34() })
    gc.check(function(a, b) return nn.softmax_cross_entropy_with_logits(a, b, 0) end,
      { z:transpose():contiguous():transpose(), x34():transpose():contiguous():transpose() })
  end)

  it("l2_loss and bias_add (value and bias, both layouts)", function()
    -- (reshaped to [1]: gradcheck's own sum over a 0-d result trips broadcast_to(g, {}), which
    -- reads the empty shape list as an options table)
    gc.check(function(t) return nn.l2_loss(t):reshape{ 1 } end, { x34():transpose() })
    gc.check(function(v, b) return nn.bias_add(v, b) end, { gc.random({ 2, 3, 4 }, -1, 1, 2), gc.random({ 4 }, -1, 1, 3) })
    gc.check(function(v, b) return nn.bias_add(v, b, "NCHW") end,
      { gc.random({ 2, 3, 2, 2 }, -1, 1, 2), gc.random({ 3 }, -1, 1, 3) })
  end)

  it("moments (mean and variance) and batch_normalization (every input)", function()
    local x = gc.random({ 4, 3 }, -1, 1, 8)
    gc.check(function(t) return (nn.moments(t, { 0 })) end, { x:transpose() })
    gc.check(function(t) return select(2, nn.moments(t, { 0 })) end, { x }, { second_order = true })
    gc.check(function(t) return select(2, nn.moments(t, { 0, 1 }, { keepdims = true })) end, { x })
    gc.check(function(t, mean, var, off, sc) return nn.batch_normalization(t, mean, var, off, sc, 1e-3) end,
      { x, gc.random({ 3 }, -1, 1, 1), gc.random({ 3 }, 0.5, 2, 2), gc.random({ 3 }, -1, 1, 3), gc.random({ 3 }, 0.5, 2, 4) })
  end)

  it("batch_norm in training and inference, layer_norm with gamma and beta", function()
    local x = gc.random({ 5, 3 }, -1, 1, 9)
    local off, sc = gc.random({ 3 }, -1, 1, 1), gc.random({ 3 }, 0.5, 2, 2)
    gc.check(function(t, o, s) return (nn.batch_norm(t, { training = true, offset = o, scale = s })) end, { x, off, sc })
    gc.check(function(t) return select(3, nn.batch_norm(t, { training = true })) end, { x })
    gc.check(function(t, mm, mv) return nn.batch_norm(t, { moving_mean = mm, moving_variance = mv, scale = sc }) end,
      { x, gc.random({ 3 }, -1, 1, 5), gc.random({ 3 }, 0.5, 2, 6) })
    gc.check(function(t, g, b) return nn.layer_norm(t, { gamma = g, beta = b }) end,
      { x:transpose(), gc.random({ 5 }, 0.5, 2, 3), gc.random({ 5 }, -1, 1, 4) })
    gc.check(function(t) return nn.layer_norm(t, { axis = { 0, 1 } }) end, { gc.random({ 2, 3, 2 }, -1, 1, 7) })
  end)

  it("dropout (a fixed mask per seed)", function()
    local x = x34()
    local function f(t)
      tide.random.set_seed(3)
      return nn.dropout(t, 0.4, { seed = 2 })
    end
    gc.check(f, { x })
    -- the gradient is the mask times 1 / (1 - rate)
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x); return f(x) end)
    local g = tape:gradient(y, x)
    h.close(g, tide.where(tide.equal(y, 0), f64(0), f64(1 / 0.6)), 1e-12)
  end)

  it("embedding_lookup (through gather's gradient)", function()
    local ids = tide.tensor{ { 2, 0 }, { 2, 2 } }
    gc.check(function(p) return nn.embedding_lookup(p, ids) end, { gc.random({ 3, 2 }, -1, 1, 2) })
    gc.check(function(p) return nn.embedding_lookup(p, ids, { max_norm = 0.5 }) end, { gc.random({ 3, 2 }, -1, 1, 2) })
  end)
end)
