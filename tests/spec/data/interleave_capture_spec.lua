-- tests/spec/data/interleave_capture_spec.lua — interleave whose inner map or
-- filter uses the function's element (a per-file label, say): the captures are
-- bound per input element and run in C (kernels/data/interleave.c), giving what
-- the Lua engine gives when it calls fn on each element (its Lua reader, data/stages/interleave.lua).
local tide = require "tide"
local h = require "helpers"
local prog = require "tide_program"
local binding = require "tide.binding"
local dataset = require "tide.data.dataset"
local lua_engine = require "tide.data.lua_engine"
local D = tide.data.Dataset
local C = binding.C

-- A value as text: scalars as they are, tensors as nested lists.
local function text(x)
  if binding.istensor(x) then x = x.ndim == 0 and x:item() or x:totable() end
  if type(x) ~= "table" then return tostring(x) end
  local parts = {}
  for i, v in ipairs(x) do parts[i] = text(v) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- Every element of a pass (nextf from dataset.open or lua_engine.open), each as one string.
local function drain(nextf, close)
  local out = {}
  for flat in nextf do
    local parts = {}
    for i, x in ipairs(flat) do parts[i] = text(x) end
    out[#out + 1] = table.concat(parts, "|")
  end
  if close then close() end
  return out
end

local function sorted(t)
  local c = { unpack(t) }
  table.sort(c)
  return c
end

local stderr_of = h.stderr_of

-- make(opts) runs in C with no note, and gives the Lua engine's elements (the
-- Lua path: fn called on each element) at parallel 1, 2 and AUTOTUNE, in order
-- when deterministic and as a multiset when not. Returns the elements.
local function same_as_lua(make, min_n)
  local want
  for _, p in ipairs { 1, 2, tide.data.AUTOTUNE } do
    for _, det in ipairs { true, false } do
      local note, ds = stderr_of(function() return make { parallel = p, deterministic = det } end)
      assert.are.equal("", note)
      assert.is_truthy(ds.captured)
      assert.is_true(dataset.is_dataset(ds.captured.inner))
      want = want or drain(lua_engine.open(ds))
      assert.is_true(#want >= min_n, #want)
      local got = drain(dataset.open(ds))
      if det then
        assert.are.same(want, got)
        assert.are.same(want, drain(dataset.open(ds))) -- a second pass starts over
      else
        assert.are.same(sorted(want), sorted(got))
      end
    end
  end
  return want
end

local threads = h.threads

describe("interleave whose inner stages use the element", function()
  local dir, paths
  setup(function()
    dir = prog.make_tmpdir("icapture")
    paths = {}
    for f = 1, 5 do
      paths[f] = string.format("%s/part%d.tfrecord", dir, f)
      local w = tide.io.TFRecordWriter(paths[f])
      for i = 1, f + 2 do w:write(string.format("%d", f * 100 + i)) end
      w:close()
    end
  end)
  teardown(function() prog.remove_tmpdir(dir) end)

  it("attaches a per-file label in C, as the Lua path does, at every parallelism", function()
    local files = D.from_tensor_slices { tide.tensor(paths), tide.tensor({ 10, 20, 30, 40, 50 }, "int64") }
    local want = same_as_lua(function(o)
      return files:interleave(function(path, label)
        return tide.data.TFRecordDataset(path):map(function(r) return tide.strings.to_number(r, { out_type = "int64" }), label end)
      end, { cycle_length = 2, block_length = 2, parallel = o.parallel, deterministic = o.deterministic })
    end, 25)
    assert.are.same({ "101|10", "102|10", "201|20", "202|20", "103|10", "203|20" }, { unpack(want, 1, 6) })
  end)

  it("binds a filter's capture, and values fn computed of the element", function()
    same_as_lua(function(o)
      return D.range(1, 7):interleave(function(x)
        local step = x * 2 -- computed in fn: the capture names it, not the element
        return D.range(0, 12):filter(function(v) return tide.equal(v % x, 0) end)
          :map(function(v) return v * step end)
      end, { cycle_length = 3, parallel = o.parallel, deterministic = o.deterministic })
    end, 20)
  end)

  it("binds several components of a list or map element", function()
    same_as_lua(function(o)
      return D.from_tensor_slices { tide.tensor({ 1, 2, 3, 4 }, "int64"), tide.tensor({ 10, 20, 30, 40 }, "int64") }:interleave(
        function(a, b)
          return D.range(a):map(function(v) return v + b, a * b end)
        end, { cycle_length = 2, parallel = o.parallel, deterministic = o.deterministic })
    end, 10)
    local rows = tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32")
    same_as_lua(function(o)
      return D.from_tensor_slices { path = tide.tensor { paths[1], paths[2], paths[3] }, w = tide.tensor { 1.5, 2, 3 },
        row = rows }:interleave(function(d)
        return tide.data.TFRecordDataset(d.path):map(function(r)
          return { rec = r, score = d.w * 2, row = d.row + d.w }
        end)
      end, { cycle_length = 3, block_length = 2, parallel = o.parallel, deterministic = o.deterministic })
    end, 12)
  end)

  it("binds captures of a second map, a branch inside a map, and a nested interleave", function()
    same_as_lua(function(o)
      return D.range(1, 6):interleave(function(x)
        local big = x * 1000
        return D.range(x + 2):map(function(v) return v + x end):batch(2)
          :map(function(b) return tide.cond(x:gt(3), function() return b + big end, function() return b - x end) end)
      end, { cycle_length = 2, block_length = 2, parallel = o.parallel, deterministic = o.deterministic })
    end, 12)
    same_as_lua(function(o)
      return D.range(1, 5):interleave(function(x)
        return D.range(x):interleave(function(y)
          return D.range(y + 1):map(function(z) return x * 100 + y * 10 + z end)
        end, { cycle_length = 2 })
      end, { cycle_length = 2, parallel = o.parallel, deterministic = o.deterministic })
    end, 15)
  end)

  it("keeps eager captures as constants, as before", function()
    local offset = tide.tensor(7, "int64")
    same_as_lua(function(o)
      return D.range(1, 5):interleave(function(x)
        return D.range(x):map(function(v) return v + offset end)
      end, { cycle_length = 2, parallel = o.parallel, deterministic = o.deterministic })
    end, 10)
  end)

  it("surfaces a failure at its element with the input element's index, and goes on", function()
    local names = tide.tensor { "1", "2", "x3" }
    for _, p in ipairs { 1, 2 } do
      local ds = D.from_tensor_slices(names):interleave(function(s)
        return D.range(2):map(function(v) return v + tide.strings.to_number(s, { out_type = "int64" }) end)
      end, { cycle_length = 1, parallel = p })
      assert.is_truthy(ds.captured)
      local nextf, close = dataset.open(ds)
      local got = {}
      for _ = 1, 4 do got[#got + 1] = nextf()[1]:item() end
      assert.are.same({ 1, 2, 2, 3 }, got)
      h.errors("interleave: input element 2: map: the function failed on element 0", nextf)
      close()
    end
    -- a template stage kept past fn and read on its own: refused, naming why
    local leaked
    D.range(2):interleave(function(x)
      leaked = D.range(3):map(function(v) return v + x end)
      return leaked
    end)
    h.errors("only that interleave can read it", function() leaked:totable() end)
  end)

  it("leaks no threads or bytes when a pass is dropped midway", function()
    local files = D.from_tensor_slices { tide.tensor(paths), tide.tensor({ 1, 2, 3, 4, 5 }, "int64") }
    local ds = files:interleave(function(path, label)
      return tide.data.TFRecordDataset(path):repeat_():map(function(r) return r, label * 2 end, { parallel = 2 })
        :prefetch(2)
    end, { cycle_length = 3, parallel = 3 })
    assert.is_truthy(ds.captured)
    h.drop(function() ds:iter()() end)
    local before_threads, before_bytes = threads(), binding.memory_stats.current
    for _ = 1, 4 do
      local nextf, close = dataset.open(ds)
      for _ = 1, 9 do assert.is_not_nil(nextf()) end
      assert.is_true(C.tide_data_live_threads() >= 3)
      close()
      assert.are.equal(0, C.tide_data_live_threads())
    end
    binding.collect()
    binding.collect()
    assert.are.equal(before_threads, h.threads_down_to(before_threads))
    assert.are.equal(before_bytes, binding.memory_stats.current)
  end)

  it("refuses bad uses of the C calls it rests on", function()
    local r = C.tide_dataset_range(0, 3, 1, require("tide.dtype").codes.int64)
    assert.are_not.equal(0, C.tide_dataset_bind_captures(r, 0))
    assert.is_truthy(binding.ffi.string(C.tide_last_error()):find("only a map, filter or interleave", 1, true))
    local g = tide.trace(function(v) return v + 1 end):get_concrete_function(tide.TensorSpec({}, "int64"))._g
    assert.are.equal(0, C.tide_graph_num_captures(g))
    assert.are.equal(0, C.tide_graph_capture_values(g, 0, nil)) -- nothing to name
    local m = C.tide_dataset_map(r, g, 0, 1)
    assert.are_not.equal(0, C.tide_dataset_bind_captures(m, 0)) -- a graph that captures nothing
    assert.is_truthy(binding.ffi.string(C.tide_last_error()):find("cannot bind 0 capture(s)", 1, true))
    C.tide_dataset_free(m)
    C.tide_dataset_free(r)
    -- a map traced inside another trace captures its value: named only while that trace is built
    local kept
    local f = tide.trace(function(x)
      kept = D.range(3):map(function(v) return v * 10 + x end)
      return x
    end)
    f(tide.tensor(1, "int64"))
    local mg = kept.compiled.graph
    assert.are.equal(1, C.tide_graph_num_captures(mg))
    local ffi = binding.ffi
    local sym = binding.Tensor()
    assert.are_not.equal(0, C.tide_graph_capture_values(mg, 1, ffi.new("tide_tensor *[1]", sym)))
    assert.is_truthy(ffi.string(C.tide_last_error()):find("was not built on top of the graph being built", 1, true))
    local v, c, out = tide.tensor(4, "int64"), tide.tensor(5, "int64"), binding.Tensor()
    local ins, caps, outs = ffi.new("const tide_tensor *[1]", v), ffi.new("const tide_tensor *[1]", c),
      ffi.new("tide_tensor *[1]", out)
    assert.are_not.equal(0, C.tide_graph_run(mg, 1, ins, 1, outs))
    assert.are_not.equal(0, C.tide_graph_run_captured(mg, 1, ins, 0, nil, 1, outs))
    assert.is_truthy(ffi.string(C.tide_last_error()):find("captures 1 value(s) of an enclosing graph, got 0", 1, true))
    assert.are.equal(0, C.tide_graph_run_captured(mg, 1, ins, 1, caps, 1, outs))
    binding.finish(out)
    assert.are.equal(45, out:item())
    h.errors("captures values of an enclosing graph", function() kept:totable() end) -- nothing binds them
    -- returned from an interleave function, its captures are not that function's: the Lua path, saying why
    local note, ds = stderr_of(function() return D.range(2):interleave(function() return kept end) end)
    assert.is_nil(ds.captured)
    assert.is_truthy(note:find("captures a value that is not the interleave function's", 1, true), note)
  end)
end)
