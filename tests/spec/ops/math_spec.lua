-- Elementwise ops: values, dtypes, broadcasting, strided inputs and errors.
local tide = require "tide"
local h = require "helpers"

local function f32(v) return tide.tensor(v, "float32") end
local function f64(v) return tide.tensor(v, "float64") end

describe("binary arithmetic", function()
  it("adds, subtracts, multiplies with numpy broadcasting", function()
    local a = tide.tensor{{1, 2, 3}, {4, 5, 6}}
    local b = tide.tensor{10, 20, 30}
    assert.are.same({{11, 22, 33}, {14, 25, 36}}, (a + b):totable())
    assert.are.same({{-9, -18, -27}, {-6, -15, -24}}, (a - b):totable())
    assert.are.same({{10, 40, 90}, {40, 100, 180}}, tide.mul(a, b):totable())
    local col = tide.tensor{{1}, {2}}
    assert.are.same({{2, 3, 4}, {6, 7, 8}}, (a + col):totable())
    assert.are.same({2, 3}, (a + col).shape)
  end)

  it("broadcasts a [3,1] against a [1,4] into [3,4]", function()
    local a = tide.tensor{{1}, {2}, {3}}
    local b = tide.tensor{{10, 20, 30, 40}}
    local c = a * b
    assert.are.same({3, 4}, c.shape)
    assert.are.same({{10, 20, 30, 40}, {20, 40, 60, 80}, {30, 60, 90, 120}}, c:totable())
  end)

  it("gives Lua numbers the tensor's dtype", function()
    local x = tide.tensor{1, 2}
    assert.are.equal("int32", (x + 1).dtype)
    assert.are.equal("int32", (2 * x).dtype)
    assert.are.equal("float32", (f32{1, 2} + 1).dtype)
    assert.are.equal("float64", (f64{1, 2} * 0.5).dtype)
    h.close(f64{1, 2} * 0.1, {0.1, 0.2}, 1e-15)
    assert.are.same({0, -1}, (1 - x):totable())
  end)

  it("divides as TF's truediv: ints become floats", function()
    assert.are.equal("float64", (tide.tensor{1, 2} / 2).dtype)
    h.close(tide.tensor{1, 3} / 2, {0.5, 1.5})
    assert.are.equal("float32", (tide.tensor({7}, "int8") / tide.tensor({2}, "int8")).dtype)
    assert.are.equal("float32", (f32{1} / 2).dtype)
    h.close(f32{1, -1, 0} / 0, {math.huge, -math.huge, 0 / 0})
  end)

  it("floor-divides and takes floor modulo like Python and TF", function()
    local a = tide.tensor{7, -7, 7, -7}
    local b = tide.tensor{2, 2, -2, -2}
    assert.are.same({3, -4, -4, 3}, tide.floordiv(a, b):totable())
    assert.are.same({1, 1, -1, -1}, (a % b):totable())
    h.close(tide.floordiv(f32{7, -7}, f32{2, 2}), {3, -4})
    h.close(f32{7.5, -7.5} % 2, {1.5, 0.5})
    h.close(f32{7.5, -7.5} % -2, {-0.5, -1.5})
  end)

  it("raises to powers, integer powers exactly", function()
    assert.are.same({1, 8, 81}, (tide.tensor{1, 2, 3} ^ tide.tensor{5, 3, 4}):totable())
    assert.are.same({1024}, tide.pow(tide.tensor({2}, "int64"), 10):totable())
    h.close(f32{4, 9} ^ 0.5, {2, 3})
    h.close(tide.pow(f64{2}, -1), {0.5})
  end)

  it("takes elementwise maximum and minimum, propagating NaN", function()
    assert.are.same({3, 5}, tide.maximum(tide.tensor{1, 5}, tide.tensor{3, 2}):totable())
    assert.are.same({1, 2}, tide.minimum(tide.tensor{1, 5}, tide.tensor{3, 2}):totable())
    local m = tide.maximum(f32{0 / 0, 1}, f32{1, 0 / 0}):totable()
    assert.is_true(m[1] ~= m[1] and m[2] ~= m[2])
  end)

  it("works on every integer dtype with wrap-around", function()
    assert.are.same({-128}, (tide.tensor({127}, "int8") + 1):totable())
    assert.are.same({255}, (tide.tensor({0}, "uint8") - 1):totable())
    assert.are.same({250}, (tide.tensor({25}, "uint8") * 10):totable())
  end)

  it("computes float16 and bfloat16 through float32", function()
    local x = tide.tensor({1, 2, 3}, "float16")
    local y = x * 1.5 + 0.25
    assert.are.equal("float16", y.dtype)
    h.close(y, {1.75, 3.25, 4.75})
    local b = tide.tensor({1, 2}, "bfloat16") + tide.tensor({0.5, 0.5}, "bfloat16")
    assert.are.equal("bfloat16", b.dtype)
    h.close(b, {1.5, 2.5})
  end)

  it("reads strided views", function()
    local m = tide.tensor{{1, 2, 3, 4}, {5, 6, 7, 8}}
    local cols = m:slice{{}, {nil, nil, 2}}      -- [[1,3],[5,7]]
    local rev = m:slice{{}, {nil, nil, -2}}      -- [[4,2],[8,6]]
    assert.are.same({{5, 5}, {13, 13}}, (cols + rev):totable())
    local big = tide.tensor((function() local t = {} for i = 1, 300 do t[i] = {i, -i} end return t end)())
    local s = big:slice{{}, 0} + big:slice{{}, 1}  -- strided columns of a large tensor
    for _, v in ipairs(s:totable()) do assert.are.equal(0, v) end
  end)

  it("agrees with a Lua loop on a large tensor (threaded path)", function()
    local n = 200000
    local t = {}
    for i = 1, n do t[i] = (i % 97) * 0.5 end
    local x = tide.tensor(t, "float64")
    local y = (x * x + x) / 2
    local got = y:totable()
    for i = 1, n, 997 do
      local v = t[i]
      assert.are.equal((v * v + v) / 2, got[i])
    end
  end)
end)

describe("binary errors", function()
  it("rejects mixed dtypes and suggests :cast", function()
    local err = h.errors("dtype mismatch", function() return tide.tensor{1} + f32{1} end)
    assert.truthy(err:find("int32", 1, true) and err:find("float32", 1, true) and err:find(":cast", 1, true))
    assert.truthy(err:find("add", 1, true))
  end)

  it("names both shapes when they do not broadcast", function()
    local err = h.errors("incompatible shapes", function() return tide.tensor{1, 2, 3} * tide.tensor{1, 2} end)
    assert.truthy(err:find("[3]", 1, true) and err:find("[2]", 1, true) and err:find("mul", 1, true))
  end)

  it("reports the error at the caller's line", function()
    local err = h.errors("dtype mismatch", function() return tide.tensor{1} + f32{1} end)
    assert.truthy(err:find("math_spec.lua", 1, true), err)
  end)

  it("rejects integer division by zero and negative integer powers", function()
    h.errors("integer division by zero", function() return tide.floordiv(tide.tensor{1}, tide.tensor{0}) end)
    h.errors("integer division by zero", function() return tide.tensor{1} % 0 end)
    h.errors("negative integer powers", function() return tide.tensor{2} ^ -1 end)
  end)

  it("rejects Lua values that do not fit the dtype", function()
    h.errors("cannot convert 1.5 to int32", function() return tide.tensor{1} + 1.5 end)
    h.errors("out of range for int8", function() return tide.tensor({1}, "int8") + 300 end)
    h.errors("bool", function() return tide.tensor{true} + 1 end)
  end)

  it("rejects nil, strings and other non-tensors", function()
    h.errors("argument 2 must be a tensor or a number, got nil", function() return tide.add(tide.tensor{1}, nil) end)
    h.errors('argument 1 is the string "a" but the other operand is int32', function() return tide.sub("a", tide.tensor{1}) end)
    h.errors("got function", function() return tide.tensor{1} * print end)
  end)

  it("rejects bool inputs to arithmetic", function()
    h.errors("numeric tensor", function() return tide.add(tide.tensor{true}, tide.tensor{false}) end)
  end)
end)

describe("comparisons and logic", function()
  it("compares elementwise into bool tensors", function()
    local a, b = tide.tensor{1, 2, 3}, tide.tensor{3, 2, 1}
    assert.are.same({true, false, false}, a:lt(b):totable())
    assert.are.same({true, true, false}, tide.less_equal(a, b):totable())
    assert.are.same({false, false, true}, a:gt(b):totable())
    assert.are.same({false, true, true}, tide.greater_equal(a, b):totable())
    assert.are.same({false, true, false}, tide.equal(a, b):totable())
    assert.are.same({true, false, true}, a:ne(b):totable())
    assert.are.equal("bool", a:lt(2).dtype)
    assert.are.same({true, false}, tide.equal(tide.tensor{true, true}, tide.tensor{true, false}):totable())
  end)

  it("treats NaN as unequal to everything", function()
    local n = f32{0 / 0}
    assert.are.same({false}, tide.equal(n, n):totable())
    assert.are.same({true}, tide.not_equal(n, n):totable())
    assert.are.same({false}, n:lt(1):totable())
  end)

  it("combines booleans", function()
    local p, q = tide.tensor{true, true, false, false}, tide.tensor{true, false, true, false}
    assert.are.same({true, false, false, false}, tide.logical_and(p, q):totable())
    assert.are.same({true, true, true, false}, tide.logical_or(p, q):totable())
    assert.are.same({false, true, true, false}, tide.logical_xor(p, q):totable())
    assert.are.same({false, false, true, true}, tide.logical_not(p):totable())
    assert.are.same({true, true, false, false}, tide.logical_and(p, true):totable())
  end)

  it("requires bool inputs for logic", function()
    h.errors("bool tensor", function() return tide.logical_and(tide.tensor{1}, tide.tensor{1}) end)
    h.errors("bool tensor", function() return tide.logical_not(f32{1}) end)
  end)
end)

describe("unary math", function()
  local xs = {-2.5, -1, -0.5, 0, 0.5, 1, 2.5}
  local cases = {
    neg = function(x) return -x end,
    abs = math.abs,
    square = function(x) return x * x end,
    exp = math.exp,
    sin = math.sin,
    cos = math.cos,
    tanh = function(x) return (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x)) end,
    sigmoid = function(x) return 1 / (1 + math.exp(-x)) end,
    relu = function(x) return math.max(x, 0) end,
    elu = function(x) return x > 0 and x or math.exp(x) - 1 end,
    selu = function(x)
      local scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
      return scale * (x > 0 and x or alpha * (math.exp(x) - 1))
    end,
    softplus = function(x) return math.log(1 + math.exp(x)) end,
    floor = math.floor,
    ceil = math.ceil,
    sign = function(x) return x > 0 and 1 or (x < 0 and -1 or 0) end,
    expm1 = function(x) return math.exp(x) - 1 end,
  }
  for name, ref in pairs(cases) do
    it(name .. " matches the reference in float64 and float32", function()
      local want = {}
      for i, x in ipairs(xs) do want[i] = ref(x) end
      h.close(tide[name](f64(xs)), want, 1e-12)
      h.close(tide[name](f32(xs)), want, 1e-6)
      h.close(f64(xs)[name](f64(xs)), want, 1e-12) -- method form
    end)
  end

  it("log, log1p, sqrt, rsqrt, reciprocal on positive inputs", function()
    local p = {0.25, 1, 4}
    h.close(tide.log(f64(p)), {math.log(0.25), 0, math.log(4)}, 1e-12)
    h.close(tide.log1p(f64(p)), {math.log(1.25), math.log(2), math.log(5)}, 1e-12)
    h.close(tide.sqrt(f64(p)), {0.5, 1, 2}, 1e-12)
    h.close(tide.rsqrt(f64(p)), {2, 1, 0.5}, 1e-12)
    h.close(tide.reciprocal(f64(p)), {4, 1, 0.25}, 1e-12)
    h.close(tide.log(f32{0, -1}), {-math.huge, 0 / 0})
  end)

  it("erf and gelu (exact and tanh-approximate)", function()
    h.close(tide.erf(f64{0, 0.5, -1}), {0, 0.5204998778130465, -0.8427007929497149}, 1e-12)
    local x = f64{-1, 0, 1, 2}
    h.close(tide.gelu(x), {-0.15865525393145707, 0, 0.8413447460685429, 1.9544997361036416}, 1e-12)
    h.close(tide.gelu(x, {approximate = true}), {-0.15880800939172324, 0, 0.8411919906082768,
      1.954597694087775}, 1e-12)
    h.close(tide.nn.gelu(x, true), tide.gelu(x, {approximate = true}), 0)
  end)

  it("leaky_relu defaults to alpha 0.2", function()
    h.close(tide.leaky_relu(f32{-1, 2}), {-0.2, 2})
    h.close(tide.nn.leaky_relu(f32{-1, 2}, {alpha = 0.5}), {-0.5, 2})
    h.close(tide.leaky_relu(f32{-1, 2}, tide.tensor(0.25)), {-0.25, 2})
    h.errors("leaky_relu: alpha must be a number, got string", tide.leaky_relu, f32{-1, 2}, "a")
    h.errors("leaky_relu: alpha must be a number, got boolean", tide.leaky_relu, f32{-1, 2}, {alpha = true})
  end)

  it("rounds half to even, as TF", function()
    h.close(tide.round(f32{0.5, 1.5, 2.5, -0.5, -1.5, 2.4}), {0, 2, 2, 0, -2, 2})
    assert.are.same({3, -4}, tide.round(tide.tensor{3, -4}):totable())
  end)

  it("applies integer unary ops", function()
    local x = tide.tensor{-3, 0, 4}
    assert.are.same({3, 0, -4}, (-x):totable())
    assert.are.same({3, 0, 4}, tide.abs(x):totable())
    assert.are.same({-1, 0, 1}, tide.sign(x):totable())
    assert.are.same({9, 0, 16}, tide.square(x):totable())
    assert.are.same({0, 0, 4}, tide.relu(x):totable())
  end)

  it("detects NaN and infinities", function()
    local x = f32{1, 0 / 0, math.huge, -math.huge}
    assert.are.same({false, true, false, false}, tide.isnan(x):totable())
    assert.are.same({true, false, false, false}, tide.isfinite(x):totable())
  end)

  it("keeps the sign of NaN-free specials", function()
    local s = tide.sign(f32{0 / 0}):totable()
    assert.is_true(s[1] ~= s[1])
    h.close(tide.sigmoid(f32{-1000, 1000}), {0, 1})
    h.close(tide.softplus(f32{-1000, 1000}), {0, 1000})
  end)

  it("rejects integer inputs to float-only functions, suggesting a cast", function()
    local err = h.errors("must be a float tensor", function() return tide.exp(tide.tensor{1}) end)
    assert.truthy(err:find("int32", 1, true) and err:find(":cast", 1, true))
    h.errors("must be a float tensor", function() return tide.sqrt(tide.tensor{4}) end)
    h.errors("got nil", function() return tide.exp(nil) end)
  end)
end)

describe("where, clip_by_value and cast", function()
  it("selects with where, broadcasting all three", function()
    local c = tide.tensor{true, false, true}
    assert.are.same({1, 20, 3}, tide.where(c, tide.tensor{1, 2, 3}, tide.tensor{10, 20, 30}):totable())
    assert.are.same({1, 0, 3}, tide.where(c, tide.tensor{1, 2, 3}, 0):totable())
    local c2 = tide.tensor{{true}, {false}}
    assert.are.same({{1, 2}, {9, 9}}, tide.where(c2, tide.tensor{1, 2}, 9):totable())
    h.close(tide.where(c, tide.tensor({1, 2, 3}, "float16"), tide.tensor({4, 5, 6}, "float16")), {1, 5, 3})
  end)

  it("rejects a non-bool condition and mixed branches", function()
    h.errors("condition must be bool", function() return tide.where(tide.tensor{1}, 1, 2) end)
    h.errors("dtype mismatch", function() return tide.where(tide.tensor{true}, tide.tensor{1}, f32{2}) end)
  end)

  it("clips values into a range", function()
    assert.are.same({0, 1, 5, 5}, tide.clip_by_value(tide.tensor{-3, 1, 5, 9}, 0, 5):totable())
    h.close(tide.clip_by_value(f32{-1, 0.5, 2}, f32{0, 0, 0}, 1), {0, 0.5, 1})
    local c = tide.clip_by_value(f32{0 / 0}, 0, 1):totable()
    assert.is_true(c[1] ~= c[1])
    h.errors("dtype mismatch", function() return tide.clip_by_value(f32{1}, tide.tensor{0}, tide.tensor{1}) end)
  end)

  it("casts between dtypes as TF does", function()
    assert.are.same({1, -1, 2}, tide.cast(f32{1.9, -1.9, 2.5}, "int32"):totable())   -- toward zero
    assert.are.same({true, false, true}, f32{2, 0, 0 / 0}:cast("bool"):totable())
    assert.are.same({1, 0}, tide.tensor{true, false}:cast("float32"):totable())
    assert.are.equal("float64", tide.tensor{1}:cast(tide.float64).dtype)
    h.close(tide.tensor({1, 2}, "float16"):cast("bfloat16"), {1, 2})
    local x = tide.tensor{1, 2}
    assert.are.equal(x, x:cast("int32")) -- same dtype: the same tensor
  end)

  it("saturates out-of-range floats and maps NaN to zero when casting to ints", function()
    assert.are.same({127, -128, 0}, f32{1000, -1000, 0 / 0}:cast("int8"):totable())
    assert.are.same({255, 0}, f32{1e6, -5}:cast("uint8"):totable())
    assert.are.same({2147483647}, f64{1e20}:cast("int32"):totable())
  end)

  it("rejects unknown dtypes, naming the choices", function()
    local err = h.errors("unknown dtype 'float31'", function() return f32{1}:cast("float31") end)
    assert.truthy(err:find("float32", 1, true))
  end)
end)
