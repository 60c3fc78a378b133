-- tests/spec/sparse/ops_spec.lua — tide.sparse's ops (stdlib/tide/sparse/ops.lua and math.lua) against TF 2.21's
-- tf.sparse (tests/fixtures/sparse_ops/cases.lua, written by gen.py beside it), gradients of
-- sparse_dense_matmul and softmax, and their errors.
local tide = require "tide"
local gc = require "gradcheck"
local F = dofile("tests/fixtures/sparse_ops/cases.lua")

local sp = tide.sparse
local S = tide.SparseTensor
local function A() return S({ { 0, 0 }, { 0, 2 }, { 1, 1 }, { 2, 0 } }, tide.tensor({ 1, -2, 3, 4 }, "float32"), { 3, 3 }) end
local function B() return S({ { 0, 0 }, { 1, 0 }, { 2, 0 }, { 2, 2 } }, tide.tensor({ 5, -1, -4, 2 }, "float32"), { 3, 3 }) end
local function U() return S({ { 1, 0 }, { 0, 1 } }, tide.tensor({ 7, 8 }, "float32"), { 2, 3 }) end
local function N() return S({ { 0, 0 }, { 1, 2 } }, tide.tensor({ -3, -1 }, "float32"), { 2, 3 }) end
local function E() return S({ { 0, 1 }, { 2, 0 } }, tide.tensor({ 1, 2 }, "float32"), { 4, 3 }) end
local function R3()
  return S({ { 0, 0, 1 }, { 0, 1, 0 }, { 1, 0, 2 }, { 1, 1, 1 } }, tide.tensor({ 1, 2, 3, 4 }, "float32"), { 2, 2, 3 })
end
local function I() return S({ { 0, 0 }, { 0, 1 }, { 1, 0 }, { 2, 2 } }, tide.tensor { 0, 3, 1, 2 }, { 3, 4 }) end
local D = tide.reshape(tide.range(0, 12), { 3, 4 }):cast("float32") / 4
local D3 = D:slice { {}, { 0, 3 } }

-- compare a result (SparseTensor or tensor) with the fixture's value
local function same(what, got, want)
  if type(want) == "table" and want.sparse then
    assert(tide.sparse.is_sparse(got), what .. ": expected a SparseTensor")
    assert.are.same(want.sparse[1], got.indices:totable(), what .. " indices")
    local gv, wv = got.values:totable(), want.sparse[2]
    assert.are.equal(#wv, #gv, what .. " value count")
    for i, w in ipairs(wv) do
      if type(w) == "number" then assert(math.abs(gv[i] - w) < 1e-5, what .. " value " .. i .. ": " .. gv[i] .. " vs " .. w)
      else assert.are.equal(w, gv[i], what .. " value " .. i) end
    end
    assert.are.same(want.sparse[3], got.dense_shape:totable(), what .. " dense_shape")
    return
  end
  local g = tide.is_tensor(got) and got:totable() or got
  local function walk(x, y, path)
    if type(y) == "table" then
      assert.are.equal(#y, #x, what .. path .. " length")
      for i = 1, #y do walk(x[i], y[i], path .. "[" .. i .. "]") end
    elseif type(y) == "number" then assert(math.abs(x - y) < 1e-5, what .. path .. ": " .. tostring(x) .. " vs " .. y)
    else assert.are.equal(y, x, what .. path) end
  end
  walk(g, want, "")
end
local function check(name, ...)
  local got = { ... }
  for i, want in ipairs(F[name]) do same(name .. " result " .. i, got[i], want) end
end

describe("tide.sparse ops", function()
  it("give TF's values", function()
    check("add_sparse", sp.add(A(), B()))
    check("add_threshold", sp.add(A(), B(), 1.5))
    check("add_dense", sp.add(A(), D3))
    check("concat_0", sp.concat(0, { A(), B() }))
    check("concat_1", sp.concat(1, { A(), B() }))
    check("concat_expand", sp.concat(1, { U(), E() }, true))
    check("expand_dims_0", sp.expand_dims(A(), 0))
    check("expand_dims_neg", sp.expand_dims(A(), -1))
    check("eye", sp.eye(3))
    check("eye_rect", sp.eye(2, 4, "int32"))
    check("fill_empty_rows", sp.fill_empty_rows(E(), -1))
    check("map_values", sp.map_values(tide.multiply, A(), 2))
    check("map_values_two", sp.map_values(tide.add, A(), A()))
    check("maximum", sp.maximum(A(), B()))
    check("minimum", sp.minimum(A(), B()))
    check("reduce_max_all", sp.reduce_max(N()))
    check("reduce_max_1", sp.reduce_max(N(), 1))
    check("reduce_max_0", sp.reduce_max(N(), 0))
    check("reduce_max_keep_sparse", sp.reduce_max(A(), 1, true, true))
    check("reduce_sum_all", sp.reduce_sum(A()))
    check("reduce_sum_0", sp.reduce_sum(A(), 0))
    check("reduce_sum_r3", sp.reduce_sum(R3(), { 0, 2 }))
    check("reduce_sum_sparse", sp.reduce_sum(A(), { axis = 1, output_is_sparse = true }))
    check("reorder", sp.reorder(U()))
    check("reset_shape", sp.reset_shape(E()))
    check("reset_shape_given", sp.reset_shape(E(), { 5, 4 }))
    check("reshape", sp.reshape(A(), { 9 }))
    check("reshape_infer", sp.reshape(R3(), { -1, 3 }))
    check("retain", sp.retain(A(), { true, false, true, false }))
    local MV, MI = tide.tensor { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }:cast("float32"), tide.tensor { 12, 26, 12, 37 }
    for _, c in ipairs { { "mask", { 12, 45 } }, { "mask_none", { 99 } }, { "mask_all", { 37, 26, 12 } } } do
      local r = sp.mask({ values = MV, indices = MI, dense_shape = tide.tensor { 40, 2 } }, tide.tensor(c[2]))
      check(c[1], r.values, r.indices, r.dense_shape)
    end
    check("segment_sum", sp.segment_sum(D, { 0, 2, 1, 2 }, { 0, 0, 1, 1 }))
    check("segment_mean", sp.segment_mean(D, { 0, 2, 1 }, { 0, 0, 2 }))
    check("segment_sqrt_n", sp.segment_sqrt_n(D, { 0, 1, 2 }, { 0, 0, 0 }, 2))
    check("slice", sp.slice(A(), { 0, 1 }, { 2, 2 }))
    check("slice_edge", sp.slice(R3(), { 1, 0, 1 }, { 5, 5, 5 }))
    check("softmax", sp.softmax(A()))
    check("softmax_r3", sp.softmax(R3()))
    check("sdmm", sp.sparse_dense_matmul(A(), tide.transpose(D3)))
    check("sdmm_adj_a", sp.sparse_dense_matmul(A(), D3, true))
    check("sdmm_adj_b", sp.sparse_dense_matmul(A(), D3, { adjoint_b = true }))
    check("split_1", unpack(sp.split(A(), 3, 1)))
    check("split_0_uneven", unpack(sp.split { sp_input = E(), num_split = 3, axis = 0 }))
    check("to_indicator", sp.to_indicator(I(), 4))
    check("transpose", sp.transpose(A()))
    check("transpose_perm", sp.transpose(R3(), { 2, 0, 1 }))
    check("bincount", sp.bincount(I()))
    check("bincount_rows", sp.bincount(I(), { axis = -1, minlength = 4 }))
    check("bincount_binary", sp.bincount(I(), { axis = -1, binary_output = true }))
    check("bincount_weights", sp.bincount(I(), { weights = S(I().indices, tide.tensor({ 0.5, 1, 2, 4 }, "float32"),
      I().dense_shape) }))
    check("cross", sp.cross { S({ { 0, 0 }, { 1, 0 }, { 1, 1 } }, tide.tensor({ "a", "b", "c" }, "string"), { 2, 2 }),
      tide.tensor({ { "d" }, { "e" } }, "string") })
    local _, sv = sp.sampled_addmm(tide.tensor { { 0, 0 }, { 1, 2 } }, tide.tensor({ 1, 2 }, "float32"), { 2, 3 },
      tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), tide.tensor({ { 1, 0, 2 }, { 0, 1, 1 } }, "float32"),
      { beta = 0.5, alpha = 2 })
    check("sampled_addmm", sv)
    local r8 = tide.reshape(tide.range(0, 8), { 2, 2, 2 }):cast("float32")
    local _, bv = sp.sampled_addmm(tide.tensor { { { 0, 1 } }, { { 1, 0 } } }, tide.tensor({ { 1 }, { 2 } }, "float32"),
      { { 2, 2 }, { 2, 2 } }, r8, r8)
    check("sampled_addmm_batched", bv)
    check("cross_sep", sp.cross({ tide.tensor({ { "x", "y" } }, "string"), tide.tensor({ { "1", "2" } }, "string") },
      { separator = "-" }))
  end)

  it("differentiates sparse_dense_matmul in the values and the dense operand (TF's gradients)", function()
    local a = A()
    local vals, dense = a.values, tide.transpose(D3)
    local tape = tide.GradientTape()
    tape:watch(vals)
    tape:watch(dense)
    local y = tape:run(function()
      local out = sp.sparse_dense_matmul(S(a.indices, vals, a.dense_shape), dense)
      return tide.reduce_sum(out * out)
    end)
    local gv, gd = unpack(tape:gradient(y, { vals, dense }))
    same("grad values", gv, F.sdmm_grad[1])
    same("grad dense", gd, F.sdmm_grad[2])
    -- float64 finite differences (values and dense; softmax's values too)
    local idx = tide.tensor({ { 0, 1 }, { 1, 0 }, { 1, 2 }, { 2, 2 } }, "int64")
    local v64, d64 = gc.random({ 4 }, -1, 1, 61), gc.random({ 3, 2 }, -1, 1, 62)
    gc.check(function(v, d) return sp.sparse_dense_matmul(S(idx, v, { 3, 3 }), d) end, { v64, d64 }, { none = false })
    gc.check(function(v) return sp.softmax(S(idx, v, { 3, 3 })).values end, { v64 }, { none = false })
    gc.check(function(v) return sp.add(S(idx, v, { 3, 3 }), S(idx, v * 2, { 3, 3 })).values end, { v64 },
      { none = false })
    gc.check(function(d) return sp.segment_mean(d, { 0, 2, 1 }, { 0, 0, 1 }) end, { d64 }, { none = false })
    local m1, m2 = gc.random({ 3, 2 }, -1, 1, 63), gc.random({ 2, 3 }, -1, 1, 64)
    gc.check(function(v, a, b)
      local _, out = sp.sampled_addmm(idx, v, { 3, 3 }, a, b, { beta = 0.5, alpha = 2 })
      return out
    end, { v64, m1, m2 }, { none = false })
  end)

  it("names the op and the argument in its errors", function()
    local cases = {
      { function() sp.add(A(), 5) end, "tide.sparse.add: b must be a tide.SparseTensor, got number" },
      { function() sp.add(A(), S({ { 0, 0 } }, tide.tensor({ 1 }, "float32"), { 2, 2 })) end,
        "tide.sparse.add: the dense shapes differ: [3, 3] and [2, 2]" },
      { function() sp.concat(0, {}) end, "tide.sparse.concat: sp_inputs must be a non-empty list" },
      { function() sp.concat(2, { A() }) end, "tide.sparse.concat: axis 2 out of range for rank 2" },
      { function() sp.concat(1, { A(), U() }) end, "tide.sparse.concat: dim 0 differs between the inputs (3 and 2)" },
      { function() sp.expand_dims(A(), 3) end, "tide.sparse.expand_dims: axis 3 out of range for rank 2" },
      { function() sp.eye(-1) end, "tide.sparse.eye: num_rows and num_columns must be whole numbers >= 0" },
      { function() sp.fill_empty_rows(D, 0) end, "tide.sparse.fill_empty_rows: sp_input must be a tide.SparseTensor, got a dense tensor" },
      { function() sp.map_values(nil, A()) end, "tide.sparse.map_values: op must be a function" },
      { function() sp.map_values(tide.add, A(), B()) end, "tide.sparse.map_values: the SparseTensor arguments must have the same indices" },
      { function() sp.map_values(tide.add, D, D) end, "tide.sparse.map_values: no SparseTensor among the arguments" },
      { function() sp.maximum(A(), D) end, "tide.sparse.maximum: sp_b must be a tide.SparseTensor" },
      { function() sp.minimum(nil, A()) end, "tide.sparse.minimum: sp_a must be a tide.SparseTensor" },
      { function() sp.reduce_max(A(), 2) end, "tide.sparse.reduce_max: axis 2 out of range for rank 2" },
      { function() sp.reduce_sum(A(), -3) end, "tide.sparse.reduce_sum: axis -3 out of range for rank 2" },
      { function() sp.reset_shape(E(), { 1, 1 }) end, "tide.sparse.reset_shape: new_shape's dim 0 (1) is smaller than the indices need (3)" },
      { function() sp.reshape(A(), { 4, -1 }) end, "tide.sparse.reshape: cannot reshape 9 elements into [4, -1]" },
      { function() sp.reshape(A(), { -1, -1 }) end, "tide.sparse.reshape: at most one dim may be -1" },
      { function() sp.retain(A(), { true }) end, "tide.sparse.retain: to_retain must hold 4 booleans (one per value)" },
      { function() sp.mask(A(), tide.tensor { 1 }) end, "tide.sparse.mask: a must be IndexedSlices, a table {values =, indices =, dense_shape =}" },
      { function() sp.mask({ values = D, indices = tide.tensor { 0, 1 } }, tide.tensor { 1 }) end,
        "tide.sparse.mask: values must have one slice per index (2), got shape (3, 4)" },
      { function() sp.mask({ values = D, indices = tide.tensor { 0, 1, 2 } }, tide.tensor({ 1 }, "int64")) end,
        "tide.sparse.mask: mask_indices must have the indices' dtype int32, got int64" },
      { function() sp.mask({ values = D, indices = tide.tensor { 0.5, 1, 2 } }, tide.tensor { 1 }) end,
        "tide.sparse.mask: indices must be int32 or int64, got float32" },
      { function() sp.slice(A(), { 0 }, { 1, 1 }) end, "tide.sparse.slice: start and size must have 2 entries" },
      { function() sp.split(A(), 0, 0) end, "tide.sparse.split: num_split must be a whole number >= 1" },
      { function() sp.split(A(), 2, 5) end, "tide.sparse.split: axis 5 out of range for rank 2" },
      { function() sp.transpose(A(), { 0, 0 }) end, "tide.sparse.transpose: perm must be a permutation of 0 .. 1" },
      { function() sp.to_indicator(A(), 3) end, "tide.sparse.to_indicator: the values must be int32 or int64 ids, got float32" },
      { function() sp.to_indicator(I(), 2) end, "tide.sparse.to_indicator: id 3 is outside [0, 2)" },
      { function() sp.softmax(S({ { 0 } }, tide.tensor({ 1 }, "float32"), { 2 })) end,
        "tide.sparse.softmax: sp_input must have rank 2 or more" },
      { function() sp.sparse_dense_matmul(A(), { 1 }) end, "tide.sparse.sparse_dense_matmul: b must be a dense tensor" },
      { function() sp.sparse_dense_matmul(A(), tide.zeros { 2, 2 }) end,
        "tide.sparse.sparse_dense_matmul: sp_a has 3 columns but b has 2 rows" },
      { function() sp.sparse_dense_matmul(A(), tide.zeros({ 3, 2 }, "float64")) end,
        "tide.sparse.sparse_dense_matmul: sp_a's values are float32 but b is float64" },
      { function() sp.sparse_dense_matmul(R3(), D) end, "tide.sparse.sparse_dense_matmul: sp_a and b must be matrices" },
      { function() sp.segment_sum(nil, { 0 }, { 0 }) end, "tide.sparse.segment_sum: data is nil" },
      { function() sp.segment_mean(D, { 0 }, nil) end, "tide.sparse.segment_mean: segment_ids is nil" },
      { function() sp.segment_sqrt_n(D, nil, { 0 }) end, "tide.sparse.segment_sqrt_n: indices is nil" },
      { function() sp.bincount(S({ { 0 } }, tide.tensor { -1 }, { 1 })) end, "tide.sparse.bincount: values must be non-negative, got -1" },
      { function() sp.bincount(I(), { axis = 2 }) end, "tide.sparse.bincount: axis must be 0 or -1" },
      { function() sp.sampled_addmm({ 0 }, D, { 1 }, D, D) end, "tide.sparse.sampled_addmm: indices must be a tensor" },
      { function() sp.sampled_addmm(tide.tensor { 0 }, D, { 1 }, D, D) end,
        "tide.sparse.sampled_addmm: indices must be [..., N, 2], got (1,)" },
      { function() sp.sampled_addmm(tide.tensor { { 0, 0 } }, D, { 1 }, D, D) end,
        "tide.sparse.sampled_addmm: mat1 (3, 4) and mat2 (3, 4) do not multiply" },
      { function() sp.sampled_addmm(tide.tensor { { 0, 0 } }, D, { 1 }, tide.zeros { 1, 2, 2 }, D) end,
        "tide.sparse.sampled_addmm: mat1 and mat2 must have indices' rank" },
      { function() sp.cross {} end, "tide.sparse.cross: inputs must be a non-empty list" },
      { function() sp.cross { tide.tensor { "a" } } end, "tide.sparse.cross: a dense input must be rank 2" },
      { function() sp.cross { tide.tensor({ { "a" } }, "string"), tide.tensor({ { "b" }, { "c" } }, "string") } end,
        "tide.sparse.cross: the inputs have different batch sizes" },
    }
    for i, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert(not ok, "case " .. i .. " (" .. c[2] .. ") did not fail")
      assert(tostring(err):find(c[2], 1, true), "case " .. i .. ": " .. tostring(err) .. "\nwanted: " .. c[2])
    end
    -- index moves need eager indices (traced values are fine), and say so
    local f = tide.trace(function(v) return sp.transpose(S(tide.tensor({ { 0, 1 } }, "int64"), v, { 2, 2 })).values end)
    assert.are.same({ 1 }, f(tide.tensor({ 1 }, "float32")):totable())
    local g = tide.trace(function(ix) return sp.transpose(S(ix, tide.tensor({ 1 }, "float32"), { 2, 2 })).values end)
    assert.has_error(function() g(tide.tensor({ { 0, 1 } }, "int64")) end,
      "tide.sparse.transpose: works eagerly only (its indices are data)")
  end)
end)
