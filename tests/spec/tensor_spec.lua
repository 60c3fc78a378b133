-- The tensor's Lua face: making tensors from Lua values, dtype inference,
-- properties, printing, reading values, indexing, operators and errors.
local tide = require "tide"
local h = require "helpers"

describe("tide.tensor", function()
  it("infers int32, float32 and bool as TF does", function()
    assert.are.equal("int32", tide.tensor{1, 2}.dtype)
    assert.are.equal("float32", tide.tensor{1.5, 2}.dtype)
    assert.are.equal("bool", tide.tensor{true, false}.dtype)
    assert.are.equal("int32", tide.tensor(3).dtype)
    assert.are.equal("float32", tide.tensor(3.25).dtype)
    assert.are.equal("int64", tide.tensor{2 ^ 40}.dtype)
    assert.are.equal("float32", tide.tensor{}.dtype)
    assert.are.equal("float32", tide.tensor{0 / 0}.dtype)
  end)

  it("takes an explicit dtype, by name or constant", function()
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64" } do
      local t = tide.tensor({{1, 2}, {3, 4}}, dt)
      assert.are.equal(dt, t.dtype)
      assert.are.same({{1, 2}, {3, 4}}, t:totable())
    end
    assert.are.equal("float64", tide.tensor({1}, tide.float64).dtype)
    assert.are.equal("float64", tide.constant({1}, "double").dtype)
  end)

  it("has shape, ndim, size and device", function()
    local t = tide.tensor{{{1, 2, 3}, {4, 5, 6}}}
    assert.are.same({1, 2, 3}, t.shape)
    assert.are.equal(3, t.ndim)
    assert.are.equal(6, t:size())
    assert.are.equal(6, tide.size(t))
    h.errors("size: expected a tensor, got nil", tide.size, nil)
    h.errors("size: expected a tensor, got number", tide.size, 3)
    assert.are.equal("cpu", t.device)
    assert.are.equal(1, #t)
    assert.are.same({}, tide.tensor(5).shape)
    assert.are.equal(0, tide.tensor(5).ndim)
  end)

  it("has shapes that print as TF's and compare by value", function()
    local t = tide.tensor{{1, 2, 3}, {4, 5, 6}}
    assert.are.equal("(2, 3)", tostring(t.shape))
    assert.are.equal("(3,)", tostring(tide.tensor{1, 2, 3}.shape))
    assert.are.equal("()", tostring(tide.tensor(1).shape))
    assert.is_true(t.shape == tide.tensor{{0, 0, 0}, {0, 0, 0}}.shape)
    assert.are.equal(6, t.shape:num_elements())
  end)

  it("round-trips values through totable and item", function()
    local v = {{1.5, -2}, {3.25, 4}}
    assert.are.same(v, tide.tensor(v):totable())
    assert.are.same(v, tide.tensor(v, "float64"):totable())
    assert.are.equal(7, tide.tensor(7):totable())
    assert.are.equal(2.5, tide.tensor{{2.5}}:item())
    assert.are.equal(true, tide.tensor{true}:item())
    assert.are.equal(2 ^ 40, tide.tensor{2 ^ 40}:item())
  end)

  it("makes large tensors that own C memory", function()
    local t = {}
    for i = 1, 10000 do t[i] = i end
    local x = tide.tensor(t)
    assert.are.equal(10000, x:size())
    assert.are.equal(10000, x[-1]:item())
    assert.are.equal(5000, x[4999]:item())
  end)

  it("rejects ragged tables, mixed kinds and bad values", function()
    h.errors("ragged nested table", function() return tide.tensor{{1, 2}, {3}} end)
    h.errors("ragged nested table", function() return tide.tensor{{1, 2}, 3} end)
    h.errors("cannot mix booleans and numbers", function() return tide.tensor{true, 1} end)
    h.errors("expected a number, a boolean or a string", function() return tide.tensor{function() end} end)
    h.errors("cannot make a tensor from a function", function() return tide.tensor(print) end)
    h.errors("cannot make a tensor from a nil", function() return tide.tensor(nil) end)
    h.errors("cannot convert 1.5 to int32", function() return tide.tensor({1.5}, "int32") end)
    h.errors("out of range for uint8", function() return tide.tensor({256}, "uint8") end)
    h.errors("unknown dtype", function() return tide.tensor({1}, "complex64") end)
    -- a table of tensors is packed (TF's convert_to_tensor); see variable_spec
    assert.are.same({1}, tide.tensor{tide.tensor(1)}:totable())
    local deep = 1
    for _ = 1, 9 do deep = {deep} end
    h.errors("nested more than 8 levels deep", function() return tide.tensor(deep) end)
  end)
end)

describe("printing", function()
  it("prints in TensorFlow's style", function()
    assert.are.equal("tide.Tensor([1 2 3], shape=(3,), dtype=int32)", tostring(tide.tensor{1, 2, 3}))
    assert.are.equal("tide.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)", tostring(tide.tensor{{1, 2}, {3, 4}}))
    assert.are.equal("tide.Tensor(3.5, shape=(), dtype=float32)", tostring(tide.tensor(3.5)))
    assert.are.equal("tide.Tensor([ True False], shape=(2,), dtype=bool)", tostring(tide.tensor{true, false}))
    assert.are.equal("tide.Tensor([], shape=(0,), dtype=float32)", tostring(tide.tensor{}))
    -- int64 values print exactly, also past 2^53 where Lua numbers round
    assert.are.equal("tide.Tensor([ 9007199254740993 -9007199254740991], shape=(2,), dtype=int64)",
      tostring(tide.tensor({2 ^ 53, -2 ^ 53}, "int64") + 1))
    assert.are.equal("tide.Tensor(4611686018427387907, shape=(), dtype=int64)",
      tostring(tide.tensor(2 ^ 62, "int64") + 3))
  end)

  it("formats floats as numpy does", function()
    local function arr(t, dt) return tostring(tide.tensor(t, dt)):match("^tide.Tensor%((.-), shape") end
    assert.are.equal("[1. 2. 3.]", arr({1, 2, 3}, "float32"))
    assert.are.equal("[1.5  2.25]", arr({1.5, 2.25}, "float32"))
    assert.are.equal("[-1.   0.5]", arr({-1, 0.5}, "float32"))
    assert.are.equal("[0.1 0.2]", arr({0.1, 0.2}, "float32"))
    assert.are.equal("[1.e-05 1.e+00 1.e+09]", arr({1e-5, 1, 1e9}, "float32"))
    assert.are.equal("[ nan  inf -inf]", arr({0 / 0, math.huge, -math.huge}, "float32"))
    assert.are.equal("[0.33333334]", arr({1 / 3}, "float32"))
    assert.are.equal("[0.33333333]", arr({1 / 3}, "float64")) -- numpy's precision: 8 digits
  end)

  it("prints 3-D tensors with blank lines between blocks", function()
    local t = tide.tensor{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}
    assert.are.equal("tide.Tensor(\n[[[1 2]\n  [3 4]]\n\n [[5 6]\n  [7 8]]], shape=(2, 2, 2), dtype=int32)",
      tostring(t))
  end)

  it("summarizes past 1000 elements", function()
    local v = {}
    for i = 1, 2000 do v[i] = i - 1 end
    assert.are.equal("tide.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)",
      tostring(tide.tensor(v)))
  end)

  it("prints strided views by their logical order", function()
    local m = tide.tensor{{1, 2}, {3, 4}}
    assert.are.equal("tide.Tensor([2 4], shape=(2,), dtype=int32)", tostring(m:slice{{}, 1}))
  end)

  it("concatenates with strings", function()
    assert.are.equal("x = tide.Tensor(1, shape=(), dtype=int32)", "x = " .. tide.tensor(1))
  end)
end)

describe("indexing", function()
  it("indexes from 0 and from the end, giving views", function()
    local m = tide.tensor{{1, 2, 3}, {4, 5, 6}}
    assert.are.same({4, 5, 6}, m[1]:totable())
    assert.are.same({4, 5, 6}, m[-1]:totable())
    assert.are.equal(6, m[1][2]:item())
    assert.are.equal(1, m[-2][-3]:item())
  end)

  it("writes through x[i] = v, also on small (inline) tensors", function()
    local m = tide.tensor{{1, 2}, {3, 4}}
    m[0] = 9
    m[1][0] = 7
    assert.are.same({{9, 9}, {7, 4}}, m:totable())
    local row = m[1]
    row[1] = 0
    assert.are.same({{9, 9}, {7, 0}}, m:totable())
    m[0] = tide.tensor{5, 6}
    assert.are.same({5, 6}, m[0]:totable())
    m[0] = {1, 2}
    assert.are.same({{1, 2}, {7, 0}}, m:totable())
  end)

  it("copies a tensor into place with copy_", function()
    local x = tide.tensor{{0, 0}, {0, 0}}
    x:copy_(tide.tensor{1, 2})
    assert.are.same({{1, 2}, {1, 2}}, x:totable())
    x:slice{{}, 0}:copy_(x:slice{{}, 1})
    assert.are.same({{2, 2}, {2, 2}}, x:totable())
  end)

  it("refuses to write into a broadcast view, where one element has several positions", function()
    local base = tide.zeros{100000}
    local b = tide.broadcast_to(base, {4, 100000})   -- rows share memory (stride 0)
    h.errors("copy_into: the destination has shape [4, 100000] but dimension 0 repeats its elements (stride 0, a broadcast view)",
      function() b:copy_(tide.random.uniform({4, 100000})) end)
    h.errors("copy_into: the destination has shape [2, 3] but dimension 0 repeats", function() tide.broadcast_to(tide.zeros{3}, {2, 2, 3})[0] = 1 end)
    assert.are.same(0, tide.reduce_max(base):item())  -- nothing was written
    b[1] = 5                                          -- one row is a plain view of base
    assert.are.same(5, base[99999]:item())
  end)

  it("slices with ranges, steps, negative steps, ellipsis and newaxis", function()
    local v = tide.tensor{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
    assert.are.same({2, 3, 4}, v:slice{{2, 5}}:totable())
    assert.are.same({0, 3, 6, 9}, v:slice{{nil, nil, 3}}:totable())
    assert.are.same({9, 8, 7}, v:slice{{nil, -4, -1}}:totable())
    assert.are.same({8, 6}, v:slice{{-2, 4, -2}}:totable())
    assert.are.same({}, v:slice{{5, 2}}:totable())
    assert.are.same({7, 8, 9}, v:slice{{7, 100}}:totable())
    local m = tide.tensor{{1, 2, 3}, {4, 5, 6}}
    assert.are.same({2, 5}, m:slice{"...", 1}:totable())
    assert.are.same({{1, 2, 3}}, m:slice{tide.newaxis, 0}:totable())
    assert.are.same({2, 1, 3}, m:slice{{}, tide.newaxis}.shape)
    assert.are.same({{3}, {6}}, m:slice{{}, {-1}}:totable())
  end)

  it("rejects bad indices clearly", function()
    local m = tide.tensor{{1, 2}, {3, 4}}
    h.errors("index 2 is out of range for dimension 0 of size 2", function() return m[2] end)
    h.errors("out of range", function() return m[-3] end)
    h.errors("index must be an integer", function() return m[0.5] end)
    h.errors("cannot index a 0-d tensor", function() return tide.tensor(1)[0] end)
    h.errors("3 indices for a tensor of rank 2", function() return m:slice{0, 0, 0} end)
    h.errors("step cannot be zero", function() return m:slice{{nil, nil, 0}} end)
    h.errors("dtype mismatch", function() m[0] = tide.tensor({1, 2}, "float32") end)
    h.errors("cannot broadcast", function() m[0] = tide.tensor{1, 2, 3} end)
  end)
end)

describe("Lua operators on tensors", function()
  it("compares one-element tensors to Lua booleans", function()
    assert.is_true(tide.tensor(1) < tide.tensor(2))
    assert.is_true(tide.tensor{2} <= tide.tensor(2))
    assert.is_false(tide.tensor(3) < tide.tensor(2))
    assert.is_true(tide.tensor(2) == tide.tensor{{2}})
    assert.is_false(tide.tensor(2) == tide.tensor(3))
  end)

  it("is never equal to non-tensors", function()
    local t = tide.tensor{1, 2}
    assert.is_false(t == nil)
    assert.is_true(t ~= nil)
    assert.is_true(t == t)
  end)

  it("refuses to compare many elements with Lua operators", function()
    local a, b = tide.tensor{1, 2}, tide.tensor{1, 2}
    h.errors("tide.equal", function() return a == b end)
    h.errors("a:lt(b)", function() return a < b end)
    h.errors("less_equal", function() return a <= b end)
  end)

  it("has # as the first dimension", function()
    assert.are.equal(2, #tide.tensor{{1, 2, 3}, {4, 5, 6}})
    h.errors("0-d tensor has no length", function() return #tide.tensor(1) end)
  end)

  it("names unknown methods and refuses field writes", function()
    local t = tide.tensor{1}
    h.errors("no method or property 'frobnicate'", function() return t:frobnicate() end)
    h.errors("cannot set 'foo'", function() t.foo = 1 end)
  end)

  it("errors on item() of many elements, naming the shape", function()
    h.errors("shape (2,)", function() return tide.tensor{1, 2}:item() end)
  end)
end)

describe("tide.config", function()
  it("sets and reads the thread count", function()
    local n = tide.config.get_num_threads()
    tide.config.set_num_threads(1)
    assert.are.equal(1, tide.config.get_num_threads())
    tide.config.set_num_threads(n)
    assert.are.equal(n, tide.config.get_num_threads())
    h.errors("at least 1", function() tide.config.set_num_threads(0) end)
    h.errors("positive integer", function() tide.config.set_num_threads("two") end)
    h.errors("set_num_threads: n must be at most 2147483647, got 2147483648",
      function() tide.config.set_num_threads(2 ^ 31) end)
    assert.are.equal(n, tide.config.get_num_threads())
    h.errors("set_memory_cache_limit: bytes must be a non-negative number",
      function() tide.config.set_memory_cache_limit(-1) end)
  end)

  it("names the instruction set of the hot loops, and caps it", function()
    local best = tide.config.cpu_isa()
    assert.is_truthy(({ baseline = true, avx2 = true, avx512 = true })[best])
    local x = tide.random.uniform({1000}, {minval = -4, maxval = 4})
    local function f(v) return tide.tanh(v * 3 + 1) + tide.sigmoid(v) * tide.exp(v) end
    local traced = tide.trace(f)
    local want = f(x)
    for _, level in ipairs { "baseline", "avx2", "avx512" } do
      tide.config.set_max_cpu_isa(level)
      local got = f(x)
      -- exact ops agree bit for bit at every level; exp, tanh and sigmoid
      -- use FMA above the baseline, so they may differ in the last bits
      local d = tide.reduce_max(tide.abs(got - want)):item()
      assert(d <= 1e-5, level .. ": eager results differ by " .. d)
      -- the fused kernel runs the same level's vector functions as the eager ops
      assert.are.same(got:totable(), traced(x):totable())
    end
    tide.config.set_max_cpu_isa("baseline")
    assert.are.equal("baseline", tide.config.cpu_isa())
    tide.config.set_max_cpu_isa("avx512")
    assert.are.equal(best, tide.config.cpu_isa())
    h.errors("set_max_cpu_isa: unknown instruction set 'sse9' (valid: baseline, avx2, avx512)",
      function() tide.config.set_max_cpu_isa("sse9") end)
    h.errors("set_max_cpu_isa: name must be", function() tide.config.set_max_cpu_isa(2) end)
    assert.are.equal(best, tide.config.cpu_isa())
  end)

  it("reports memory held by tensors and releases the block cache", function()
    tide.config.release_memory()
    local before = tide.config.memory_info()
    local t = {}
    for i = 1, 300000 do t[i] = i end
    local x = tide.tensor(t, "float64")  -- 2.4 MB: a large block
    local during = tide.config.memory_info()
    assert.is_true(during.current >= before.current + 2400000)
    assert.is_true(during.peak >= during.current)
    x = nil
    tide.config.release_memory()
    local after = tide.config.memory_info()
    assert.is_true(after.current <= before.current)
    assert.are.equal(0, after.cached)
    h.errors("non-negative", function() tide.config.set_memory_cache_limit(-1) end)
    tide.config.set_memory_cache_limit(2 ^ 30)
  end)
end)

describe("edge values", function()
  it("infers float32 for infinities and NaN", function()
    assert.are.equal("float32", tide.tensor{math.huge}.dtype)
    assert.are.equal("float32", tide.tensor(-math.huge).dtype)
    assert.are.equal("float32", tide.tensor{1, 2, -math.huge}.dtype)
    assert.are.same({math.huge}, tide.tensor{math.huge}:totable())
  end)

  it("compares a one-element tensor with a Lua value by value", function()
    assert.is_true(tide.tensor(2) == 2)
    assert.is_true(tide.tensor{2.5} == 2.5)
    assert.is_false(tide.tensor(2) == 3)
    assert.is_true(tide.tensor(true) == true)
    assert.is_false(tide.tensor{1, 2} == 1)
    assert.is_false(tide.tensor(1) == "1")
  end)
end)
