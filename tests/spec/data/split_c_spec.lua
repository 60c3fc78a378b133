-- tests/spec/data/split_c_spec.lua — shard and unbatch in C (kernels/data/split.c):
-- the C engine runs them, they give what the Lua engine gives on the same
-- pipeline, their errors, empty inputs, early exit, and threads above them.
local tide = require "tide"
local binding = require "tide.binding"
local h = require "helpers"
local c_engine = require "tide.data.c_engine"
local engines = require "data_engines"
local D = tide.data.Dataset
local C, ffi = binding.C, binding.ffi

-- ds:totable() with every stage read by its Lua reader (the Lua engine forced).
local function lua_totable(ds) return engines.with(true, ds.totable, ds) end

-- A pass's elements as plain Lua values (list elements as lists), read without the auto prefetch.
local function values(ds)
  local out = {}
  for _, e in ipairs(ds:totable()) do
    local function conv(v)
      if tide.is_tensor(v) then return { dtype = tostring(v.dtype), shape = v.shape:as_list(), v = v:totable() } end
      local t = {}
      for k, x in pairs(v) do t[k] = conv(x) end
      return t
    end
    out[#out + 1] = conv(e)
  end
  return out
end

-- make() in C and in Lua: the C one runs every stage in C, and both give the same.
local function same_in_both(make)
  local c = make()
  assert.is_true(c_engine.supports(c))
  local want = engines.with(true, values, make())
  assert.are.same(want, values(c))
  return want
end

local function c_card(ds) return tonumber(C.tide_dataset_cardinality(c_engine.handle(ds))) end

describe("shard in C", function()
  it("gives element i to shard i % num, as the Lua engine does", function()
    for _, case in ipairs { { 10, 3, 0 }, { 10, 3, 1 }, { 10, 3, 2 }, { 7, 1, 0 }, { 3, 5, 4 }, { 3, 5, 2 }, { 0, 2, 1 } } do
      local n, num, index = case[1], case[2], case[3]
      local got = same_in_both(function() return D.range(n):shard(num, index) end)
      local want = {}
      for i = index, n - 1, num do want[#want + 1] = i end
      local flat = {}
      for i, e in ipairs(got) do flat[i] = e.v end
      assert.are.same(want, flat)
    end
    same_in_both(function()
      return D.from_tensor_slices { a = tide.tensor { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }, b = tide.tensor { "w", "x", "y", "z" } }
        :shard(2, 1)
    end)
  end)

  it("keeps its cardinality rule, in C too", function()
    for _, ds in ipairs { D.range(10):shard(3, 0), D.range(10):shard(3, 1), D.range(10):shard(3, 2), D.range(2):shard(3, 2),
      D.range(0):shard(4, 0), D.range(3):repeat_():shard(2, 1), D.range(9):filter(function(v) return v:gt(2) end):shard(2, 0) } do
      assert.are.equal(ds:cardinality(), c_card(ds))
    end
    assert.are.same({ 4, 3, 3 }, { D.range(10):shard(3, 0):cardinality(), D.range(10):shard(3, 1):cardinality(),
      D.range(10):shard(3, 2):cardinality() })
  end)

  it("refuses bad arguments as before, and in C", function()
    h.errors("index must be less than num_shards", function() D.range(3):shard(2, 2) end)
    h.errors("shard", function() D.range(3):shard(0, 0) end)
    h.errors("shard", function() D.range(3):shard(2, -1) end)
    local r = c_engine.handle(D.range(3))
    assert.is_true(C.tide_dataset_shard(r, 0, 0) == nil)
    assert.is_truthy(ffi.string(C.tide_last_error()):find("num_shards must be at least 1", 1, true))
    assert.is_true(C.tide_dataset_shard(r, 2, 2) == nil)
    assert.is_truthy(ffi.string(C.tide_last_error()):find("index must be in [0, num_shards) = [0, 2), got 2", 1, true))
  end)

  it("runs below a parallel map and a prefetch, and after one", function()
    local function pipe()
      return D.range(100):map(function(v) return v * 3 end, { parallel = 2 }):shard(4, 3)
        :map(function(v) return v + 1 end, { parallel = tide.data.AUTOTUNE }):batch(5):prefetch(2)
    end
    local got = same_in_both(pipe)
    local flat = {}
    for _, b in ipairs(got) do for _, v in ipairs(b.v) do flat[#flat + 1] = v end end
    local want = {}
    for i = 3, 99, 4 do want[#want + 1] = i * 3 + 1 end
    assert.are.same(want, flat)
  end)
end)

describe("unbatch in C", function()
  it("gives each element's rows, as the Lua engine does", function()
    same_in_both(function() return D.range(7):batch(3):unbatch() end)
    -- rows copied (small) and viewed (large, strings, bools), several components, a dict element
    same_in_both(function()
      return D.from_tensor_slices {
        img = tide.reshape(tide.range(0, 6 * 40, 1, "float32"), { 6, 4, 10 }),
        small = tide.reshape(tide.range(0, 12, 1, "int32"), { 6, 2 }),
        word = tide.tensor { "a", "bb", "ccc", "dddd", "e", "f" },
        flag = tide.tensor { true, false, true, true, false, false },
      }:batch(4):unbatch()
    end)
    -- rank 3 rows of a batch of batches, and from_tensors of a matrix
    same_in_both(function() return D.range(24):batch(2):batch(3):unbatch():unbatch() end)
    same_in_both(function() return D.from_tensors(tide.reshape(tide.range(0, 6, 1, "float64"), { 3, 2 })):unbatch() end)
    local got = values(D.from_tensors(tide.reshape(tide.range(0, 6, 1, "float64"), { 3, 2 })):unbatch())
    assert.are.same({ { 0, 1 }, { 2, 3 }, { 4, 5 } }, { got[1].v, got[2].v, got[3].v })
    assert.are.same({ 2 }, got[1].shape)
  end)

  it("gives rows of a strided (non-contiguous) element, and rows that hold nothing", function()
    same_in_both(function()
      return D.from_tensors(tide.transpose(tide.reshape(tide.range(0, 12, 1, "int64"), { 3, 4 }))):unbatch()
    end)
    local rows = values(D.from_tensors(tide.zeros({ 3, 0 }, "float32")):unbatch())
    assert.are.equal(3, #rows)
    assert.are.same({ 0 }, rows[1].shape)
  end)

  it("skips empty batches and gives nothing for an empty input", function()
    assert.are.same({}, same_in_both(function() return D.range(0):batch(2):unbatch() end))
    local got = same_in_both(function()
      return D.range(6):map(function(v) return tide.fill(tide.reshape(v % 3, { 1 }), 1):cast("int64") * v end):unbatch()
    end)
    local flat = {}
    for i, e in ipairs(got) do flat[i] = e.v end
    assert.are.same({ 1, 2, 2, 4, 5, 5 }, flat)
  end)

  it("names the components' first dimensions at the element that differs, and a scalar", function()
    local function mismatched()
      return D.range(3):map(function(v)
        return tide.fill(tide.reshape(v + 1, { 1 }), 1.5), tide.fill(tide.stack { tide.tensor(2, "int64") }, 0)
      end):unbatch()
    end
    assert.is_true(c_engine.supports(mismatched()))
    local want = "unbatch: the components of element 0 have different first dimensions (1, 2); each must have the " ..
      "same number of rows"
    h.errors(want, function() mismatched():totable() end)
    h.errors(want, function() lua_totable(mismatched()) end)
    -- the iteration that hit it fails; elements before it came through
    local later = D.range(3):map(function(v)
      return tide.fill(tide.reshape(v + 1, { 1 }), 1.5), tide.fill(tide.stack { tide.tensor(2, "int64") }, 0)
    end)
    later = D.zip { D.range(3):batch(1):unbatch(), later:skip(1):unbatch() }
    assert.is_true(c_engine.supports(later))
    h.drop(function() -- (the failed pass and its prefetch thread go now, not at a later case's collection)
      local it = later:iter()
      local a = it()
      assert.are.equal(0, a:item())
      assert.are.equal(1, it():item())
      h.errors("unbatch: the components of element 1 have different first dimensions (3, 2)", it)
    end)
    -- a scalar the specs did not know of (a map whose rank is unknown)
    local scalar = D.range(2):map(function(v) return tide.reshape(v, tide.fill(tide.reshape(v, { 1 }), 1):cast("int64")) end)
    scalar = scalar:unbatch()
    assert.is_true(c_engine.supports(scalar))
    h.errors("unbatch: component 0 of element 0 is a scalar; every component needs a first dimension", function()
      scalar:totable()
    end)
    h.errors("unbatch: component 0 of element 0 is a scalar", function() lua_totable(D.range(2):map(function(v)
      return tide.reshape(v, tide.fill(tide.reshape(v, { 1 }), 1):cast("int64"))
    end):unbatch()) end)
  end)

  it("runs under a parallel map and a prefetch above it, and gives the same", function()
    local function pipe()
      return D.from_tensor_slices(tide.reshape(tide.range(0, 300, 1, "float32"), { 100, 3 })):batch(7)
        :map(function(b) return b * 2 end, { parallel = 2 }):unbatch()
        :map(function(r) return tide.reduce_sum(r) end, { parallel = tide.data.AUTOTUNE }):batch(10):prefetch(2)
    end
    local got = same_in_both(pipe)
    local flat = {}
    for _, b in ipairs(got) do for _, v in ipairs(b.v) do flat[#flat + 1] = v end end
    assert.are.equal(100, #flat)
    for i = 0, 99 do assert.are.equal(2 * (9 * i + 3), flat[i + 1]) end
  end)

  it("elements holding a SparseTensor stay in Lua", function()
    local sp = tide.SparseTensor({ { 0, 0 }, { 1, 1 } }, tide.tensor { 1, 2 }, { 2, 2 })
    local ds = D.from_tensors(sp):unbatch()
    assert.is_false(c_engine.supports(ds))
    assert.are.equal(2, #ds:totable())
    local mixed = D.from_tensors { sp, tide.tensor { 1, 2, 3 } }:unbatch()
    assert.is_false(c_engine.supports(mixed))
    h.errors("unbatch: the components of an element have different first dimensions (2 and 3)", function()
      mixed:totable()
    end)
  end)

  it("C's cardinality: infinite stays infinite, empty stays empty, else unknown", function()
    assert.are.equal(tide.data.INFINITE_CARDINALITY, c_card(D.range(2):batch(1):repeat_():unbatch()))
    assert.are.equal(0, c_card(D.range(0):batch(2):unbatch()))
    assert.are.equal(tide.data.UNKNOWN_CARDINALITY, c_card(D.range(4):batch(2):unbatch()))
  end)
end)

describe("shard and unbatch: early exit", function()
  -- Passes are closed by hand here: a pass dropped to the collector is
  -- joined by its finalizer (engine_spec checks that path), whose timing
  -- belongs to LuaJIT, not to these stages.
  it("a pass closed midway stops every thread below and above them and gives its memory back", function()
    local open = require("tide.data.dataset").open
    local x = tide.ones({ 2000, 16 }, "float32")
    local ds = D.from_tensor_slices(x):batch(50):map(function(v) return v * 2 end, { parallel = 2 }):unbatch()
      :shard(3, 1):map(function(v) return v + 1 end, { parallel = 2 }):batch(8):prefetch(4)
    assert.is_true(c_engine.supports(ds))
    local function partial_pass()
      local nextf, close = open(ds)
      assert.are.same({ 8, 16 }, nextf()[1].shape:as_list())
      assert.is_not_nil(nextf())
      assert.is_true(C.tide_data_live_threads() >= 5) -- prefetch, and 2 workers for each map
      close()
      assert.are.equal(0, C.tide_data_live_threads())
    end
    -- passes earlier tests dropped are joined by their finalizers: collect
    -- them first, so the thread count below is this test's passes alone
    binding.collect()
    binding.collect()
    partial_pass() -- warm: the maps' plans are made once and kept
    binding.collect()
    binding.collect()
    local before = binding.memory_stats.current
    for _ = 1, 3 do partial_pass() end
    binding.collect()
    binding.collect()
    assert.are.equal(before, binding.memory_stats.current)
  end)
end)

describe("interleave captures shard and unbatch", function()
  it("copies them per input element, in C", function()
    local function make()
      return D.range(1, 4):interleave(function(x) return D.range(x * 4):batch(3):unbatch():shard(2, 1) end,
        { cycle_length = 2 })
    end
    local ds = make()
    assert.is_truthy(ds.captured)
    local got = same_in_both(make)
    local flat = {}
    for i, e in ipairs(got) do flat[i] = e.v end
    assert.are.same({ 1, 1, 3, 3, 5, 1, 7, 3, 5, 7, 9, 11 }, flat)
  end)
end)
