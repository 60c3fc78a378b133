-- tests/spec/data/interleave_c_spec.lua — interleave with a captured function
-- (data/interleave_fn.lua, kernels/data/interleave.c): TF's order
-- (tests/fixtures/data/interleave.lua, made by TF 2.21) at every parallelism,
-- file sources fed by the element, fallbacks with their note, errors naming
-- the input element, and shutdown (threads and bytes) when a pass is dropped.
local tide = require "tide"
local h = require "helpers"
local engines = require "data_engines"
local prog = require "tide_program"
local binding = require "tide.binding"
local dataset = require "tide.data.dataset"
local D = tide.data.Dataset
local C = binding.C
local TF = dofile("tests/fixtures/data/interleave.lua")

local function values(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x.ndim == 0 and x:item() or x:totable() end
  return out
end

local threads = h.threads

local stderr_of = h.stderr_of

local function uneven(x) return D.range(x * 100, x * 100 + x % 4):map(function(y) return y * 2 end) end

describe("interleave with a captured function", function()
  engines.each(function() -- TF's orders, from the C template and from fn called in Lua on each element
    it("matches tf.data's order for every cycle and block, at every parallelism", function()
      for _, cycle in ipairs { 1, 2, 3, 4 } do
        for _, block in ipairs { 1, 2, 3 } do
          local want = TF[string.format("uneven_%d_%d", cycle, block)]
          for _, p in ipairs { 1, 2, 3, tide.data.AUTOTUNE } do
            local ds = D.range(1, 10):interleave(uneven, { cycle_length = cycle, block_length = block, parallel = p })
            assert.is_truthy(ds.captured)
            assert.are.same(want, values(ds))
            assert.are.same(want, values(ds)) -- a second pass starts over
          end
        end
      end
    end)

    it("captures from_tensor_slices, from_tensors, batch, take, skip, filter and range steps as TF runs them", function()
      local cases = {
        slices = function()
          return D.from_tensor_slices(tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, "int64"))
            :interleave(function(x) return D.from_tensor_slices(x) end, { cycle_length = 2, block_length = 2 })
        end,
        tensors_repeat = function()
          return D.range(1, 5):interleave(function(x) return D.from_tensors(x * 10):repeat_(3) end,
            { cycle_length = 2, block_length = 2 })
        end,
        batch_inner = function()
          return D.range(1, 6):interleave(function(x) return D.range(x):batch(2, { drop_remainder = true }) end,
            { cycle_length = 3 })
        end,
        take_skip_filter = function()
          return D.range(1, 7):interleave(function(x)
            return D.range(x * 10, x * 10 + 8):skip(1):take(5):filter(function(y) return tide.equal(y % 2, 0) end)
          end, { cycle_length = 4, block_length = 2 })
        end,
        range_step = function()
          return D.range(1, 5):interleave(function(x) return D.range(0, 10, x) end, { cycle_length = 2, block_length = 3 })
        end,
      }
      for name, make in pairs(cases) do
        for _, p in ipairs { 1, 2 } do
          local ds = make()
          if p > 1 then ds = make() end
          assert.is_truthy(ds.captured, name)
          assert.are.same(TF[name], values(ds), name)
        end
      end
    end)
  end)

  it("captures zip, nested interleaves and elements that are lists or maps, as the Lua path runs them", function()
    local cases = {
      function(lua)
        return D.range(1, 4):interleave(function(x)
          if lua then x = tide.tensor(x:item(), "int64") end
          return D.zip { D.range(x), D.from_tensors(x):repeat_() }:map(function(a, b) return a + b * 10 end)
        end, { cycle_length = 2, parallel = 2 })
      end,
      function(lua)
        return D.range(1, 4):interleave(function(x)
          if lua then x = x:item() end
          return D.range(x):interleave(function(y) return D.range(y + 1) end, { cycle_length = 2 })
        end, { cycle_length = 2, parallel = 2 })
      end,
      function(lua)
        return D.from_tensor_slices { a = tide.tensor { 1, 2, 3 }, b = tide.tensor { 10, 20, 30 } }:interleave(function(d)
          if lua then return D.range(d.a:item(), d.b:item(), 4) end
          return D.range(d.a, d.b, 4)
        end, { cycle_length = 3, parallel = 3 })
      end,
      function(lua)
        return D.from_tensor_slices { tide.tensor { 1, 2, 3 }, tide.tensor { 10, 20, 30 } }:interleave(function(a, b)
          if lua then return D.range(b:item(), b:item() + a:item()) end
          return D.range(b, b + a)
        end, { cycle_length = 3 })
      end,
    }
    for i, make in ipairs(cases) do
      local c = make(false)
      assert.is_truthy(c.captured, i)
      local _, l = stderr_of(function() return make(true) end)
      assert.is_nil(l.captured, i)
      local want = values(l)
      assert.is_true(#want > 3, i)
      assert.are.same(want, values(c), i)
    end
  end)

  it("gives the same elements in some order with deterministic = false", function()
    local want = TF.uneven_3_2
    local ds = D.range(1, 10):interleave(uneven, { cycle_length = 3, block_length = 2, parallel = 3,
      deterministic = false })
    local got = values(ds)
    table.sort(got)
    local sorted = { unpack(want) }
    table.sort(sorted)
    assert.are.same(sorted, got)
    h.errors("interleave: deterministic must be a boolean", function()
      D.range(3):interleave(uneven, { deterministic = 1 })
    end)
  end)

  it("reads TFRecord, text and CSV files named by the element, in C", function()
    local dir = prog.make_tmpdir("interleave")
    local names, want_lines = {}, {}
    for f = 1, 4 do
      local w = tide.io.TFRecordWriter(dir .. "/r" .. f .. ".tfrecord")
      for i = 1, f + 1 do w:write(string.format("f%d-r%d", f, i)) end
      w:close()
      local t = io.open(dir .. "/t" .. f .. ".txt", "w")
      t:write(string.format("%d,a%d\n%d,b%d\n", f, f, f * 10, f))
      t:close()
      names[f] = dir .. "/r" .. f .. ".tfrecord"
    end
    local files = D.from_tensor_slices(tide.tensor(names))
    -- the reference: fn called in Lua for each element (x:item() cannot be traced)
    local _, lua_ds = stderr_of(function()
      return files:interleave(function(name) return tide.data.TFRecordDataset(name:item()) end,
        { cycle_length = 2, block_length = 2 })
    end)
    assert.is_nil(lua_ds.captured)
    local want = values(lua_ds)
    assert.are.same({ "f1-r1", "f1-r2", "f2-r1", "f2-r2", "f2-r3", "f3-r1", "f3-r2", "f4-r1", "f4-r2", "f3-r3",
      "f3-r4", "f4-r3", "f4-r4", "f4-r5" }, want)
    for _, p in ipairs { 1, 2, 4 } do
      local ds = files:interleave(function(name) return tide.data.TFRecordDataset(name) end,
        { cycle_length = 2, block_length = 2, parallel = p })
      assert.is_truthy(ds.captured)
      assert.are.same(want, values(ds))
    end
    local texts = D.from_tensor_slices(tide.tensor { dir .. "/t1.txt", dir .. "/t2.txt" })
    local lines = texts:interleave(function(n) return tide.data.TextLineDataset(n) end, { cycle_length = 2 })
    assert.is_truthy(lines.captured)
    assert.are.same({ "1,a1", "2,a2", "10,b1", "20,b2" }, values(lines))
    local csv = texts:interleave(function(n)
      return tide.data.experimental.CsvDataset(n, { tide.tensor(0, "int32"), "" })
    end, { cycle_length = 2, parallel = 2 })
    assert.is_truthy(csv.captured)
    local got = {}
    for a, b in csv:iter() do got[#got + 1] = a:item() .. b:item() end
    assert.are.same({ "1a1", "2a2", "10b1", "20b2" }, got)
    -- a missing file: an error at the element that reads it, naming the input element
    local missing = D.from_tensor_slices(tide.tensor { names[1], dir .. "/nope.tfrecord" })
      :interleave(function(name) return tide.data.TFRecordDataset(name) end, { cycle_length = 1 })
    h.errors("interleave: input element 1: TFRecord file '" .. dir .. "/nope.tfrecord' cannot be opened", function() missing:totable() end)
    prog.remove_tmpdir(dir)
  end)

  it("copies a batch of SparseTensors above a file leaf for each element (each copy its own sparse roles)", function()
    local F = { tags = tide.io.VarLenFeature("int64"), id = tide.io.FixedLenFeature({}, "int64") }
    local path = "tests/fixtures/data/examples.tfrecord"
    local files = D.from_tensor_slices(tide.tensor { path, path, path })
    local function parsed_batches(name)
      return tide.data.TFRecordDataset(name):map(function(r) return tide.io.parse_single_example(r, F) end):batch(2)
    end
    local _, lua_ds = stderr_of(function() -- the reference: fn called in Lua (x:item() cannot be traced)
      return files:interleave(function(name) return parsed_batches(name:item()) end, { cycle_length = 2 })
    end)
    assert.is_nil(lua_ds.captured)
    local function plain(ds)
      local out = {}
      for e in ds:iter() do out[#out + 1] = { e.tags.indices:totable(), e.tags.values:totable(), e.id:totable() } end
      return out
    end
    local want = plain(lua_ds)
    assert.are.equal(6, #want)
    for _, p in ipairs { 1, 2 } do
      local ds = files:interleave(parsed_batches, { cycle_length = 2, parallel = p })
      assert.is_truthy(ds.captured)
      assert.are.same(want, plain(ds)) -- (the copies freed the batch's sparse roles twice: a crash)
      assert.are.same(want, plain(ds))
    end
  end)

  it("falls back to calling fn in Lua, with one note saying why", function()
    local function check(fn, why, want_n)
      local note, ds = stderr_of(function() return D.range(1, 4):interleave(fn, { cycle_length = 2 }) end)
      assert.is_nil(ds.captured)
      assert.is_truthy(note:find(why, 1, true), note)
      assert.are.equal(want_n, #ds:totable())
    end
    check(function(x) local v = x:item(); return D.range(v) end, "item: this tensor is symbolic", 6)
    check(function(x)
      return D.from_generator(function() local i = 0; return function() i = i + 1; if i <= 2 then return i end end end,
        { output_signature = tide.TensorSpec({}, "int64") })
    end, "runs in Lua (generator)", 6)
    check(function(x) return D.range(x):shuffle(4) end, "shuffles without a seed", 6)
    check(function(x) -- (unbatch of dense elements runs in C: tests/spec/data/split_c_spec.lua)
      return D.from_tensors(tide.SparseTensor({ { 0, 0 }, { 1, 1 } }, tide.tensor { 1, 2 }, { 2, 2 })):unbatch()
    end, "runs in Lua (unbatch", 6)
    local note = stderr_of(function()
      h.errors("interleave: the function must return a tide.data.Dataset", function()
        D.range(3):interleave(function(x) return x end)
      end)
    end)
    assert.is_truthy(note:find("it returns a tensor, not a tide.data.Dataset", 1, true), note)
    -- the note comes once per function
    local fn = function(x) return D.range(x:item()) end
    local first = stderr_of(function() return D.range(3):interleave(fn) end)
    local second = stderr_of(function() return D.range(3):interleave(fn) end)
    assert.is_truthy(first:find("could not be captured", 1, true))
    assert.are.equal("", second)
  end)

  it("surfaces an inner pipeline's error at its element with the input element's index", function()
    for _, p in ipairs { 1, 2 } do
      local ds = D.range(3):interleave(function(x)
        return D.from_tensor_slices(tide.tensor { "1", "2", "bad" }):map(function(s) return tide.strings.to_number(s) end)
      end, { cycle_length = 1, parallel = p })
      assert.is_truthy(ds.captured)
      local nextf = dataset.open(ds)
      nextf()
      nextf()
      h.errors("interleave: input element 0: map: the function failed on element 2", nextf)
      assert.are.equal(1, nextf()[1]:item()) -- the pass goes on: element 1's inner dataset
    end
    local note = stderr_of(function()
      h.errors("range: stop must be a whole number", function()
        D.from_tensor_slices(tide.tensor { 1.5 }):interleave(function(x) return D.range(x) end)
      end)
    end)
    assert.is_truthy(note:find("range: stop must be an integer scalar", 1, true), note)
    h.errors("from_tensor_slices: got a traced (symbolic) tensor", function()
      local f = tide.trace(function(x) return D.from_tensor_slices(x) end)
      f(tide.tensor { 1 })
    end)
  end)

  it("joins its threads and frees its elements when a pass is dropped midway", function()
    local x = tide.ones({ 8, 200, 16 }, "float32")
    local ds = D.from_tensor_slices(x):interleave(function(rows)
      return D.from_tensor_slices(rows):map(function(r) return r * 2 end):batch(4)
    end, { cycle_length = 4, parallel = 3 })
    assert.is_truthy(ds.captured)
    h.drop(function() ds:iter()() end)
    local before_threads, before_bytes = threads(), binding.memory_stats.current
    for _ = 1, 5 do
      h.drop(function()
        local it = ds:iter()
        for _ = 1, 7 do it() end
        assert.is_true(C.tide_data_live_threads() >= 3)
      end)
    end
    assert.are.equal(0, C.tide_data_live_threads())
    assert.are.equal(before_threads, h.threads_down_to(before_threads))
    assert.are.equal(before_bytes, binding.memory_stats.current)
  end)

  it("runs `parallel` threads (none at parallel = 1) and joins them when the pass is dropped", function()
    local function live(p)
      local ds = D.range(4):interleave(function(x) return D.range(x * 10000, x * 10000 + 5000) end,
        { cycle_length = 4, parallel = p })
      assert.is_truthy(ds.captured)
      local nextf, close = dataset.open(ds)
      for _ = 1, 8 do assert.is_not_nil(nextf()) end
      local during = C.tide_data_live_threads()
      close()
      return during
    end
    assert.are.equal(0, live(1))
    assert.are.equal(2, live(2))
    assert.are.equal(4, live(4))
    assert.are.equal(4, live(tide.data.AUTOTUNE)) -- cycle_length
    assert.are.equal(0, C.tide_data_live_threads())
  end)

  it("stops threads blocked inside inner passes (inner prefetch, infinite inner datasets)", function()
    local ds = D.range(6):interleave(function(x)
      return D.range(x):map(function(v) return v + 1 end, { parallel = 2 }):repeat_():prefetch(2)
    end, { cycle_length = 3, parallel = 2 })
    assert.is_truthy(ds.captured)
    local nextf, close = dataset.open(ds)
    for _ = 1, 40 do assert.is_not_nil(nextf()) end
    close()
    assert.are.equal(0, C.tide_data_live_threads())
  end)
end)
