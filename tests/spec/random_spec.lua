-- tide.random: seeds (global and per op, TF's rule), thread-count independence,
-- ranges, moments of the distributions, shuffles, and errors.
local tide = require "tide"
local h = require "helpers"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local R = tide.random

local function moments(t)
  local v = h.values(t)
  local s, s2 = 0, 0
  for i = 1, #v do s = s + v[i] end
  local mean = s / #v
  for i = 1, #v do s2 = s2 + (v[i] - mean) ^ 2 end
  return mean, math.sqrt(s2 / #v), v
end

local function sorted(list)
  local c = {}
  for i = 1, #list do c[i] = list[i] end
  table.sort(c)
  return c
end

-- Run fn with the pool (and OpenBLAS) at n threads, then restore.
local function with_threads(n, fn)
  local saved = tide.config.get_num_threads()
  tide.config.set_num_threads(n)
  local ok, a, b = pcall(fn)
  tide.config.set_num_threads(saved)
  assert(ok, a)
  return a, b
end

describe("tide.random seeds", function()
  it("repeats the same numbers after the same set_seed", function()
    R.set_seed(7)
    assert.are.equal(7, R.get_seed())
    local a, b = R.uniform{50}:totable(), R.normal{50}:totable()
    local c = R.uniform{50}:totable()
    R.set_seed(7)
    assert.are.same(a, R.uniform{50}:totable())
    assert.are.same(b, R.normal{50}:totable())
    assert.are.same(c, R.uniform{50}:totable())
    assert.are_not.same(a, c)                       -- later calls draw new numbers
    R.set_seed(8)
    assert.are_not.same(a, R.uniform{50}:totable())
  end)

  it("gives the same numbers for any thread count", function()
    local function draws()
      R.set_seed(3)
      return {R.uniform{200001}:totable(), R.normal({100003}, {dtype = "float64"}):totable(),
              R.truncated_normal{100001}:totable(), R.uniform({100001}, 0, 1000, "int64"):totable(),
              R.shuffle(tide.range(100000)):totable()}
    end
    local one = with_threads(1, draws)
    local two = with_threads(2, draws)
    local four = with_threads(4, draws)
    for i = 1, #one do
      assert.is_true(#one[i] > 99999)
      assert.are.same(one[i], two[i])
      assert.are.same(one[i], four[i])
    end
  end)

  it("follows TF's op-seed rule", function()
    R.set_seed(5)
    local a1 = R.uniform({4}, {seed = 1}):totable()
    local a2 = R.uniform({4}, {seed = 1}):totable()
    assert.are_not.same(a1, a2)                     -- repeated calls give new numbers
    local other = R.uniform({4}, {seed = 2}):totable()
    assert.are_not.same(a1, other)
    R.set_seed(5)
    R.uniform{10}                                   -- the global stream does not disturb op seeds
    assert.are.same(a1, R.uniform({4}, {seed = 1}):totable())
    assert.are.same(a2, R.uniform({4}, {seed = 1}):totable())
    R.set_seed(6)                                   -- another global seed, other numbers
    assert.are_not.same(a1, R.uniform({4}, {seed = 1}):totable())
    R.set_seed(5)
    local s1 = R.shuffle(tide.range(20), {seed = 9}):totable()
    R.set_seed(5)
    assert.are.same(s1, R.shuffle(tide.range(20), {seed = 9}):totable())
    assert.are.same(s1, (function() R.set_seed(5); return R.permutation(20, {seed = 9}):totable() end)())
  end)

  it("reserves exactly the counters each op consumes", function()
    -- uniform float32 takes one Philox block per 4 values: 9 values use 3
    -- blocks, so the next draw starts where 12 values would have ended.
    R.set_seed(11)
    R.uniform{9}
    local after = R.uniform{4}:totable()
    R.set_seed(11)
    local all = R.uniform{16}:totable()
    assert.are.same({all[13], all[14], all[15], all[16]}, after)
    assert.are.equal(3, tonumber(binding.C.tide_random_counters(binding.C.TIDE_OP_RANDOM_UNIFORM,
      binding.C.TIDE_FLOAT32, 9)))
  end)

  it("rejects bad seeds", function()
    h.errors("seed is required", R.set_seed, nil)
    h.errors("seed must be an integer", R.set_seed, 1.5)
    h.errors("seed must be an integer", R.uniform, {2}, {seed = "x"})
    h.errors("set_seed: seed must be an integer in the int64 range", R.set_seed, 2 ^ 64)
  end)
end)

describe("tide.random.uniform", function()
  it("draws floats in [minval, maxval)", function()
    R.set_seed(1)
    local u = R.uniform{2, 3}
    assert.are.same({2, 3}, u.shape)
    assert.are.equal("float32", u.dtype)
    local mean, std, v = moments(R.uniform{100000})
    for i = 1, #v do assert(v[i] >= 0 and v[i] < 1, "out of [0, 1): " .. v[i]) end
    assert.is_true(math.abs(mean - 0.5) < 0.01)
    assert.is_true(math.abs(std - math.sqrt(1 / 12)) < 0.01)
    local w = h.values(R.uniform({10000}, -2, 3, "float64"))
    local lo, hi = math.huge, -math.huge
    for i = 1, #w do lo, hi = math.min(lo, w[i]), math.max(hi, w[i]) end
    assert.is_true(lo >= -2 and lo < -1.99 and hi < 3 and hi > 2.99)
    for _, dt in ipairs {"float16", "bfloat16"} do
      local x = h.values(R.uniform({5000}, {minval = 0.5, maxval = 1, dtype = dt}))
      for i = 1, #x do assert(x[i] >= 0.5 and x[i] < 1, dt .. " out of range: " .. x[i]) end
    end
    assert.are.same({}, R.uniform{}.shape)
    assert.are.same({0, 3}, R.uniform{0, 3}.shape)
    assert.are.same({3}, R.uniform(tide.tensor{3}).shape)
  end)

  it("draws integers in [minval, maxval) covering the range", function()
    local v = h.values(R.uniform({2000}, 5, 10, "int32"))
    local seen = {}
    for i = 1, #v do
      assert(v[i] >= 5 and v[i] < 10 and v[i] == math.floor(v[i]))
      seen[v[i]] = true
    end
    for k = 5, 9 do assert.is_true(seen[k]) end
    local b = h.values(R.uniform({2000}, {minval = -128, maxval = 127, dtype = "int8"}))
    local lo, hi = 0, 0
    for i = 1, #b do lo, hi = math.min(lo, b[i]), math.max(hi, b[i]) end
    assert.is_true(lo == -128 and hi == 126)
    local big = h.values(R.uniform({100}, -2 ^ 40, 2 ^ 40, "int64"))
    for i = 1, #big do assert(big[i] >= -2 ^ 40 and big[i] < 2 ^ 40) end
    assert.are.same({3, 3, 3}, R.uniform({3}, 3, 4, "uint8"):totable())
  end)

  it("rejects bad arguments", function()
    h.errors("maxval must be given for integer dtype int32", R.uniform, {2}, {dtype = "int32"})
    h.errors("needs minval < maxval", R.uniform, {2}, 5, 5, "int32")
    h.errors("must be integers", R.uniform, {2}, 0, 2.5, "int64")
    h.errors("must lie in the range of int8", R.uniform, {2}, 0, 300, "int8")
    h.errors("dtype must be a numeric dtype", R.uniform, {2}, {dtype = "bool"})
    h.errors("negative dimension", R.uniform, {2, -1})
    h.errors("shape is required", R.uniform, nil)
    h.errors("minval must be a number", R.uniform, {2}, "a")
    h.errors("unknown option 'mean'", R.uniform, {2}, {mean = 1})
  end)
end)

describe("tide.random.normal and truncated_normal", function()
  it("have the requested mean and standard deviation", function()
    R.set_seed(2)
    local m, s = moments(R.normal{100000})
    assert.is_true(math.abs(m) < 0.02 and math.abs(s - 1) < 0.02)
    m, s = moments(R.normal({100000}, 3, 2, "float64"))
    assert.is_true(math.abs(m - 3) < 0.04 and math.abs(s - 2) < 0.04)
    assert.are.equal("float16", R.normal({4}, {dtype = "float16"}).dtype)
    m, s = moments(R.normal({20000}, {dtype = "bfloat16"}))
    assert.is_true(math.abs(m) < 0.05 and math.abs(s - 1) < 0.05)
  end)

  it("truncates at two standard deviations", function()
    R.set_seed(4)
    local m, s, v = moments(R.truncated_normal({100000}, {mean = 1, stddev = 0.5}))
    for i = 1, #v do assert(math.abs(v[i] - 1) <= 1.0000001, "beyond 2 stddev: " .. v[i]) end
    assert.is_true(math.abs(m - 1) < 0.01)
    -- the standard deviation of a normal truncated at +-2 is 0.8796
    assert.is_true(math.abs(s - 0.5 * 0.87962566) < 0.01)
    local _, _, w = moments(R.truncated_normal({50000}, 0, 1, "float64"))
    local beyond = 0
    for i = 1, #w do
      assert(math.abs(w[i]) < 2)
      if math.abs(w[i]) > 1.9 then beyond = beyond + 1 end
    end
    assert.is_true(beyond > 0)                      -- the tails up to 2 are reached
  end)

  it("reject integer dtypes and bad arguments", function()
    h.errors("random_normal: dtype must be a float dtype", R.normal, {2}, {dtype = "int32"})
    h.errors("truncated_normal: dtype must be a float dtype", R.truncated_normal, {2}, 0, 1, "int64")
    h.errors("stddev must be a number", R.normal, {2}, 0, "x")
    h.errors("shape is required", R.truncated_normal)
  end)
end)

describe("tide.random.shuffle and permutation", function()
  -- A transposed view, so shuffle reads a strided input.
  local function T(x)
    return dispatch.run_view(binding.C.TIDE_OP_TRANSPOSE, dispatch.attrs(), x)
  end

  it("permutes values along dim 0", function()
    R.set_seed(12)
    local x = tide.range(1000)
    local s = R.shuffle(x)
    assert.are.equal("int32", s.dtype)
    local v = s:totable()
    assert.are.same(x:totable(), sorted(v))
    assert.are_not.same(x:totable(), v)
    local f = R.shuffle(tide.tensor({1.5, 2.5, 3.5}, "float64"))
    assert.are.same({1.5, 2.5, 3.5}, sorted(f:totable()))
  end)

  it("keeps rows intact, also for strided inputs", function()
    local m = tide.tensor{{1, 10, 100}, {2, 20, 200}, {3, 30, 300}, {4, 40, 400}}
    local rows = R.shuffle(m):totable()
    local firsts = {}
    for i, r in ipairs(rows) do
      assert.are.same({r[1], r[1] * 10, r[1] * 100}, r)
      firsts[i] = r[1]
    end
    assert.are.same({1, 2, 3, 4}, sorted(firsts))
    local t = T(tide.tensor{{1, 2, 3}, {10, 20, 30}})   -- [3, 2] view, column-major
    local trows = R.shuffle(t):totable()
    local got = {}
    for i, r in ipairs(trows) do
      assert.are.equal(r[1] * 10, r[2])
      got[i] = r[1]
    end
    assert.are.same({1, 2, 3}, sorted(got))
    local bools = R.shuffle(tide.tensor{{true}, {false}, {true}}):totable()
    assert.are.equal(3, #bools)
  end)

  it("returns scalars and single rows as they are", function()
    assert.are.equal(5, R.shuffle(tide.tensor(5)):item())
    assert.are.same({{1, 2}}, R.shuffle(tide.tensor{{1, 2}}):totable())
    assert.are.same({0}, R.shuffle(tide.zeros{0}).shape)
    assert.are.same({7}, R.shuffle{7}:totable())
  end)

  it("permutation(n) is a shuffled range(n) in int32", function()
    local p = R.permutation(50)
    assert.are.equal("int32", p.dtype)
    local expect = {}
    for i = 1, 50 do expect[i] = i - 1 end
    assert.are.same(expect, sorted(p:totable()))
    assert.are.same({0}, R.permutation(0).shape)
    assert.are.same({1, 2, 3}, sorted(R.permutation(tide.tensor{3, 1, 2}):totable()))
  end)

  it("rejects bad arguments", function()
    h.errors("shuffle: expects a tensor", R.shuffle, nil)
    h.errors("n must be >= 0", R.permutation, -1)
    h.errors("n must be an integer", R.permutation, 2.5)
    h.errors("expects a count or a tensor", R.permutation, nil)
    h.errors("unknown option 'axis'", R.shuffle, tide.range(3), {axis = 1})
  end)
end)
