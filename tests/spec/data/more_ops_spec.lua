-- tests/spec/data/more_ops_spec.lua — flat_map, apply, reduce, scan, take_while, unique,
-- window, choose_from_datasets and sample_from_datasets against real tf.data
-- (tests/fixtures/data/more.lua, made by gen_more.py with TF 2.21): orders,
-- cardinality, element_spec, errors; sample_from_datasets' draws by their rules.
-- The elements are checked under both engines (tests/support/data_engines.lua).
local tide = require "tide"
local engines = require "data_engines"
local D = tide.data.Dataset
local c_engine = require "tide.data.c_engine"
local fixture = dofile("tests/fixtures/data/more.lua")
local cases, card = fixture.cases, fixture.cardinality

local function conv(v)
  if tide.is_tensor(v) then return v:totable() end
  if tide.data.is_dataset(v) then -- a window: its elements
    local out = {}
    for _, e in ipairs(v:totable()) do out[#out + 1] = conv(e) end
    return out
  end
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = conv(x) end
  return t
end
local function values(ds)
  local out = {}
  for _, e in ipairs(ds:totable()) do out[#out + 1] = conv(e) end
  return out
end

local r = D.range
local function onehot() return D.from_tensor_slices(tide.tensor({ { 1, 0 }, { 0, 1 } }, "float32")):repeat_() end
local function i64(list) return tide.constant(list, "int64") end
local function zero() return tide.constant(0, "int64") end

-- group_by_window's input, and bucket_by_sequence_length's sequences (int32, of lengths 1-5) and length.
local function G() return D.from_tensor_slices(i64 { 5, 3, 1, 4, 0, 2, 9, 7, 8, 6 }) end
local function S()
  local rows = { { 1 }, { 2, 2, 2 }, { 3, 3 }, { 4, 4, 4, 4, 4 }, { 5 }, { 6, 6, 6, 6 }, { 7, 7 } }
  return D.from_generator(function()
    local i = 0
    return function()
      i = i + 1
      return rows[i] and tide.constant(rows[i], "int32")
    end
  end, { output_signature = tide.TensorSpec({ tide.None }, "int32") })
end
local function length(x) return tide.shape(x)[0] end

local pipelines = {
  flat_map_range = function() return r(1, 4):flat_map(function(x) return r(x) end) end,
  flat_map_slices = function()
    return r(3):flat_map(function(x) return D.from_tensor_slices(tide.stack({ x, x * 10, x * 100 })) end)
  end,
  flat_map_tuple = function()
    return D.zip { r(3), r(10, 13) }:flat_map(function(a, b) return D.from_tensors(a + b):repeat_(2) end)
  end,
  flat_map_empty = function() return r(4):flat_map(function(x) return r(x % 2) end) end,
  reduce_sum = function() return r(5):reduce(zero(), function(s, x) return s + x end) end,
  reduce_tuple = function()
    return r(1, 5):reduce({ zero(), tide.constant(1, "int64") }, function(s, x) return { s[1] + x, s[2] * x } end)
  end,
  reduce_dict = function()
    return r(4):reduce({ n = zero(), m = tide.constant(-1, "int64") },
      function(s, x) return { n = s.n + 1, m = tide.maximum(s.m, x) } end)
  end,
  reduce_empty = function() return r(0):reduce(tide.constant(7, "int64"), function(s, x) return s + x end) end,
  reduce_zip_elem = function()
    return D.zip { r(3), r(10, 13) }:reduce(zero(), function(s, e) return s + e[1] * e[2] end)
  end,
  scan_cumsum = function() return r(5):scan(zero(), function(s, x) return s + x, s + x end) end,
  scan_output_differs = function()
    return r(1, 5):scan(tide.constant(1, "int64"), function(s, x) return s * x, { s, x:cast("float32") / 2 } end)
  end,
  take_while = function() return r(10):take_while(function(x) return x:lt(4) end) end,
  take_while_none = function() return r(10):take_while(function(x) return x:gt(4) end) end,
  take_while_all = function() return r(3):take_while(function(x) return x:lt(100) end) end,
  unique_int = function() return D.from_tensor_slices(tide.constant({ 1, 3, 1, 2, 3, 5, 2 }, "int32")):unique() end,
  unique_str = function() return D.from_tensor_slices(tide.constant({ "b", "a", "b", "c", "a" })):unique() end,
  window_3 = function() return r(7):window(3) end,
  window_3_drop = function() return r(7):window(3, { drop_remainder = true }) end,
  window_3_shift1 = function() return r(5):window(3, { shift = 1 }) end,
  window_3_shift2_stride2 = function() return r(10):window(3, { shift = 2, stride = 2 }) end,
  window_3_shift2_stride2_drop = function()
    return r(10):window(3, { shift = 2, stride = 2, drop_remainder = true })
  end,
  window_2_shift4 = function() return r(7):window(2, { shift = 4 }) end,
  window_flat_map_batch = function()
    return r(7):window(3, { shift = 1, drop_remainder = true }):flat_map(function(w) return w:batch(3) end)
  end,
  window_tuple = function()
    return D.zip { r(5), r(10, 15) }:window(2):flat_map(function(a, b) return D.zip { a:batch(2), b:batch(2) } end)
  end,
  window_spec = function()
    local s = r(3):window(2).element_spec.element_spec
    return { s.dtype, s.shape }
  end,
  choose = function()
    return D.choose_from_datasets({ r(0, 10), r(100, 110), r(200, 210) }, D.from_tensor_slices(i64 { 0, 1, 1, 0, 2, 0, 1 }))
  end,
  choose_stop = function()
    return D.choose_from_datasets({ r(2), r(100, 110) }, D.from_tensor_slices(i64 { 0, 1, 0, 0, 1, 1 }))
  end,
  choose_nostop = function()
    return D.choose_from_datasets({ r(2), r(100, 110) }, D.from_tensor_slices(i64 { 0, 1, 0, 0, 1, 1 }),
      { stop_on_empty_dataset = false })
  end,
  sample_all = function()
    local got = values(D.sample_from_datasets({ r(5), r(10, 15) }, { seed = 1 }))
    table.sort(got)
    return got
  end,
  sample_share_1 = function()
    local zeros = r(50000):map(function(x) return x * 0 end)
    local ones = r(50000):map(function(x) return x * 0 + 1 end)
    local ds = D.sample_from_datasets({ zeros, ones }, { weights = { 0.25, 0.75 }, seed = 3 }):take(20000)
    return ds:reduce(zero(), function(s, x) return s + x end):item() / 20000
  end,
  group_by_window_2 = function()
    return G():group_by_window(function(x) return x % 3 end, function(k, w) return w:batch(10) end, { window_size = 2 })
  end,
  group_by_window_flush = function()
    return G():group_by_window(function(x) return 2 - x % 3 end, function(k, w) return w:batch(10) end,
      { window_size = 5 })
  end,
  group_by_window_negative_keys = function()
    return G():group_by_window(function(x) return tide.where(x:gt(4), x - 10, x) end,
      function(k, w) return w:batch(10) end, { window_size = 9 })
  end,
  group_by_window_size_func = function()
    return G():group_by_window(function(x) return x % 2 end,
      function(k, w) return w:batch(10):map(function(b) return tide.concat({ tide.reshape(k, { 1 }), b }, 0) end) end,
      { window_size_func = function(k) return k + 2 end })
  end,
  group_by_window_tuple = function()
    return D.zip { G(), G():map(function(x) return x * 10 end) }:group_by_window(function(a, b) return a % 2 end,
      function(k, w) return w:batch(3) end, { window_size = 3 })
  end,
  bucket = function() return S():bucket_by_sequence_length(length, { 3, 5 }, { 2, 2, 2 }) end,
  bucket_to_boundary = function()
    return S():bucket_by_sequence_length(length, { 3, 6 }, { 2, 2, 2 },
      { pad_to_bucket_boundary = true, padding_values = -1 })
  end,
  bucket_drop = function() return S():bucket_by_sequence_length(length, { 3 }, { 2, 3 }, { drop_remainder = true }) end,
  bucket_shapes = function() return S():bucket_by_sequence_length(length, { 3 }, { 2, 3 }, { padded_shapes = { 6 } }) end,
  bucket_no_padding = function()
    return D.from_tensor_slices(i64 { { 1, 2 }, { 3, 4 }, { 5, 6 } })
      :bucket_by_sequence_length(function(x) return x[0]:cast("int32") end, { 4 }, { 2, 2 }, { no_padding = true })
  end,
  bucket_spec = function()
    local s = S():bucket_by_sequence_length(length, { 3 }, { 2, 2 }, { drop_remainder = true }).element_spec
    return { s.dtype, { s.shape[1] == tide.None and -1 or s.shape[1], s.shape[2] == tide.None and -1 or s.shape[2] } }
  end,
  -- weights given as a dataset of one-hot rows: TF's draws exactly
  sample_wds = function() return D.sample_from_datasets({ r(0, 5), r(100, 103) }, { weights = onehot(), seed = 1 }) end,
  sample_wds_stop = function()
    return D.sample_from_datasets({ r(0, 5), r(100, 103) }, { weights = onehot(), seed = 1, stop_on_empty_dataset = true })
  end,
  sample_wds_short = function()
    local short = D.from_tensor_slices(tide.tensor({ { 1, 0 }, { 0, 1 }, { 1, 0 } }, "float64"))
    return D.sample_from_datasets({ r(0, 5), r(100, 103) }, { weights = short, seed = 1 })
  end,
}

local cardinality = {
  group_by_window = function()
    return G():group_by_window(function(x) return x % 3 end, function(k, w) return w:batch(10) end, { window_size = 2 })
  end,
  group_by_window_inf = function()
    return G():repeat_():group_by_window(function(x) return x % 3 end, function(k, w) return w:batch(10) end,
      { window_size = 2 })
  end,
  bucket = function() return S():bucket_by_sequence_length(length, { 3, 5 }, { 2, 2, 2 }) end,
  flat_map = function() return r(3):flat_map(function(x) return r(x) end) end,
  flat_map_inf = function() return r(3):repeat_():flat_map(function(x) return r(x) end) end,
  interleave_inf = function() return r(3):repeat_():interleave(function(x) return r(x) end, { cycle_length = 2 }) end,
  scan = function() return r(5):scan(zero(), function(s, x) return s + x, x end) end,
  scan_inf = function() return r(5):repeat_():scan(zero(), function(s, x) return s + x, x end) end,
  take_while = function() return r(10):take_while(function(x) return x:lt(4) end) end,
  take_while_inf = function() return r(10):repeat_():take_while(function(x) return x:lt(4) end) end,
  unique = function() return r(5):unique() end,
  unique_inf = function() return r(5):repeat_():unique() end,
  window = function() return r(7):window(3) end,
  window_drop = function() return r(7):window(3, { drop_remainder = true }) end,
  window_shift1 = function() return r(5):window(3, { shift = 1 }) end,
  window_stride_drop = function() return r(10):window(3, { shift = 2, stride = 2, drop_remainder = true }) end,
  window_short_drop = function() return r(2):window(3, { drop_remainder = true }) end,
  window_inf = function() return r(5):repeat_():window(3) end,
  window_unknown = function() return r(5):filter(function(x) return x:gt(1) end):window(3) end,
  choose = function() return D.choose_from_datasets({ r(0, 10), r(100, 110) }, r(2)) end,
  choose_inf = function() return D.choose_from_datasets({ r(0, 10):repeat_(), r(100, 110) }, r(2)) end,
  choose_inf_choice = function() return D.choose_from_datasets({ r(0, 10), r(100, 110) }, r(2):repeat_()) end,
  sample = function() return D.sample_from_datasets({ r(5), r(10, 15) }, { seed = 1 }) end,
  sample_inf = function() return D.sample_from_datasets({ r(5):repeat_(), r(10, 15) }, { seed = 1 }) end,
  sample_inf_stop = function()
    return D.sample_from_datasets({ r(5):repeat_(), r(10, 15) }, { seed = 1, stop_on_empty_dataset = true })
  end,
  sample_one = function() return D.sample_from_datasets({ r(5) }, { seed = 1 }) end,
  sample_wds_short = function()
    local short = D.from_tensor_slices(tide.tensor({ { 1, 0 }, { 0, 1 }, { 1, 0 } }, "float64"))
    return D.sample_from_datasets({ r(0, 5), r(100, 103) }, { weights = short, seed = 1 })
  end,
  sample_wds_inf = function()
    return D.sample_from_datasets({ r(0, 5):repeat_(), r(100, 103) }, { weights = onehot(), seed = 1 })
  end,
}

-- The value a pipeline gives, in the fixture's form.
local function result(name)
  local v = pipelines[name]()
  if tide.data.is_dataset(v) then return values(v) end
  return conv(v)
end

describe("tide.data's further transformations match tf.data", function()
  engines.each(function()
    for name, expected in pairs(cases) do
      if name ~= "sample_share_1" then
        it(name, function()
          assert(pipelines[name], "no tide pipeline for the fixture case " .. name)
          assert.are.same(expected, result(name))
        end)
      end
    end

    it("sample_from_datasets draws with the weights' proportions (TF: " .. cases.sample_share_1 .. ")", function()
      local share = pipelines.sample_share_1()
      assert.is_true(math.abs(share - 0.75) < 0.02, "share of the 0.75 dataset: " .. share)
      assert.is_true(math.abs(share - cases.sample_share_1) < 0.02)
    end)
  end)

  for name, expected in pairs(card) do
    it("cardinality: " .. name, function()
      assert(cardinality[name], "no tide pipeline for the cardinality case " .. name)
      assert.are.equal(expected, cardinality[name]():cardinality())
    end)
  end

  it("has a pipeline for every case and a case for every pipeline", function()
    for name in pairs(pipelines) do assert.is_not_nil(cases[name], name) end
    for name in pairs(cardinality) do assert.is_not_nil(card[name], name) end
  end)
end)

-- pcall(f, ...) must fail with a message containing each of the patterns (plain).
local function fails(f, ...)
  local ok, err = pcall(f)
  assert.is_false(ok, "expected an error")
  for _, p in ipairs { ... } do
    assert.is_truthy(tostring(err):find(p, 1, true), "'" .. p .. "' not in: " .. tostring(err))
  end
end

describe("flat_map", function()
  it("captures its function into C, as interleave with cycle_length 1", function()
    local ds = r(1, 4):flat_map(function(x) return r(x):map(function(y) return y * 10 end) end)
    assert.is_true(c_engine.supports(ds))
    assert.are.same({ 0, 0, 10, 0, 10, 20 }, values(ds))
  end)

  it("gives the same order when its function runs in Lua", function()
    local ds = r(1, 4):flat_map(function(x) return r(x:item()) end)
    assert.is_false(c_engine.supports(ds))
    assert.are.same(cases.flat_map_range, values(ds))
  end)

  it("has the inner dataset's element_spec", function()
    local ds = r(3):flat_map(function(x) return D.from_tensors(tide.stack({ x, x }):cast("float32")) end)
    assert.are.equal(tide.TensorSpec({ 2 }, "float32"), ds.element_spec)
  end)

  it("names itself in its errors", function()
    fails(function() r(3):flat_map(5) end, "flat_map: expected a function, got number")
    fails(function() r(3):flat_map(function(x) return x:item() end):totable() end, "flat_map:",
      "must return a tide.data.Dataset, got number")
  end)
end)

describe("apply", function()
  it("gives fn(ds)", function()
    local ds = r(6):apply(function(d) return d:filter(function(x) return tide.equal(x % 2, 0) end) end)
    assert.are.same({ 0, 2, 4 }, values(ds))
  end)
  it("refuses a function that returns no dataset", function()
    fails(function() r(3):apply(function() return 1 end) end, "apply: the function must return a tide.data.Dataset")
    fails(function() r(3):apply("x") end, "apply: expected a function")
  end)
end)

describe("reduce", function()
  it("gives the final state as the initial one's structure", function()
    local s = r(1, 5):reduce({ a = zero(), b = { zero(), tide.constant(1.0) } },
      function(st, x) return { a = st.a + x, b = { st.b[1] - x, st.b[2] * 2 } } end)
    assert.are.equal(10, s.a:item())
    assert.are.equal(-10, s.b[1]:item())
    assert.are.equal(16, s.b[2]:item())
  end)
  it("lets the state's shape change (TF relaxes it), and Lua numbers take the state's dtype", function()
    local s = r(4):reduce(tide.zeros({ 0 }, "int64"), function(st, x) return tide.concat({ st, tide.reshape(x, { 1 }) }, 0) end)
    assert.are.same({ 0, 1, 2, 3 }, s:totable())
    assert.are.equal("int64", r(3):reduce(zero(), function() return 5 end).dtype)
  end)
  it("checks the new state against the initial one", function()
    fails(function() r(3):reduce(tide.constant(0, "int32"), function(s, x) return x end) end,
      "reduce: element 0:", "component 0 is int64 but the initial state's is int32")
    fails(function() r(3):reduce({ zero(), zero() }, function(s, x) return s[1] end) end,
      "reduce: element 0:", "different structure")
    fails(function() r(3):reduce(zero(), function(s, x) error("boom") end) end, "reduce: the function failed on element 0",
      "boom")
    fails(function() r(3):reduce(nil, function() end) end, "reduce: the initial state is nil")
    fails(function() r(3):reduce(zero(), 3) end, "reduce: expected a function")
  end)
end)

describe("scan", function()
  it("runs a traced function, restarting its state each pass", function()
    local ds = r(4):scan(zero(), function(s, x) return s + x, s * 10 end)
    assert.is_not_nil(ds.compiled)
    assert.are.same({ 0, 0, 10, 30 }, values(ds))
    assert.are.same({ 0, 0, 10, 30 }, values(ds))
  end)
  it("relaxes the state's shape as TF does (the output's spec follows)", function()
    local ds = r(4):scan(tide.zeros({ 0 }, "int64"), function(s, x)
      return tide.concat({ s, tide.reshape(x, { 1 }) }, 0), s
    end)
    assert.are.equal(tide.TensorSpec({ tide.None }, "int64"), ds.element_spec)
    assert.are.same({ {}, { 0 }, { 0, 1 }, { 0, 1, 2 } }, values(ds))
  end)
  it("runs an untraceable function in Lua with the same results", function()
    local ds = r(1, 5):scan(tide.constant(1, "int64"), function(s, x)
      if x:item() > 0 then return s * x, s end
    end)
    assert.is_nil(ds.compiled)
    assert.are.same({ 1, 1, 2, 6 }, values(ds))
  end)
  it("checks what the function returns", function()
    fails(function() r(3):scan(zero(), function(s, x) return s + x end) end, "scan: the function must return two values")
    fails(function() r(3):scan(tide.constant(0.5), function(s, x) return x, x end) end,
      "scan: the new state's component 0 is int64 but the initial state's is float32")
    fails(function() r(3):scan(zero(), nil) end, "scan: expected a function")
  end)
end)

describe("take_while", function()
  it("stops at the first false, also in Lua", function()
    assert.are.same({ 5, 6 }, values(r(5, 100):take_while(function(x) return x:item() < 7 end)))
    local list = D.zip { r(10), r(10, 20) }:take_while(function(a, b) return tide.less(a + b, 14) end)
    assert.are.same({ { 0, 10 }, { 1, 11 } }, values(list))
  end)
  it("stops reading an infinite input", function()
    assert.are.same({ 0, 1, 2 }, values(r(5):repeat_():take_while(function(x) return x:lt(3) end)))
  end)
  it("needs a bool scalar predicate", function()
    fails(function() r(3):take_while(function(x) return x end) end,
      "take_while: the predicate must return one bool scalar")
    fails(function() r(3):take_while(function(x) return x:item() end):totable() end,
      "take_while: the predicate must return a bool, got number (element 0)")
    fails(function() r(3):take_while() end, "take_while: expected a function")
  end)
end)

describe("unique", function()
  it("compares whole tensors of any shape, as TF", function()
    local ds = D.from_tensor_slices(i64 { { 1, 2 }, { 1, 2 }, { 2, 1 } }):unique()
    assert.are.same({ { 1, 2 }, { 2, 1 } }, values(ds))
    local ragged = r(3):map(function(x) return tide.fill(tide.reshape(x, { 1 }), 1):cast("int64") * x end)
    assert.are.same({ {}, { 1 }, { 2, 2 } }, values(ragged:concatenate(ragged):unique()))
    local strs = D.from_tensor_slices(tide.constant({ { "a", "bc" }, { "ab", "c" }, { "a", "bc" } })):unique()
    assert.are.same({ { "a", "bc" }, { "ab", "c" } }, values(strs))
  end)
  it("takes int32, int64 and string single components only (TF: " .. fixture.errors.unique_float .. ")", function()
    fails(function() D.from_tensor_slices(tide.constant({ 1.5, 2 })):unique() end,
      "unique: elements of float32 are not supported; only int32, int64 and string")
    fails(function() D.zip { r(3), r(3) }:unique() end, "unique: the elements must be single tensors; these have 2")
    fails(function() r(3):window(2):unique() end, "unique: elements of datasets are not supported")
  end)
end)

describe("window", function()
  it("gives datasets with a DatasetSpec per component", function()
    local ds = D.zip { r(5), r(10, 15):map(function(x) return x:cast("float32") end) }:window(2)
    local spec = ds.element_spec
    assert.are.equal(tide.data.DatasetSpec(tide.TensorSpec({}, "int64")), spec[1])
    assert.are.equal(tide.TensorSpec({}, "float32"), spec[2].element_spec)
    assert.are.equal("DatasetSpec(" .. tostring(tide.TensorSpec({}, "int64")) .. ", shape=[])", tostring(spec[1]))
    local first = ds:take(1):totable()[1]
    assert.is_true(tide.data.is_dataset(first[1]))
    assert.are.equal(2, first[1]:cardinality())
  end)
  it("keeps each window's elements as they are (shapes may differ)", function()
    local ragged = r(1, 4):map(function(x) return tide.fill(tide.reshape(x, { 1 }), 1):cast("int64") * x end)
    assert.are.same({ { { 1 }, { 2, 2 } }, { { 3, 3, 3 } } }, values(ragged:window(2)))
    local padded = ragged:window(3):flat_map(function(w) return w:padded_batch(3) end)
    assert.are.same({ { { 1, 0, 0 }, { 2, 2, 0 }, { 3, 3, 3 } } }, values(padded))
  end)
  it("passes through take, repeat_, map, filter and shuffle in Lua", function()
    local sums = r(6):window(2):repeat_(2):take(4):map(function(w)
      return w:reduce(zero(), function(s, x) return s + x end)
    end)
    assert.are.same({ 1, 5, 9, 1 }, values(sums))
    local full = r(7):window(3):filter(function(w) return w:reduce(zero(), function(n) return n + 1 end):item() == 3 end)
    assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 } }, values(full))
    local shuffled = values(r(8):window(2):shuffle(4, { seed = 1 }))
    table.sort(shuffled, function(a, b) return a[1] < b[1] end)
    assert.are.same({ { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 } }, shuffled)
  end)
  it("refuses stages that stack tensors, and bad arguments", function()
    fails(function() r(5):window(2):batch(2) end, "batch: the elements are datasets (from window)", "flat_map")
    fails(function() r(5):window(2):cache() end, "cache: the elements are datasets")
    fails(function() r(5):window(0) end, "window: size must be a whole number >= 1, got 0")
    fails(function() r(5):window(2, { shift = 0 }) end, "window: shift must be a whole number >= 1")
    fails(function() r(5):window(2, { stride = 1.5 }) end, "window: stride must be a whole number >= 1")
    fails(function() r(5):window(2, { drop_remainder = 1 }) end, "window: drop_remainder must be a boolean")
    fails(function() r(5):window(2, { step = 1 }) end, "window: unknown option 'step'")
    fails(function() r(5):window(2):window(2) end, "window: the elements are already datasets")
  end)
end)

describe("choose_from_datasets", function()
  it("errors on a choice out of range, as TF (" .. fixture.errors.choose_bad_index .. ")", function()
    fails(function() D.choose_from_datasets({ r(2), r(3) }, r(5)):totable() end,
      "choose_from_datasets: choice 2 is out of range: there are 2 datasets")
  end)
  it("checks its arguments", function()
    fails(function() D.choose_from_datasets({ r(2), r(3) }, D.from_tensor_slices(tide.constant({ 0.0, 1.0 }))) end,
      "choose_from_datasets: choice_dataset's elements must be int64 scalars")
    fails(function() D.choose_from_datasets({ r(2), r(3):map(function(x) return x:cast("int32") end) }, r(2)) end,
      "choose_from_datasets: the datasets' elements have different dtypes")
    fails(function() D.choose_from_datasets({ r(2), D.zip { r(2), r(2) } }, r(2)) end,
      "choose_from_datasets: datasets[2]'s elements have a different structure")
    fails(function() D.choose_from_datasets({}, r(2)) end, "choose_from_datasets: datasets must be a non-empty Lua list")
    fails(function() D.choose_from_datasets({ r(2), 3 }, r(2)) end, "choose_from_datasets: datasets[2] is number")
    fails(function() D.choose_from_datasets({ r(2) }, r(2), { stop = true }) end,
      "choose_from_datasets: unknown option 'stop'")
    fails(function() D.choose_from_datasets({ r(2) }, r(2), { stop_on_empty_dataset = 1 }) end,
      "stop_on_empty_dataset must be a boolean")
  end)
end)

describe("sample_from_datasets", function()
  local function order(ds) return values(ds) end

  it("repeats its order for a seed, each pass, and differs for another seed", function()
    local ds = D.sample_from_datasets({ r(20), r(100, 120) }, { seed = 4 })
    local a = order(ds)
    assert.are.same(a, order(ds))
    assert.are.same(a, order(D.sample_from_datasets({ r(20), r(100, 120) }, { seed = 4 })))
    assert.are_not.same(a, order(D.sample_from_datasets({ r(20), r(100, 120) }, { seed = 5 })))
    -- each input's elements stay in their order
    local lo, hi = {}, {}
    for _, v in ipairs(a) do if v < 100 then lo[#lo + 1] = v else hi[#hi + 1] = v end end
    assert.are.equal(20, #lo)
    assert.are.equal(20, #hi)
    for i = 2, 20 do assert.is_true(lo[i] > lo[i - 1] and hi[i] > hi[i - 1]) end
  end)

  it("draws anew each pass with rerandomize_each_iteration", function()
    local ds = D.sample_from_datasets({ r(20), r(100, 120) }, { seed = 4, rerandomize_each_iteration = true })
    assert.are_not.same(order(ds), order(ds))
  end)

  it("follows tide.random.set_seed when given no seed", function()
    tide.random.set_seed(11)
    local a = order(D.sample_from_datasets({ r(20), r(100, 120) }))
    tide.random.set_seed(11)
    assert.are.same(a, order(D.sample_from_datasets({ r(20), r(100, 120) })))
  end)

  it("goes on with the rest when one is exhausted, or stops with stop_on_empty_dataset", function()
    local function short_long(stop)
      return D.sample_from_datasets({ r(10), r(100, 1100) }, { seed = 5, stop_on_empty_dataset = stop })
    end
    assert.are.equal(1010, #order(short_long(false)))
    local got = order(short_long(true))
    -- it ends when the exhausted one is drawn: all 10 of it came, then about 1 in 2 draws
    local n_short = 0
    for _, v in ipairs(got) do if v < 100 then n_short = n_short + 1 end end
    assert.are.equal(10, n_short)
    assert.is_true(#got < 60, "stopped after " .. #got)
    assert.is_true(got[#got] >= 0)
  end)

  it("never draws a dataset of weight 0", function()
    local got = order(D.sample_from_datasets({ r(5), r(100, 105) }, { weights = { 0, 2 }, seed = 1 }))
    assert.are.same({ 100, 101, 102, 103, 104 }, got)
    local t = order(D.sample_from_datasets({ r(3), r(10, 13) }, { weights = tide.constant({ 1.0, 1.0 }), seed = 1 }))
    assert.are.equal(6, #t)
  end)

  it("gives one dataset back as it is (as TF)", function()
    local ds = r(5)
    assert.are.equal(ds, D.sample_from_datasets({ ds }))
  end)

  it("checks its arguments", function()
    fails(function() D.sample_from_datasets({ r(3), r(3) }, { weights = { 1 } }) end,
      "sample_from_datasets: weights has 1 entries but there are 2 datasets")
    fails(function() D.sample_from_datasets({ r(3), r(3) }, { weights = { 1, -1 } }) end,
      "sample_from_datasets: weights[2] must be a finite number >= 0, got -1")
    fails(function() D.sample_from_datasets({ r(3), r(3) }, { weights = { 0, 0 } }) end, "the weights are all 0")
    fails(function() D.sample_from_datasets({ r(3), r(3) }, { weights = r(2) }) end,
      "sample_from_datasets: a weights dataset's elements must be float32 or float64 vectors of 2 weights (one per " ..
      "dataset), got TensorSpec(shape=(), dtype=tide.int64, name=None)")
    fails(function()
      D.sample_from_datasets({ r(3), r(3) }, { weights = D.from_tensors(tide.tensor({ 1, 1, 1 }, "float32")) })
    end, "vectors of 2 weights")
    local ragged = D.from_generator(function()
      local k = 0
      return function() k = k + 1; if k == 1 then return tide.tensor({ 1, 1, 1 }, "float32") end end
    end, { output_signature = tide.TensorSpec({ tide.None }, "float32") })
    fails(function() values(D.sample_from_datasets({ r(3), r(3) }, { weights = ragged })) end,
      "sample_from_datasets: a weights element has 3 weights but there are 2 datasets")
    local negative = D.from_tensors(tide.tensor({ 1, -1 }, "float32"))
    fails(function() values(D.sample_from_datasets({ r(3), r(3) }, { weights = negative })) end,
      "a weights element has -1 at position 1; weights must be finite numbers >= 0")
    fails(function() D.sample_from_datasets({ r(3), r(3) }, { seed = 1.5 }) end,
      "sample_from_datasets: seed must be a whole number")
    fails(function() D.sample_from_datasets({ r(3), r(3) }, { weight = { 1, 1 } }) end,
      "sample_from_datasets: unknown option 'weight'")
    fails(function() D.sample_from_datasets(r(3)) end, "sample_from_datasets: datasets must be a non-empty Lua list")
  end)
end)

describe("group_by_window", function()
  local function batch10(k, w) return w:batch(10) end
  it("runs a key function that cannot be traced, with the same groups", function()
    local ds = G():group_by_window(function(x) return tide.constant(x:item() % 3, "int64") end, batch10,
      { window_size = 2 })
    assert.are.same(cases.group_by_window_2, values(ds))
  end)
  it("has reduce_func's element_spec", function()
    local ds = G():group_by_window(function(x) return x % 3 end, batch10, { window_size = 2 })
    assert.are.equal(tide.TensorSpec({ tide.None }, "int64"), ds.element_spec)
  end)
  it("checks its arguments", function()
    fails(function() G():group_by_window(function(x) return x:cast("int32") end, batch10, { window_size = 2 }) end,
      "group_by_window: key_func must return one int64 scalar")
    fails(function() G():group_by_window(function(x) return x % 2 end, batch10) end,
      "group_by_window: give exactly one of window_size and window_size_func")
    fails(function()
      G():group_by_window(function(x) return x % 2 end, batch10, { window_size = 2, window_size_func = function() end })
    end, "give exactly one of")
    fails(function() G():group_by_window(function(x) return x % 2 end, batch10, { window_size = 0 }) end,
      "group_by_window: window_size must be a whole number >= 1")
    fails(function() G():group_by_window(function(x) return x % 2 end, batch10, { size = 2 }) end,
      "group_by_window: unknown option 'size'")
    fails(function() G():group_by_window(function(x) return x % 2 end, function() return 1 end, { window_size = 2 }) end,
      "group_by_window: reduce_func must return a tide.data.Dataset, got number")
    fails(function() G():group_by_window(1, batch10, { window_size = 2 }) end,
      "group_by_window: key_func must be a function")
    fails(function()
      G():group_by_window(function(x) return x % 2 end, batch10, { window_size_func = function() return 0 end }):totable()
    end, "group_by_window: window_size_func must give a whole number >= 1, got 0 for key 1")
  end)
end)

describe("bucket_by_sequence_length", function()
  it("refuses an element past the last boundary with pad_to_bucket_boundary (TF: " ..
    fixture.errors.bucket_past_boundary .. ")", function()
    fails(function()
      S():bucket_by_sequence_length(length, { 3 }, { 2, 2 }, { pad_to_bucket_boundary = true }):totable()
    end, "bucket_by_sequence_length: with pad_to_bucket_boundary, elements must have a length < max(bucket_boundaries) = 3")
  end)
  it("pads string sequences with padding_values", function()
    local words = D.from_generator(function()
      local rows, i = { { "a" }, { "b", "c" }, { "d", "e", "f" } }, 0
      return function() i = i + 1; return rows[i] and tide.constant(rows[i]) end
    end, { output_signature = tide.TensorSpec({ tide.None }, "string") })
    local ds = words:bucket_by_sequence_length(length, { 2 }, { 2, 2 }, { padding_values = "<pad>" })
    -- bucket 1 fills first; bucket 0's one element comes out at the end
    assert.are.same({ { { "b", "c", "<pad>" }, { "d", "e", "f" } }, { { "a" } } }, values(ds))
  end)
  it("checks its arguments", function()
    fails(function() S():bucket_by_sequence_length(length, { 3 }, { 2 }) end,
      "bucket_by_sequence_length: bucket_batch_sizes must be a Lua list of 2 sizes", "got 1 entries")
    fails(function() S():bucket_by_sequence_length(length, { 3, 2 }, { 2, 2, 2 }) end,
      "bucket_by_sequence_length: bucket_boundaries must increase, got 2 after 3")
    fails(function() S():bucket_by_sequence_length(length, { 3 }, { 2, 0 }) end,
      "bucket_by_sequence_length: bucket_batch_sizes[2] must be a whole number >= 1")
    fails(function() S():bucket_by_sequence_length(function(x) return tide.constant(1.5) end, { 3 }, { 2, 2 }) end,
      "bucket_by_sequence_length: element_length_func must return one int32 or int64 scalar")
    fails(function() S():bucket_by_sequence_length(length, { 3 }, { 2, 2 }, { padded_shapes = { 2, 2 } }) end,
      "bucket_by_sequence_length: padded_shapes for component 0 must be a list of 1 sizes")
    fails(function() S():bucket_by_sequence_length(length, { 3 }, { 2, 2 }, { pad = true }) end,
      "bucket_by_sequence_length: unknown option 'pad'")
    fails(function() S():bucket_by_sequence_length(length, { 3 }, { 2, 2 }, { no_padding = "yes" }) end,
      "bucket_by_sequence_length: no_padding must be a boolean")
  end)
end)
