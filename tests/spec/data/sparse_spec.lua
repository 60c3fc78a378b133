-- tests/spec/data/sparse_spec.lua — SparseTensors as dataset elements against
-- what real tf.data gave (tests/fixtures/data/sparse.lua, made by
-- sparse_gen.py with TF 2.21): element_spec, slicing, batching, unbatching,
-- parse_example's VarLenFeature in a traced map; tide.sparse; the errors. The
-- elements are checked under both engines (tests/support/data_engines.lua).
local tide = require "tide"
local engines = require "data_engines"
local h = require "helpers"
local tmp = require "tmp"
local c_engine = require "tide.data.c_engine"
local sparse_tensor = require "tide.sparse_tensor"
local D = tide.data.Dataset
local fixture = dofile("tests/fixtures/data/sparse.lua")
local cases = fixture.cases
local None = tide.None

-- A value as the fixture writes it: a SparseTensor as {indices=, values=, dense_shape=}.
local function plain(v)
  if tide.sparse.is_sparse(v) then
    return { indices = v.indices:totable(), values = v.values:totable(), dense_shape = v.dense_shape:totable() }
  end
  if tide.is_tensor(v) then return v:totable() end
  local out = {}
  for k, x in pairs(v) do out[k] = plain(x) end
  return out
end

-- An element_spec as the fixture writes it (None: -1).
local function plain_spec(s)
  if s.dtype then
    local dims = {}
    for i, d in ipairs(s.shape) do dims[i] = d == None and -1 or d end
    local out = { shape = dims, dtype = s.dtype }
    if sparse_tensor.is_sparse_spec(s) then out.sparse = true end
    return out
  end
  local out = {}
  for k, x in pairs(s) do out[k] = plain_spec(x) end
  return out
end

local function elements(ds)
  local out = {}
  for i, e in ipairs(ds:totable()) do out[i] = plain(e) end
  return out
end

-- Check ds against the fixture case: elements, element_spec and (when the
-- pipelines are built alike) cardinality.
local function check(name, ds, with_cardinality)
  local want = cases[name]
  assert.same(want.elements, elements(ds))
  assert.same(want.spec, plain_spec(ds.element_spec))
  if with_cardinality then assert.equal(want.cardinality, ds:cardinality()) end
end

local SP = tide.SparseTensor({ { 0, 0 }, { 1, 2 }, { 1, 3 }, { 2, 1 } }, tide.tensor({ 1, 2, 3, 4 }, "float32"), { 3, 4 })

-- x = 1..3: the values 0, 10, ... of dense shape [x] (as the generator's map)
local function var1()
  return D.from_generator(function()
    local x = 0
    return function()
      x = x + 1
      if x > 3 then return nil end
      local idx, vals = {}, {}
      for k = 1, x do idx[k] = { k - 1 }; vals[k] = (k - 1) * 10 end
      return tide.SparseTensor(idx, tide.tensor(vals, "int64"), { x })
    end
  end, { output_signature = tide.SparseTensorSpec({ None }, "int64") })
end

local R2 = { { { { 0, 0 }, { 1, 2 } }, { 1, 2 }, { 2, 3 } }, { { { 0, 4 } }, { 3 }, { 1, 5 } }, { { { 2, 0 } }, { 4 }, { 3, 1 } } }
local function var2()
  return D.from_generator(function()
    local i = 0
    return function()
      i = i + 1
      local r = R2[i]
      if not r then return nil end
      return tide.SparseTensor(r[1], tide.tensor(r[2], "int32"), r[3])
    end
  end, { output_signature = tide.SparseTensorSpec({ None, None }, "int32") })
end

local FEATURES = { tags = tide.io.VarLenFeature("int64"), words = tide.io.VarLenFeature("string"),
  id = tide.io.FixedLenFeature({}, "int64") }
local function records() return tide.data.TFRecordDataset("tests/fixtures/data/examples.tfrecord") end
local function parse_one(r) return tide.io.parse_single_example(r, FEATURES) end

local stderr_of = h.stderr_of

describe("SparseTensor elements against tf.data", function()
  engines.each(function(engine)
    it("from_tensor_slices slices along the first dim", function()
      check("slices", D.from_tensor_slices(SP), true)
      check("slices_tuple", D.from_tensor_slices({ SP, tide.tensor({ 5, 6, 7 }, "int32") }), true)
    end)

    it("from_tensors keeps the whole value", function()
      check("from_tensors", D.from_tensors(SP), true)
    end)

    it("batch prepends the batch dim with each dim the batch's largest; drop_remainder; unbatch", function()
      check("batch", D.from_tensor_slices(SP):batch(2), true)
      check("batch_drop", D.from_tensor_slices(SP):batch(2, { drop_remainder = true }), true)
      check("batch_unbatch", D.from_tensor_slices(SP):batch(2):unbatch(), true)
      check("var1_batch", var1():batch(2))
      check("var1_unbatch", var1():batch(3):unbatch())
      check("var2_batch", var2():batch(3))
      check("var2_unbatch", var2():batch(3):unbatch())
    end)

    it("a traced map takes and returns SparseTensors, in C", function()
      local ds = D.from_tensor_slices(SP):map(function(s)
        return tide.SparseTensor(s.indices, s.values * 2, s.dense_shape)
      end)
      assert.truthy(ds.compiled)
      assert.is_true(c_engine.supports(ds))
      check("map_double", ds, true)
    end)

    it("parse_single_example's VarLenFeature in a traced map runs in C, then batches", function()
      local ds
      local note = stderr_of(function() ds = records():map(parse_one, { parallel = 2 }) end)
      assert.equal("", note)
      assert.is_true(c_engine.supports(ds))
      assert.is_true(c_engine.supports(ds:batch(2))) -- batched in C too (kernels/data/sparse_batch.c)
      check("parse_batch", ds:batch(2))
      check("parse_batch_drop", ds:batch(2, { drop_remainder = true }))
      local pe = records():batch(2):map(function(r) return tide.io.parse_example(r, FEATURES) end)
      assert.is_true(c_engine.supports(pe))
      check("batch_parse_unbatch", pe:unbatch())
    end)

    it("to_dense inside a traced map, after batching in C", function()
      local ds
      local note = stderr_of(function()
        ds = records():map(parse_one):batch(2):map(function(d) return tide.sparse.to_dense(d.tags, -1), d.id end)
      end)
      assert.equal("", note)
      assert.is_true(c_engine.supports(ds))
      check("parse_batch_to_dense", ds)
      -- strings have no scatter kernel: such a map runs in Lua, with the note saying why
      local words
      note = stderr_of(function()
        words = records():map(parse_one):map(function(d) return d.words:to_dense() end)
      end)
      if not engine.lua then -- (the note comes once per place: in the first engine's run)
        assert.truthy(note:find("string values work eagerly only", 1, true))
      end
      assert.same({ { "hello", "world" }, {}, { "a", "b", "c", "d" } }, elements(words))
    end)

    it("an eager (untraced) map takes and returns SparseTensors", function()
      local ds
      local note = stderr_of(function()
        ds = D.from_tensor_slices(SP):map(function(s)
          local _ = s.values:totable() -- a Lua read: not traceable
          return tide.SparseTensor(s.indices, s.values * 2, s.dense_shape)
        end)
      end)
      if not engine.lua then assert.truthy(note:find("could not be traced", 1, true)) end -- (once per place)
      assert.same(cases.map_double.elements, elements(ds))
      assert.same({ shape = { -1 }, dtype = "float32", sparse = true }, plain_spec(ds.element_spec))
    end)

    it("to_dense after batching", function()
      local got = {}
      for e in D.from_tensor_slices(SP):batch(2):iter() do got[#got + 1] = tide.sparse.to_dense(e, -1):totable() end
      assert.same(cases.to_dense.elements, got)
    end)
  end)
end)

describe("SparseTensor elements through the other stages", function()
  engines.each(function()
    local function rows(ds)
      local out = {}
      for e in ds:iter() do out[#out + 1] = plain(e) end
      return out
    end
    local want = cases.slices.elements

    it("shuffle with buffer 1, take, skip, repeat, prefetch, cache, zip, concatenate, enumerate, filter", function()
      local ds = D.from_tensor_slices(SP)
      assert.same(want, rows(ds:shuffle(1)))
      assert.same({ want[1], want[2] }, rows(ds:take(2)))
      assert.same({ want[3] }, rows(ds:skip(2)))
      assert.same({ want[1], want[2], want[3], want[1], want[2], want[3] }, rows(ds:repeat_(2)))
      assert.same(want, rows(ds:prefetch(2)))
      local cached = ds:cache()
      assert.same(want, rows(cached))
      assert.same(want, rows(cached))
      local file = tmp.name()
      local fc = ds:cache(file)
      assert.same(want, rows(fc))
      assert.same(want, rows(fc))
      os.remove(file)
      os.remove(file .. ".index")
      local z = D.zip { ds, D.range(3) }
      local got = {}
      for s, i in z:iter() do got[#got + 1] = { plain(s), i:item() } end
      assert.same({ { want[1], 0 }, { want[2], 1 }, { want[3], 2 } }, got)
      assert.same({ want[1], want[2], want[3], want[1], want[2], want[3] }, rows(ds:concatenate(ds)))
      -- as TF: static dims that differ become None
      local five = D.from_tensors(tide.SparseTensor({ { 0 } }, tide.tensor({ 9 }, "float32"), { 5 }))
      local both = ds:concatenate(five)
      assert.same({ shape = { -1 }, dtype = "float32", sparse = true }, plain_spec(both.element_spec))
      assert.equal(4, #both:totable())
      local en = {}
      for i, s in ds:enumerate():iter() do en[#en + 1] = { i:item(), plain(s) } end
      assert.same({ { 0, want[1] }, { 1, want[2] }, { 2, want[3] } }, en)
      local f = ds:filter(function(s) return tide.equal(tide.num_elements(s.values), 1) end)
      assert.same({ want[1], want[3] }, rows(f))
      -- shuffle with a seed gives every element once, the same order run after run
      local a, b = rows(ds:shuffle(3, { seed = 4 })), rows(ds:shuffle(3, { seed = 4 }))
      assert.same(a, b)
      assert.equal(3, #a)
    end)

    it("get_single_element and totable give SparseTensors", function()
      local one = D.from_tensors(SP):get_single_element()
      assert.is_true(tide.sparse.is_sparse(one))
      assert.same(cases.from_tensors.elements[1], plain(one))
      local list = D.from_tensor_slices({ a = SP, b = tide.tensor { 1, 2, 3 } }):totable()
      assert.is_true(tide.sparse.is_sparse(list[2].a))
      assert.same(want[2], plain(list[2].a))
    end)

    it("map over a batch of SparseTensors sees the batch", function()
      local ds = D.from_tensor_slices(SP):batch(2):map(function(s) return s.values:reduce_sum() end)
      assert.same({ 6, 4 }, elements(ds))
    end)

    it("an empty from_tensor_slices of a SparseTensor", function()
      local empty = tide.SparseTensor({}, tide.tensor({}, "float32"), { 0, 4 })
      local ds = D.from_tensor_slices(empty)
      assert.same({}, ds:totable())
      assert.equal(0, ds:cardinality())
      assert.same({ shape = { 4 }, dtype = "float32", sparse = true }, plain_spec(ds.element_spec))
    end)

    it("unsorted indices are an error in TF's words; tide.sparse.reorder sorts them", function()
      local sp = tide.SparseTensor({ { 2, 1 }, { 0, 0 }, { 1, 3 }, { 1, 2 } }, tide.tensor({ 4, 1, 3, 2 }, "float32"), { 3, 4 })
      assert.error_matches(function() D.from_tensor_slices(sp) end,
        "from_tensor_slices: indices[1] = [0,0] is out of order. Many sparse ops require sorted indices. Use " ..
        "tide.sparse.reorder to create a correctly ordered copy", nil, true)
      local twice = tide.SparseTensor({ { 0, 1 }, { 0, 1 } }, { 1, 2 }, { 1, 4 })
      assert.error_matches(function() D.from_tensor_slices(twice) end, "indices[1] = [0,1] is repeated", nil, true)
      local sorted = tide.sparse.reorder(sp)
      assert.same({ { 0, 0 }, { 1, 2 }, { 1, 3 }, { 2, 1 } }, sorted.indices:totable())
      assert.same({ 1, 2, 3, 4 }, sorted.values:totable())
      assert.same(cases.slices.elements, elements(D.from_tensor_slices(sorted)))
      assert.error_matches(function() tide.sparse.reorder(tide.zeros { 2 }) end,
        "tide.sparse.reorder: expected a tide.SparseTensor, got a dense tensor", nil, true)
    end)
  end)
end)

describe("SparseTensor element errors", function()
  it("padded_batch names the SparseTensor component, as TF refuses it", function()
    local ds = D.from_tensor_slices({ tide.tensor { 1, 2, 3 }, SP })
    assert.has_error(function() ds:padded_batch(2) end,
      "padded_batch: the element holds a SparseTensor (SparseTensorSpec(shape=(4,), dtype=float32), " ..
      "components 1-3); padded_batch takes dense tensors only, as TF's. Use batch() for SparseTensors, or make it " ..
      "dense first (tide.sparse.to_dense in a map)")
  end)

  it("from_tensor_slices: different first dims, a rank-0 SparseTensor, an index outside the shape", function()
    assert.error_matches(function() D.from_tensor_slices({ SP, tide.tensor { 1, 2 } }) end,
      "the components have different first dimensions: 3 and 2", nil, true)
    local scalar = tide.SparseTensor({ {} }, { 1 }, tide.tensor({}, "int64"))
    assert.error_matches(function() D.from_tensor_slices(scalar) end,
      "a SparseTensor of rank 0 has no first dimension to slice", nil, true)
    local bad = tide.SparseTensor({ { 5, 0 } }, { 1 }, { 3, 4 })
    assert.error_matches(function() D.from_tensor_slices(bad) end,
      "the SparseTensor's index 0 has 5 in dim 0, outside its dense shape's 3", nil, true)
  end)

  it("batch: SparseTensors of different ranks or dtypes", function()
    local ranks = D.from_generator(function()
      local i = 0
      return function()
        i = i + 1
        if i == 1 then return tide.SparseTensor({ { 0 } }, { 1 }, { 2 }) end
        if i == 2 then return tide.SparseTensor({ { 0, 0 } }, { 1 }, { 2, 2 }) end
      end
    end, { output_signature = tide.SparseTensorSpec(nil, "int32") })
    assert.error_matches(function() ranks:batch(2):totable() end,
      "component 0: element 1 is a SparseTensor of rank 2 but the first is of rank 1", nil, true)
  end)

  it("batch in C: SparseTensors of different ranks or value dtypes, a bad description", function()
    local binding = require "tide.binding"
    local ffi, C = binding.ffi, binding.C
    local function batch_of(a, b) -- C's batch over a concatenation Lua would refuse to build
      local h = C.tide_dataset_concatenate(2, ffi.new("tide_dataset *[2]", c_engine.handle(a), c_engine.handle(b)))
      local roles = ffi.new("unsigned char[3]", 1, 0, 0)
      local bh = ffi.gc(C.tide_dataset_sparse_batch(h, 2, 0, roles), C.tide_dataset_free)
      C.tide_dataset_free(h)
      local it = ffi.gc(C.tide_dataset_iterate(bh), C.tide_data_iterator_free)
      local outs = ffi.new("tide_tensor *[3]", binding.Tensor(), binding.Tensor(), binding.Tensor())
      local endp = ffi.new("int[1]")
      if C.tide_data_iterator_next(it, 3, outs, endp) ~= 0 then return ffi.string(C.tide_last_error()) end
      return "no error"
    end
    local r1 = D.from_tensors(tide.SparseTensor({ { 0 } }, { 1 }, { 2 }))
    local r2 = D.from_tensors(tide.SparseTensor({ { 0, 0 } }, { 1 }, { 2, 2 }))
    local f1 = D.from_tensors(tide.SparseTensor({ { 0 } }, tide.tensor({ 1 }, "float32"), { 2 }))
    assert.truthy(batch_of(r1, r2):find("component 0: element 1 is a SparseTensor of rank 2 but the first is of rank 1",
      1, true))
    assert.truthy(batch_of(r1, f1):find("component 0: element 1's SparseTensor holds float32 values but the first's " ..
      "hold int32", 1, true))
    assert.equal("no error", batch_of(r1, r1))
    local bad = C.tide_dataset_sparse_batch(c_engine.handle(r1), 2, 0, ffi.new("unsigned char[3]", 1, 1, 0))
    assert.is_true(bad == nil)
    assert.truthy(ffi.string(C.tide_last_error()):find("values and dense_shape (components 1 and 2) are missing", 1,
      true))
  end)

  it("dense and sparse mixed in one component across elements", function()
    local i = 0
    local mixed = D.from_generator(function()
      i = 0
      return function()
        i = i + 1
        if i == 1 then return tide.SparseTensor({ { 0 } }, { 1 }, { 2 }) end
        if i == 2 then return tide.tensor { 1, 2 } end
      end
    end, { output_signature = tide.SparseTensorSpec({ None }, "int32") })
    assert.error_matches(function() mixed:totable() end,
      "element 1 does not fit output_signature: the element is a dense tensor, expected a tide.SparseTensor", nil, true)
    local map
    stderr_of(function() -- (the note that it runs in Lua)
      map = D.range(2):map(function(x)
        if x:item() == 0 then return tide.SparseTensor({ { 0 } }, { 1 }, { 2 }) end
        return tide.tensor { 1 }
      end)
    end)
    assert.error_matches(function() map:totable() end, "different structure than it did for the first element", nil,
      true)
    assert.error_matches(function() D.from_tensor_slices(SP):concatenate(D.range(3)) end,
      "concatenate: the datasets' elements have different structures", nil, true)
    local dense_sig = D.from_generator(function()
      local done = false
      return function()
        if done then return nil end
        done = true
        return tide.SparseTensor({ { 0 } }, { 1 }, { 2 })
      end
    end, { output_signature = tide.TensorSpec({ None }, "int32") })
    assert.error_matches(function() dense_sig:totable() end, "is a tide.SparseTensor, expected a dense tensor", nil,
      true)
  end)

  it("from_generator: a SparseTensor whose dense shape does not fit the signature", function()
    local ds = D.from_generator(function()
      local done = false
      return function()
        if done then return nil end
        done = true
        return tide.SparseTensor({ { 0 } }, { 1 }, { 5 })
      end
    end, { output_signature = tide.SparseTensorSpec({ 4 }, "int32") })
    assert.error_matches(function() ds:totable() end,
      "element 0 does not fit output_signature: the element is a SparseTensor of dense shape [5], not " ..
      "SparseTensorSpec(shape=(4,), dtype=int32)", nil, true)
  end)

  it("unbatch of a rank-0 or rank-1 SparseTensor (refused, as TF)", function()
    local scalar = tide.SparseTensor({ {} }, { 1 }, tide.tensor({}, "int64"))
    assert.error_matches(function() D.from_tensors(scalar):unbatch() end,
      "unbatch: the element holds a SparseTensor of rank 0", nil, true)
    local vector = tide.SparseTensor({ { 0 }, { 2 } }, tide.tensor({ 7, 8 }, "int64"), { 3 })
    assert.error_matches(function() D.from_tensors(vector):unbatch() end,
      "unbatch: the element holds a SparseTensor of rank 1, whose rows would be SparseTensors of rank 0", nil, true)
  end)
end)

describe("tide.sparse", function()
  it("from_dense as tf.sparse.from_dense, to_dense back", function()
    for name, dense in pairs(fixture.dense_in) do
      local t = tide.tensor(dense, name == "f32" and "float32" or "int64")
      local sp = tide.sparse.from_dense(t)
      assert.same(fixture.from_dense[name], plain(sp))
      assert.same(dense, tide.sparse.to_dense(sp):totable())
    end
    local s = tide.sparse.from_dense(tide.tensor { { "", "x" }, { "y", "" } })
    assert.same({ { 0, 1 }, { 1, 0 } }, s.indices:totable())
    assert.same({ "x", "y" }, s.values:totable())
    assert.same({ { "-", "x" }, { "y", "-" } }, tide.sparse.to_dense(s, "-"):totable())
    local none = tide.sparse.from_dense(tide.zeros { 2, 2 })
    assert.same({ 0, 2 }, none.indices.shape)
    assert.same({ { 0, 0 }, { 0, 0 } }, none:to_dense():totable())
  end)

  it("errors", function()
    assert.error_matches(function() tide.sparse.to_dense(tide.zeros { 2 }) end,
      "tide.sparse.to_dense: expected a tide.SparseTensor, got a dense tensor", nil, true)
    assert.error_matches(function() tide.sparse.from_dense("x") end,
      "tide.sparse.from_dense: expected a tensor, got string", nil, true)
    assert.error_matches(function() tide.SparseTensorSpec({ 2 }, "nope") end, "nope", nil, true)
  end)

  it("SparseTensorSpec prints and compares", function()
    local s = tide.SparseTensorSpec({ None, 4 }, "float32")
    assert.equal("SparseTensorSpec(shape=(None, 4), dtype=float32)", tostring(s))
    assert.equal(s, tide.SparseTensorSpec({ None, 4 }, "float32"))
    assert.are_not.equal(s, tide.SparseTensorSpec({ 2, 4 }, "float32"))
    assert.equal(tide.SparseTensorSpec({ 3, 4 }, "float32"), tide.SparseTensorSpec.from_value(SP))
  end)
end)
