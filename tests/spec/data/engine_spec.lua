-- tests/spec/data/engine_spec.lua — how tide.data runs: map on C threads
-- (parallel, deterministic or not), prefetch, errors at the element that hit
-- them, clean shutdown (threads and bytes) when a pass is dropped midway,
-- the Lua fallback, sources, reading, and the errors for bad arguments.
local tide = require "tide"
local binding = require "tide.binding"
local h = require "helpers"
local D = tide.data.Dataset
local C = binding.C

local threads = h.threads
require("ffi").cdef [[ int usleep(unsigned int usec); ]]

local function items(ds)
  local t = {}
  for x in ds:iter() do t[#t + 1] = x:item() end
  return t
end

describe("map on C threads", function()
  local x = tide.range(0, 200, 1, "int32")

  it("gives the same elements, in order, at every parallelism", function()
    local want = {}
    for i = 0, 199 do want[i + 1] = i * 3 + 1 end
    for _, p in ipairs { 1, 2, 4, tide.data.AUTOTUNE } do
      local ds = D.from_tensor_slices(x):map(function(v) return v * 3 + 1 end, { parallel = p })
      assert.are.same(want, items(ds))
      assert.are.same(want, items(ds)) -- a dataset iterates again from the start
    end
  end)

  it("hands out every element once with deterministic=false", function()
    local ds = D.from_tensor_slices(x):map(function(v) return v + 0 end, { parallel = 3, deterministic = false })
    local got = items(ds)
    table.sort(got)
    for i = 0, 199 do assert.are.equal(i, got[i + 1]) end
  end)

  it("traces once against the element spec: shapes and dtypes come out in element_spec", function()
    local img = tide.zeros({ 10, 28, 28 }, "uint8")
    local ds = D.from_tensor_slices { img, tide.range(0, 10, 1, "int32") }
      :map(function(a, y) return a:cast("float32"):expand_dims(-1) / 255, y end, { parallel = 2 })
      :batch(4)
    local spec = ds.element_spec
    assert.are.equal("float32", spec[1].dtype)
    assert.are.same({ tide.None, 28, 28, 1 }, spec[1].shape)
    local n = 0
    for a, y in ds:iter() do
      n = n + 1
      assert.are.equal(n < 3 and 4 or 2, a.shape[1])
    end
    assert.are.equal(3, n)
  end)

  it("names the element whose function failed, and goes on after it", function()
    local ds = D.from_tensor_slices(tide.tensor { 0, 1, 2, 3 })
      :map(function(v) return tide.gather(tide.tensor { 10, 20, 30 }, v) end, { parallel = 2 })
    local it = ds:iter()
    assert.are.equal(10, it():item())
    assert.are.equal(20, it():item())
    assert.are.equal(30, it():item())
    h.errors("element 3", it)
  end)

  it("names the line of the user's map function, also for an op it tail-calls", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local ds = D.from_tensor_slices(tide.tensor { 0, 7 }):map(function(v) return tide.gather(tide.tensor { 1, 2 }, v) end,
      { parallel = 2 })
    assert.is_true(require("tide.data.c_engine").supports(ds))
    local it = ds:iter()
    assert.are.equal(1, it():item())
    h.errors("engine_spec.lua:" .. line, it)
  end)

  it("names the element in the sequential map too", function()
    local ds = D.from_tensor_slices(tide.tensor { 2, 5 }):map(function(v) return tide.gather(tide.tensor { 1, 2, 3 }, v) end)
    local it = ds:iter { prefetch = false }
    assert.are.equal(3, it():item())
    h.errors("map: the function failed on element 1", it)
  end)

  it("falls back to Lua for a function that cannot be traced, and says why once", function()
    local text = h.stderr_of(function()
      local ds = D.range(4):map(function(v) return tide.tensor { v:item(), v:item() * 2 } end)
      assert.are.same({ { 0, 0 }, { 1, 2 }, { 2, 4 }, { 3, 6 } }, (function()
        local t = {}
        for e in ds:iter() do t[#t + 1] = e:totable() end
        return t
      end)())
      -- once per place in the source: a map made in a loop, or in an
      -- interleave function for each element, is a new closure each time
      for _ = 1, 3 do D.range(2):map(function(v) return tide.tensor { v:item() } end) end
      local inner = D.range(3):interleave(function() return D.range(2):map(function(v) return tide.tensor { v:item() } end) end)
      assert.are.equal(6, #inner:totable())
    end)
    local _, maps = text:gsub("the map function at [^\n]* could not be traced", "")
    local _, interleaves = text:gsub("the interleave function at [^\n]* could not be captured", "")
    assert.are.equal(3, maps) -- three places in the source
    assert.are.equal(1, interleaves)
    assert.is_truthy(text:find("item: this tensor is symbolic", 1, true))
  end)
end)

describe("the switch that forces the Lua engine (for the specs that run under both engines)", function()
  local c_engine = require "tide.data.c_engine"
  local lua_engine = require "tide.data.lua_engine"
  local engines = require "data_engines"

  -- The passes fn opens in C (c_engine.open's calls) while it runs.
  local function c_passes(fn)
    local open, n = c_engine.open, 0
    c_engine.open = function(ds) n = n + 1; return open(ds) end
    local ok, err = pcall(fn)
    c_engine.open = open
    if not ok then error(err, 0) end
    return n
  end
  local function make() return D.range(10):map(function(v) return v * 2 end, { parallel = 2 }):batch(4):prefetch(2) end
  local want = { { 0, 2, 4, 6 }, { 8, 10, 12, 14 }, { 16, 18 } }
  local function batches(ds)
    local t = {}
    for b in ds:iter() do t[#t + 1] = b:totable() end
    return t
  end

  it("runs every stage in Lua, with no C pass and no data thread, and gives the same elements", function()
    assert.is_true(c_engine.supports(make()))
    assert.are.equal(1, c_passes(function() assert.are.same(want, batches(make())) end))
    assert.are.equal(0, c_passes(function() assert.are.same(want, engines.with(true, batches, make())) end))
    h.drop(function()
      local it = make():iter()
      it()
      assert.is_true(C.tide_data_live_threads() > 0) -- in C: the map's workers and the prefetch thread
    end)
    assert.are.equal(0, C.tide_data_live_threads())
    engines.with(true, function()
      local lua_it = make():iter()
      assert.are.same({ 0, 2, 4, 6 }, lua_it():totable())
      assert.are.equal(0, C.tide_data_live_threads())
    end)
  end)

  it("still reads a source only C reads in C, and restores the switch on every way out", function()
    local records = tide.data.TFRecordDataset("tests/fixtures/data/examples.tfrecord"):batch(2)
    local n = c_passes(function() assert.are.same({ 2, 1 }, engines.with(true, function()
      local sizes = {}
      for b in records:iter() do sizes[#sizes + 1] = b.shape[1] end
      return sizes
    end)) end)
    assert.are.equal(1, n) -- the source's pass, under the Lua engine's batch
    assert.has_error(function() engines.with(true, error, "boom") end, "boom")
    assert.is_false(lua_engine.force(false))
  end)
end)

describe("filter in C", function()
  local c_engine = require "tide.data.c_engine"

  it("runs a traced predicate with no Lua, in order, after a parallel map and before batch", function()
    local ds = D.range(100):map(function(v) return v * 3 end, { parallel = 2 })
      :filter(function(v) return tide.equal(v % 2, 0) end):batch(7)
    assert.is_true(c_engine.supports(ds))
    assert.are.equal(tide.data.UNKNOWN_CARDINALITY, ds:cardinality())
    assert.are.equal(tide.data.INFINITE_CARDINALITY, D.range(3):repeat_():filter(function(v) return v:gt(0) end):cardinality())
    local got = {}
    for b in ds:iter() do for _, v in ipairs(b:totable()) do got[#got + 1] = v end end
    local want = {}
    for i = 0, 99 do if (i * 3) % 2 == 0 then want[#want + 1] = i * 3 end end
    assert.are.same(want, got)
  end)

  it("takes every component of a list or map element, and nothing passes an all-false predicate", function()
    local ds = D.from_tensor_slices { a = tide.tensor { 1, 2, 3, 4 }, b = tide.tensor { 4, 3, 2, 1 } }
      :filter(function(e) return e.a:gt(e.b) end)
    assert.is_true(c_engine.supports(ds))
    local got = {}
    for e in ds:iter() do got[#got + 1] = { e.a:item(), e.b:item() } end
    assert.are.same({ { 3, 2 }, { 4, 1 } }, got)
    assert.are.same({}, D.range(5):filter(function(v) return v:lt(0) end):totable())
  end)

  it("names the element whose predicate failed", function()
    local ds = D.from_tensor_slices(tide.tensor { 0, 1, 5, 2 })
      :filter(function(v) return tide.gather(tide.tensor { true, false, true }, v) end)
    assert.is_true(c_engine.supports(ds))
    local it = ds:iter()
    assert.are.equal(0, it():item())
    h.errors("filter: the predicate failed on element 2", it)
  end)
end)

describe("zip, concatenate and enumerate in C", function()
  local c_engine = require "tide.data.c_engine"
  local function c_card(ds) return tonumber(C.tide_dataset_cardinality(c_engine.handle(ds))) end

  it("run with no Lua, in TF's order, and C's cardinality agrees with element_spec's side", function()
    local a = D.range(5):map(function(v) return v * 10 end, { parallel = 2 })
    local z = D.zip { a, D.from_tensor_slices { tide.tensor { 1, 2, 3 }, tide.tensor { 4, 5, 6 } } }
    local cat = D.range(3):concatenate(D.range(10, 12))
    local en = D.range(3):map(function(v) return v * 2 end):enumerate(5)
    for _, ds in ipairs { z, cat, en } do assert.is_true(c_engine.supports(ds)) end
    local got = {}
    for x, pair in z:iter() do got[#got + 1] = { x:item(), pair[1]:item(), pair[2]:item() } end
    assert.are.same({ { 0, 1, 4 }, { 10, 2, 5 }, { 20, 3, 6 } }, got)
    got = {}
    for v in cat:iter() do got[#got + 1] = v:item() end
    assert.are.same({ 0, 1, 2, 10, 11 }, got)
    got = {}
    for i, v in en:iter() do got[#got + 1] = { i:item(), v:item() } end
    assert.are.same({ { 5, 0 }, { 6, 2 }, { 7, 4 } }, got)
    assert.are.equal("int64", en.element_spec[1].dtype)
    local inf, unknown = D.range(2):repeat_(), D.range(4):filter(function(v) return v:gt(1) end)
    for _, ds in ipairs { z, cat, en, D.zip { inf, D.range(3) }, D.zip { inf, inf }, D.zip { unknown, D.range(3) },
      inf:concatenate(D.range(2)), unknown:concatenate(D.range(2)), D.range(2):concatenate(D.range(0)) } do
      assert.are.equal(ds:cardinality(), c_card(ds))
    end
  end)

  it("stop the threads of every input when a pass ends early", function()
    local m = D.range(1000):map(function(v) return v + 1 end, { parallel = 2 })
    for _, ds in ipairs { D.zip { m, m:map(function(v) return v * 2 end, { parallel = 2 }) }, m:concatenate(m), m:enumerate() } do
      h.drop(function()
        local it = ds:iter()
        it()
        it()
      end)
      assert.are.equal(0, C.tide_data_live_threads())
    end
    -- concatenate ends the first input's pass (and its threads) before the second's
    h.drop(function()
      local it = D.range(3):map(function(v) return v end, { parallel = 2 }):concatenate(D.range(2)):iter { prefetch = false }
      for _ = 1, 4 do it() end
      assert.are.equal(0, C.tide_data_live_threads())
    end)
  end)

  it("zip drops what earlier inputs gave for an element a later input ends", function()
    local z = D.zip { D.range(5), D.range(2) }
    assert.are.same({ { 0, 0 }, { 1, 1 } }, (function()
      local t = {}
      for a, b in z:iter() do t[#t + 1] = { a:item(), b:item() } end
      return t
    end)())
  end)
end)

describe("padded_batch in C", function()
  local c_engine = require "tide.data.c_engine"

  it("pads each component to the batch's longest or the given shape, with its padding value", function()
    -- (shapes from the data, in ops that trace: fill's shape as a tensor)
    local ds = D.range(1, 6):map(function(x)
      return tide.fill(tide.reshape(x, { 1 }), 1):cast("int64") * x,
        tide.logical_and(tide.fill(tide.stack { tide.tensor(2, "int64"), x }, true), x:gt(2)), x
    end):padded_batch(2, { padded_shapes = { { -1 }, { 2, 5 }, {} }, padding_values = { -1, true, 0 } })
    assert.is_true(c_engine.supports(ds))
    local got = ds:totable()
    assert.are.equal(3, #got)
    assert.are.same({ { 1, -1 }, { 2, 2 } }, got[1][1]:totable())
    assert.are.same({ { 3, 3, 3, -1 }, { 4, 4, 4, 4 } }, got[2][1]:totable())
    assert.are.same({ { 5, 5, 5, 5, 5 } }, got[3][1]:totable())
    assert.are.same({ 2, 2, 5 }, got[1][2].shape:as_list())
    assert.are.same({ { false, true, true, true, true }, { false, true, true, true, true } }, got[1][2]:totable()[1])
    assert.are.same({ { true, true, true, true, true }, { true, true, true, true, true } }, got[2][2]:totable()[1])
    assert.are.same({ { true, true, true, true, true }, { true, true, true, true, true } }, got[2][2]:totable()[2])
    assert.are.same({ 5 }, got[3][3]:totable())
    local dropped = D.range(1, 6):map(function(x) return tide.fill(tide.reshape(x, { 1 }), 1.5) end)
      :padded_batch(2, { drop_remainder = true })
    assert.is_true(c_engine.supports(dropped))
    assert.are.equal(2, #dropped:totable())
  end)

  it("names an element longer than its padded shape; strings stay in Lua", function()
    local ds = D.range(1, 5):map(function(x) return tide.fill(tide.reshape(x, { 1 }), 1.5) end)
      :padded_batch(4, { padded_shapes = { 3 } })
    assert.is_true(c_engine.supports(ds))
    h.errors("padded_batch: element 3 component 0 has 4 in dim 0, more than the padded shape's 3", function() ds:totable() end)
    local words = D.from_tensor_slices(tide.tensor { "a b", "c" }):map(function(s) return tide.strings.split(s, " ") end)
    assert.is_true(c_engine.supports(words))
    assert.is_false(c_engine.supports(words:padded_batch(2)))
  end)
end)

describe("shutdown", function()
  it("joins its threads and frees its elements when a pass is dropped midway", function()
    local x = tide.ones({ 1000, 64 }, "float32")
    local ds = D.from_tensor_slices(x):map(function(v) return v * 2 end, { parallel = 2 }):batch(10):prefetch(4)
    h.drop(function() ds:iter()() end) -- the graph's plans (one per worker) are made once and kept with it
    local before_threads, before_bytes = threads(), binding.memory_stats.current
    for _ = 1, 5 do
      h.drop(function()
        local it = ds:iter()
        it()
        it()
        assert.is_true(C.tide_data_live_threads() >= 3)
      end)
    end
    assert.are.equal(0, C.tide_data_live_threads())
    assert.are.equal(before_threads, h.threads_down_to(before_threads))
    assert.are.equal(before_bytes, binding.memory_stats.current)
  end)

  it("stops a pass blocked on a full buffer and one in an infinite repeat", function()
    local ds = D.range(10):map(function(v) return v + 1 end, { parallel = 2 }):repeat_():prefetch(2)
    h.drop(function()
      local it = ds:iter()
      for _ = 1, 25 do it() end
    end)
    assert.are.equal(0, C.tide_data_live_threads())
  end)
end)

describe("prefetch", function()
  -- The bytes held above `start` once they stop changing (50 ms alike; at most 2 s).
  local function settled(start)
    local last, same = nil, 0
    for _ = 1, 400 do
      local now = tonumber(binding.memory_stats.current - start)
      if now == last then same = same + 1 else same = 0 end
      if same >= 10 then return now end
      last = now
      C.usleep(5000)
    end
    return last
  end

  it("prefetch(n) runs n elements ahead of the consumer: its depth, not only its values", function()
    -- each element is 1 MiB: the elements ahead are the bytes held less the ones taken (and kept here);
    -- the producer refills in a burst once the buffer is half empty, so the most ahead is n
    local mb = 1024 * 1024
    for _, n in ipairs { 1, 2, 3, 6 } do
      local ds = D.range(40):map(function(i) return tide.fill({ mb / 4 }, 1.5) + tide.cast(i, "float32") end)
      ds = ds:prefetch(n)
      h.drop(function()
        binding.collect()
        local start = binding.memory_stats.current
        local it = ds:iter { prefetch = false }
        local taken, most, seen = {}, 0, {}
        for k = 1, 2 * n + 2 do
          taken[k] = it()
          local ahead = math.floor(settled(start) / mb + 0.5) - k
          seen[k] = ahead
          most = math.max(most, ahead)
        end
        assert(most == n, string.format("prefetch(%d): elements ahead after each take: %s", n, table.concat(seen, " ")))
        assert.are.equal(2 * n + 1, taken[2 * n + 2]:totable()[1] - 1.5)
      end)
    end
  end)
end)

describe("memory", function()
  it("a loop that only reads a dataset still gives its elements' memory back (the collector is paced)", function()
    -- elements are paced by the C bytes held since the last collection, past
    -- twice the binding's step (at least 32 MiB, 4x the Lua heap)
    binding.collect()
    local mb = 1024 * 1024
    local per = 4 * mb
    local n = math.ceil(2.5 * (2 * math.max(32 * mb, 4 * 1024 * collectgarbage("count"))) / per)
    local ds = D.range(n):map(function(i) return tide.fill({ per / 4 }, 1.5) + tide.cast(i, "float32") end)
    local start, most, count, heap = binding.memory_stats.current, 0, 0, 0
    for e in ds:iter { prefetch = false } do -- (a prefetch buffer would hold elements on top)
      count = count + 1
      local held = tonumber(binding.memory_stats.current - start)
      if held > most then most = held end
      heap = math.max(heap, collectgarbage("count"))
    end
    -- twice the largest step the heap made, the element being made and the one just taken
    local bound = 2 * math.max(32 * mb, 4 * 1024 * heap) + 2 * per
    assert.are.equal(n, count)
    assert.is_true(most <= bound, string.format("held %.0f MiB, bound %.0f MiB", most / mb, bound / mb))
    assert.is_true(most > per) -- (the elements were made)
  end)
end)

describe("sources and reading", function()
  it("slices a map and gives one table per element", function()
    local ds = D.from_tensor_slices { image = tide.tensor { { 1, 2 }, { 3, 4 } }, label = tide.tensor { 7, 8 } }
    local got = {}
    for e in ds:iter() do got[#got + 1] = { e.image:totable(), e.label:item() } end
    assert.are.same({ { { 1, 2 }, 7 }, { { 3, 4 }, 8 } }, got)
    assert.are.equal(2, ds:cardinality())
  end)

  it("from_tensors gives one element; get_single_element checks there is one", function()
    local e = D.from_tensors(tide.tensor { 1, 2, 3 }):get_single_element()
    assert.are.same({ 1, 2, 3 }, e:totable())
    assert.are.equal(0, D.range(5):take(1):get_single_element():item())
    h.errors("more than one element", function() D.range(5):get_single_element() end)
    h.errors("empty", function() D.range(0):get_single_element() end)
  end)

  it("from_generator calls the generator for each pass and checks its elements", function()
    local function gen()
      local i = 0
      return function()
        i = i + 1
        if i <= 3 then return { i, { i, i } } end
      end
    end
    local ds = D.from_generator(gen, { output_signature = { tide.TensorSpec({}, "int32"), tide.TensorSpec({ 2 }, "float32") } })
    local t = {}
    for a, b in ds:iter() do t[#t + 1] = { a:item(), b:totable() } end
    assert.are.same({ { 1, { 1, 1 } }, { 2, { 2, 2 } }, { 3, { 3, 3 } } }, t)
    assert.are.equal(3, #ds:totable())
    assert.are.equal(tide.data.UNKNOWN_CARDINALITY, ds:cardinality())
    local bad = D.from_generator(function() local d = false; return function() if not d then d = true; return { 1, 2, 3 } end end end,
      { output_signature = tide.TensorSpec({ 2 }, "int32") })
    h.errors("output_signature", function() bad:totable() end)
    h.errors("output_signature is required", function() D.from_generator(gen) end)
  end)

  it("a C map above a Lua source still runs (in order)", function()
    local function gen()
      local i = -1
      return function() i = i + 1; if i < 5 then return i end end
    end
    local ds = D.from_generator(gen, { output_signature = tide.TensorSpec({}, "int32") })
      :map(function(v) return v * 10 end, { parallel = 2 })
    assert.are.same({ 0, 10, 20, 30, 40 }, items(ds))
  end)

  it("warns once when a cached pass stops early, keeps nothing partial", function()
    local calls = 0
    local ds = D.range(5):filter(function(x) calls = calls + 1; return true end):cache()
    local e = ds:take(2):totable()
    assert.are.equal(2, #e)
    assert.are.same({ 0, 1, 2, 3, 4 }, items(ds))
    local n = calls
    assert.are.same({ 0, 1, 2, 3, 4 }, items(ds)) -- replayed from the cache
    assert.are.equal(n, calls)
  end)
end)

describe("bad arguments", function()
  it("names what was wrong", function()
    h.errors("different first dimensions", function() D.from_tensor_slices { tide.zeros { 3 }, tide.zeros { 4 } } end)
    h.errors("scalar", function() D.from_tensor_slices(tide.tensor(1)) end)
    h.errors("batch_size must be a whole number >= 1", function() D.range(3):batch(0) end)
    h.errors("buffer_size", function() D.range(3):shuffle(0) end)
    h.errors("unknown option 'drop'", function() D.range(3):batch(2, { drop = true }) end)
    h.errors("different shapes in component 0", function()
      D.range(1, 4):map(function(x) return tide.fill({ x:item() }, 1) end):batch(2):totable()
    end)
    h.errors("map: expected a function", function() D.range(3):map(5) end)
    h.errors("filename must be a string", function() D.range(3):cache(5) end)
    h.errors("index must be less than num_shards", function() D.range(3):shard(2, 2) end)
    h.errors("different structures", function() D.range(3):concatenate(D.zip { D.range(2), D.range(2) }) end)
  end)
end)
