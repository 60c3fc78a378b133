-- tests/spec/ops/reduce_spec.lua — reductions (sum ... all), logsumexp, variance,
-- std, argmax/argmin and cumsum/cumprod against hand-computed values.
local tide = require "tide"
local h = require "helpers"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local ffi, C = binding.ffi, binding.C

local NAN, INF = 0 / 0, math.huge

-- A tensor of dtype code dt and shape, element i (row-major, 0-based) = f(i).
local function fill(dt, shape, f)
  local t = convert.empty(dt, shape)
  local ctype = ({ [C.TIDE_FLOAT32] = "float*", [C.TIDE_FLOAT64] = "double*", [C.TIDE_INT32] = "int32_t*",
                   [C.TIDE_INT64] = "int64_t*" })[dt]
  local p = ffi.cast(ctype, t.data)
  for i = 0, tonumber(t.nelem) - 1 do p[i] = f(i) end
  return t
end

-- The transposed view (dims reversed) through the TRANSPOSE op.
local function T(x)
  return dispatch.run_view(C.TIDE_OP_TRANSPOSE, dispatch.attrs(), x)
end

local function shape(x) return x.shape:as_list() end

local x23 -- [[1, 2, 3], [4, 5, 6]] float32
before_each(function() x23 = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32") end)

describe("reduce_sum", function()
  it("sums all axes by default, to a scalar", function()
    local s = tide.reduce_sum(x23)
    assert.are.same({}, shape(s))
    assert.are.equal(21, s:item())
    assert.are.equal("float32", s.dtype)
  end)

  it("sums one axis, positive or negative", function()
    h.close(tide.reduce_sum(x23, 0), { 5, 7, 9 })
    h.close(tide.reduce_sum(x23, 1), { 6, 15 })
    h.close(tide.reduce_sum(x23, -1), { 6, 15 })
    h.close(tide.reduce_sum(x23, -2), { 5, 7, 9 })
  end)

  it("takes a list of axes", function()
    local s = tide.reduce_sum(x23, { 0, 1 })
    assert.are.same({}, shape(s))
    assert.are.equal(21, s:item())
    assert.are.equal(21, tide.reduce_sum(x23, { -1, 0 }):item())
  end)

  it("keeps dims positionally, by option and as a method", function()
    local a = tide.reduce_sum(x23, 1, true)
    assert.are.same({ 2, 1 }, shape(a))
    h.close(a, { { 6 }, { 15 } })
    local b = x23:sum{ axis = 0, keepdims = true }
    assert.are.same({ 1, 3 }, shape(b))
    h.close(b, { { 5, 7, 9 } })
    local c = x23:sum{ keepdims = true }
    assert.are.same({ 1, 1 }, shape(c))
    assert.are.equal(21, c:item())
    assert.are.same({ 1, 1 }, shape(tide.reduce_sum(x23, nil, true)))
  end)

  it("reduces several axes of a 3-d tensor", function()
    -- x[i][j][k] = 100 i + 10 j + k, shape [2, 3, 4]
    local x = fill(C.TIDE_INT32, { 2, 3, 4 }, function(n)
      local i, j, k = math.floor(n / 12), math.floor(n / 4) % 3, n % 4
      return 100 * i + 10 * j + k
    end)
    -- over axes 0 and 2: sum_i sum_k (100 i + 10 j + k) = 400 + 80 j + 12
    h.close(tide.reduce_sum(x, { 0, 2 }), { 412, 492, 572 })
    -- over axis 1: 300 i + 30 + 3 k
    h.close(tide.reduce_sum(x, 1), { { 30, 33, 36, 39 }, { 330, 333, 336, 339 } })
    local k = tide.reduce_sum(x, { 2, 0 }, true)
    assert.are.same({ 1, 3, 1 }, shape(k))
    h.close(k, { { { 412 }, { 492 }, { 572 } } })
  end)

  it("keeps integer dtypes and wraps like the type", function()
    local s = tide.reduce_sum(tide.tensor{ 1, 2, 3 })
    assert.are.equal("int32", s.dtype)
    assert.are.equal(6, s:item())
    local i8 = tide.tensor({ 100, 100 }):cast("int8")
    assert.are.equal(-56, tide.reduce_sum(i8):item())   -- 200 wraps to -56
    local u8 = tide.tensor({ 200, 100 }):cast("uint8")
    assert.are.equal(44, tide.reduce_sum(u8):item())    -- 300 mod 256
    local i64 = tide.tensor({ 2 ^ 40, 2 ^ 40 }, "int64")
    assert.are.equal(2 ^ 41, tonumber(tide.reduce_sum(i64):item()))
  end)

  it("works on float64, float16 and bfloat16", function()
    h.close(tide.reduce_sum(tide.tensor({ { 1.5, 2.5 }, { 3, 4 } }, "float64"), 1), { 4, 7 })
    local hf = tide.tensor({ { 1, 2 }, { 3, 4.5 } }, "float16")
    local s = tide.reduce_sum(hf, 0)
    assert.are.equal("float16", s.dtype)
    h.close(s, { 4, 6.5 })
    local bf = tide.tensor({ 0.5, 1.5, 2 }, "bfloat16")
    h.close(tide.reduce_sum(bf), { 4 })
    h.close(tide.reduce_max(hf, 1), { 2, 4.5 })
    h.close(tide.reduce_mean(bf), { 4 / 3 }, 1e-2)
  end)

  it("reads transposed, sliced and reversed views", function()
    local t = T(x23)                         -- [[1, 4], [2, 5], [3, 6]]
    assert.are.same({ 3, 2 }, shape(t))
    h.close(tide.reduce_sum(t, 0), { 6, 15 })
    h.close(tide.reduce_sum(t, 1), { 5, 7, 9 })
    assert.are.equal(21, tide.reduce_sum(t):item())
    local s = x23:slice{ {}, { nil, nil, 2 } }   -- [[1, 3], [4, 6]]
    h.close(tide.reduce_sum(s, 1), { 4, 10 })
    h.close(tide.reduce_sum(s, 0), { 5, 9 })
    local r = x23:slice{ { nil, nil, -1 }, { nil, nil, -1 } } -- [[6, 5, 4], [3, 2, 1]]
    h.close(tide.reduce_sum(r, 1), { 15, 6 })
    h.close(tide.reduce_sum(r, 0), { 9, 7, 5 })
    h.close(tide.reduce_max(r, 1, true), { { 6 }, { 3 } })
  end)

  it("reads broadcast (stride 0) views", function()
    local a = dispatch.attrs()
    dispatch.set_ints(a, { 100000, 3 }, "broadcast_to")
    local b = dispatch.run_view(C.TIDE_OP_BROADCAST_TO, a, tide.tensor({ 1, 2, 3 }, "float32"))
    h.close(tide.reduce_sum(b, 0), { 100000, 200000, 300000 })
    h.close(tide.reduce_sum(b, 1):slice{ { 0, 2 } }, { 6, 6 })
    assert.are.equal(600000, tide.reduce_sum(b):item())
  end)

  it("reads a large transposed view", function()
    local x = fill(C.TIDE_FLOAT32, { 300, 500 }, function(i) return i % 7 end)
    local t = T(x) -- [500, 300]; t[a][b] = x[b][a] = (500 b + a) % 7
    local s = tide.reduce_sum(t, 1):totable()
    local m = tide.reduce_sum(t, 0):totable()
    for a = 0, 499, 37 do
      local e = 0
      for b = 0, 299 do e = e + (500 * b + a) % 7 end
      assert.are.equal(e, s[a + 1])
    end
    for b = 0, 299, 23 do
      local e = 0
      for a = 0, 499 do e = e + (500 * b + a) % 7 end
      assert.are.equal(e, m[b + 1])
    end
  end)

  it("matches a Lua loop on a large input (the parallel path)", function()
    local n = 1000003
    local x = fill(C.TIDE_FLOAT32, { n }, function(i) return (i % 1000) * 0.001 end)
    local e = 0
    for i = 0, n - 1 do e = e + (i % 1000) * 0.001 end
    h.close(tide.reduce_sum(x), { e }, 1e-6)
    h.close(tide.reduce_mean(x), { e / n }, 1e-6)
    local xi = fill(C.TIDE_INT64, { n }, function(i) return i end)
    assert.are.equal(n * (n - 1) / 2, tonumber(tide.reduce_sum(xi):item()))
  end)

  it("matches Lua loops for rows and columns of a large matrix", function()
    local R, K = 700, 1500
    local x = fill(C.TIDE_FLOAT64, { R, K }, function(i) return (i * 7919) % 101 - 50 end)
    local rows, cols = tide.reduce_sum(x, 1):totable(), tide.reduce_sum(x, 0):totable()
    local maxr = tide.reduce_max(x, 1):totable()
    for r = 0, R - 1, 53 do
      local e, m = 0, -INF
      for k = 0, K - 1 do
        local v = ((r * K + k) * 7919) % 101 - 50
        e = e + v
        m = math.max(m, v)
      end
      assert.are.equal(e, rows[r + 1])
      assert.are.equal(m, maxr[r + 1])
    end
    for k = 0, K - 1, 97 do
      local e = 0
      for r = 0, R - 1 do e = e + ((r * K + k) * 7919) % 101 - 50 end
      assert.are.equal(e, cols[k + 1])
    end
  end)

  it("handles narrow columns, few wide columns and long rows (split paths)", function()
    local narrow = fill(C.TIDE_INT32, { 100000, 3 }, function(i) return i % 3 + 1 end)
    h.close(tide.reduce_sum(narrow, 0), { 100000, 200000, 300000 })
    h.close(tide.reduce_max(narrow, 0), { 1, 2, 3 })
    local wide = fill(C.TIDE_FLOAT32, { 3, 100000 }, function(i) return math.floor(i / 100000) + 1 end)
    local s = tide.reduce_sum(wide, 0)
    assert.are.same({ 100000 }, shape(s))
    local st = s:totable()
    assert.are.equal(6, st[1])
    assert.are.equal(6, st[100000])
    local long = fill(C.TIDE_FLOAT32, { 2, 200000 }, function(i) return i < 200000 and 1 or 2 end)
    h.close(tide.reduce_sum(long, 1), { 200000, 400000 })
    h.close(tide.reduce_min(long, 1), { 1, 2 })
    local tall = fill(C.TIDE_FLOAT32, { 200000, 2 }, function(i) return i % 2 == 0 and 0.5 or -1 end)
    h.close(tide.reduce_sum(tall, 0), { 100000, -200000 })
  end)

  it("gives the same bits whatever the thread count", function()
    local n = 3000017
    local x = fill(C.TIDE_FLOAT32, { n }, function(i) return math.sin(i) * 1000 end)
    local m = fill(C.TIDE_FLOAT32, { 2000, 700 }, function(i) return math.cos(i) end)
    local saved = tide.config.get_num_threads()
    tide.config.set_num_threads(1)
    local a, ca = tide.reduce_sum(x):item(), tide.reduce_sum(m, 0):totable()
    tide.config.set_num_threads(7)
    local b, cb = tide.reduce_sum(x):item(), tide.reduce_sum(m, 0):totable()
    tide.config.set_num_threads(saved)
    assert.are.equal(a, b)
    assert.are.same(ca, cb)
  end)

  it("gives 0 for an empty reduction", function()
    local e = convert.empty(C.TIDE_FLOAT32, { 0, 3 })
    h.close(tide.reduce_sum(e, 0), { 0, 0, 0 })
    assert.are.same({ 0 }, shape(tide.reduce_sum(e, 1)))
    assert.are.equal(0, tide.reduce_sum(e):item())
    assert.are.equal(0, tide.reduce_sum(convert.empty(C.TIDE_INT32, { 0 })):item())
  end)

  it("passes the input through for an empty axis list (TF reduces nothing)", function()
    local s = tide.reduce_sum(x23, { axis = {} })
    assert.are.same({ 2, 3 }, shape(s))
    -- a positional {} is the empty axis list (TF's axis=[]), not empty options
    assert.are.same({ 2, 3 }, shape(tide.reduce_sum(x23, {})))
    assert.are.same({ 2, 3 }, shape(tide.reduce_mean(x23, {}, true)))
    assert.are.same({ 2, 3 }, shape(x23:max {}))
    assert.are.same({ 2 }, shape(tide.reduce_logsumexp(tide.tensor { 1.5, 2 }, {})))
    assert.are.same({ 0, 0 }, tide.reduce_variance(tide.tensor { 1.5, 2 }, {}):totable())
    assert.are.same({ 1, 1 }, shape(tide.reduce_sum(x23, { keepdims = true })))
  end)

  it("rejects bad axes, bool input and nil", function()
    h.errors("axis 2 is out of range for a tensor of rank 2", tide.reduce_sum, x23, 2)
    h.errors("axis -3 is out of range", tide.reduce_sum, x23, -3)
    h.errors("sum: axis -1 is repeated", tide.reduce_sum, x23, { 1, -1 })
    h.errors("axis 0 is out of range for a tensor of rank 0", tide.reduce_sum, tide.tensor(1.5), 0)
    h.errors("must be a numeric tensor", tide.reduce_sum, tide.tensor{ true, false })
    h.errors("reduce_sum: argument 1 must be a tensor", tide.reduce_sum, nil)
    h.errors("axis must be an integer", tide.reduce_sum, x23, 0.5)
    h.errors("keepdims must be true or false", tide.reduce_sum, x23, 0, "yes")
    h.errors("unknown option 'axes'", tide.reduce_sum, x23, { axes = 0 })
  end)
end)

describe("reduce_mean", function()
  it("averages floats", function()
    assert.are.equal(3.5, tide.reduce_mean(x23):item())
    h.close(tide.reduce_mean(x23, 0), { 2.5, 3.5, 4.5 })
    h.close(x23:mean{ axis = 1, keepdims = true }, { { 2 }, { 5 } })
  end)

  it("truncates integer means toward zero, as TF", function()
    local m = tide.reduce_mean(tide.tensor{ { 1, 2 }, { -1, -2 } }, 1)
    assert.are.equal("int32", m.dtype)
    h.close(m, { 1, -1 })
    assert.are.equal(3, tide.reduce_mean(tide.tensor{ 3, 4 }):item())
  end)

  it("is NaN for an empty float set and 0 for ints", function()
    local m = tide.reduce_mean(convert.empty(C.TIDE_FLOAT32, { 0 })):item()
    assert.is_true(m ~= m)
    h.close(tide.reduce_mean(convert.empty(C.TIDE_FLOAT64, { 2, 0 }), 1), { NAN, NAN })
    assert.are.equal(0, tide.reduce_mean(convert.empty(C.TIDE_INT32, { 0 })):item())
  end)
end)

describe("reduce_max and reduce_min", function()
  it("find extremes along axes", function()
    assert.are.equal(6, tide.reduce_max(x23):item())
    assert.are.equal(1, tide.reduce_min(x23):item())
    h.close(tide.reduce_max(x23, 0), { 4, 5, 6 })
    h.close(x23:min(1), { 1, 4 })
    h.close(tide.reduce_min(T(x23), 0), { 1, 4 })
    local i = tide.tensor{ { -5, 7 }, { 3, -9 } }
    h.close(tide.reduce_max(i, 1), { 7, 3 })
    h.close(tide.reduce_min(i, 0), { -5, -9 })
    h.close(tide.reduce_max(tide.tensor({ 200, 3 }):cast("uint8")), { 200 })
  end)

  it("propagate NaN", function()
    local x = tide.tensor({ { 1, NAN, 3 }, { 4, 5, 6 } }, "float32")
    h.close(tide.reduce_max(x, 1), { NAN, 6 })
    h.close(tide.reduce_min(x, 1), { NAN, 4 })
    h.close(tide.reduce_max(x, 0), { 4, NAN, 6 })
    h.close(tide.reduce_min(x, 0), { 1, NAN, 3 })
    local big = fill(C.TIDE_FLOAT32, { 5000 }, function(i) return i == 4321 and NAN or i end)
    h.close(tide.reduce_max(big), { NAN })
    h.close(tide.reduce_min(big), { NAN })
  end)

  it("give the lowest / highest value for empty reductions", function()
    local e = convert.empty(C.TIDE_FLOAT32, { 2, 0 })
    h.close(tide.reduce_max(e, 1), { -INF, -INF })
    h.close(tide.reduce_min(e, 1), { INF, INF })
    assert.are.equal(-2147483648, tide.reduce_max(convert.empty(C.TIDE_INT32, { 0 })):item())
    assert.are.equal(2147483647, tide.reduce_min(convert.empty(C.TIDE_INT32, { 0 })):item())
  end)

  it("handle infinities", function()
    local x = tide.tensor({ -INF, INF, 0 }, "float64")
    assert.are.equal(INF, tide.reduce_max(x):item())
    assert.are.equal(-INF, tide.reduce_min(x):item())
  end)
end)

describe("reduce_prod", function()
  it("multiplies", function()
    assert.are.equal(720, tide.reduce_prod(x23):item())
    h.close(tide.reduce_prod(x23, 0), { 4, 10, 18 })
    h.close(x23:prod(1), { 6, 120 })
    h.close(tide.reduce_prod(tide.tensor{ { 2, -3 }, { 4, 5 } }, 1), { -6, 20 })
  end)

  it("is 1 for an empty reduction", function()
    assert.are.equal(1, tide.reduce_prod(convert.empty(C.TIDE_FLOAT32, { 0 })):item())
    assert.are.equal(1, tide.reduce_prod(convert.empty(C.TIDE_INT32, { 0 })):item())
  end)
end)

describe("reduce_any and reduce_all", function()
  local b
  before_each(function() b = tide.tensor{ { true, false, false }, { true, true, false } } end)

  it("reduce booleans", function()
    assert.are.equal(true, tide.reduce_any(b):item())
    assert.are.equal(false, tide.reduce_all(b):item())
    h.close(tide.reduce_any(b, 0), { true, true, false })
    h.close(tide.reduce_all(b, 0), { true, false, false })
    h.close(b:any(1), { true, true })
    h.close(b:all{ axis = 1, keepdims = true }, { { false }, { false } })
    h.close(tide.reduce_all(T(b), 1), { true, false, false })
    assert.are.equal("bool", tide.reduce_any(b, 0).dtype)
  end)

  it("give false / true for empty reductions", function()
    local e = convert.empty(C.TIDE_BOOL, { 0 })
    assert.are.equal(false, tide.reduce_any(e):item())
    assert.are.equal(true, tide.reduce_all(e):item())
  end)

  it("reject non-bool input", function()
    h.errors("must be a bool tensor", tide.reduce_any, x23)
    h.errors("must be a bool tensor", tide.reduce_all, tide.tensor{ 1, 0 })
  end)
end)

describe("reduce_logsumexp", function()
  it("is log(sum(exp(x))), stable for large values", function()
    local x = tide.tensor({ { 0, 0 }, { 1000, 1000 } }, "float32")
    h.close(tide.reduce_logsumexp(x, 1), { math.log(2), 1000 + math.log(2) }, 1e-5)
    h.close(tide.reduce_logsumexp(x23), { math.log(math.exp(1) + math.exp(2) + math.exp(3) + math.exp(4) +
      math.exp(5) + math.exp(6)) }, 1e-5)
    local k = x23:logsumexp{ axis = 0, keepdims = true }
    assert.are.same({ 1, 3 }, shape(k))
    h.close(k, { { math.log(math.exp(1) + math.exp(4)), math.log(math.exp(2) + math.exp(5)),
                   math.log(math.exp(3) + math.exp(6)) } }, 1e-5)
  end)

  it("gives -inf for rows of -inf and +inf for +inf, as TF", function()
    local x = tide.tensor({ { -INF, -INF }, { INF, 1 }, { -INF, 0 } }, "float64")
    h.close(tide.reduce_logsumexp(x, 1), { -INF, INF, 0 })
  end)

  it("rejects integer input", function()
    h.errors("reduce_logsumexp: input must be a float tensor, got int32", tide.reduce_logsumexp, tide.tensor{ 1, 2 })
  end)
end)

describe("reduce_variance and reduce_std", function()
  it("are the mean squared deviation and its root", function()
    -- columns of x23: {1, 4} {2, 5} {3, 6}: variance 2.25 each
    h.close(tide.reduce_variance(x23, 0), { 2.25, 2.25, 2.25 })
    h.close(tide.reduce_std(x23, 0), { 1.5, 1.5, 1.5 })
    -- rows: {1, 2, 3}: 2/3
    h.close(x23:variance{ axis = 1, keepdims = true }, { { 2 / 3 }, { 2 / 3 } }, 1e-6)
    h.close(tide.reduce_variance(x23), { 35 / 12 }, 1e-6)
    h.close(x23:std(), { math.sqrt(35 / 12) }, 1e-6)
  end)

  it("do not cancel a large offset (two passes)", function()
    local x = tide.tensor({ 1e8 + 1, 1e8 + 2, 1e8 + 3 }, "float64")
    h.close(tide.reduce_variance(x), { 2 / 3 }, 1e-9)
  end)

  it("reject integer input", function()
    h.errors("reduce_variance: input must be a float tensor", tide.reduce_variance, tide.tensor{ 1, 2 })
    h.errors("reduce_std: input must be a float tensor", tide.reduce_std, tide.tensor{ 1, 2 })
  end)
end)

describe("argmax and argmin", function()
  it("default to axis 0 and int64 output, as TF", function()
    local a = tide.argmax(x23)
    assert.are.equal("int64", a.dtype)
    h.close(a, { 1, 1, 1 })
    h.close(tide.argmin(x23), { 0, 0, 0 })
  end)

  it("take an axis and an output type", function()
    local x = tide.tensor({ { 3, 1, 4, 1 }, { 5, 9, 2, 6 } }, "float32")
    h.close(tide.argmax(x, 1), { 2, 1 })
    h.close(tide.argmin(x, -1), { 1, 2 })
    local a = x:argmax{ axis = 1, output_type = "int32" }
    assert.are.equal("int32", a.dtype)
    h.close(a, { 2, 1 })
    h.close(tide.argmax(T(x), 0), { 2, 1 })
    h.close(tide.argmax(tide.tensor{ -3, -1, -2 }), { 1 })
  end)

  it("pick the first of equal values", function()
    h.close(tide.argmax(tide.tensor{ 1, 5, 5, 0 }), { 1 })
    h.close(tide.argmin(tide.tensor{ { 2, 0, 0 }, { 7, 7, 7 } }, 1), { 1, 0 })
    h.close(tide.argmax(tide.tensor{ { 1, 5 }, { 5, 5 }, { 5, 1 } }, 0), { 1, 0 })
    -- a long row crosses the vector lanes: ties must still go to the lowest index
    local x = fill(C.TIDE_FLOAT32, { 1000 }, function(i) return (i == 517 or i == 333 or i == 900) and 9 or i % 5 end)
    h.close(tide.argmax(x), { 333 })
    local y = fill(C.TIDE_INT32, { 1000 }, function(i) return (i == 17 or i == 18 or i == 999) and -1 or i % 5 end)
    h.close(tide.argmin(y), { 17 })
  end)

  it("treat the first NaN as the extreme, as numpy", function()
    local x = tide.tensor({ 1, NAN, 7, NAN }, "float32")
    h.close(tide.argmax(x), { 1 })
    h.close(tide.argmin(x), { 1 })
    local big = fill(C.TIDE_FLOAT64, { 300 }, function(i) return (i == 200 or i == 250) and NAN or i end)
    h.close(tide.argmax(big), { 200 })
    h.close(tide.argmin(big), { 200 })
    local cols = tide.tensor({ { 1, 2 }, { NAN, 3 }, { 9, NAN } }, "float32")
    h.close(tide.argmax(cols, 0), { 1, 2 })
  end)

  it("work on halves and narrow ints", function()
    h.close(tide.argmax(tide.tensor({ 0.5, 2.5, 1 }, "float16")), { 1 })
    h.close(tide.argmin(tide.tensor({ 5, 3, 250 }):cast("uint8")), { 1 })
  end)

  it("reject bad axes, output types, empty axes and nil", function()
    h.errors("argmax: axis 2 is out of range", tide.argmax, x23, 2)
    h.errors("index dtype must be int32 or int64, got float32", tide.argmax, x23, 0, "float32")
    h.errors("unknown dtype", tide.argmin, x23, 0, "int31")
    h.errors("argmax: axis 0 is empty in shape [0, 3]", tide.argmax, convert.empty(C.TIDE_FLOAT32, { 0, 3 }))
    h.errors("must be a numeric tensor", tide.argmax, tide.tensor{ true })
    h.errors("argmin: argument 1 must be a tensor", tide.argmin, nil)
  end)
end)

describe("cumsum and cumprod", function()
  local v
  before_each(function() v = tide.tensor({ 1, 2, 3, 4 }, "float32") end)

  it("scan with TF's exclusive and reverse flags", function()
    h.close(tide.cumsum(v), { 1, 3, 6, 10 })
    h.close(tide.cumsum(v, 0, true), { 0, 1, 3, 6 })
    h.close(tide.cumsum(v, 0, false, true), { 10, 9, 7, 4 })
    h.close(tide.cumsum(v, { exclusive = true, reverse = true }), { 9, 7, 4, 0 })
    h.close(tide.cumprod(v), { 1, 2, 6, 24 })
    h.close(tide.cumprod(v, 0, true), { 1, 1, 2, 6 })
    h.close(tide.cumprod(v, 0, false, true), { 24, 24, 12, 4 })
    h.close(v:cumprod{ exclusive = true, reverse = true }, { 24, 12, 4, 1 })
  end)

  it("scan along any axis of a matrix", function()
    h.close(tide.cumsum(x23), { { 1, 2, 3 }, { 5, 7, 9 } })
    h.close(tide.cumsum(x23, 1), { { 1, 3, 6 }, { 4, 9, 15 } })
    h.close(tide.cumsum(x23, -1, true), { { 0, 1, 3 }, { 0, 4, 9 } })
    h.close(tide.cumprod(x23, 0, false, true), { { 4, 10, 18 }, { 4, 5, 6 } })
    h.close(tide.cumsum(T(x23), 0), { { 1, 4 }, { 3, 9 }, { 6, 15 } })
  end)

  it("keep integer dtypes and scan halves", function()
    local c = tide.cumsum(tide.tensor{ 5, -2, 7 })
    assert.are.equal("int32", c.dtype)
    h.close(c, { 5, 3, 10 })
    h.close(tide.cumsum(tide.tensor({ 100, 100 }):cast("int8")), { 100, -56 })
    local hc = tide.cumsum(tide.tensor({ 0.5, 1, 2 }, "float16"))
    assert.are.equal("float16", hc.dtype)
    h.close(hc, { 0.5, 1.5, 3.5 })
  end)

  it("scan a large input", function()
    local n = 200000
    local x = fill(C.TIDE_INT64, { n }, function() return 1 end)
    local c = tide.cumsum(x):totable()
    assert.are.equal(n, tonumber(c[n]))
    local m = fill(C.TIDE_FLOAT64, { 3, 50000 }, function() return 1 end)
    local r = tide.cumsum(m, 1, true, true)
    local rt = r:totable()
    assert.are.equal(49999, rt[3][1])
    assert.are.equal(0, rt[3][50000])
  end)

  it("reject bad axes, bool input and nil", function()
    h.errors("cumsum: axis 1 is out of range for a tensor of rank 1", tide.cumsum, v, 1)
    h.errors("axis 0 is out of range for a tensor of rank 0", tide.cumsum, tide.tensor(1.0))
    h.errors("must be a numeric tensor", tide.cumprod, tide.tensor{ true })
    h.errors("exclusive must be true or false", tide.cumsum, v, 0, 1)
    h.errors("cumsum: argument 1 must be a tensor", tide.cumsum, nil)
  end)
end)
