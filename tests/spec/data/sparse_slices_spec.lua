-- tests/spec/data/sparse_slices_spec.lua — from_tensor_slices of SparseTensors
-- as one C source (kernels/data/sparse_slices.c): one stage per pass, large
-- and empty inputs, empty rows, the stages above it, its errors and its C API.
local tide = require "tide"
local binding = require "tide.binding"
local c_engine = require "tide.data.c_engine"
local D = tide.data.Dataset
local P = tide.profiler
local ffi, C = binding.ffi, binding.C

local function plain(s)
  return { indices = s.indices:totable(), values = s.values:totable(), dense_shape = s.dense_shape:totable() }
end

local function rows_of(ds)
  local out = {}
  for e in ds:iter() do out[#out + 1] = plain(e) end
  return out
end

-- A [rows, width] float32 matrix with values where (r * 7 + c) % every == 0
-- (every 5th row empty), and its SparseTensor (from_dense: row-major indices).
local function matrix(rows, width, every)
  local m = {}
  for r = 0, rows - 1 do
    local row = {}
    for c = 0, width - 1 do
      row[c + 1] = (r % 5 ~= 4 and (r * 7 + c) % every == 0) and (r * width + c + 1) or 0
    end
    m[r + 1] = row
  end
  local dense = tide.tensor(m, "float32")
  return m, tide.sparse.from_dense(dense)
end

-- The data stages' calls in the last profiler session, by name.
local function stage_calls()
  local calls = {}
  for _, r in ipairs(P.summary { category = "data", print = false }) do calls[r.name] = r.calls end
  return calls
end

describe("from_tensor_slices of a SparseTensor: one C source", function()
  it("is one stage that the C engine runs, pulled once a row (no concatenation of per-row sources)", function()
    local m, sp = matrix(6, 5, 3)
    local ds = D.from_tensor_slices(sp)
    assert.equal("sparse_slices", ds.kind)
    assert.is_true(c_engine.supports(ds))
    assert.equal(6, ds:cardinality())
    P.start()
    local got = {}
    for e in ds:iter { prefetch = false } do got[#got + 1] = tide.sparse.to_dense(e):totable() end
    P.stop()
    assert.same(m, got)
    local calls = stage_calls()
    assert.equal(7, calls.from_tensor_slices) -- 6 rows and the end
    assert.is_nil(calls.concatenate)
  end)

  it("builds 100k rows and reads them back (each row its own entries)", function()
    local n = 100000
    local flat, vals = {}, {}
    for r = 0, n - 1 do
      for k = 0, r % 3 - 1 do -- 0, 1 or 2 entries: a third of the rows empty
        flat[#flat + 1] = r
        flat[#flat + 1] = k * 2
        vals[#vals + 1] = r * 10 + k
      end
    end
    local sp = tide.SparseTensor(tide.tensor(flat, "int64"):reshape { #vals, 2 }, tide.tensor(vals, "int32"), { n, 4 })
    local ds = D.from_tensor_slices(sp)
    assert.equal(n, ds:cardinality())
    local r, bad = 0, nil
    for e in ds:iter() do
      local want = r % 3
      if e.values.shape[1] ~= want or e.indices.shape[1] ~= want or e.indices.shape[2] ~= 1 then bad = r; break end
      if want > 0 and (e.values[want - 1]:item() ~= r * 10 + want - 1 or e.indices:totable()[want][1] ~= (want - 1) * 2)
      then bad = r; break end
      r = r + 1
    end
    assert.is_nil(bad)
    assert.equal(n, r)
    -- batched in C: the batches hold every value once, in order
    local total, first = 0, nil
    for b in ds:batch(1000):iter() do
      total = total + b.values.shape[1]
      first = first or plain(b)
    end
    assert.equal(#vals, total)
    assert.same({ 1000, 4 }, first.dense_shape)
    assert.same({ { 1, 0 }, { 2, 0 }, { 2, 2 } }, { first.indices[1], first.indices[2], first.indices[3] })
  end)

  it("empty rows are SparseTensors with no entries and the row's dense shape (as TF)", function()
    -- what TF 2.21 gives for this value (checked by hand): rows 0, 2 and 4 have indices of shape (0, 1)
    local sp = tide.SparseTensor({ { 1, 0 }, { 1, 2 }, { 3, 1 } }, tide.tensor({ 1, 2, 3 }, "float32"), { 5, 3 })
    local rows = D.from_tensor_slices(sp):totable()
    assert.equal(5, #rows)
    for _, r in ipairs { 1, 3, 5 } do
      assert.same({ 0, 1 }, rows[r].indices.shape)
      assert.same({ 0 }, rows[r].values.shape)
      assert.equal("float32", rows[r].values.dtype)
      assert.same({ 3 }, rows[r].dense_shape:totable())
    end
    assert.same({ indices = { { 0 }, { 2 } }, values = { 1, 2 }, dense_shape = { 3 } }, plain(rows[2]))
    assert.same({ indices = { { 1 } }, values = { 3 }, dense_shape = { 3 } }, plain(rows[4]))
    -- batch(2) as TF: [[1,0],[1,2]] [1,2] [2,3]; [[1,1]] [3] [2,3]; [] [] [1,3]
    local b = rows_of(D.from_tensor_slices(sp):batch(2))
    assert.same({ { 1, 0 }, { 1, 2 } }, b[1].indices)
    assert.same({ 2, 3 }, b[1].dense_shape)
    assert.same({ { 1, 1 } }, b[2].indices)
    assert.same({}, b[3].values)
    assert.same({ 1, 3 }, b[3].dense_shape)
  end)

  it("a SparseTensor with no entries, or no rows", function()
    local none = tide.SparseTensor(tide.zeros({ 0, 2 }, "int64"), tide.tensor({}, "float32"), { 3, 4 })
    local rows = D.from_tensor_slices(none):totable()
    assert.equal(3, #rows)
    for _, r in ipairs(rows) do
      assert.same({ 0, 1 }, r.indices.shape)
      assert.same({ 4 }, r.dense_shape:totable())
    end
    local empty = D.from_tensor_slices(tide.SparseTensor(tide.zeros({ 0, 3 }, "int64"), tide.tensor({}, "int32"),
      { 0, 2, 5 }))
    assert.equal(0, empty:cardinality())
    assert.same({}, empty:totable())
    assert.same({}, empty:batch(4):totable())
    assert.equal("SparseTensorSpec(shape=(2, 5), dtype=int32)", tostring(empty.element_spec))
  end)

  it("rank 3, string values, rank 1 (refused, as TF), and dense components beside it", function()
    local r3 = tide.SparseTensor({ { 0, 1, 1 }, { 2, 0, 3 } }, tide.tensor { "a", "b" }, { 3, 2, 4 })
    -- as TF: (1, 2) [[1,1]] ['a'] [2,4]; (0, 2) [] [] [2,4]; (1, 2) [[0,3]] ['b'] [2,4]
    local got = rows_of(D.from_tensor_slices(r3))
    assert.same({ indices = { { 1, 1 } }, values = { "a" }, dense_shape = { 2, 4 } }, got[1])
    assert.same({ indices = {}, values = {}, dense_shape = { 2, 4 } }, got[2])
    assert.same({ indices = { { 0, 3 } }, values = { "b" }, dense_shape = { 2, 4 } }, got[3])
    -- rank 1: refused, as TF refuses it ("Rank of input SparseTensor should be > 1")
    assert.error_matches(function()
      D.from_tensor_slices(tide.SparseTensor({ { 0 }, { 2 } }, tide.tensor({ 7, 8 }, "int64"), { 3 }))
    end, "from_tensor_slices: a SparseTensor of rank 1 cannot be sliced: its rows would be SparseTensors of rank 0",
      nil, true)
    -- dense components on either side, and two SparseTensors
    local ds = D.from_tensor_slices { a = tide.tensor { 10, 20, 30 }, s = r3, t = tide.sparse.from_dense(tide.eye(3)),
      z = tide.tensor { { 1, 2 }, { 3, 4 }, { 5, 6 } } }
    local list = ds:totable()
    assert.equal(30, list[3].a:item())
    assert.same({ 5, 6 }, list[3].z:totable())
    assert.same(got[3], plain(list[3].s))
    assert.same({ 0, 0, 1 }, tide.sparse.to_dense(list[3].t):totable())
  end)

  it("strided inputs are read as their values, and the dataset outlives its tensors", function()
    local ix = tide.tensor({ { 0, 9, 1 }, { 1, 9, 0 }, { 1, 9, 2 } }, "int64")
    local vals = tide.tensor({ 1, -1, 2, -1, 3, -1 }, "float32")
    local sp = tide.SparseTensor(ix:slice { {}, { 0, 3, 2 } }, vals:slice { { 0, 6, 2 } }, { 2, 3 })
    local ds = D.from_tensor_slices(sp)
    sp, ix, vals = nil, nil, nil
    collectgarbage()
    collectgarbage()
    assert.same({ { indices = { { 1 } }, values = { 1 }, dense_shape = { 3 } },
      { indices = { { 0 }, { 2 } }, values = { 2, 3 }, dense_shape = { 3 } } }, rows_of(ds))
  end)
end)

describe("from_tensor_slices of a SparseTensor under other stages", function()
  local m, sp = matrix(40, 6, 4)
  local function dense_rows(ds)
    local out = {}
    for e, i in ds:iter() do out[#out + 1] = { i:item(), tide.sparse.to_dense(e):totable() } end
    return out
  end

  it("shuffle (seeded, reshuffled each pass), batch, prefetch and a parallel traced map above it, in C", function()
    local ds = D.zip { D.from_tensor_slices(sp), D.range(40) }
    local shuffled = ds:shuffle(16, { seed = 3 })
    local a, b = dense_rows(shuffled), dense_rows(shuffled)
    assert.equal(40, #a)
    assert.are_not.same(a, b) -- a new order each pass
    local seen = {}
    for _, p in ipairs(a) do
      assert.same(m[p[1] + 1], p[2])
      seen[p[1]] = true
    end
    for r = 0, 39 do assert.is_true(seen[r]) end
    for _, par in ipairs { 2, tide.data.AUTOTUNE } do
      local mapped = D.from_tensor_slices(sp)
        :map(function(s) return tide.SparseTensor(s.indices, s.values * 2, s.dense_shape) end, { parallel = par })
        :batch(8):prefetch(2)
      assert.is_true(c_engine.supports(mapped))
      local r = 0
      for batch in mapped:iter() do
        local d = tide.sparse.to_dense(batch):totable()
        assert.same(8, #d)
        for i = 1, 8 do
          for c = 1, 6 do assert.equal(m[r + i][c] * 2, d[i][c]) end
        end
        r = r + 8
      end
      assert.equal(40, r)
    end
  end)

  it("an untraced map above it reads it through the Lua engine", function()
    local ds
    local real = io.stderr
    io.stderr = { write = function() end } -- (the note that the map runs in Lua)
    local ok, err = pcall(function()
      ds = D.from_tensor_slices(sp):map(function(s) return s.values:totable()[1] or -1 end)
    end)
    io.stderr = real
    assert(ok, err)
    assert.is_false(c_engine.supports(ds))
    local got = {}
    for v in ds:iter() do got[#got + 1] = v:item() end
    for r = 1, 40 do
      local first = -1
      for c = 1, 6 do if m[r][c] ~= 0 then first = m[r][c]; break end end
      assert.equal(first, got[r])
    end
  end)

  it("as the dataset of an interleave function, copied per element in C", function()
    local small = tide.SparseTensor({ { 0, 0 }, { 1, 2 } }, tide.tensor({ 1, 2 }, "float32"), { 2, 4 })
    local ds = D.range(3):interleave(function() return D.from_tensor_slices(small) end, { cycle_length = 2 })
    assert.truthy(ds.captured)
    local got = {}
    for e in ds:iter() do got[#got + 1] = e.values:totable()[1] end
    assert.same({ 1, 1, 2, 2, 1, 2 }, got)
  end)
end)

describe("from_tensor_slices of a SparseTensor: errors, at construction", function()
  local function fails(want, fn)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    err = tostring(err)
    assert.truthy(err:find("from_tensor_slices: " .. want, 1, true), err)
  end

  it("indices out of order or repeated (TF's words), an index outside the rows, rank 0, first dims", function()
    fails("indices[2] = [0,3] is out of order. Many sparse ops require sorted indices. Use tide.sparse.reorder to " ..
      "create a correctly ordered copy", function()
        D.from_tensor_slices(tide.SparseTensor({ { 0, 1 }, { 1, 0 }, { 0, 3 } }, { 1, 2, 3 }, { 2, 4 }))
      end)
    fails("indices[1] = [1,2] is out of order", function() -- the second dim counts too
      D.from_tensor_slices(tide.SparseTensor({ { 1, 3 }, { 1, 2 } }, { 1, 2 }, { 2, 4 }))
    end)
    fails("indices[2] = [1,1] is repeated", function()
      D.from_tensor_slices(tide.SparseTensor({ { 0, 0 }, { 1, 1 }, { 1, 1 } }, { 1, 2, 3 }, { 2, 4 }))
    end)
    fails("the SparseTensor's index 1 has 2 in dim 0, outside its dense shape's 2", function()
      D.from_tensor_slices(tide.SparseTensor({ { 1, 0 }, { 2, 0 } }, { 1, 2 }, { 2, 4 }))
    end)
    fails("the SparseTensor's index 0 has -1 in dim 0, outside its dense shape's 2", function()
      D.from_tensor_slices(tide.SparseTensor({ { -1, 0 } }, { 1 }, { 2, 4 }))
    end)
    fails("a SparseTensor of rank 0 has no first dimension to slice", function()
      D.from_tensor_slices(tide.SparseTensor({ {} }, { 1 }, tide.tensor({}, "int64")))
    end)
    local sp = tide.SparseTensor({ { 0, 0 } }, { 1 }, { 3, 4 })
    fails("the components have different first dimensions: 3 and 2", function()
      D.from_tensor_slices { sp, tide.tensor { 1, 2 } }
    end)
    fails("the components have different first dimensions: 3 and 4", function()
      D.from_tensor_slices { tide.tensor { 1, 2, 3 }, sp, tide.SparseTensor({ { 0, 0 } }, { 1 }, { 4, 4 }) }
    end)
    fails("component 4 is a scalar", function() D.from_tensor_slices { sp, tide.tensor(1) } end)
  end)

  it("the C constructor checks what it is given", function()
    local function build(tensors, roles)
      local n = #tensors
      local arr = ffi.new("const tide_tensor *[?]", n)
      for i, t in ipairs(tensors) do arr[i - 1] = t end
      local h = C.tide_dataset_sparse_slices(n, arr, roles and ffi.new("unsigned char[?]", n, roles) or nil)
      if h == nil then return ffi.string(C.tide_last_error()) end
      local card = tonumber(C.tide_dataset_cardinality(h))
      C.tide_dataset_free(h)
      return card
    end
    local ix, vals, shape = tide.tensor({ { 0, 1 }, { 2, 0 } }, "int64"), tide.tensor { 5, 6 }, tide.tensor({ 3, 2 }, "int64")
    assert.equal(3, build({ ix, vals, shape }, { 1, 0, 0 }))
    assert.equal(2, build({ ix, vals }, nil)) -- no roles: the dense rows of each
    assert.equal(2, build({ ix, vals, shape }, { 0, 0, 0 })) -- (no SparseTensor marked: the same)
    assert.truthy(build({ ix, vals }, { 1, 0 }):find("component 0 marks a SparseTensor's indices, but its values and " ..
      "dense_shape (components 1 and 2) are missing or marked too", 1, true))
    assert.truthy(build({ ix:cast("int32"), vals, shape }, { 1, 0, 0 }):find("from_tensor_slices: components 0-2 are " ..
      "not a SparseTensor: indices int32 [2, 2]", 1, true))
    assert.truthy(build({ ix, tide.tensor { 1, 2, 3 }, shape }, { 1, 0, 0 }):find("not a SparseTensor", 1, true))
    assert.truthy(build({ ix, vals, tide.tensor({ -3, 2 }, "int64") }, { 1, 0, 0 }):find(
      "from_tensor_slices: components 0-2: a SparseTensor's dense shape has -3 in dim 0", 1, true))
    assert.truthy(build({ ix, vals, shape, tide.tensor(1) }, { 1, 0, 0, 0 }):find(
      "from_tensor_slices: component 3 is a scalar", 1, true))
  end)
end)
