-- tests/spec/ops/sort_spec.lua — sort, argsort and top_k against hand-computed
-- values: directions, axes, stability, NaN placement, strided inputs, errors.
local lcg_step = require "lcg"
local tide = require "tide"
local h = require "helpers"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local ffi, C = binding.ffi, binding.C

local NAN = 0 / 0

local function fill(dt, shape, f)
  local t = convert.empty(dt, shape)
  local ctype = ({ [C.TIDE_FLOAT32] = "float*", [C.TIDE_FLOAT64] = "double*", [C.TIDE_INT32] = "int32_t*" })[dt]
  local p = ffi.cast(ctype, t.data)
  for i = 0, tonumber(t.nelem) - 1 do p[i] = f(i) end
  return t
end

local function T(x) return dispatch.run_view(C.TIDE_OP_TRANSPOSE, dispatch.attrs(), x) end

-- A deterministic pseudo-random sequence (LCG) of integers in [0, m).
local function lcg(seed, m)
  local s = seed
  return function()
    s = lcg_step(s)
    return s % m
  end
end

local x -- [[3, 1, 4, 1], [5, 9, 2, 6]]
before_each(function() x = tide.tensor({ { 3, 1, 4, 1 }, { 5, 9, 2, 6 } }, "float32") end)

describe("sort", function()
  it("sorts the last axis ascending by default", function()
    local s = tide.sort(x)
    assert.are.equal("float32", s.dtype)
    h.close(s, { { 1, 1, 3, 4 }, { 2, 5, 6, 9 } })
    h.close(x:sort(), { { 1, 1, 3, 4 }, { 2, 5, 6, 9 } })
  end)

  it("sorts descending and along other axes", function()
    h.close(tide.sort(x, -1, "DESCENDING"), { { 4, 3, 1, 1 }, { 9, 6, 5, 2 } })
    h.close(tide.sort(x, 0), { { 3, 1, 2, 1 }, { 5, 9, 4, 6 } })
    h.close(tide.sort(x, { axis = 0, direction = "DESCENDING" }), { { 5, 9, 4, 6 }, { 3, 1, 2, 1 } })
    local c = tide.tensor{ { { 3, 1 }, { 2, 2 } }, { { 0, 5 }, { 9, -1 } } } -- [2, 2, 2] int32
    h.close(tide.sort(c, 1), { { { 2, 1 }, { 3, 2 } }, { { 0, -1 }, { 9, 5 } } })
  end)

  it("sorts NaN above every number", function()
    local v = tide.tensor({ 2, NAN, -1, math.huge, NAN, 0 }, "float64")
    h.close(tide.sort(v), { -1, 0, 2, math.huge, NAN, NAN })
    h.close(tide.sort(v, -1, "DESCENDING"), { NAN, NAN, math.huge, 2, 0, -1 })
  end)

  it("sorts integer, float16 and strided inputs", function()
    h.close(tide.sort(tide.tensor{ 5, -3, 0, 7, -3 }), { -3, -3, 0, 5, 7 })
    h.close(tide.sort(tide.tensor({ 200, 3, 100 }):cast("uint8")), { 3, 100, 200 })
    local hs = tide.sort(tide.tensor({ 1.5, -0.5, 0.25 }, "float16"))
    assert.are.equal("float16", hs.dtype)
    h.close(hs, { -0.5, 0.25, 1.5 })
    h.close(tide.sort(T(x)), { { 3, 5 }, { 1, 9 }, { 2, 4 }, { 1, 6 } })
    h.close(tide.sort(x:slice{ {}, { nil, nil, 2 } }, -1, "DESCENDING"), { { 4, 3 }, { 5, 2 } })
  end)

  it("matches table.sort on a long random row", function()
    local n = 5000
    local r = lcg(7, 1000)
    local vals = {}
    for i = 1, n do vals[i] = r() end
    local t = fill(C.TIDE_INT32, { n }, function(i) return vals[i + 1] end)
    table.sort(vals)
    assert.are.same(vals, tide.sort(t):totable())
  end)

  it("rejects bad axes, directions, bool input and nil", function()
    h.errors("sort: axis 2 is out of range for a tensor of rank 2", tide.sort, x, 2)
    h.errors("sort: axis -1 is out of range for a tensor of rank 0", tide.sort, tide.tensor(1.0))
    h.errors("direction must be \"ASCENDING\" or \"DESCENDING\", got descending", tide.sort, x, -1, "descending")
    h.errors("must be a numeric tensor", tide.sort, tide.tensor{ true, false })
    h.errors("sort: argument 1 must be a tensor", tide.sort, nil)
  end)
end)

describe("argsort", function()
  it("gives int32 indices that sort the values", function()
    local a = tide.argsort(x)
    assert.are.equal("int32", a.dtype)
    h.close(a, { { 1, 3, 0, 2 }, { 2, 0, 3, 1 } })
    h.close(x:argsort{ axis = 0 }, { { 0, 0, 1, 0 }, { 1, 1, 0, 1 } })
  end)

  it("is stable in both directions (equal values keep index order)", function()
    local v = tide.tensor{ 2, 1, 2, 1, 2 }
    h.close(tide.argsort(v), { 1, 3, 0, 2, 4 })
    h.close(tide.argsort(v, -1, "DESCENDING"), { 0, 2, 4, 1, 3 })
    h.close(tide.argsort(v, { direction = "DESCENDING", stable = true }), { 0, 2, 4, 1, 3 })
  end)

  it("is stable over long rows (merges across runs)", function()
    local n = 3001
    local r = lcg(3, 10)
    local vals = {}
    for i = 1, n do vals[i] = r() end
    local t = fill(C.TIDE_FLOAT32, { n }, function(i) return vals[i + 1] end)
    local order = {}
    for i = 1, n do order[i] = i end
    table.sort(order, function(a, b) return vals[a] > vals[b] or (vals[a] == vals[b] and a < b) end)
    local got = tide.argsort(t, -1, "DESCENDING"):totable()
    for i = 1, n do assert.are.equal(order[i] - 1, got[i]) end
  end)

  it("places NaN last ascending and first descending", function()
    local v = tide.tensor({ NAN, 1, NAN, 0 }, "float32")
    h.close(tide.argsort(v), { 3, 1, 0, 2 })
    h.close(tide.argsort(v, -1, "DESCENDING"), { 0, 2, 1, 3 })
  end)

  it("rejects bad directions and axes", function()
    h.errors("argsort: direction must be", tide.argsort, x, -1, "UP")
    h.errors("argsort: axis 5 is out of range", tide.argsort, x, 5)
    h.errors("stable must be true or false", tide.argsort, x, -1, "ASCENDING", "yes")
  end)
end)

describe("top_k", function()
  it("returns the k largest values and their int32 indices, largest first", function()
    local v, i = tide.top_k(x, 2)
    assert.are.same({ 2, 2 }, v.shape:as_list())
    h.close(v, { { 4, 3 }, { 9, 6 } })
    assert.are.equal("int32", i.dtype)
    h.close(i, { { 2, 0 }, { 1, 3 } })
    local v1, i1 = tide.top_k(tide.tensor{ 1, 7, 3 })
    h.close(v1, { 7 })
    h.close(i1, { 1 })
    local v2, i2 = x:top_k{ k = 3 }
    h.close(v2, { { 4, 3, 1 }, { 9, 6, 5 } })
    h.close(i2, { { 2, 0, 1 }, { 1, 3, 0 } })
  end)

  it("breaks ties toward the lower index, as TF", function()
    local v, i = tide.top_k(tide.tensor{ 1, 3, 3, 2, 3 }, 2)
    h.close(v, { 3, 3 })
    h.close(i, { 1, 2 })
    local _, j = tide.top_k(tide.tensor{ 5, 5, 5, 5 }, 4)
    h.close(j, { 0, 1, 2, 3 })
  end)

  it("handles k = 0 and k = n", function()
    local v, i = tide.top_k(x, 0)
    assert.are.same({ 2, 0 }, v.shape:as_list())
    assert.are.same({ 2, 0 }, i.shape:as_list())
    local w, j = tide.top_k(x, 4)
    h.close(w, { { 4, 3, 1, 1 }, { 9, 6, 5, 2 } })
    h.close(j, { { 2, 0, 1, 3 }, { 1, 3, 0, 2 } })
  end)

  it("selects with a heap on long rows and matches a full sort", function()
    local n, k = 4000, 7
    local r = lcg(11, 50)
    local vals = {}
    for a = 1, 2 * n do vals[a] = r() end
    local t = fill(C.TIDE_FLOAT32, { 2, n }, function(a) return vals[a + 1] end)
    local v, i = tide.top_k(t, k)
    local vt, it_ = v:totable(), i:totable()
    for row = 0, 1 do
      local order = {}
      for a = 1, n do order[a] = a end
      local function val(a) return vals[row * n + a] end
      table.sort(order, function(a, b) return val(a) > val(b) or (val(a) == val(b) and a < b) end)
      for m = 1, k do
        assert.are.equal(val(order[m]), vt[row + 1][m])
        assert.are.equal(order[m] - 1, it_[row + 1][m])
      end
    end
  end)

  it("ranks NaN first and works on ints, halves and strided rows", function()
    local v, i = tide.top_k(tide.tensor({ 1, NAN, 5 }, "float32"), 2)
    h.close(v, { NAN, 5 })
    h.close(i, { 1, 2 })
    local vi = tide.top_k(tide.tensor{ -4, 8, 0 }, 2)
    assert.are.equal("int32", vi.dtype)
    h.close(vi, { 8, 0 })
    local vh = tide.top_k(tide.tensor({ 0.5, 2, 1 }, "bfloat16"), 1)
    assert.are.equal("bfloat16", vh.dtype)
    h.close(vh, { 2 })
    local vt, it_ = tide.top_k(T(x), 1) -- rows {3,5} {1,9} {4,2} {1,6}
    h.close(vt, { { 5 }, { 9 }, { 4 }, { 6 } })
    h.close(it_, { { 1 }, { 1 }, { 0 }, { 1 } })
  end)

  it("gives int64 indices on request", function()
    local _, i = tide.top_k(x, 1, true, "int64")
    assert.are.equal("int64", i.dtype)
    h.close(i, { { 2 }, { 1 } })
    h.errors("top_k: index_type must be int32 or int64, got float32", tide.top_k, x, 1, true, "float32")
  end)

  it("rejects k out of range, scalars, bool input and nil", function()
    h.errors("top_k: k = 5 must be between 0 and the last dimension 4 (shape [2, 4])", tide.top_k, x, 5)
    h.errors("top_k: k = -1 must be between 0", tide.top_k, x, -1)
    h.errors("top_k: input must have rank 1 or more", tide.top_k, tide.tensor(1.0))
    h.errors("k must be an integer", tide.top_k, x, 1.5)
    h.errors("must be a numeric tensor", tide.top_k, tide.tensor{ true })
    h.errors("top_k: argument 1 must be a tensor", tide.top_k, nil)
  end)
end)
