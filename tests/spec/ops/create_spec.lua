-- Creation ops: zeros/ones/fill/full/*_like, range, linspace, eye, from_buffer.
local tide = require "tide"
local h = require "helpers"
local ffi = require "ffi"
local binding = require "tide.binding"

describe("zeros and ones", function()
  it("default to float32 and take a list, a number or an int tensor as shape", function()
    local z = tide.zeros{2, 3}
    assert.are.equal("float32", z.dtype)
    assert.are.same({{0, 0, 0}, {0, 0, 0}}, z:totable())
    assert.are.same({1, 1, 1}, tide.ones(3):totable())
    assert.are.same({2, 1}, tide.ones(tide.tensor{2, 1}).shape)
    assert.are.same({}, tide.zeros{}.shape)
    assert.are.equal(1, tide.ones{}:item())
    assert.are.same({0, 4}, tide.zeros{0, 4}.shape)
  end)

  it("make every dtype", function()
    assert.are.same({1, 1}, tide.ones({2}, "int32"):totable())
    assert.are.equal("int64", tide.zeros({2}, {dtype = "int64"}).dtype)
    assert.are.same({true, true}, tide.ones({2}, "bool"):totable())
    assert.are.same({false}, tide.zeros({1}, "bool"):totable())
    for _, dt in ipairs {"float64", "float16", "bfloat16", "int8", "uint8"} do
      local o = tide.ones({2, 2}, dt)
      assert.are.equal(dt, o.dtype)
      assert.are.same({{1, 1}, {1, 1}}, o:totable())
    end
    local big = tide.ones({100, 1000}, "float16")   -- large enough to fill in parallel
    assert.are.equal(1, big:totable()[100][1000])
  end)

  it("reject bad shapes and dtypes", function()
    h.errors("negative dimension", tide.zeros, {2, -1})
    h.errors("shape is required", tide.ones, nil)
    h.errors("unknown dtype 'float8'", tide.zeros, {2}, "float8")
    h.errors("must be an integer", tide.zeros, {2.5})
    h.errors("zeros: shape must be an integer tensor, got float32", tide.zeros, tide.tensor({2}, "float32"))
    h.errors("fill: out of memory for the result of shape [1152921504606846976] (float32)", tide.zeros, {2 ^ 60})
    h.errors("rank 9", tide.zeros, {1, 1, 1, 1, 1, 1, 1, 1, 1})
  end)
end)

describe("fill and full", function()
  it("infer the dtype from the value as tide.tensor does", function()
    local a = tide.fill({2, 2}, 7)
    assert.are.equal("int32", a.dtype)
    assert.are.same({{7, 7}, {7, 7}}, a:totable())
    assert.are.equal("float32", tide.fill({2}, 1.5).dtype)
    assert.are.same({1.5, 1.5}, tide.fill({2}, 1.5):totable())
    assert.are.same({true, true}, tide.fill({2}, true):totable())
    assert.are.equal("int64", tide.fill({1}, 2 ^ 40).dtype)
    assert.are.same({2 ^ 40}, tide.fill({1}, 2 ^ 40):totable())
    assert.are.equal("float64", tide.fill({1}, tide.tensor(2, "float64")).dtype)
    assert.are.same({3, 3}, tide.full({2}, 3):totable())
    assert.are.equal("float32", tide.full({2}, 3, "float32").dtype)
  end)

  it("convert to a given dtype; integers saturate", function()
    assert.are.same({127, 127}, tide.fill({2}, 300, {dtype = "int8"}):totable())
    assert.are.same({0}, tide.fill({1}, -5, {dtype = "uint8"}):totable())
    assert.are.same({1}, tide.full({1}, 1.7, "int32"):totable())
    assert.are.same({-1}, tide.full({1}, -1.7, "int32"):totable())
    assert.are.same({2147483647}, tide.full({1}, 1e12, "int32"):totable())
    assert.are.same({0}, tide.full({1}, 0 / 0, "int32"):totable())
    assert.are.same({65504}, tide.full({1}, 65504, "float16"):totable())
    assert.are.same({math.huge}, tide.full({1}, 1e6, "float16"):totable())
    assert.are.same({true, false}, {tide.full({}, 2, "bool"):item(), tide.full({}, 0, "bool"):item()})
  end)

  it("reject bad values", function()
    h.errors("value is required", tide.fill, {2})
    h.errors("value must be a number, got string", tide.fill, {2}, "x")
    h.errors("must be a scalar", tide.full, {2}, tide.tensor{1, 2})
  end)
end)

describe("zeros_like and ones_like", function()
  it("copy shape and dtype, or take a dtype", function()
    local x = tide.tensor({{1, 2, 3}, {4, 5, 6}}, "float64")
    local z = tide.zeros_like(x)
    assert.are.same({2, 3}, z.shape)
    assert.are.equal("float64", z.dtype)
    assert.are.same({{1, 1, 1}, {1, 1, 1}}, tide.ones_like(x):totable())
    assert.are.equal("int8", tide.ones_like(x, "int8").dtype)
    local view = x:slice{{}, {0, 3, 2}}
    assert.are.same({{0, 0}, {0, 0}}, tide.zeros_like(view):totable())
    assert.are.same({1, 1}, tide.ones_like{5, 6}:totable())
    h.errors("expects a tensor", tide.zeros_like, nil)
  end)
end)

describe("range", function()
  it("counts from 0 when given one argument (TF)", function()
    local r = tide.range(5)
    assert.are.equal("int32", r.dtype)
    assert.are.same({0, 1, 2, 3, 4}, r:totable())
    assert.are.same({}, tide.range(0):totable())
    assert.are.same({0}, tide.range(3, 3).shape)
  end)

  it("steps up and down exactly over integers", function()
    assert.are.same({1, 4, 7}, tide.range(1, 10, 3):totable())
    assert.are.same({10, 7, 4}, tide.range(10, 1, -3):totable())
    assert.are.same({-3, -2, -1}, tide.range(-3, 0):totable())
    assert.are.same({0, 3, 6, 9}, tide.range(0, 10, 3, "int8"):totable())
    assert.are.same({1, 2, 3, 4}, tide.range(1.5, 5, {dtype = "int32"}):totable()) -- TF casts first
    local big = tide.range(2 ^ 40, 2 ^ 40 + 3)
    assert.are.equal("int64", big.dtype)
    assert.are.same({2 ^ 40, 2 ^ 40 + 1, 2 ^ 40 + 2}, big:totable())
  end)

  it("makes floats when an argument is fractional, counting as TF does", function()
    local r = tide.range(0, 1, 0.25)
    assert.are.equal("float32", r.dtype)
    assert.are.same({0, 0.25, 0.5, 0.75}, r:totable())
    h.close(tide.range(0, 1, 0.3), {0, 0.3, 0.6, 0.9}, 1e-6)    -- ceil(1 / 0.3) = 4
    h.close(tide.range(1, 0, -0.5), {1, 0.5})
    assert.are.same({0, 1, 2}, tide.range(3, {dtype = "float64"}):totable())
    assert.are.equal("float64", tide.range(0, tide.tensor(2, "float64")).dtype)
    assert.are.same({0, 1}, tide.range(0, 2, 1, "float16"):totable())
    h.close(tide.range(0, 1, 0.1, "float64"), {0, .1, .2, .3, .4, .5, .6, .7, .8, .9}, 1e-15)
  end)

  it("takes a bound computed from a tensor inside a traced function (its length is read when the graph runs)",
    function()
      local f = tide.trace(function(x) return tide.range(tide.reduce_sum(x)) end,
        { input_signature = { tide.TensorSpec({ tide.None }, "int32") } })
      assert.are.same({ 0, 1, 2, 3 }, f(tide.tensor { 1, 3 }):totable())
      assert.are.same({ 0, 1, 2, 3, 4, 5 }, f(tide.tensor { 2, 2, 2 }):totable())
      assert.are.same({}, f(tide.tensor { 0 }):totable())
      local shape_seen
      local g = tide.trace(function(x)
        local n = tide.shape(x)[0]
        local r = tide.range(1, n * 2, 2, { dtype = "float64" })
        shape_seen = r.shape:as_list()
        return r
      end, { input_signature = { tide.TensorSpec({ tide.None }) } })
      assert.are.same({ 1, 3, 5 }, g(tide.ones { 3 }):totable())
      assert.are.same({ tide.None }, shape_seen)
      assert.are.equal("float64", g(tide.ones { 1 }).dtype)
      local k = tide.trace(function(x) return tide.range(tide.reduce_max(x), 0, -0.5) end)
      h.close(k(tide.tensor { 1.0, 2.0 }), { 2, 1.5, 1, 0.5 }, 0)
      h.errors("range_dynamic: requires start >= limit when delta < 0", k, tide.tensor { -1.0, -2.0 })
      local z = tide.trace(function(x) return tide.range(0, tide.reduce_sum(x), tide.reduce_min(x) - 1) end)
      h.errors("range_dynamic: requires delta != 0", z, tide.tensor { 1, 2 })
    end)

  it("rejects bad arguments as TF does", function()
    h.errors("requires delta != 0", tide.range, 0, 5, 0)
    h.errors("requires delta != 0", tide.range, 0, 5, 0.5, "int32")
    h.errors("requires start <= limit when delta > 0", tide.range, 5, 0)
    h.errors("requires start >= limit when delta < 0", tide.range, 0, 5, -1)
    h.errors("requires start <= limit when delta > 0", tide.range, 1.5, 0.5, 0.5)
    h.errors("range: dtype must be a numeric dtype", tide.range, 3, {dtype = "bool"})
    h.errors("start (or limit) is required", tide.range, nil)
    h.errors("must be a number", tide.range, "a")
    h.errors("must be finite", tide.range, 0, math.huge, 1.5)
  end)
end)

describe("linspace", function()
  it("spaces values evenly and ends exactly at stop", function()
    local l = tide.linspace(0, 1, 5)
    assert.are.equal("float32", l.dtype)
    assert.are.same({0, 0.25, 0.5, 0.75, 1}, l:totable())
    assert.are.same({1, 0.5, 0}, tide.linspace(1, 0, 3):totable())
    assert.are.same({3}, tide.linspace(3, 7, 1):totable())
    local v = tide.linspace(0, 0.3, 7, "float64"):totable()
    assert.are.equal(0.3, v[7])
    h.close(v, {0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3}, 1e-15)
    local f = tide.linspace(0, 0.3, 7):totable()
    assert.are.equal(tide.tensor(0.3, "float32"):item(), f[7])
    assert.are.equal("float16", tide.linspace(0, 1, 3, {dtype = "float16"}).dtype)
    assert.are.same({0, 0.5, 1}, tide.linspace(0, 1, 3, "bfloat16"):totable())
    assert.are.equal("float64", tide.linspace(tide.tensor(0, "float64"), 1, 2).dtype)
  end)

  it("rejects bad arguments", function()
    h.errors("num must be at least 1", tide.linspace, 0, 1, 0)
    h.errors("linspace: dtype must be a float dtype", tide.linspace, 0, 1, 3, "int32")
    h.errors("num must be an integer", tide.linspace, 0, 1, 2.5)
    h.errors("num is required", tide.linspace, 0, 1)
    h.errors("stop must be a number", tide.linspace, 0, nil, 3)
  end)
end)

describe("eye", function()
  it("puts ones on the diagonal", function()
    assert.are.same({{1, 0}, {0, 1}}, tide.eye(2):totable())
    assert.are.equal("float32", tide.eye(2).dtype)
    assert.are.same({{1, 0, 0}, {0, 1, 0}}, tide.eye(2, 3):totable())
    assert.are.same({{1, 0}, {0, 1}, {0, 0}}, tide.eye(3, 2):totable())
    assert.are.same({{true, false}, {false, true}}, tide.eye(2, nil, {dtype = "bool"}):totable())
    assert.are.same({{1, 0}, {0, 1}}, tide.eye(2, {dtype = "int64"}):totable())
    assert.are.same({{1}}, tide.eye(1, 1, nil, "float16"):totable())
    assert.are.same({0, 0}, tide.eye(0).shape)
  end)

  it("rejects bad arguments", function()
    h.errors("eye: num_rows and num_columns must be >= 0, got -1 and -1", tide.eye, -1)
    h.errors("num_rows must be an integer", tide.eye, 1.5)
    h.errors("num_rows is required", tide.eye, nil)
    assert.are.same({3, 2, 2}, tide.eye(2, 2, {3}).shape:as_list()) -- batch_shape (tf.eye's) is supported now
    h.errors("unknown dtype", tide.eye, 2, {dtype = "complex64"})
  end)
end)

describe("from_buffer", function()
  it("copies from a cdata pointer or array", function()
    local buf = ffi.new("float[6]", {1, 2, 3, 4, 5, 6})
    local t = tide.from_buffer(buf, {2, 3})
    assert.are.equal("float32", t.dtype)
    assert.are.same({{1, 2, 3}, {4, 5, 6}}, t:totable())
    buf[0] = 99                                          -- a copy: unaffected
    assert.are.equal(1, t:totable()[1][1])
    local p = ffi.cast("int32_t *", ffi.new("int32_t[3]", {7, 8, 9}))
    assert.are.same({7, 8, 9}, tide.from_buffer(p, 3, "int32"):totable())
  end)

  it("copies from a Lua string's bytes", function()
    local s = ffi.string(ffi.new("double[2]", {0.5, -2}), 16)
    local t = tide.from_buffer(s, {2}, "float64")
    assert.are.same({0.5, -2}, t:totable())
    assert.are.same({1}, tide.from_buffer("\1\0\0\0\2", {1}, "int32"):totable())
  end)

  -- Tensors live in `box` and are touched only inside helpers run on their
  -- own coroutine: LuaJIT's collector scans whole frames of the running
  -- thread, so a stale stack slot here could keep a tensor alive.
  local function fresh(fn, ...) return coroutine.wrap(fn)(...) end
  local function read(box, k) return box[k]:totable() end
  local function alive(weak) return weak[1] ~= nil end
  local function slice(box) box.v = box.t:slice{{1, 3}} end
  -- The binding's table of owners kept alive for C (token -> owner).
  local function holds(owner)
    for i = 1, 20 do
      local name, owners = debug.getupvalue(binding.hold_owner, i)
      if name == "owners" then
        for _, v in pairs(owners) do if rawequal(v, owner) then return true end end
        return false
      end
    end
    error("binding.hold_owner has no 'owners' upvalue")
  end

  it("views a pointer without copying and holds its owner while views live", function()
    local buf = ffi.new("double[3]", {1, 2, 3})
    local box = {}
    fresh(function() box.t = tide.from_buffer(buf, {3}, "float64", {copy = false}) end)
    buf[1] = 20                                          -- a view: the tensor sees it
    assert.are.same({1, 20, 3}, fresh(read, box, "t"))
    assert.is_true(holds(buf))
    fresh(slice, box)                                    -- a view of the view shares the owner
    box.t = nil
    binding.collect()
    assert.is_true(holds(buf))
    assert.are.same({20, 3}, fresh(read, box, "v"))
    box.v = nil
    binding.collect()                                       -- the storage goes, its token is queued
    binding.collect()                                       -- the token is drained
    assert.is_false(holds(buf))
  end)

  local function view_with_owner(weak, box)
    local owner = ffi.new("int32_t[2]", {4, 5})
    weak[1] = owner
    box.t = tide.from_buffer(ffi.cast("int32_t *", owner), {2}, "int32", {copy = false, owner = owner})
  end

  it("keeps an explicit owner alive for a raw pointer", function()
    local weak = setmetatable({}, {__mode = "v"})
    local box = {}
    fresh(view_with_owner, weak, box)
    collectgarbage()
    collectgarbage()
    assert.is_true(alive(weak))
    assert.are.same({4, 5}, fresh(read, box, "t"))
    box.t = nil
    binding.collect()
    binding.collect()
    assert.is_false(alive(weak))
  end)

  it("rejects bad buffers", function()
    h.errors("a Lua string is immutable", tide.from_buffer, "abcd", {1}, "int32", {copy = false})
    h.errors("the string has 3 bytes but shape and dtype need 4", tide.from_buffer, "abc", {1}, "int32")
    h.errors("the array has 8 bytes but shape and dtype need 12", tide.from_buffer, ffi.new("float[2]"), {3})
    h.errors("expected a cdata pointer or a Lua string, got number", tide.from_buffer, 5, {1})
    h.errors("expected a cdata pointer or array", tide.from_buffer, ffi.new("int"), {1})
    h.errors("the pointer is NULL", tide.from_buffer, ffi.cast("float *", nil), {2})
    h.errors("unknown dtype", tide.from_buffer, ffi.new("float[2]"), {2}, "float128")
    h.errors("negative dimension", tide.from_buffer, ffi.new("float[2]"), {-2})
  end)
end)
