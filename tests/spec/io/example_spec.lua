-- tests/spec/io/example_spec.lua — tf.train.Example: parse_example and
-- parse_single_example against what TensorFlow 2.21 parsed from the same
-- bytes (tests/fixtures/data/records_expected.lua), serialize_example giving
-- TF's bytes, and TF's errors for missing, mistyped and misshaped features.
local tide = require "tide"
local ffi = require "ffi"

local FIX = dofile("tests/fixtures/data/records_expected.lua")
local DIR = "tests/fixtures/data/"
local F, V = tide.io.FixedLenFeature, tide.io.VarLenFeature

-- The feature specs records_gen.py gave TF.
local FEATURES = {
  id = F({}, "int64"),
  vec = F({ 3 }, "float32"),
  label = F({}, "string"),
  grid = F({ 2, 2 }, "int64"),
  tags = V("int64"),
  weights = V("float32"),
  words = V("string"),
  opt = F({ 2 }, "float32", { default_value = { -1, -2 } }),
  bin = V("string"),
  big = F({}, "int64"),
}
local DTYPE = { id = "int64", vec = "float32", label = "string", grid = "int64", tags = "int64", weights = "float32",
  words = "string", opt = "float32", bin = "string", big = "int64" }

-- Flat values of t: int64 elements as int64 cdata (exact), others as Lua values.
local function flat(t)
  t = t:contiguous()
  local out = {}
  if t.dtype == "int64" then
    local p = ffi.cast("const int64_t *", t.data)
    for i = 0, tonumber(t.nelem) - 1 do out[i + 1] = p[i] end
    return out
  end
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end
  end
  walk(t:totable())
  return out
end

local function same_values(what, got, want)
  assert.are.equal(#want, #got, what .. ": count")
  for i = 1, #want do
    local g, w = got[i], want[i]
    if type(g) == "cdata" then w = ffi.cast("int64_t", w) end
    assert.is_true(g == w, string.format("%s[%d]: %s, TF gives %s", what, i, tostring(g), tostring(w)))
  end
end

local function same_dense(what, t, e, dt)
  assert.are.equal(dt, t.dtype, what .. ": dtype")
  assert.are.same(e.shape, t.shape:as_list(), what .. ": shape")
  same_values(what, flat(t), e.values)
end

local function same_sparse(what, sp, e, dt)
  assert.is_true(getmetatable(sp) == tide.SparseTensor, what .. " is a SparseTensor")
  assert.are.equal("int64", sp.indices.dtype)
  assert.are.equal(dt, sp.values.dtype)
  local rank = #e.dense_shape
  assert.are.same({ #e.values, rank }, sp.indices.shape:as_list(), what .. ": indices shape")
  local want_idx = {}
  for _, pair in ipairs(e.indices) do for _, x in ipairs(pair) do want_idx[#want_idx + 1] = x end end
  same_values(what .. ".indices", flat(sp.indices), want_idx)
  same_values(what .. ".values", flat(sp.values), e.values)
  same_values(what .. ".dense_shape", flat(sp.dense_shape), e.dense_shape)
end

local function check_parsed(out, expected)
  for name, e in pairs(expected) do
    if e.indices then same_sparse(name, out[name], e, DTYPE[name]) else same_dense(name, out[name], e, DTYPE[name]) end
  end
  for name in pairs(out) do assert.is_not_nil(expected[name], "unexpected feature " .. name) end
end

local function error_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(err)
end

-- One Example from {name = {int64_list = {...}} ...}.
local function example(t) return tide.io.serialize_example(t) end

describe("parse_example", function()
  it("parses a batch as TensorFlow does: every feature kind", function()
    check_parsed(tide.io.parse_example(FIX.serialized, FEATURES), FIX.parsed.batch)
  end)

  it("parse_single_example gives unbatched values and rank-1 sparse values", function()
    check_parsed(tide.io.parse_single_example(FIX.serialized[1], FEATURES), FIX.parsed.single)
    check_parsed(tide.io.parse_example(FIX.serialized[1], FEATURES), FIX.parsed.single)
  end)

  it("takes string tensors: 1-D as a batch, 0-D as one example", function()
    local batch = tide.tensor(FIX.serialized, "string")
    check_parsed(tide.io.parse_example(batch, FEATURES), FIX.parsed.batch)
    check_parsed(tide.io.parse_single_example(tide.tensor(FIX.serialized[1], "string"), FEATURES), FIX.parsed.single)
  end)

  it("parses the records of TF's TFRecord files", function()
    for _, case in ipairs { { "examples.tfrecord", "" }, { "examples.tfrecord.gz", "GZIP" } } do
      local recs = {}
      for r in tide.io.tf_record_iterator(DIR .. case[1], { compression_type = case[2] }) do recs[#recs + 1] = r end
      check_parsed(tide.io.parse_example(recs, FEATURES), FIX.parsed.batch)
    end
  end)

  it("an empty batch gives empty values of the right shapes", function()
    local out = tide.io.parse_example({}, { a = V("int64"), b = F({ 2 }, "float32"), s = F({}, "string") })
    assert.are.same({ 0, 2 }, out.a.indices.shape:as_list())
    assert.are.same({ 0, 0 }, out.a.dense_shape:totable())
    assert.are.same({ 0, 2 }, out.b.shape:as_list())
    assert.are.same({ 0 }, out.s.shape:as_list())
  end)

  it("an empty string is an Example with no features", function()
    local out = tide.io.parse_single_example("", { a = V("float32"), b = F({}, "int64", { default_value = 5 }) })
    assert.are.same({ 0 }, out.a.dense_shape:totable())
    assert.are.equal(5, out.b:item())
  end)

  it("fills defaults of string features and keeps any bytes", function()
    local s = { example { s = { bytes_list = { "x\0y", "" } } }, example {} }
    local out = tide.io.parse_example(s, { s = F({ 2 }, "string", { default_value = { "d1", "d2" } }) })
    assert.are.same({ { "x\0y", "" }, { "d1", "d2" } }, out.s:totable())
  end)

  it("a later duplicate of a feature wins, as in TF", function()
    -- two Examples concatenated are one Example whose features map holds both entries
    local s = example { a = { int64_list = { 1 } } } .. example { a = { int64_list = { 2 } } }
    assert.are.equal(2, tide.io.parse_single_example(s, { a = F({}, "int64") }).a:item())
  end)

  it("a feature with no value list counts as missing", function()
    -- Features{feature: {key: "a", value: Feature{}}} written by hand: 0a 05 0a 03 0a 01 61
    local s = "\10\5\10\3\10\1a"
    assert.are.equal(7, tide.io.parse_single_example(s, { a = F({}, "int64", { default_value = 7 }) }).a:item())
    assert.matches("Feature: a %(data type: int64%) is required but could not be found",
      error_of(tide.io.parse_single_example, s, { a = F({}, "int64") }))
  end)

  it("names a missing required feature as TF does", function()
    local s = { example { a = { float_list = { 1 } } }, example { b = { int64_list = { 1 } } } }
    local err = error_of(tide.io.parse_example, s, { a = F({}, "float32") })
    assert.matches("parse_example: Name: <unknown>, Feature: a %(data type: float%) is required but could not be found %(example 1%)", err)
    assert.matches("example_spec.lua", err) -- raised at the caller's line
    assert.matches("parse_single_example: Feature: z %(data type: string%) is required",
      error_of(tide.io.parse_single_example, s[1], { z = F({}, "string") }))
  end)

  it("names a feature of the wrong type as TF does", function()
    local s = example { a = { int64_list = { 1 } } }
    assert.matches("Key: a%.  Data types don't match%. Data type: int64 but expected type: float",
      error_of(tide.io.parse_single_example, s, { a = F({}, "float32") }))
    assert.matches("Key: a, Index: 0%.  Data types don't match%. Expected type: string, Actual type: int64",
      error_of(tide.io.parse_example, { s }, { a = V("string") }))
  end)

  it("names a feature of the wrong size as TF does", function()
    local s = { example { a = { float_list = { 1, 2 } } }, example { a = { float_list = { 1, 2, 3 } } } }
    assert.matches("Key: a, Index: 1%.  Number of float values != expected%.  Values size: 3 but output shape: %[2%]",
      error_of(tide.io.parse_example, s, { a = F({ 2 }, "float32") }))
    -- an empty list is not a missing feature: the default does not apply (TF agrees)
    local empty = example { a = { float_list = {} } }
    assert.matches("Values size: 0 but output shape: %[%]",
      error_of(tide.io.parse_single_example, empty, { a = F({}, "float32", { default_value = 1 }) }))
  end)

  it("bytes that are no Example are an error, never a crash", function()
    assert.matches("parse_single_example: Could not parse example input %(3 bytes%)",
      error_of(tide.io.parse_single_example, "\255\255\255", { a = V("float32") }))
    assert.matches("Could not parse example input %(index 1, 5 bytes%)",
      error_of(tide.io.parse_example, { FIX.serialized[1], "\10\5zzz" }, { a = V("float32") }))
    math.randomseed(5)
    local features = { id = F({}, "int64", { default_value = 0 }), tags = V("int64"), words = V("string") }
    for trial = 1, 300 do
      local src = FIX.serialized[trial % 3 + 1]
      local bytes = {}
      for i = 1, #src do bytes[i] = src:sub(i, i) end
      for _ = 1, math.random(1, 4) do -- flip, drop or insert bytes
        local at = math.random(1, #bytes)
        local r = math.random(3)
        if r == 1 then bytes[at] = string.char(math.random(0, 255))
        elseif r == 2 then table.remove(bytes, at)
        else table.insert(bytes, at, string.char(math.random(0, 255))) end
      end
      local ok, err = pcall(tide.io.parse_single_example, table.concat(bytes), features)
      if not ok then assert.matches("parse_single_example: ", tostring(err)) end
    end
  end)

  it("refuses bad specs with clear errors", function()
    assert.matches("dtype must be int64, float32 or string", error_of(F, {}, "int32"))
    assert.matches("dtype must be int64, float32 or string", error_of(V, "float64"))
    assert.matches("unknown option 'default'", error_of(F, {}, "int64", { default = 1 }))
    assert.matches("shape must be a Lua list", error_of(F, "x", "int64"))
    local s = example {}
    assert.matches("features%[\"a\"%] must be a tide.io.FixedLenFeature or VarLenFeature",
      error_of(tide.io.parse_single_example, s, { a = "int64" }))
    assert.matches("default_value has 3 values but shape {2} needs 2",
      error_of(tide.io.parse_single_example, s, { a = F({ 2 }, "float32", { default_value = { 1, 2, 3 } }) }))
    assert.matches("First dimension of shape for feature a unknown",
      error_of(tide.io.parse_single_example, s, { a = F({ tide.None }, "int64") }))
    assert.matches("feature names must be strings", error_of(tide.io.parse_single_example, s, { F({}, "int64") }))
    assert.matches("serialized must be a string of bytes", error_of(tide.io.parse_single_example, 5, {}))
    assert.matches("serialized example 2 must be a string", error_of(tide.io.parse_example, { s, 5 }, {}))
    assert.matches("string tensor of rank 0 or 1", error_of(tide.io.parse_example, tide.tensor { 1 }, {}))
  end)

  it("is a registry op: traced it gives what it gives eagerly (batch and single, every feature kind)", function()
    local names = {}
    for name in pairs(FEATURES) do names[#names + 1] = name end
    table.sort(names)
    -- the flat results in name order (a SparseTensor's three parts)
    local function flat_of(out)
      local r = {}
      for _, name in ipairs(names) do
        local v = out[name]
        if getmetatable(v) == tide.SparseTensor then
          r[#r + 1], r[#r + 2], r[#r + 3] = v.indices, v.values, v.dense_shape
        else
          r[#r + 1] = v
        end
      end
      return unpack(r)
    end
    local batch = tide.tensor(FIX.serialized, "string")
    local fb = tide.trace(function(s) return flat_of(tide.io.parse_example(s, FEATURES)) end)
    local fs = tide.trace(function(s) return flat_of(tide.io.parse_single_example(s, FEATURES)) end)
    local text = fb:get_concrete_function(batch):graph_text()
    assert.is_truthy(text:find("= parse_example_dense(", 1, true), text)
    assert.is_truthy(text:find("= parse_example_sparse(", 1, true), text)
    local function rebuild(...)
      local r, out, i = { ... }, {}, 1
      for _, name in ipairs(names) do
        if getmetatable(FEATURES[name]) == V then
          out[name] = tide.SparseTensor(r[i], r[i + 1], r[i + 2])
          i = i + 3
        else
          out[name] = r[i]
          i = i + 1
        end
      end
      return out
    end
    check_parsed(rebuild(fb(batch)), FIX.parsed.batch)
    check_parsed(rebuild(fb(batch)), FIX.parsed.batch) -- a second run
    check_parsed(rebuild(fs(tide.tensor(FIX.serialized[1], "string"))), FIX.parsed.single)
    -- the errors are the eager ones, named where the trace recorded the op
    local f = tide.trace(function(s) return tide.io.parse_single_example(s, { id = F({}, "int64") }).id end)
    assert.matches("parse_single_example: Could not parse example input %(1 bytes%)", error_of(f, tide.tensor("x")))
    assert.matches("parse_single_example: Feature: id %(data type: int64%) is required",
      error_of(f, tide.tensor(example {}, "string")))
    local u = tide.trace(function(s) return tide.io.parse_example(s, { id = F({}, "int64") }).id end,
      { input_signature = { tide.TensorSpec(nil, "string") } })
    assert.matches("the rank of serialized must be known", error_of(u, batch))
  end)

  it("runs in a dataset's map on the pipeline's C threads: no fallback, the values parsed eagerly", function()
    local spec = { id = F({}, "int64"), vec = F({ 3 }, "float32"), label = F({}, "string"),
      opt = F({ 2 }, "float32", { default_value = { -1, -2 } }) }
    local stderr, notes = io.stderr, {}
    io.stderr = { write = function(_, s) notes[#notes + 1] = s end }
    local ok, ds = pcall(function()
      return tide.data.TFRecordDataset(DIR .. "examples.tfrecord")
        :map(function(r) return tide.io.parse_single_example(r, spec) end, { parallel = 2 })
    end)
    io.stderr = stderr
    assert(ok, ds)
    assert.are.same({}, notes)
    assert.is_truthy(ds.compiled, "the map function was traced")
    local want = tide.io.parse_example(FIX.serialized, spec)
    local k = 0
    for e in ds:iter() do
      for name in pairs(spec) do
        assert.are.same(want[name][k]:totable(), e[name]:totable(), name .. " of record " .. k)
      end
      k = k + 1
    end
    assert.are.equal(#FIX.serialized, k)
    -- batched records, parsed as a batch
    local batched = tide.data.TFRecordDataset(DIR .. "examples.tfrecord"):batch(2)
      :map(function(r) return tide.io.parse_example(r, spec) end)
    assert.is_truthy(batched.compiled)
    local first = batched:take(1):get_single_element()
    assert.are.same({ 2, 3 }, first.vec.shape:as_list())
    assert.are.same({ want.vec[0]:totable(), want.vec[1]:totable() }, first.vec:totable())
    -- a record that lacks a required feature fails at its element
    local bad = tide.data.Dataset.from_tensor_slices(tide.tensor({ FIX.serialized[1], example {} }, "string"))
      :map(function(r) return tide.io.parse_single_example(r, { id = F({}, "int64") }).id end, { parallel = 2 })
    local it = bad:iter()
    assert.are.equal(7, it():item())
    assert.matches("element 1: parse_single_example: Feature: id %(data type: int64%) is required", error_of(it))
  end)

  it("accepts dtype aliases as tide does", function()
    assert.are.equal("float32", F({}, "float").dtype)
    assert.are.equal("int64", V("long").dtype)
  end)
end)

describe("serialize_example", function()
  it("writes the bytes TensorFlow writes (deterministic, features in name order)", function()
    for i, ex in ipairs(FIX.examples) do
      assert.is_true(tide.io.serialize_example(ex) == FIX.serialized[i], "example " .. i)
    end
  end)

  it("takes tensors, strings and lists of strings", function()
    local s = tide.io.serialize_example {
      f = tide.tensor({ { 1.5, 2 } }, "float32"), i = tide.tensor { 3, 4 }, b = tide.tensor { true, false },
      one = "x", many = { "p", "q" }, st = tide.tensor({ "u", "v" }, "string"),
      d = tide.tensor({ 1, 2 }, "float64"),
    }
    local out = tide.io.parse_single_example(s, {
      f = F({ 2 }, "float32"), i = F({ 2 }, "int64"), b = F({ 2 }, "int64"), one = F({}, "string"),
      many = F({ 2 }, "string"), st = V("string"), d = F({ 2 }, "float32"),
    })
    assert.are.same({ 1.5, 2 }, out.f:totable())
    assert.are.same({ 3, 4 }, out.i:totable())
    assert.are.same({ 1, 0 }, out.b:totable())
    assert.are.equal("x", out.one:item())
    assert.are.same({ "p", "q" }, out.many:totable())
    assert.are.same({ "u", "v" }, out.st.values:totable())
    assert.are.same({ 1, 2 }, out.d:totable())
  end)

  it("keeps int64 values past 2^53 exact", function()
    local big = 4611686018427387905LL
    local s = tide.io.serialize_example { a = { int64_list = { big, -1 } } }
    local p = ffi.cast("const int64_t *", tide.io.parse_single_example(s, { a = F({ 2 }, "int64") }).a.data)
    assert.is_true(p[0] == big and p[1] == -1)
  end)

  it("refuses values it cannot type with clear errors", function()
    assert.matches("feature a: say {int64_list = ...} or {float_list = ...}",
      error_of(tide.io.serialize_example, { a = { 1, 2 } }))
    assert.matches("feature a: say {int64_list", error_of(tide.io.serialize_example, { a = 3 }))
    assert.matches("int64_list value 1 must be an integer, got 1.5",
      error_of(tide.io.serialize_example, { a = { int64_list = { 1.5 } } }))
    assert.matches("int64_list needs integers, got a float32 tensor",
      error_of(tide.io.serialize_example, { a = { int64_list = tide.tensor { 1.5 } } }))
    assert.matches("bytes_list value 2 must be a string", error_of(tide.io.serialize_example, { a = { bytes_list = { "x", 1 } } }))
    assert.matches("an empty list does not say its kind", error_of(tide.io.serialize_example, { a = {} }))
    assert.matches("cannot serialize a boolean", error_of(tide.io.serialize_example, { a = true }))
    assert.matches("feature names must be strings", error_of(tide.io.serialize_example, { 1 }))
    assert.matches("expects a table", error_of(tide.io.serialize_example, "x"))
  end)
end)
