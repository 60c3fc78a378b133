-- tests/spec/ops/index_spec.lua — behaviour and errors of the index-driven ops
-- beyond TF's fixtures (index_fixtures_spec): argument handling, strided
-- inputs, tide's documented extensions, large inputs that split across
-- threads, and results sized at run time inside traces, cond and while_loop.
local tide = require "tide"
local h = require "helpers"

local f32 = function(v) return tide.tensor(v, "float32") end
local f64 = function(v) return tide.tensor(v, "float64") end

describe("gather_nd", function()
  it("reads strided params and strided indices", function()
    local p = f32 { { 1, 2, 3 }, { 4, 5, 6 } }:transpose() -- [[1,4],[2,5],[3,6]]
    local idx = tide.tensor { { 0, 2 }, { 1, 1 } }:transpose() -- [[0,1],[2,1]]
    assert.are.same({ 4, 6 }, tide.gather_nd(p, idx):totable())
    assert.are.same({ { 3, 6 } }, p:gather_nd({ { 2 } }):totable()) -- as a method
  end)

  it("takes batch_dims positionally or as an option", function()
    local p = tide.range(12):reshape { 2, 3, 2 }
    local idx = { { 1, 0 }, { 2, 1 } }
    assert.are.same({ 2, 11 }, tide.gather_nd(p, idx, 1):totable())
    assert.are.same({ 2, 11 }, tide.gather_nd(p, idx, { batch_dims = 1 }):totable())
  end)

  it("refuses bad arguments with clear errors", function()
    local p = f32 { 1, 2 }
    h.errors("gather_nd: params is nil", tide.gather_nd, nil, { { 0 } })
    h.errors("gather_nd: indices is nil", tide.gather_nd, p, nil)
    h.errors("indices must be int32 or int64, got float32", tide.gather_nd, p, f32 { { 0 } })
    h.errors("batch_dims must be an integer", tide.gather_nd, p, { { 0 } }, 0.5)
    h.errors("unknown option 'axis'", tide.gather_nd, p, { { 0 } }, { axis = 0 })
    h.errors("with batch_dims=1, params and indices must agree on their first 1 dims",
      tide.gather_nd, tide.ones { 2, 2 }, { { 0 }, { 1 }, { 0 } }, 1)
  end)
end)

describe("index tuples out of range in large inputs", function()
  it("name the first bad tuple, whichever thread met it", function()
    local n = 200000
    local idx = tide.zeros({ n, 2 }, "int32")
    idx = tide.tensor_scatter_nd_update(idx, { { 150001, 1 }, { 170000, 0 } }, { 5, -1 })
    h.errors("gather_nd: indices[150001] = [0, 5] does not index into params of shape [3, 4]: 5 at position 1",
      tide.gather_nd, tide.ones { 3, 4 }, idx)
    h.errors("tensor_scatter_nd_add: indices[150001] = [0, 5] does not index into tensor of shape [3, 4]",
      tide.tensor_scatter_nd_add, tide.ones { 3, 4 }, idx, tide.ones { n })
  end)
end)

describe("scatter_nd and tensor_scatter_nd_*", function()
  it("index depth 0 applies every update to the whole tensor (TF refuses it)", function()
    assert.are.same({ 4, 6 }, tide.scatter_nd(tide.zeros({ 2, 0 }, "int32"), f32 { { 1, 2 }, { 3, 4 } }, { 2 }):totable())
  end)

  it("takes the shape as a tensor, also traced", function()
    local x = tide.zeros { 2, 3 }
    local f = tide.trace(function(v, u) return tide.scatter_nd({ { 1, 2 } }, u, tide.shape(v)) end,
      { input_signature = { tide.TensorSpec({ tide.None, tide.None }), tide.TensorSpec({ 1 }) } })
    assert.are.same({ { 0, 0, 0 }, { 0, 0, 5 } }, f(x, f32 { 5 }):totable())
  end)

  it("writes into a copy: the tensor given is unchanged; strided inputs work", function()
    local t = f32 { { 1, 2 }, { 3, 4 } }
    local r = tide.tensor_scatter_nd_update(t:transpose(), { { 0, 1 } }, { 9 })
    assert.are.same({ { 1, 9 }, { 2, 4 } }, r:totable())
    assert.are.same({ { 1, 2 }, { 3, 4 } }, t:totable())
    local u = f32 { { 5, 6 }, { 7, 8 } }:transpose() -- [[5,7],[6,8]]
    assert.are.same({ { 6, 9 }, { 9, 12 } }, tide.tensor_scatter_nd_add(t, { { 0 }, { 1 } }, u):totable())
  end)

  it("Lua numbers and tables take the tensor's dtype", function()
    local r = tide.tensor_scatter_nd_add(tide.tensor({ 1, 2 }, "int64"), { { 1 } }, { 5 })
    assert.are.equal("int64", r.dtype)
    assert.are.same({ 1, 7 }, r:totable())
  end)

  it("refuses bad arguments with clear errors", function()
    local t = f32 { 1, 2 }
    h.errors("updates are int32 but tensor is float32", tide.tensor_scatter_nd_add, t, { { 0 } }, tide.tensor { 1 })
    h.errors("tensor_scatter_nd_add: tensor must be a numeric tensor", tide.tensor_scatter_nd_add,
      tide.tensor { true }, { { 0 } }, tide.tensor { true })
    h.errors("tensor must have at least one dimension", tide.tensor_scatter_nd_update, f32(1), tide.zeros({ 1, 0 },
      "int32"), f32 { 2 })
    h.errors("scatter_nd: shape is nil", tide.scatter_nd, { { 0 } }, f32 { 1 })
    h.errors("scatter_nd: updates must be numeric", tide.scatter_nd, { { 0 } }, tide.tensor { true }, { 2 })
    h.errors("tensor_scatter_nd_sub: updates is nil", tide.tensor_scatter_nd_sub, t, { { 0 } })
  end)

  it("adds many repeated updates the same way whatever the split across threads", function()
    local n, rows = 70000, 7 -- more than one grain (65536 adds): split across threads
    local ids, vals, want = {}, {}, {}
    for r = 1, rows do want[r] = 0 end
    for i = 1, n do
      ids[i] = { (i * 5) % rows }
      vals[i] = (i % 13) - 6
      want[ids[i][1] + 1] = want[ids[i][1] + 1] + vals[i]
    end
    local got = tide.scatter_nd(ids, tide.tensor(vals, "int64"), { rows })
    assert.are.same(want, got:totable())
    -- slices wide enough to split across threads
    local u = tide.ones({ 3, 50000 }, "float64")
    local s = tide.tensor_scatter_nd_add(tide.zeros({ 4, 50000 }, "float64"), { { 1 }, { 3 }, { 1 } }, u)
    assert.are.same({ 0, 2, 0, 1 }, tide.reduce_max(s, 1):totable())
    assert.are.equal(150000, tide.reduce_sum(s):item())
  end)
end)

describe("where(cond)", function()
  it("gives int64 coordinates of true (nonzero) elements, row-major", function()
    local w = tide.where(tide.tensor { { 0, 3, 0 }, { -1, 0, 2 } })
    assert.are.equal("int64", w.dtype)
    assert.are.same({ { 0, 1 }, { 1, 0 }, { 1, 2 } }, w:totable())
    assert.are.same({ { 1 } }, tide.tensor({ 0, 0.5 }, "float16"):where():totable()) -- float16 (TF has no CPU kernel)
    assert.are.same({ 0, 2 }, tide.where(tide.zeros({ 0, 1 }, "bool")).shape:as_list())
  end)

  it("reads strided conditions and bool bytes other than 1 as true", function()
    local c = tide.tensor { { true, false }, { true, true } }:transpose() -- [[T,T],[F,T]]
    assert.are.same({ { 0, 0 }, { 0, 1 }, { 1, 1 } }, tide.where(c):totable())
    local b = tide.from_buffer(string.char(0, 2, 0, 255), { 4 }, "bool")
    assert.are.same({ { 1 }, { 3 } }, tide.where(b):totable())
  end)

  it("matches a plain count on large inputs split in blocks across threads", function()
    local vals = {}
    for i = 1, 300 * 211 do vals[i] = (i * 7919) % 5 == 0 and 1 or 0 end
    local want1, want2 = {}, {}
    for i, v in ipairs(vals) do
      if v ~= 0 then
        want1[#want1 + 1] = { i - 1 }
        want2[#want2 + 1] = { math.floor((i - 1) / 211), (i - 1) % 211 }
      end
    end
    local c = tide.tensor(vals, "int8")
    assert.are.same(want1, tide.where(c):totable())
    assert.are.same(want2, tide.where(c:reshape { 300, 211 }):totable())
  end)

  it("keeps the three-argument form, and refuses a half-given one", function()
    assert.are.same({ 1, 0 }, tide.where(tide.tensor { true, false }, 1, 0):totable())
    h.errors("where: cond is nil", tide.where, nil)
    h.errors("where", tide.where, tide.tensor { true }, 1)
    h.errors("where_indices: the condition must have at least one dimension", tide.where, tide.tensor(true))
  end)
end)

describe("boolean_mask", function()
  it("counts a negative axis from the end (TF refuses one)", function()
    local x = tide.range(12):reshape { 3, 4 }
    assert.are.same({ { 0, 2 }, { 4, 6 }, { 8, 10 } }, tide.boolean_mask(x, { true, false, true, false }, -1):totable())
    assert.are.same({ { 4, 5, 6, 7 } }, x:boolean_mask({ false, true, false }):totable()) -- as a method
  end)

  it("works traced with unknown dims on both sides of the mask", function()
    local f = tide.trace(function(x, m) return tide.boolean_mask(x, m, { axis = 1 }) end,
      { input_signature = { tide.TensorSpec({ tide.None, tide.None, tide.None }, "int32"),
        tide.TensorSpec({ tide.None }, "bool") } })
    local x = tide.range(24):reshape { 2, 3, 4 }
    local m = tide.tensor { false, true, true }
    assert.are.same(tide.boolean_mask(x, m, 1):totable(), f(x, m):totable())
    local y = tide.range(6):reshape { 1, 2, 3 }
    assert.are.same({ { { 3, 4, 5 } } }, f(y, tide.tensor { false, true }):totable())
  end)

  it("refuses bad arguments with clear errors", function()
    local x = tide.range(12):reshape { 3, 4 }
    h.errors("a mask of rank 1 at axis 2 does not fit a tensor of rank 2", tide.boolean_mask, x, { true }, 2)
    h.errors("boolean_mask: mask is nil", tide.boolean_mask, x, nil)
    h.errors("boolean_mask: mask of shape (2, 2) does not match", tide.boolean_mask, x, { { true, true }, { true, true } })
  end)
end)

describe("unique", function()
  it("gives values in first-occurrence order and positions that rebuild x", function()
    local x = tide.tensor { 4, 1, 4, 4, 9, 1 }
    local y, idx = tide.unique(x)
    assert.are.same({ 4, 1, 9 }, y:totable())
    assert.are.equal("int32", idx.dtype)
    assert.are.same(x:totable(), tide.gather(y, idx):totable())
    local _, i64 = x:unique("int64")
    assert.are.equal("int64", i64.dtype)
  end)

  it("reads a strided x, and works traced with run-time sizes", function()
    local x = tide.tensor { { 3, 1 }, { 3, 2 }, { 1, 5 } }:transpose()[0] -- [3, 3, 1], stride 2
    local y, idx = tide.unique(x)
    assert.are.same({ 3, 1 }, y:totable())
    assert.are.same({ 0, 0, 1 }, idx:totable())
    local f = tide.trace(function(v) local u, i = tide.unique(v) return u * 2, i end)
    local u1 = f(tide.tensor { 5, 5, 5 })
    local u2, i2 = f(tide.tensor { 1, 2, 3 })
    assert.are.same({ 10 }, u1:totable())
    assert.are.same({ 2, 4, 6 }, u2:totable())
    assert.are.same({ 0, 1, 2 }, i2:totable())
  end)

  it("keeps many distinct values (its table grows) in order", function()
    local vals, seen, want_y, want_idx = {}, {}, {}, {}
    for i = 1, 100000 do
      local v = (i * 7919) % 50021
      vals[i] = v
      if not seen[v] then
        want_y[#want_y + 1] = v
        seen[v] = #want_y - 1
      end
      want_idx[i] = seen[v]
    end
    local y, idx = tide.unique(tide.tensor(vals, "int64"))
    assert.are.same(want_y, y:totable())
    assert.are.same(want_idx, idx:totable())
  end)

  it("refuses bad arguments with clear errors", function()
    h.errors("unique: out_idx must be int32 or int64, got float32", tide.unique, tide.tensor { 1 }, "float32")
    h.errors("unique: x must be 1-D, got shape [1, 2]", tide.unique, tide.tensor { { 1, 2 } })
    h.errors("unique: x is nil", tide.unique, nil)
  end)
end)

describe("the segment family", function()
  it("takes num_segments as a number, a 0-d or one-element tensor, or a traced tensor", function()
    local d, ids = f32 { 1, 2, 3 }, { 0, 2, 2 }
    local want = { 1, 0, 5 }
    assert.are.same(want, tide.unsorted_segment_sum(d, ids, 3):totable())
    assert.are.same(want, tide.unsorted_segment_sum(d, ids, tide.tensor(3)):totable())
    assert.are.same(want, tide.unsorted_segment_sum(d, ids, tide.tensor({ 3 }, "int64")):totable())
    local f = tide.trace(function(x, i) return tide.unsorted_segment_sum(x, i, tide.reduce_max(i) + 1) end)
    assert.are.same(want, f(d, tide.tensor(ids)):totable())
    assert.are.same({ 6 }, f(d, tide.tensor { 0, 0, 0 }):totable())
  end)

  it("reads strided data and ids", function()
    local d = f32 { { 1, 2, 3 }, { 4, 5, 6 } }:transpose() -- [[1,4],[2,5],[3,6]]
    assert.are.same({ { 3, 9 }, { 3, 6 } }, tide.segment_sum(d, { 0, 0, 1 }):totable())
    local ids = tide.tensor { { 1, 9 }, { 0, 9 }, { 1, 9 } }:transpose()[0] -- [1, 0, 1], stride 2
    assert.are.same({ { 2, 5 }, { 4, 10 } }, tide.unsorted_segment_sum(d, ids, 2):totable())
    assert.are.same({ { 2, 5 }, { 3, 6 } }, tide.unsorted_segment_max(d, ids, 2):totable())
  end)

  it("sizes sorted results when the graph runs, and handles many rows across threads", function()
    local f = tide.trace(function(x, i) return tide.segment_mean(x, i) end)
    assert.are.same({ 1.5, 3 }, f(f64 { 1, 2, 3 }, tide.tensor { 0, 0, 1 }):totable())
    assert.are.same({ 1, 0, 0, 5 }, f(f64 { 1, 5 }, tide.tensor { 0, 3 }):totable())
    local n = 100000
    local vals, ids, want = {}, {}, { 0, 0, 0, 0 }
    for i = 1, n do
      vals[i] = i % 10
      ids[i] = math.floor((i - 1) * 4 / n)
      want[ids[i] + 1] = want[ids[i] + 1] + vals[i]
    end
    local v, s = tide.tensor(vals, "int64"), tide.tensor(ids)
    assert.are.same(want, tide.segment_sum(v, s):totable())
    assert.are.same(want, tide.unsorted_segment_sum(v, s, 4):totable())
    local wide = tide.segment_max(tide.ones({ 3, 40000 }), { 0, 1, 1 })
    assert.are.same({ 2, 40000 }, wide.shape:as_list())
    assert.are.equal(80000, tide.reduce_sum(wide):item())
  end)

  it("refuses bad arguments with clear errors", function()
    local d = f32 { 1, 2 }
    h.errors("unsorted_segment_sum: num_segments is required", tide.unsorted_segment_sum, d, { 0, 0 })
    h.errors("num_segments must not be negative, got -2", tide.unsorted_segment_sum, d, { 0, 0 }, -2)
    h.errors("num_segments must be an integer", tide.unsorted_segment_max, d, { 0, 0 }, 1.5)
    h.errors("num_segments must be an int32 or int64 tensor, got float32", tide.unsorted_segment_min, d, { 0, 0 }, f32(2))
    h.errors("num_segments must be a scalar, got shape [2]", tide.unsorted_segment_sum, d, { 0, 0 }, tide.tensor { 1, 2 })
    h.errors("segment_sum: data must be a numeric tensor", tide.segment_sum, tide.tensor { true }, { 0 })
    h.errors("segment_ids must be int32 or int64, got float32", tide.segment_max, d, f32 { 0, 0 })
    h.errors("segment_prod: data is nil", tide.segment_prod, nil, { 0 })
    h.errors("cannot make the result of shape", tide.segment_sum, tide.ones { 1, 4 }, tide.tensor({ 2 ^ 62 }, "int64"))
    h.errors("has too many elements", tide.unsorted_segment_sum, tide.ones { 1, 4 }, { 0 }, 2 ^ 62)
  end)

  it("is in tide.math too, as TF's tf.math.segment_*", function()
    assert.are.equal(tide.segment_sum, tide.math.segment_sum)
    assert.are.equal(tide.unsorted_segment_sqrt_n, tide.math.unsorted_segment_sqrt_n)
  end)
end)

describe("results sized at run time inside control flow", function()
  it("flow out of cond branches and through while_loop iterations", function()
    local c = tide.tensor { { true, false }, { false, true } }
    local pick = tide.trace(function(p, m)
      return tide.cond(p, function() return tide.where(m) end, function() return tide.where(tide.logical_not(m)) end)
    end)
    assert.are.same({ { 0, 0 }, { 1, 1 } }, pick(tide.tensor(true), c):totable())
    assert.are.same({ { 0, 1 }, { 1, 0 } }, pick(tide.tensor(false), c):totable())
    local shrink = tide.trace(function(x)
      return tide.while_loop(function(v) return tide.num_elements(v):gt(1) end,
        function(v) return tide.boolean_mask(v, v:gt(tide.reduce_min(v))) end, { x })
    end)
    assert.are.same({ 9 }, shrink(f32 { 5, 3, 9, 1, 7 }):totable())
    assert.are.same({ 8 }, shrink(f32 { 2, 8 }):totable())
  end)
end)
