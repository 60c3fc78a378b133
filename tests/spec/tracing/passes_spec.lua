-- The graph passes seen from traced Lua functions: constants, CSE, fusion and
-- the memory plan keep results equal to eager ones; the graph text shows
-- fused nodes; planned bytes are reported.
local tide = require "tide"
local h = require "helpers"

local function f32(v) return tide.tensor(v, "float32") end

-- The concrete function f runs for these arguments, and its graph.
local function graph_of(f, ...)
  local cf = f:get_concrete_function(...)
  return cf, cf:graph_text(), cf.graph:num_nodes(), cf.graph:planned_bytes()
end

-- Exactly equal values (fused ops give the eager ops' bits) ...
local function same(a, b)
  assert.are.same(a.shape, b.shape)
  assert.are.equal(a.dtype, b.dtype)
  h.close(a, h.values(b), 0)
end

-- ... except float32 exp, sigmoid and tanh: vector approximations within 3 ulp.
local function near(a, b)
  assert.are.same(a.shape, b.shape)
  assert.are.equal(a.dtype, b.dtype)
  h.close(a, h.values(b), 4e-7)
end

describe("traced constants", function()
  it("computes constant subexpressions once, when tracing", function()
    local k = f32{1, 2, 3}
    local f = tide.trace(function(x) return x + tide.exp(k * 2) - 1 end)
    local x = f32{0.5, -1, 2}
    same(f(x), x + tide.exp(k * 2) - 1) -- exp ran eagerly, while folding
    local _, text = graph_of(f, x)
    assert.is_nil(text:find("exp", 1, true)) -- exp(k * 2) became one constant
    assert.truthy(text:find("const()", 1, true))
  end)

  it("merges equal constants (CSE by value)", function()
    local f = tide.trace(function(x) return x * 0.5 + x * 0.5 end)
    local _, text = graph_of(f, f32{1, 2})
    assert.truthy(text:find("fused[mul, add]", 1, true)) -- one mul (its two 0.5s merged), read twice
    assert.truthy(text:find("s1 = add(s0, s0)", 1, true))
    same(f(f32{1, 2}), f32{1, 2})
  end)
end)

describe("common-subexpression elimination", function()
  it("merges identical ops and keeps results", function()
    local function fn(x) return tide.reduce_sum(tide.exp(x * 2), 0) + tide.reduce_sum(tide.exp(x * 2), 0) end
    local f = tide.trace(fn)
    local x = tide.random.normal({4, 3})
    h.close(f(x), h.values(fn(x)), 1e-6)
    local _, text = graph_of(f, x)
    local sums = select(2, text:gsub("sum%(", ""))
    assert.are.equal(1, sums)
  end)

  it("keeps ops with different attributes apart", function()
    local function fn(x) return tide.reduce_sum(x, 0), tide.reduce_sum(x, 1) end
    local f = tide.trace(fn)
    local x = tide.random.normal({4, 3})
    local a, b = f(x)
    same(a, tide.reduce_sum(x, 0))
    same(b, tide.reduce_sum(x, 1))
  end)

  it("never merges random ops", function()
    local f = tide.trace(function() return tide.random.uniform({8}), tide.random.uniform({8}) end)
    local a, b = f()
    assert.are_not.same(a:totable(), b:totable())
  end)
end)

describe("elementwise fusion", function()
  local function act(x, w, b) return tide.tanh(x * w + b) * x - tide.sigmoid(x) * 0.5 end

  it("turns a chain into one fused node with the same results", function()
    local f = tide.trace(act)
    local x, w, b = tide.random.normal({50, 7}), tide.random.normal({7}), tide.random.normal({50, 1})
    near(f(x, w, b), act(x, w, b))
    local _, text, nodes = graph_of(f, x, w, b)
    assert.truthy(text:find("fused[mul, add, tanh, mul, sigmoid, mul, sub]", 1, true))
    assert.are.equal(4, nodes) -- 3 inputs, one fused node (holding the 0.5)
  end)

  it("reads strided (transposed, sliced) inputs", function()
    local f = tide.trace(act)
    local x = tide.random.normal({7, 50}):transpose()
    local w, b = tide.random.normal({7}), tide.random.normal({50, 1})
    near(f(x, w, b), act(x, w, b))
    local xs = tide.random.normal({50, 14}):slice{{}, {0, 14, 2}}
    near(f(xs, w, b), act(xs, w, b))
  end)

  it("runs large inputs in blocks across threads", function()
    local f = tide.trace(act)
    local x, w, b = tide.random.normal({3001, 97}), tide.random.normal({97}), tide.random.normal({3001, 1})
    near(f(x, w, b), act(x, w, b))
  end)

  it("computes halves through float32, rounding as the unfused ops do", function()
    for _, dt in ipairs { "float16", "bfloat16" } do
      local fn = function(x) return (x * 1.5 + 0.25):exp() - x * x end
      local f = tide.trace(fn)
      local x = tide.random.normal({300}):cast(dt)
      local y = f(x)
      assert.are.equal(dt, y.dtype)
      same(y, fn(x))
    end
  end)

  it("fuses comparisons, where, clip and casts", function()
    local function fn(x)
      local m = x:gt(0.5)
      return tide.cast(tide.where(m, x * x, tide.clip_by_value(x, -0.5, 0.5)) * 10, "int32") + 1
    end
    local f = tide.trace(fn)
    local x = tide.random.normal({64})
    same(f(x), fn(x))
    local _, text = graph_of(f, x)
    assert.truthy(text:find("fused[", 1, true))
    assert.truthy(text:find("where", 1, true))
  end)

  it("still reports integer division by zero and negative powers", function()
    local f = tide.trace(function(a, b) return tide.floordiv(a * 2, b) + 1 end)
    assert.are.same({3, 5, 7}, f(tide.tensor{1, 2, 3}, tide.tensor{1, 1, 1}):totable())
    h.errors("floordiv: integer division by zero", f, tide.tensor{1, 2, 3}, tide.tensor{1, 0, 1})
    local g = tide.trace(function(a, b) return tide.pow(a + 1, b) * 2 end)
    assert.are.same({2, 4, 18}, g(tide.tensor{0, 1, 2}, tide.tensor{1, 1, 2}):totable())
    h.errors("integers to negative integer powers", g, tide.tensor{0, 1, 2}, tide.tensor{1, -1, 2})
  end)

  it("stops a group at values used elsewhere", function()
    local function fn(x)
      local e = tide.exp(x * x)
      return -(e - tide.reduce_sum(e)), e
    end
    local f = tide.trace(fn)
    local x = tide.random.normal({5, 6})
    local a, b = f(x)
    local ea, eb = fn(x)
    h.close(a, h.values(ea), 1e-6)
    near(b, eb)
    local _, text = graph_of(f, x)
    assert.truthy(text:find("fused[mul, exp]", 1, true)) -- e is read by reduce_sum, recorded before sub
    assert.truthy(text:find("fused[sub, neg]", 1, true))
  end)

  it("handles 0-d and empty tensors", function()
    local fn = function(x) return (x * 2 + 1):exp() * x end
    local f = tide.trace(fn)
    near(f(f32(0.5)), fn(f32(0.5)))
    assert.are.same({0, 3}, f(tide.zeros({0, 3})).shape)
    assert.are.same({4, 0}, f(tide.zeros({4, 0})).shape)
  end)

  it("shows each fused node's ops, operands and constants in the graph text", function()
    local f = tide.trace(function(x, y) return tide.leaky_relu(x * 2 + y, 0.3):cast("int32") end)
    local x, y = tide.random.normal({4, 3}), tide.random.normal({3})
    local fn = function(a, b) return tide.leaky_relu(a * 2 + b, 0.3):cast("int32") end
    same(f(x, y), fn(x, y))
    local _, text, nodes = graph_of(f, x, y)
    assert.truthy(text:find("fused[mul, add, leaky_relu, cast](%0, %1) : int32[4, 3]", 1, true), text)
    for _, line in ipairs { "s0 = mul(%0, 2) : float32\n", "s1 = add(s0, %1) : float32\n",
      "s2 = leaky_relu(s1, alpha=0.3) : float32\n", "s3 = cast(s2) : int32 -> %" } do
      assert.truthy(text:find(line, 1, true), line)
    end
    assert.is_nil(text:find("const()", 1, true)) -- the 2 is written into the fused node
    assert.are.equal(3, nodes)
  end)

  it("gives a value also read outside its group as a second result", function()
    local function fn(x)
      local a = x * x + 1
      local r = tide.relu(a - 2)
      return r, tide.reduce_sum(a, 1)
    end
    local f = tide.trace(fn)
    local x = tide.random.normal({6, 5})
    local r, s = f(x)
    local er, es = fn(x)
    same(r, er)
    same(s, es)
    local _, text = graph_of(f, x)
    assert.truthy(text:find("fused[mul, add, sub, relu](%0) : float32[6, 5], float32[6, 5]", 1, true), text)
    assert.truthy(text:find("sum%(%%%d+:1%)"), text)
  end)

  it("runs float32 ops bit for bit, with NaN, infinities and signed zeros", function()
    local vals = { 0 / 0, math.huge, -math.huge, 0, -0.0, 1e-40, -1e-40, 3e38, -3e38, 1, -1, 0.5, -0.5, 2.5, -2.5 }
    local xs, ys = {}, {}
    for i = 1, 300 do
      xs[i] = vals[(i - 1) % #vals + 1] * (1 + (i % 7) / 8)
      ys[i] = vals[(i * 7) % #vals + 1] * (1 + (i % 5) / 4)
    end
    local x, y = f32(xs), f32(ys)
    local function fn(a, b)
      local v = tide.maximum(b, b - a * b)       -- the running value on the right of sub and maximum
      v = tide.minimum(tide.sign(v) * a, v) / b
      v = tide.floordiv(tide.relu(v) + 0.5, b):abs():sqrt()
      v = tide.round(-v) + tide.floor(a) - tide.ceil(b)
      v = tide.clip_by_value(tide.reciprocal(tide.square(v)), -2, 3)
      return tide.where(a:lt(b), v, tide.rsqrt(tide.abs(b))), tide.pow(tide.abs(a), b) % 1.5
    end
    local f = tide.trace(fn)
    local got, got2 = f(x, y)
    local want, want2 = fn(x, y)
    for k, pair in ipairs { { got, want }, { got2, want2 } } do
      local g, w = pair[1]:totable(), pair[2]:totable()
      for i = 1, #w do
        local ok = (w[i] ~= w[i] and g[i] ~= g[i]) or (g[i] == w[i] and 1 / g[i] == 1 / w[i])
        assert(ok, string.format("result %d, value %d: %s traced, %s eager", k, i, tostring(g[i]), tostring(w[i])))
      end
    end
  end)

  it("keeps float32 exp, sigmoid and tanh within a few ulp of eager", function()
    local x = tide.linspace(-110, 110, 200001):cast("float32")
    local xs = x:totable()
    for _, op in ipairs { "exp", "sigmoid", "tanh" } do
      local fn = function(a) return tide[op](a * 1) end
      local got, want = tide.trace(fn)(x):totable(), fn(x):totable()
      for i = 1, #want do
        local d = math.abs(got[i] - want[i])
        if not (got[i] == want[i] or d <= 3.6e-7 * math.abs(want[i]) or (want[i] < 1e-37 and d < 1e-44)) then
          error(string.format("%s(%.9g): %.9g traced, %.9g eager", op, xs[i], got[i], want[i]))
        end
      end
    end
  end)

  it("reads bool inputs and gives bool results", function()
    local function fn(m, x) return tide.logical_and(m, x:gt(0)):logical_not(), tide.where(m, x, -x) * 2 end
    local f = tide.trace(fn)
    local m = tide.tensor({ true, false, true, true, false }, "bool")
    local x = f32{ -1, 2, 3, 0, -0.5 }
    local a, b = f(m, x)
    local ea, eb = fn(m, x)
    same(a, ea)
    same(b, eb)
    assert.are.equal("bool", a.dtype)
  end)

  it("keeps two bool values read outside their group apart (the last partial strip of each)", function()
    -- (shared comparisons CSE merges into one group give it two bool extra
    -- results; a block's last partial strip once ran past the first one's
    -- masks into the second's)
    local function fn(a, b, c)
      local e0, e1 = a:lt(0.5), b:lt(0.5)
      return tide.where(e0, a, tide.where(e1, b, c)), tide.where(e0, b, tide.where(e1, c, a))
    end
    for _, n in ipairs { 40, 37, 1000 } do
      local x = tide.random.uniform({ 3, n, 1 }, { seed = n })
      local got = { tide.trace(fn)(x[0], x[1], x[2]) }
      local want = { fn(x[0], x[1], x[2]) }
      same(got[1], want[1])
      same(got[2], want[2])
    end
  end)

  it("works with unknown dims", function()
    local f = tide.trace(act, {input_signature = {tide.TensorSpec({tide.None, 7}, "float32"),
      tide.TensorSpec({7}, "float32"), tide.TensorSpec({1, 1}, "float32")}})
    local w, b = tide.random.normal({7}), tide.random.normal({1, 1})
    for _, n in ipairs { 1, 33, 2000, 33 } do
      local x = tide.random.normal({n, 7})
      near(f(x, w, b), act(x, w, b))
    end
    local _, text = graph_of(f)
    assert.truthy(text:find("fused[", 1, true))
  end)
end)

describe("memory planning", function()
  local function mlp(x, w)
    local y = x
    for _ = 1, 5 do y = tide.matmul(y, w) end
    return tide.reduce_sum(y)
  end

  it("shares intermediate buffers and reports planned bytes", function()
    local f = tide.trace(mlp)
    local x, w = tide.random.normal({64, 64}, {stddev = 0.1}), tide.random.normal({64, 64}, {stddev = 0.1})
    h.close(f(x, w), mlp(x, w):totable(), 1e-6)
    local _, _, _, planned = graph_of(f, x, w)
    local one = 64 * 64 * 4
    assert.are.equal(2 * one, planned) -- five intermediates, two alive at once
  end)

  it("keeps results from one call when the next call runs", function()
    local f = tide.trace(function(x, w)
      local a = tide.matmul(x, w)
      local b = tide.matmul(a, w)
      return tide.reshape(b, {-1}), tide.transpose(tide.matmul(b, w))
    end)
    local x, w = tide.random.normal({32, 32}), tide.random.normal({32, 32}, {stddev = 0.2})
    local r1, t1 = f(x, w)
    local keep1, keep2 = r1:totable(), t1:totable()
    f(x * 2, w)
    assert.are.same(keep1, r1:totable())
    assert.are.same(keep2, t1:totable())
  end)

  it("plans an unrolled LSTM cell (slices of a fused result feed fused nodes)", function()
    local Wx, Wh = tide.random.normal({8, 32}, {stddev = 0.3}), tide.random.normal({8, 32}, {stddev = 0.3})
    local bias = tide.random.normal({32})
    local function lstm(xs, hs, c)
      local x = tide.unstack(xs)
      for t = 1, #x do
        local parts = tide.split(tide.matmul(x[t], Wx) + tide.matmul(hs, Wh) + bias, 4, 1)
        local i, fg, g, o = tide.sigmoid(parts[1]), tide.sigmoid(parts[2]), tide.tanh(parts[3]), tide.sigmoid(parts[4])
        c = fg * c + i * g
        hs = o * tide.tanh(c)
      end
      return hs, c
    end
    local f = tide.trace(lstm)
    local xs, h0, c0 = tide.random.normal({6, 2, 8}), tide.zeros({2, 8}), tide.zeros({2, 8})
    local a, b = f(xs, h0, c0)
    local ea, eb = lstm(xs, h0, c0)
    h.close(a, h.values(ea), 1e-6)
    h.close(b, h.values(eb), 1e-6)
    local _, text, _, planned = graph_of(f, xs, h0, c0)
    assert.truthy(text:find("fused[add, add]", 1, true))
    -- the gate math is one node giving both h and c
    assert.truthy(text:find("fused[sigmoid, sigmoid, tanh, sigmoid, mul, mul, add, tanh, mul]", 1, true), text)
    assert.truthy(text:find(": float32[2, 8], float32[2, 8]", 1, true), text)
    assert.truthy(planned > 0)
  end)
end)

describe("nodes of many values", function()
  -- A node may have any number of inputs and results (no fixed limit).
  it("traces a concat of 100 tensors, a cond capturing 70 and a loop of 70 variables", function()
    local xs = {}
    for i = 1, 100 do xs[i] = f32{ i, -i } end
    local cat = tide.trace(function(...) return tide.concat({ ... }, 0) end)
    same(cat(unpack(xs)), tide.concat(xs, 0))

    local function pick(flag, ...)
      local t = { ... }
      return tide.cond(flag, function()
        local s = t[1]
        for i = 2, #t do s = s + t[i] * i end
        return s
      end, function() return t[1] end)
    end
    local tp = tide.trace(pick)
    local few = {}
    for i = 1, 70 do few[i] = xs[i] end
    same(tp(tide.tensor(true), unpack(few)), pick(tide.tensor(true), unpack(few)))
    same(tp(tide.tensor(false), unpack(few)), few[1])

    local function loop(n, ...)
      local vars = { ... }
      return tide.while_loop(function(i) return i:lt(n) end, function(i, ...)
        local v = { ... }
        for k = 1, #v do v[k] = v[k] + k end
        return i + 1, unpack(v)
      end, { tide.tensor(0), unpack(vars) })
    end
    local tl = tide.trace(loop)
    local got, want = { tl(tide.tensor(3), unpack(few)) }, { loop(tide.tensor(3), unpack(few)) }
    assert.are.equal(71, #got)
    for k = 1, 71 do same(got[k], want[k]) end
    same(got[71], few[70] + 3 * 70)
    -- gradients through a loop of that many variables, traced as eager
    local w = f32{ 0.5, 2 }
    local function loss(v)
      local vs = {}
      for i = 1, 70 do vs[i] = v * i end
      local r = { loop(tide.tensor(2), unpack(vs)) }
      local s = r[2]
      for k = 3, 71 do s = s + r[k] * r[k] end
      return tide.reduce_sum(s)
    end
    local function grad(f)
      local tape = tide.GradientTape()
      tape:watch(w)
      local y = tape:run(function() return f(w) end)
      return tape:gradient(y, w)
    end
    local gt, ge = grad(tide.trace(loss)), grad(loss)
    assert.truthy(gt ~= nil and ge ~= nil)
    h.close(gt, h.values(ge), 1e-5)
  end)
end)
