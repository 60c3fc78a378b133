-- tests/spec/data/semantics_spec.lua — tide.data against what real tf.data
-- gave for the same pipelines (tests/fixtures/data/semantics.lua, made by
-- semantics_gen.py with TF 2.21): order, batching across epochs, interleave,
-- padding, cardinality; shuffle's rules (its draws cannot match TF's). The
-- elements are checked under both engines (tests/support/data_engines.lua).
local tide = require "tide"
local engines = require "data_engines"
local D = tide.data.Dataset
local fixture = dofile("tests/fixtures/data/semantics.lua")
local cases, card = fixture.cases, fixture.cardinality

-- A dataset's elements as nested Lua tables of numbers (list elements as lists).
local function values(ds)
  local out = {}
  for _, e in ipairs(ds:totable()) do
    local function conv(v)
      if tide.is_tensor(v) then return v:totable() end
      local t = {}
      for k, x in pairs(v) do t[k] = conv(x) end
      return t
    end
    out[#out + 1] = conv(e)
  end
  return out
end

local r = D.range
local pipelines = {
  range_5 = function() return r(5) end,
  range_2_11_3 = function() return r(2, 11, 3) end,
  range_10_0_m3 = function() return r(10, 0, -3) end,
  shuffle_buffer1 = function() return r(8):shuffle(1) end,
  repeat_batch = function() return r(5):repeat_(2):batch(3) end,
  batch_repeat = function() return r(5):batch(3):repeat_(2) end,
  batch_drop = function() return r(7):batch(3, { drop_remainder = true }) end,
  take_skip = function() return r(10):skip(3):take(4) end,
  skip_all = function() return r(10):skip(-1) end,
  take_all = function() return r(4):take(-1) end,
  interleave_2_1 = function()
    return r(1, 4):interleave(function(x) local v = x:item(); return r(v * 10, v * 10 + v) end,
      { cycle_length = 2, block_length = 1 })
  end,
  interleave_3_2 = function()
    return r(1, 5):interleave(function(x) return r(x:item()):map(function(y) return x * 100 + y end) end,
      { cycle_length = 3, block_length = 2 })
  end,
  interleave_1_3 = function()
    return r(3):interleave(function(x) return r(4):map(function(y) return x * 10 + y end) end,
      { cycle_length = 1, block_length = 3 })
  end,
  enumerate = function() return r(3):map(function(x) return x * 2 end):enumerate(5) end,
  shard_3_1 = function() return r(10):shard(3, 1) end,
  zip = function() return D.zip { r(3), r(10, 15) } end,
  concatenate = function() return r(3):concatenate(r(7, 9)) end,
  filter_even = function() return r(10):filter(function(x) return tide.equal(x % 2, 0) end) end,
  padded_batch = function() return r(1, 5):map(function(x) return tide.fill({ x }, x) end):padded_batch(2) end,
  padded_batch_shapes = function()
    return r(1, 4):map(function(x) return tide.fill({ x }, x) end)
      :padded_batch(2, { padded_shapes = { 4 }, padding_values = -1 })
  end,
  unbatch = function() return r(7):batch(3):unbatch() end,
  map_tuple = function()
    return D.from_tensor_slices { tide.tensor { 1, 2, 3 }, tide.tensor { 10, 20, 30 } }
      :map(function(a, b) return a + b, a * b end)
  end,
  map_dict = function()
    return D.from_tensor_slices { label = tide.tensor { 0, 1 }, image = tide.tensor({ { 1.5, 2.5 }, { 3.5, 4.5 } }, "float32") }
      :map(function(d) return { image = d.image * 2, label = d.label } end)
  end,
  cache_take = function() return r(6):take(3):cache():repeat_(2) end,
  repeat_empty = function() return r(0):repeat_(3) end,
}

describe("tide.data matches tf.data", function()
  -- The same cases with maps that trace, so that C can run padded_batch (fill's
  -- shape as a tensor; fill({x}, x) reads x's value and runs in Lua).
  local c_engine = require "tide.data.c_engine"
  local function ramp(x) return tide.fill(tide.reshape(x, { 1 }), 1):cast("int64") * x end
  local in_c = {
    padded_batch = function() return r(1, 5):map(ramp):padded_batch(2) end,
    padded_batch_shapes = function()
      return r(1, 4):map(ramp):padded_batch(2, { padded_shapes = { 4 }, padding_values = -1 })
    end,
  }

  engines.each(function()
    for name, expected in pairs(cases) do
      it(name, function()
        local make = assert(pipelines[name], "no tide pipeline for the fixture case " .. name)
        assert.are.same(expected, values(make()))
      end)
    end

    for name, make in pairs(in_c) do
      it(name .. " (a traced map: every stage can run in C)", function()
        local ds = make()
        assert.is_true(c_engine.supports(ds))
        assert.are.same(cases[name], values(ds))
      end)
    end
  end)

  it("has a pipeline for every case and a case for every pipeline", function()
    for name in pairs(pipelines) do assert.is_not_nil(cases[name], name) end
  end)

  local cards = {
    range = function() return r(10) end,
    batch = function() return r(10):batch(3) end,
    batch_drop = function() return r(10):batch(3, { drop_remainder = true }) end,
    repeat_inf = function() return r(10):repeat_() end,
    repeat_take = function() return r(10):repeat_():take(7) end,
    filter = function() return r(10):filter(function(x) return x:gt(3) end) end,
    skip = function() return r(10):skip(4) end,
    shard = function() return r(10):shard(3, 1) end,
    concatenate = function() return r(3):concatenate(r(4)) end,
    zip_inf = function() return D.zip { r(3):repeat_(), r(5) } end,
    repeat_empty = function() return r(0):repeat_() end,
    take_more = function() return r(3):take(10) end,
  }
  for name, expected in pairs(card) do
    it("cardinality: " .. name, function()
      assert.are.equal(expected, cards[name]():cardinality())
    end)
  end
  it("names the cardinality constants as TF", function()
    assert.are.equal(-1, tide.data.INFINITE_CARDINALITY)
    assert.are.equal(-2, tide.data.UNKNOWN_CARDINALITY)
  end)
end)

describe("shuffle", function()
  local function order(ds)
    local t = {}
    for x in ds:iter() do t[#t + 1] = x:item() end
    return t
  end
  local function is_permutation(t, n)
    local seen = {}
    for _, v in ipairs(t) do
      if seen[v] or v < 0 or v >= n then return false end
      seen[v] = true
    end
    return #t == n
  end

  engines.each(function()
    it("gives a permutation, the same for the same seed in a new dataset", function()
      local a = order(r(50):shuffle(10, { seed = 7 }))
      local b = order(r(50):shuffle(10, { seed = 7 }))
      assert.is_true(is_permutation(a, 50))
      assert.are.same(a, b)
      assert.are_not.same(a, order(r(50):shuffle(10, { seed = 8 })))
    end)

    it("reshuffles each pass unless told not to, deterministically", function()
      local ds = r(30):shuffle(30, { seed = 1 })
      local first, second = order(ds), order(ds)
      assert.are_not.same(first, second)
      local again = r(30):shuffle(30, { seed = 1 })
      assert.are.same(first, order(again))
      assert.are.same(second, order(again))
      local fixed = r(30):shuffle(30, { seed = 1, reshuffle_each_iteration = false })
      assert.are.same(order(fixed), order(fixed))
    end)

    it("keeps order with a buffer of 1, and reshuffles within repeat_", function()
      assert.are.same({ 0, 1, 2, 3, 4 }, order(r(5):shuffle(1)))
      local t = order(r(20):shuffle(20, { seed = 3 }):repeat_(2))
      local e1, e2 = { unpack(t, 1, 20) }, { unpack(t, 21, 40) }
      assert.is_true(is_permutation(e1, 20) and is_permutation(e2, 20))
      assert.are_not.same(e1, e2)
    end)

    it("follows tide.random.set_seed when given no seed", function()
      tide.random.set_seed(42)
      local a = order(r(40):shuffle(40))
      tide.random.set_seed(42)
      assert.are.same(a, order(r(40):shuffle(40)))
    end)
  end)

  it("draws the same order in C and in Lua (a Lua stage below it)", function()
    local c = order(r(40):shuffle(16, { seed = 5 }))
    local lua = order(r(40):filter(function(x) return x:ge(0) end):shuffle(16, { seed = 5 }))
    assert.are.same(c, lua)
    -- the Lua engine's shuffle itself, pass after pass (a traced filter runs in C: the switch forces Lua)
    local in_c, in_lua = r(40):shuffle(16, { seed = 5 }), r(40):shuffle(16, { seed = 5 })
    for _ = 1, 2 do assert.are.same(order(in_c), engines.with(true, order, in_lua)) end
  end)
end)
