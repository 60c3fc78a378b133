-- tests/spec/ops/shape_spec.lua — the shape ops that copy (concat, stack, tile,
-- pad, gather, one_hot, reverse) and the view lists (split, unstack):
-- hand-computed results, strided inputs, dtypes, and errors.
local tide = require "tide"
local h = require "helpers"

local function m23(dt) return tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, dt) end
local function shares(a, b) return a.storage ~= nil and a.storage == b.storage end

-- A rows x cols float32 tensor with x[i][j] = i * cols + j, and its Lua table.
local function grid(rows, cols)
  local t = {}
  for i = 1, rows do
    t[i] = {}
    for j = 1, cols do t[i][j] = (i - 1) * cols + (j - 1) end
  end
  return tide.tensor(t, "float32"), t
end

describe("concat", function()
  it("joins along an axis, negative axes counting from the end", function()
    local a, b = m23(), tide.tensor { { 7, 8, 9 } }
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, tide.concat({ a, b }, 0):totable())
    local c = tide.tensor { { 10 }, { 20 } }
    assert.are.same({ { 1, 2, 3, 10 }, { 4, 5, 6, 20 } }, tide.concat({ a, c }, 1):totable())
    assert.are.same({ { 1, 2, 3, 10, 1, 2, 3 }, { 4, 5, 6, 20, 4, 5, 6 } }, tide.concat({ a, c, a }, -1):totable())
    assert.are.same({ 1, 2, 3 }, tide.concat({ tide.tensor { 1 }, tide.tensor { 2, 3 } }, { axis = 0 }):totable())
    assert.are.same({ 1, 2 }, tide.concat({ tide.tensor { 1, 2 } }, 0):totable())
    -- an empty input contributes nothing
    local e = tide.tensor({ {}, {} }, "int32")
    assert.are.same(a:totable(), tide.concat({ e, a, e }, 1):totable())
  end)

  it("converts Lua tables in the list to the first tensor's dtype", function()
    local r = tide.concat({ tide.tensor({ 1.5 }, "float64"), { 2, 3 } }, 0)
    assert.are.same("float64", r.dtype)
    assert.are.same({ 1.5, 2, 3 }, r:totable())
  end)

  it("reads strided inputs", function()
    local a = m23()
    local t = a:transpose()                             -- (3, 2)
    local rev = tide.tensor { { 1, 2 }, { 3, 4 }, { 5, 6 } }:slice { { nil, nil, -1 } }
    assert.are.same({ { 1, 4, 5, 6 }, { 2, 5, 3, 4 }, { 3, 6, 1, 2 } }, tide.concat({ t, rev }, 1):totable())
    assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 }, { 5, 6 }, { 3, 4 }, { 1, 2 } }, tide.concat({ t, rev }, 0):totable())
    local b = tide.broadcast_to(tide.tensor { 0, 0 }, { 2, 2 })
    assert.are.same({ { 1, 2, 3, 0, 0 }, { 4, 5, 6, 0, 0 } }, tide.concat({ a, b }, 1):totable())
  end)

  it("keeps every dtype", function()
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64" } do
      local r = tide.concat({ m23(dt), m23(dt):slice { { nil, nil, -1 } } }, 0)
      assert.are.same(dt, r.dtype)
      h.close(r, { { 1, 2, 3 }, { 4, 5, 6 }, { 4, 5, 6 }, { 1, 2, 3 } })
    end
    local hf = tide.concat({ tide.tensor({ 0.5, -1.25 }, "float16"), tide.tensor({ 65504 }, "float16") }, 0)
    assert.are.same({ 0.5, -1.25, 65504 }, hf:totable())
    local b = tide.concat({ tide.tensor { { true }, { false } }, tide.tensor { { false }, { true } } }, 1)
    assert.are.same({ { true, false }, { false, true } }, b:totable())
  end)

  it("handles large inputs (parallel copies)", function()
    local a, ta = grid(300, 200)
    local b, tb = grid(300, 50)
    local r = tide.concat({ a, b:transpose():transpose() }, 1):totable()
    for _, i in ipairs { 1, 150, 300 } do
      assert.are.same(ta[i][1], r[i][1])
      assert.are.same(ta[i][200], r[i][200])
      assert.are.same(tb[i][1], r[i][201])
      assert.are.same(tb[i][50], r[i][250])
    end
    local r0 = tide.concat({ a:transpose(), b:transpose() }, 0)
    assert.are.same({ 250, 300 }, r0.shape:as_list())
    assert.are.same(ta[17][123], r0[122][16]:item())
    assert.are.same(tb[300][7], r0[206][299]:item())
  end)

  it("takes more inputs than the runner's fixed array (100)", function()
    local list, want = {}, {}
    for i = 1, 100 do list[i] = tide.tensor { i, -i }; want[2 * i - 1], want[2 * i] = i, -i end
    assert.are.same(want, tide.concat(list, 0):totable())
    local s = tide.stack(list)
    assert.are.same({ 100, 2 }, s.shape:as_list())
    assert.are.same({ 77, -77 }, s[76]:totable())
  end)

  it("rejects mismatched shapes, ranks and dtypes", function()
    local a = m23()
    h.errors("concat: dimension 1 of input 2 is 4 but input 1 has 3 (shapes [2, 3] and [2, 4])", tide.concat,
      { a, tide.tensor { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } } }, 0)
    h.errors("input 3 has rank 1 but input 1 has rank 2", tide.concat, { a, a, tide.tensor { 1, 2, 3 } }, 0)
    h.errors("input 2 is float32 but input 1 is int32", tide.concat, { a, m23("float32") }, 0)
    h.errors("axis 2 is out of range for a tensor of rank 2", tide.concat, { a, a }, 2)
    h.errors("axis -3 is out of range", tide.concat, { a, a }, -3)
    h.errors("cannot concatenate 0-d tensors", tide.concat, { tide.tensor(1), tide.tensor(2) }, 0)
    h.errors("concat: values is an empty list", tide.concat, {}, 0)
    h.errors("concat: values is nil", tide.concat, nil, 0)
    h.errors("concat: values must be a Lua list of tensors, got a tensor", tide.concat, a, 0)
    h.errors("concat: axis is required", tide.concat, { a, a })
  end)
end)

describe("stack", function()
  it("joins along a new axis", function()
    local a, b = tide.tensor { 1, 2, 3 }, tide.tensor { 4, 5, 6 }
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, tide.stack { a, b }:totable())
    assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, tide.stack({ a, b }, 1):totable())
    assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, tide.stack({ a, b }, -1):totable())
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, tide.stack({ a, b }, -2):totable())
    assert.are.same({ 1, 2, 3 }, tide.stack { 1, 2, 3 }:totable())
    assert.are.same({ 2.5, 1 }, tide.stack { tide.tensor(2.5), tide.tensor(1, "float32") }:totable())
    local m = m23()
    local s = tide.stack({ m, m:slice { {}, { nil, nil, -1 } } }, 1)    -- (2, 2, 3)
    assert.are.same({ { { 1, 2, 3 }, { 3, 2, 1 } }, { { 4, 5, 6 }, { 6, 5, 4 } } }, s:totable())
    local hf = tide.stack { tide.tensor({ 0.5 }, "float16"), tide.tensor({ 2 }, "float16") }
    assert.are.same({ { 0.5 }, { 2 } }, hf:totable())
    assert.are.same({ true, false }, tide.stack { true, false }:totable())
  end)

  it("rejects unequal shapes, dtypes and bad axes", function()
    local a = tide.tensor { 1, 2, 3 }
    h.errors("stack: values[2] has shape (2,) but values[1] has shape (3,); stack needs equal shapes", tide.stack,
      { a, tide.tensor { 1, 2 } })
    h.errors("values[2] has shape (1, 3)", tide.stack, { a, tide.tensor { { 1, 2, 3 } } })
    h.errors("stack: values[2] is float32 but values[1] is int32", tide.stack, { a, a:cast("float32") })
    h.errors("axis 2 is out of range for stacking tensors of rank 1", tide.stack, { a, a }, 2)
    h.errors("axis -3 is out of range", tide.stack, { a, a }, -3)
    h.errors("stack: values is nil", tide.stack, nil)
    h.errors("stack: values has a hole at [2]", tide.stack, { a, nil, a })
  end)
end)

describe("split", function()
  it("splits into equal parts or given sizes, as views", function()
    local x = tide.tensor { { 1, 2, 3, 4, 5, 6 }, { 7, 8, 9, 10, 11, 12 } }
    local p = tide.split(x, 3, 1)
    assert.are.same(3, #p)
    assert.are.same({ { 1, 2 }, { 7, 8 } }, p[1]:totable())
    assert.are.same({ { 5, 6 }, { 11, 12 } }, p[3]:totable())
    local q = x:split({ 1, -1, 2 }, -1)
    assert.are.same({ { 1 }, { 7 } }, q[1]:totable())
    assert.are.same({ { 2, 3, 4 }, { 8, 9, 10 } }, q[2]:totable())
    assert.are.same({ { 5, 6 }, { 11, 12 } }, q[3]:totable())
    local r = tide.split(x, 2)
    assert.are.same({ { 1, 2, 3, 4, 5, 6 } }, r[1]:totable())
    assert.are.same({ 0, 6 }, tide.split(x, { 2, 0 })[2].shape:as_list())
    assert.are.same(2, #tide.split(x, tide.tensor(2), { axis = 0 }))
    assert.are.same({ 3, 3 }, { tide.split(x, tide.tensor { 3, 3 }, 1)[1].shape[2], 3 })
    -- views: a write to the source shows in the pieces
    assert.is_true(shares(x, p[2]))
    x[0] = 0
    assert.are.same({ { 0, 0 }, { 9, 10 } }, p[2]:totable())
    -- a strided source
    local t = tide.split(tide.tensor { { 1, 2 }, { 3, 4 }, { 5, 6 } }:transpose(), 3, 1)
    assert.are.same({ { 3 }, { 4 } }, t[2]:totable())
  end)

  it("rejects indivisible and inconsistent splits", function()
    local x = tide.tensor { 1, 2, 3, 4, 5 }
    h.errors("split: dimension 0 of size 5 cannot be split into 2 equal parts", tide.split, x, 2)
    h.errors("split: sizes sum to 4 but dimension 0 has size 5", tide.split, x, { 1, 3 })
    h.errors("sizes sum to 6, more than dimension 0 of size 5", tide.split, x, { 6, -1 })
    h.errors("at most one size can be -1", tide.split, x, { -1, -1 })
    h.errors("the number of splits must be positive", tide.split, x, 0)
    h.errors("axis 1 is out of range for rank 1", tide.split, x, 5, 1)
    h.errors("num_or_size_splits is required", tide.split, x)
    h.errors("split: the input is 0-d", tide.split, tide.tensor(1), 1)
    h.errors("split: num is 3 but there are 5 splits", tide.split, x, 5, { num = 3 })
  end)
end)

describe("unstack", function()
  it("gives the views along an axis", function()
    local x = m23()
    local rows = tide.unstack(x)
    assert.are.same(2, #rows)
    assert.are.same({ 4, 5, 6 }, rows[2]:totable())
    local cols = x:unstack { axis = 1 }
    assert.are.same(3, #cols)
    assert.are.same({ 3, 6 }, cols[3]:totable())
    assert.are.same({ 2, 5 }, tide.unstack(x, 3, -1)[2]:totable())
    assert.are.same(6, tide.unstack(tide.unstack(x)[2])[3]:item())
    assert.is_true(shares(x, cols[1]))
    cols[1][1] = 40
    assert.are.same({ 40, 5, 6 }, x[1]:totable())
  end)

  it("rejects a wrong num, a bad axis and 0-d input", function()
    local x = m23()
    h.errors("unstack: num is 3 but dimension 0 has size 2", tide.unstack, x, 3)
    h.errors("axis 2 is out of range for rank 2", tide.unstack, x, nil, 2)
    h.errors("unstack: the input is 0-d", tide.unstack, tide.tensor(1))
    h.errors("unstack: value is nil", tide.unstack, nil)
  end)
end)

describe("tile", function()
  it("repeats along each dim", function()
    local x = tide.tensor { { 1, 2 }, { 3, 4 } }
    assert.are.same({ { 1, 2, 1, 2, 1, 2 }, { 3, 4, 3, 4, 3, 4 }, { 1, 2, 1, 2, 1, 2 }, { 3, 4, 3, 4, 3, 4 } },
      tide.tile(x, { 2, 3 }):totable())
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 1, 2 }, { 3, 4 } }, x:tile { 2, 1 }:totable())
    assert.are.same({ 0, 2 }, x:tile { 0, 1 }.shape:as_list())
    assert.are.same({ 1, 2, 1, 2 }, tide.tile(tide.tensor { 1, 2 }, { 2 }):totable())
    assert.are.same({ 1, 2, 1, 2 }, tide.tile(tide.tensor { 1, 2 }, tide.tensor { 2 }):totable())
    assert.are.same({ { 1, 1, 1 }, { 2, 2, 2 } }, tide.tile(tide.tensor { { 1 }, { 2 } }, { 1, 3 }):totable())
    assert.are.same(5, tide.tile(tide.tensor(5), { multiples = {} }):item())
  end)

  it("reads strided inputs and keeps dtypes", function()
    local t = tide.tensor { { 1, 2 }, { 3, 4 } }:transpose()          -- {{1,3},{2,4}}
    assert.are.same({ { 1, 3, 1, 3 }, { 2, 4, 2, 4 } }, t:tile { 1, 2 }:totable())
    local r = tide.tensor { 1, 2, 3 }:slice { { nil, nil, -1 } }
    assert.are.same({ { 3, 2, 1, 3, 2, 1 }, { 3, 2, 1, 3, 2, 1 } }, r:expand_dims(0):tile { 2, 2 }:totable())
    local hf = tide.tensor({ 0.5, 1.5 }, "float16"):tile { 2 }
    assert.are.same({ 0.5, 1.5, 0.5, 1.5 }, hf:totable())
    assert.are.same("float16", hf.dtype)
    assert.are.same({ true, false, true, false }, tide.tensor { true, false }:tile { 2 }:totable())
    assert.are.same({ 1, 2, 1, 2 }, tide.tensor({ 1, 2 }, "float64"):tile { 2 }:totable())
  end)

  it("handles large outputs", function()
    local g, tg = grid(40, 30)
    local r = g:tile { 3, 4 }                                             -- (120, 120)
    assert.are.same({ 120, 120 }, r.shape:as_list())
    assert.are.same(tg[2][3], r[41][32]:item())
    assert.are.same(tg[40][30], r[119][119]:item())
    assert.are.same(tg[1][1], r[80][90]:item())
  end)

  it("rejects bad multiples", function()
    local x = tide.tensor { { 1, 2 }, { 3, 4 } }
    h.errors("tile: multiples [2] has 1 entries but the input has rank 2", tide.tile, x, { 2 })
    h.errors("multiples[1] is -1; multiples must be >= 0", tide.tile, x, { 1, -1 })
    h.errors("tile: multiples is required", tide.tile, x)
    h.errors("must be an integer", tide.tile, x, { 1.5, 1 })
    h.errors("tile: the input is nil", tide.tile, nil, { 1 })
  end)
end)

describe("pad", function()
  it("pads with a constant", function()
    local x = m23()
    assert.are.same({ { 0, 0, 0, 0, 0, 0, 0 }, { 0, 0, 1, 2, 3, 0, 0 }, { 0, 0, 4, 5, 6, 0, 0 },
      { 0, 0, 0, 0, 0, 0, 0 } }, tide.pad(x, { { 1, 1 }, { 2, 2 } }):totable())
    assert.are.same({ { 1, 2, 3, 9 }, { 4, 5, 6, 9 }, { 9, 9, 9, 9 } },
      x:pad({ { 0, 1 }, { 0, 1 } }, "CONSTANT", 9):totable())
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, x:pad { { 0, 0 }, { 0, 0 } }:totable())
    local f = tide.tensor({ 1, 2 }, "float32"):pad({ { 1, 0 } }, { constant_values = -0.5 })
    assert.are.same({ -0.5, 1, 2 }, f:totable())
    assert.are.same({ 3, 3 }, tide.pad(x, tide.tensor { { 1, 0 }, { 0, 0 } }).shape:as_list())
    assert.are.same({ { 0, 0, 0 } }, tide.pad(tide.tensor({ {} }, "int32"), { { 0, 0 }, { 1, 2 } }):totable())
  end)

  it("reads strided inputs and keeps dtypes", function()
    local t = m23():transpose()                                           -- {{1,4},{2,5},{3,6}}
    assert.are.same({ { 1, 4, 0 }, { 2, 5, 0 }, { 3, 6, 0 } }, t:pad { { 0, 0 }, { 0, 1 } }:totable())
    local hf = tide.tensor({ 1.5 }, "float16"):pad({ { 1, 1 } }, "CONSTANT", 0.25)
    assert.are.same({ 0.25, 1.5, 0.25 }, hf:totable())
    assert.are.same({ false, true, false }, tide.tensor { true }:pad { { 1, 1 } }:totable())
    assert.are.same({ true, false }, tide.tensor { false }:pad({ { 1, 0 } }, "CONSTANT", true):totable())
    assert.are.same({ 7, 1, 7 }, tide.tensor({ 1 }, "int64"):pad({ { 1, 1 } }, "CONSTANT", 7):totable())
  end)

  it("mirrors with REFLECT and SYMMETRIC as tf.pad", function()
    local x = m23()
    assert.are.same({ { 6, 5, 4, 5, 6, 5, 4 }, { 3, 2, 1, 2, 3, 2, 1 }, { 6, 5, 4, 5, 6, 5, 4 },
      { 3, 2, 1, 2, 3, 2, 1 } }, x:pad({ { 1, 1 }, { 2, 2 } }, "REFLECT"):totable())
    assert.are.same({ { 2, 1, 1, 2, 3, 3, 2 }, { 2, 1, 1, 2, 3, 3, 2 }, { 5, 4, 4, 5, 6, 6, 5 },
      { 5, 4, 4, 5, 6, 6, 5 } }, x:pad({ { 1, 1 }, { 2, 2 } }, "SYMMETRIC"):totable())
    assert.are.same({ 3, 2, 1, 2, 3, 2 }, tide.tensor { 1, 2, 3 }:pad({ { 2, 1 } }, { mode = "reflect" }):totable())
    local t = tide.tensor { 1, 2, 3 }:slice { { nil, nil, -1 } }            -- {3, 2, 1}
    assert.are.same({ 3, 3, 2, 1, 1, 2 }, t:pad({ { 1, 2 } }, "SYMMETRIC"):totable())
    local same = x:pad({ { 0, 0 }, { 0, 0 } }, "REFLECT")
    assert.are.same(x:totable(), same:totable())
    assert.is_false(rawequal(x, same))
  end)

  it("rejects bad paddings and modes", function()
    local x = m23()
    h.errors("pad: paddings has 1 pairs but the input has rank 2", tide.pad, x, { { 1, 1 } })
    h.errors("paddings for dimension 1 are (-1, 0); they must be >= 0", tide.pad, x, { { 0, 0 }, { -1, 0 } })
    h.errors("paddings[2] must be a {before, after} pair", tide.pad, x, { { 0, 0 }, { 1 } })
    h.errors("pad: unknown mode 'wrap' (expected CONSTANT, REFLECT or SYMMETRIC)", tide.pad, x,
      { { 0, 0 }, { 1, 1 } }, "wrap")
    h.errors("REFLECT paddings for dimension 1 are (3, 0) but must be at most 2 for size 3", tide.pad, x,
      { { 0, 0 }, { 3, 0 } }, "REFLECT")
    h.errors("SYMMETRIC paddings for dimension 0 are (0, 3) but must be at most 2", tide.pad, x,
      { { 0, 3 }, { 0, 0 } }, "SYMMETRIC")
    h.errors("cannot convert 0.5 to int32", tide.pad, x, { { 0, 0 }, { 1, 1 } }, "CONSTANT", 0.5)
    h.errors("pad: paddings is required", tide.pad, x)
    h.errors("paddings must be an integer tensor", tide.pad, x, tide.tensor({ { 1, 1 }, { 1, 1 } }, "float32"))
  end)
end)

describe("gather", function()
  it("picks slices along an axis as tf.gather", function()
    local x = m23()
    assert.are.same({ { 4, 5, 6 }, { 1, 2, 3 }, { 4, 5, 6 } }, tide.gather(x, { 1, 0, 1 }):totable())
    assert.are.same({ { 3, 1 }, { 6, 4 } }, tide.gather(x, { 2, 0 }, 1):totable())
    assert.are.same({ { 3, 1 }, { 6, 4 } }, x:gather({ 2, 0 }, -1):totable())
    assert.are.same({ 4, 5, 6 }, x:gather(1):totable())                -- a number index drops the dim
    assert.are.same({ 2, 5 }, x:gather(1, { axis = 1 }):totable())
    local g = tide.gather(x, { { 0, 2 }, { 1, 1 } }, 1)                 -- (2, 2, 2)
    assert.are.same({ { { 1, 3 }, { 2, 2 } }, { { 4, 6 }, { 5, 5 } } }, g:totable())
    assert.are.same({ 0, 3 }, tide.gather(x, tide.tensor({}, "int32")).shape:as_list())
    local i64 = tide.tensor({ 1, 0 }, "int64")
    assert.are.same({ { 4, 5, 6 }, { 1, 2, 3 } }, tide.gather(x, i64):totable())
  end)

  it("supports batch_dims", function()
    local p = m23()
    local idx = tide.tensor { { 2, 0 }, { 1, 1 } }
    assert.are.same({ { 3, 1 }, { 5, 5 } }, tide.gather(p, idx, 1, 1):totable())
    assert.are.same({ { 3, 1 }, { 5, 5 } }, tide.gather(p, idx, { batch_dims = 1 }):totable())   -- axis = batch_dims
    assert.are.same({ { 3, 1 }, { 5, 5 } }, tide.gather(p, idx, { axis = -1, batch_dims = -1 }):totable())
    -- params (2, 2, 3), indices (2, 1): out (2, 2, 1), out[b][j][i] = p[b][j][idx[b][i]]
    local p3 = tide.tensor { { { 1, 2, 3 }, { 4, 5, 6 } }, { { 7, 8, 9 }, { 10, 11, 12 } } }
    local o = tide.gather(p3, tide.tensor { { 2 }, { 0 } }, 2, 1)
    assert.are.same({ { { 3 }, { 6 } }, { { 7 }, { 10 } } }, o:totable())
    -- batch_dims = 1, axis = 1 on 3-D params: picks rows per batch
    local o2 = tide.gather(p3, tide.tensor { { 1 }, { 0 } }, 1, 1)
    assert.are.same({ { { 4, 5, 6 } }, { { 7, 8, 9 } } }, o2:totable())
  end)

  it("reads strided params and indices", function()
    local x = m23()
    local t = x:transpose()                                             -- {{1,4},{2,5},{3,6}}
    assert.are.same({ { 3, 6 }, { 1, 4 } }, tide.gather(t, { 2, 0 }):totable())
    assert.are.same({ { 4, 1 }, { 5, 2 }, { 6, 3 } }, tide.gather(t, { 1, 0 }, 1):totable())
    local idx = tide.tensor { 0, 1, 2 }:slice { { nil, nil, -1 } }      -- {2, 1, 0}
    assert.are.same({ { 3, 2, 1 }, { 6, 5, 4 } }, tide.gather(x, idx, 1):totable())
    local p3 = tide.tensor { { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }:transpose { 2, 0, 1 }
    -- p3[k][i][j] = orig[i][j][k]: {{{1,3},{5,7}},{{2,4},{6,8}}}; gather along 0 copies strided blocks
    assert.are.same({ { { 2, 4 }, { 6, 8 } }, { { 1, 3 }, { 5, 7 } } }, tide.gather(p3, { 1, 0 }):totable())
  end)

  it("keeps every dtype", function()
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int64" } do
      local r = tide.gather(m23(dt), { 1, 1, 0 }, 1)
      assert.are.same(dt, r.dtype)
      h.close(r, { { 2, 2, 1 }, { 5, 5, 4 } })
    end
    assert.are.same({ 1.5, -0.25, 1.5 }, tide.gather(tide.tensor({ -0.25, 1.5 }, "float16"), { 1, 0, 1 }):totable())
    assert.are.same({ false, true }, tide.gather(tide.tensor { true, false }, { 1, 0 }):totable())
  end)

  it("handles large gathers (parallel rows)", function()
    local g, tg = grid(500, 64)
    local idx = {}
    for i = 1, 2000 do idx[i] = (i * 37) % 500 end
    local r = tide.gather(g, idx)
    assert.are.same({ 2000, 64 }, r.shape:as_list())
    for _, i in ipairs { 1, 999, 2000 } do
      assert.are.same(tg[idx[i] + 1][5], r[i - 1][4]:item())
    end
    local cols = {}
    for i = 1, 2000 do cols[i] = idx[i] % 64 end
    local c = tide.gather(g, cols, 1, { batch_dims = 0 })
    assert.are.same({ 500, 2000 }, c.shape:as_list())
    assert.are.same(tg[300][cols[1234] + 1], c[299][1233]:item())
  end)

  it("rejects out-of-range indices, bad dtypes and bad axes", function()
    local x = m23()
    h.errors("gather: indices[1] = 2 is not in [0, 2) (axis 0 of params with shape [2, 3])", tide.gather, x, { 0, 2 })
    h.errors("indices[0] = -1 is not in [0, 3)", tide.gather, x, { -1 }, 1)
    h.errors("indices[1, 0] = 5 is not in [0, 3)", tide.gather, x, { { 0 }, { 5 } }, 1)
    h.errors("gather: indices must be int32 or int64, got float32", tide.gather, x, { 0.5 })
    h.errors("axis 2 is out of range for a tensor of rank 2", tide.gather, x, { 0 }, 2)
    h.errors("batch_dims (1) must be less than or equal to axis (0)", tide.gather, x, { { 0 }, { 0 } }, 0, 1)
    h.errors("batch_dims 2 is out of range for indices of rank 1", tide.gather, x, { 0, 0 }, 1, 2)
    h.errors("dimension 0 differs (params [2, 3], indices [3, 1])", tide.gather, x, { { 0 }, { 0 }, { 0 } }, 1, 1)
    h.errors("params must have at least one dimension", tide.gather, tide.tensor(1), 0)
    h.errors("gather: indices is nil", tide.gather, x, nil)
    h.errors("gather: params is nil", tide.gather, nil, { 0 })
  end)
end)

describe("one_hot", function()
  it("encodes indices as tf.one_hot", function()
    assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, tide.one_hot(tide.tensor { 0, 1, 2 }, 3):totable())
    local r = tide.one_hot(tide.tensor { 0, 2, -1, 1 }, 3, 5.0, 0.0)
    assert.are.same("float32", r.dtype)
    assert.are.same({ { 5, 0, 0 }, { 0, 0, 5 }, { 0, 0, 0 }, { 0, 5, 0 } }, r:totable())
    assert.are.same({ { 1, 0, 0, 0 }, { 0, 0, 0, 1 }, { 0, 1, 0, 0 } },
      tide.one_hot({ 0, 2, -1, 1 }, 3, { axis = 0 }):totable())
    assert.are.same({ { -1, 3 }, { 3, -1 } }, tide.one_hot({ 1, 0 }, 2, 3, -1, { dtype = "int32" }):totable())
    assert.are.same({ 0, 0, 1 }, tide.one_hot(2, 3):totable())
    assert.are.same({ 0, 0 }, tide.one_hot(7, 2):totable())               -- past depth: all off
    assert.are.same({ 3, 0 }, tide.one_hot({ 1, 2, 0 }, 0).shape:as_list())
  end)

  it("inserts depth at the axis for higher ranks and reads strided indices", function()
    local idx = tide.tensor { { 0, 2 }, { 1, 0 } }
    -- axis=-1: (2, 2, 3); axis=1: (2, 3, 2), out[i][d][j] = idx[i][j] == d
    assert.are.same({ { { 1, 0, 0 }, { 0, 0, 1 } }, { { 0, 1, 0 }, { 1, 0, 0 } } }, idx:one_hot(3):totable())
    assert.are.same({ { { 1, 0 }, { 0, 0 }, { 0, 1 } }, { { 0, 1 }, { 1, 0 }, { 0, 0 } } },
      idx:one_hot(3, { axis = 1 }):totable())
    assert.are.same({ { { 1, 0 }, { 0, 1 } }, { { 0, 0 }, { 1, 0 } }, { { 0, 1 }, { 0, 0 } } },
      idx:one_hot(3, { axis = 0 }):totable())
    local t = idx:transpose()                                               -- {{0,1},{2,0}}
    assert.are.same({ { { 1, 0, 0 }, { 0, 1, 0 } }, { { 0, 0, 1 }, { 1, 0, 0 } } }, t:one_hot(3):totable())
  end)

  it("gives the dtype asked for", function()
    local b = tide.one_hot({ 1, 0 }, 2, { dtype = "bool" })
    assert.are.same({ { false, true }, { true, false } }, b:totable())
    local hf = tide.one_hot({ 1 }, 2, 0.5, -0.25, { dtype = "float16" })
    assert.are.same({ { -0.25, 0.5 } }, hf:totable())
    local i8 = tide.one_hot(tide.tensor({ 1 }, "int8"), 2, { dtype = "int64" })
    assert.are.same("int64", i8.dtype)
    assert.are.same({ { 0, 1 } }, i8:totable())
    local u8 = tide.one_hot(tide.tensor({ 200 }, "uint8"), 201)
    assert.are.same(1, u8[0][200]:item())
    local like = tide.one_hot({ 0 }, 2, tide.tensor(2, "float64"), tide.tensor(0, "float64"))
    assert.are.same("float64", like.dtype)
    local big = tide.one_hot(tide.tensor({ 3, 1 }, "int64"), 4, 9, { dtype = "int64" })
    assert.are.same({ { 0, 0, 0, 9 }, { 0, 9, 0, 0 } }, big:totable())
  end)

  it("rejects bad depth, axis, dtype and values", function()
    h.errors("one_hot: depth must be >= 0, got -1", tide.one_hot, { 0 }, -1)
    h.errors("one_hot: the result shape [2, 4611686018427387904] has too many elements", tide.one_hot, { 0, 1 }, 2 ^ 62)
    h.errors("one_hot: indices must be an integer tensor, got float32", tide.one_hot, tide.tensor { 0.5 }, 2)
    h.errors("axis -2 is out of range for indices of rank 1 (valid: -1 to 1)", tide.one_hot, { 0 }, 2, { axis = -2 })
    h.errors("axis 2 is out of range", tide.one_hot, { 0 }, 2, { axis = 2 })
    h.errors("one_hot: depth is required", tide.one_hot, { 0 })
    h.errors("unknown dtype 'float8'", tide.one_hot, { 0 }, 2, { dtype = "float8" })
    h.errors("cannot convert 0.5 to int32", tide.one_hot, { 0 }, 2, 0.5, { dtype = "int32" })
    h.errors("one_hot: indices is nil", tide.one_hot, nil, 2)
  end)
end)

describe("reverse", function()
  it("reverses the listed axes", function()
    local x = m23()
    assert.are.same({ { 3, 2, 1 }, { 6, 5, 4 } }, tide.reverse(x, { 1 }):totable())
    assert.are.same({ { 4, 5, 6 }, { 1, 2, 3 } }, x:reverse { 0 }:totable())
    assert.are.same({ { 6, 5, 4 }, { 3, 2, 1 } }, x:reverse { 0, -1 }:totable())
    assert.are.same({ { 3, 2, 1 }, { 6, 5, 4 } }, x:reverse(-1):totable())
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, x:reverse { axis = {} }:totable())
    local c = tide.tensor { { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }
    assert.are.same({ { { 3, 4 }, { 1, 2 } }, { { 7, 8 }, { 5, 6 } } }, c:reverse { 1 }:totable())
    local r = x:reverse { 1 }
    assert.is_false(shares(x, r))
  end)

  it("reads strided inputs and keeps dtypes", function()
    local t = m23():transpose()                                             -- {{1,4},{2,5},{3,6}}
    assert.are.same({ { 3, 6 }, { 2, 5 }, { 1, 4 } }, t:reverse { 0 }:totable())
    local back = tide.tensor { 1, 2, 3, 4 }:slice { { nil, nil, -1 } }:reverse { 0 }
    assert.are.same({ 1, 2, 3, 4 }, back:totable())
    assert.are.same({ 2.5, 0.5 }, tide.tensor({ 0.5, 2.5 }, "float16"):reverse { 0 }:totable())
    assert.are.same({ false, true }, tide.tensor { true, false }:reverse { 0 }:totable())
    local g, tg = grid(100, 100)
    local r = g:reverse { 0, 1 }
    assert.are.same(tg[100][100], r[0][0]:item())
    assert.are.same(tg[1][2], r[99][98]:item())
  end)

  it("rejects bad axes", function()
    local x = m23()
    h.errors("reverse: axis -2 is repeated (it names dimension 0 of a tensor of rank 2)", tide.reverse, x, { 0, -2 })
    h.errors("axis 2 is out of range for a tensor of rank 2", tide.reverse, x, { 2 })
    h.errors("reverse: axis is required", tide.reverse, x)
    h.errors("reverse: tensor is nil", tide.reverse, nil, { 0 })
  end)
end)

describe("an empty list {} in a list-of-integers position", function()
  it("is the empty list, not empty options", function()
    local s = tide.tensor(3.0)
    assert.are.same({}, tide.broadcast_to(s, {}).shape)
    assert.are.equal(3, tide.broadcast_to(s, {}):item())
    assert.are.same({}, tide.tile(s, {}).shape)
    assert.are.same({ 1, 2 }, tide.reverse(tide.tensor { 1, 2 }, {}):totable())
    assert.are.same({}, tide.reshape(tide.tensor { 3.0 }, {}).shape)
    assert.are.same({}, tide.transpose(s, {}).shape)
    assert.are.same({}, tide.squeeze(tide.tensor { { 1 } }, {}).shape)
    assert.are.equal(3, tide.pad(s, {}):item())
    assert.are.same({ 1, 2 }, tide.tensor { 1, 2 }:reverse {}:totable())
    -- a wrong-rank empty list is an error naming the shapes
    h.errors("cannot broadcast shape [1] to []", tide.broadcast_to, tide.tensor { 3.0 }, {})
    h.errors("multiples [] has 0 entries but the input has rank 1", tide.tile, tide.tensor { 3.0 }, {})
    -- named options still work in the trailing position
    assert.are.same({ 1, 1 }, tide.tile(tide.tensor { 1 }, { multiples = { 2 } }):totable())
  end)
end)
