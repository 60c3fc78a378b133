-- tests/spec/ops/views_spec.lua — the view ops: reshape, transpose, squeeze,
-- expand_dims, broadcast_to, x[i] and x:slice, contiguous; storage sharing
-- (writes through either side show in the other) and their errors.
local tide = require "tide"
local binding = require "tide.binding"
local h = require "helpers"

local C = binding.C

-- A fresh 3x4 int32 tensor {{1..4},{5..8},{9..12}} (heap: 48 bytes).
local function m34(dt)
  return tide.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }, dt)
end

local function shares(a, b)
  return a.storage ~= nil and a.storage == b.storage
end

describe("reshape", function()
  it("reshapes row-major with a list, varargs, -1 and an int tensor", function()
    local x = m34()
    assert.are.same({ { 1, 2, 3, 4, 5, 6 }, { 7, 8, 9, 10, 11, 12 } }, x:reshape { 2, 6 }:totable())
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 }, { 9, 10 }, { 11, 12 } }, x:reshape(6, 2):totable())
    assert.are.same({ 4, 3 }, x:reshape { -1, 3 }.shape:as_list())
    assert.are.same({ 2, 2, 3 }, x:reshape { 2, -1, 3 }.shape:as_list())
    assert.are.same({ 12 }, x:reshape(-1).shape:as_list())
    assert.are.same({ 3, 2, 2 }, tide.reshape(x, tide.tensor { 3, 2, 2 }).shape:as_list())
    assert.are.same({ 3, 4 }, x:reshape(x.shape).shape:as_list())
    assert.are.same({ 2, 6 }, tide.reshape(x, { shape = { 2, 6 } }).shape:as_list())
  end)

  it("goes to and from 0-d and handles empty tensors", function()
    local s = tide.tensor(7.5)
    local v = s:reshape { 1, 1 }
    assert.are.same({ { 7.5 } }, v:totable())
    assert.are.same(7.5, v:reshape({}):item())
    assert.are.same(0, v:reshape({}).ndim)
    local e = tide.tensor({ {}, {} }, "float32")          -- shape (2, 0)
    assert.are.same({ 0, 5 }, e:reshape { 0, 5 }.shape:as_list())
    assert.are.same({ 0, 3 }, e:reshape { -1, 3 }.shape:as_list())
  end)

  it("is a view of a contiguous tensor: writes show both ways", function()
    local x = tide.tensor { { 1, 2, 3 }, { 4, 5, 6 } }   -- small: inline until viewed
    local v = x:reshape { 3, 2 }
    assert.is_true(shares(x, v))
    x[0] = tide.tensor { 10, 20, 30 }
    assert.are.same({ { 10, 20 }, { 30, 4 }, { 5, 6 } }, v:totable())
    v[2] = 0
    assert.are.same({ { 10, 20, 30 }, { 4, 0, 0 } }, x:totable())
  end)

  it("copies a transposed tensor in row-major order of its view", function()
    local x = m34()
    local t = x:transpose()
    local r = t:reshape { 12 }
    assert.are.same({ 1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12 }, r:totable())
    assert.is_false(shares(x, r))
    x[0] = 0                        -- the copy does not follow the original
    assert.are.same(1, r[0]:item())
    assert.are.same({ { 1, 5, 9, 2, 6, 10 }, { 3, 7, 11, 4, 8, 12 } }, m34():transpose():reshape { 2, 6 }:totable())
  end)

  it("views a stepped slice when strides allow, copies when not", function()
    local x = m34()
    local s = x:slice { {}, { nil, nil, 2 } }            -- columns 0, 2: shape (3, 2)
    assert.are.same({ { 1, 3 }, { 5, 7 }, { 9, 11 } }, s:totable())
    local v = s:reshape { 3, 2, 1 }
    assert.is_true(shares(x, v))
    assert.are.same({ { { 1 }, { 3 } }, { { 5 }, { 7 } }, { { 9 }, { 11 } } }, v:totable())
    local r = s:reshape { 6 }
    assert.are.same({ 1, 3, 5, 7, 9, 11 }, r:totable())
    local rows = x:slice { { nil, nil, 2 } }             -- rows 0, 2: each row contiguous
    local v2 = rows:reshape { 2, 2, 2 }
    assert.is_true(shares(x, v2))
    assert.are.same({ { { 1, 2 }, { 3, 4 } }, { { 9, 10 }, { 11, 12 } } }, v2:totable())
  end)

  it("keeps every dtype", function()
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int64" } do
      local r = m34(dt):reshape { 2, 6 }
      assert.are.same(dt, r.dtype)
      h.close(r, { { 1, 2, 3, 4, 5, 6 }, { 7, 8, 9, 10, 11, 12 } })
    end
    local b = tide.tensor { { true, false }, { false, true } }
    assert.are.same({ true, false, false, true }, b:reshape(-1):totable())
    local hf = tide.tensor({ { 1.5, -2.25 }, { 0.125, 3 } }, "float16"):transpose():reshape { 4 }
    assert.are.same({ 1.5, 0.125, -2.25, 3 }, hf:totable())
  end)

  it("rejects bad shapes and arguments", function()
    local x = m34()
    h.errors("cannot reshape a tensor of shape [3, 4] (12 elements) to [5, 2]", tide.reshape, x, { 5, 2 })
    h.errors("only one dimension can be -1", tide.reshape, x, { -1, -1 })
    h.errors("cannot reshape", tide.reshape, x, { -1, 5 })
    h.errors("dimension 0 is negative (-2)", tide.reshape, x, { -2, -6 })
    h.errors("reshape: shape is required", tide.reshape, x)
    h.errors("reshape: tensor is nil", tide.reshape, nil, { 2 })
    h.errors("must be an integer", tide.reshape, x, { 2.5, 2 })
    h.errors("must be an integer tensor", tide.reshape, x, tide.tensor({ 3, 4 }, "float32"))
    h.errors("rank 9 is out of range", tide.reshape, x, { 1, 1, 1, 1, 1, 1, 1, 3, 4 })
  end)
end)

describe("transpose", function()
  it("reverses dims by default and follows perm", function()
    local x = m34()
    assert.are.same({ { 1, 5, 9 }, { 2, 6, 10 }, { 3, 7, 11 }, { 4, 8, 12 } }, x:transpose():totable())
    assert.are.same(x:totable(), x:transpose { 0, 1 }:totable())
    local c = x:reshape { 3, 2, 2 }                      -- c[i][j][k] = 4i + 2j + k + 1
    local t = tide.transpose(c, { 2, 0, 1 })             -- t[k][i][j] = c[i][j][k]
    assert.are.same({ 2, 3, 2 }, t.shape:as_list())
    assert.are.same({ { { 1, 3 }, { 5, 7 }, { 9, 11 } }, { { 2, 4 }, { 6, 8 }, { 10, 12 } } }, t:totable())
    assert.are.same(t:totable(), c:transpose { perm = { -1, 0, 1 } }:totable())
    assert.are.same({ 4, 3 }, tide.transpose(x, { perm = { 1, 0 } }).shape:as_list())
    assert.are.same(5, tide.transpose(tide.tensor(5)):item())
  end)

  it("shares storage: writes through either side", function()
    local x = tide.tensor { { 1, 2 }, { 3, 4 } }
    local t = x:transpose()
    assert.is_true(shares(x, t))
    x[0] = tide.tensor { 9, 8 }
    assert.are.same({ { 9, 3 }, { 8, 4 } }, t:totable())
    t[1] = tide.tensor { 0, 0 }
    assert.are.same({ { 9, 0 }, { 3, 0 } }, x:totable())
    assert.are.same(x:totable(), t:transpose():totable())
  end)

  it("rejects a bad perm", function()
    local x = m34()
    h.errors("is not a permutation of 0..1", tide.transpose, x, { 0, 0 })
    h.errors("is not a permutation", tide.transpose, x, { 0, 2 })
    h.errors("perm [0, 1, 2] has 3 entries but the tensor has rank 2", tide.transpose, x, { 0, 1, 2 })
    h.errors("transpose: a is nil", tide.transpose, nil)
  end)
end)

describe("indexing and slicing", function()
  local v10
  before_each(function() v10 = tide.tensor { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } end)

  it("x[i] counts from the end for negative i", function()
    assert.are.same(0, v10[0]:item())
    assert.are.same(9, v10[-1]:item())
    assert.are.same(0, v10[-10]:item())
    local x = m34()
    assert.are.same({ 9, 10, 11, 12 }, x[-1]:totable())
    assert.are.same(7, x[1][2]:item())
    assert.are.same(8, x[-2][-1]:item())
    h.errors("index 10 is out of range for dimension 0 of size 10", function() return v10[10] end)
    h.errors("index -11 is out of range", function() return v10[-11] end)
    h.errors("cannot index a 0-d tensor", function() return v10[0][0] end)
  end)

  it("slices with Python's start/stop/step rules", function()
    local function s(spec) return v10:slice { spec }:totable() end
    assert.are.same({ 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 }, s { nil, nil, -1 })
    assert.are.same({ 7, 8, 9 }, s { -3 })
    assert.are.same({ 0, 1, 2 }, s { nil, -7 })
    assert.are.same({ 1, 4, 7 }, s { 1, nil, 3 })
    assert.are.same({ 8, 6, 4 }, s { 8, 2, -2 })
    assert.are.same({ 9, 8, 7 }, s { -1, -4, -1 })
    assert.are.same({ 9, 6, 3, 0 }, s { nil, nil, -3 })
    assert.are.same({}, s { 5, 2 })
    assert.are.same({}, s { 2, 5, -1 })
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, s { -100, 100 })
    assert.are.same({ 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 }, s { 100, -100, -1 })
    assert.are.same({ 3, 2, 1, 0 }, s { 3, nil, -1 })
    assert.are.same({ 2, 1 }, s { 2, 0, -1 })
  end)

  it("takes steps and bounds as large as int64 holds", function()
    local r = tide.range(2000)
    local top = 2 ^ 63 - 1024 -- the largest double below 2^63
    assert.are.same({ 0 }, r:slice { { 0, 2000, top } }:totable())
    assert.are.same({ 1999 }, r:slice { { nil, nil, -top } }:totable())
    assert.are.same({ 1999 }, r:slice { { nil, nil, -2 ^ 63 } }:totable())
    assert.are.same({ 5 }, r:slice { { 5, top, 2 ^ 62 } }:totable())
    assert.are.same({ 0, 1000 }, r:slice { { -2 ^ 63, top, 1000 } }:totable())
    h.errors("slice: step must be an integer in the int64 range, got", function() return r:slice { { 0, 5, 2 ^ 63 } } end)
    h.errors("slice: stop must be an integer in the int64 range", function() return r:slice { { 0, 2 ^ 64 } } end)
    h.errors("index: index must be an integer in the int64 range", function() return r[2 ^ 63] end)
  end)

  it("slices several dims, with '...', newaxis and negative steps", function()
    local x = m34()
    assert.are.same({ { 12, 10 }, { 8, 6 }, { 4, 2 } }, x:slice { { nil, nil, -1 }, { nil, nil, -2 } }:totable())
    assert.are.same({ 2, 6, 10 }, x:slice { "...", 1 }:totable())
    assert.are.same({ 10, 11 }, x:slice { -1, { 1, 3 } }:totable())
    assert.are.same({ 1, 4 }, x:slice { tide.newaxis, 0 }.shape:as_list())
    assert.are.same({ 3, 1, 4 }, x:slice { {}, tide.newaxis }.shape:as_list())
    -- a reversed view of a reversed view is the original order
    local rr = x:slice { { nil, nil, -1 } }:slice { { nil, nil, -1 } }
    assert.are.same(x:totable(), rr:totable())
    -- a slice of a transposed view
    assert.are.same({ { 4, 8, 12 }, { 2, 6, 10 } }, x:transpose():slice { { 3, 0, -2 } }:totable())
  end)

  it("slices are views: writes through a negative-step view land in place", function()
    local r = v10:slice { { nil, nil, -1 } }
    assert.is_true(shares(v10, r))
    r[0] = 100
    assert.are.same(100, v10[9]:item())
    v10[0] = -5
    assert.are.same(-5, r[9]:item())
    local x = m34()
    local col = x:slice { {}, -1 }
    col[1] = 0
    assert.are.same({ 5, 6, 7, 0 }, x[1]:totable())
  end)

  it("rejects bad slice specs", function()
    h.errors("slice: step cannot be zero", function() return v10:slice { { 0, 5, 0 } } end)
    h.errors("slice: 2 indices for a tensor of rank 1", function() return v10:slice { 0, 0 } end)
    h.errors("index 12 is out of range for dimension 0 of size 10", function() return v10:slice { 12 } end)
    h.errors("only one '...' is allowed", function() return v10:slice { "...", "..." } end)
    h.errors("must be an integer", function() return v10:slice { { 0.5 } } end)
  end)
end)

describe("squeeze", function()
  it("drops every size-1 dim or the listed ones", function()
    local x = tide.tensor { { { 1 }, { 2 }, { 3 } } }    -- shape (1, 3, 1)
    assert.are.same({ 1, 2, 3 }, x:squeeze():totable())
    assert.are.same({ 3, 1 }, x:squeeze(0).shape:as_list())
    assert.are.same({ 1, 3 }, x:squeeze { -1 }.shape:as_list())
    assert.are.same({ 3 }, tide.squeeze(x, { axis = { 0, 2 } }).shape:as_list())
    assert.are.same(4, tide.squeeze(tide.tensor { { 4 } }):item())
    assert.are.same(0, tide.squeeze(tide.tensor { { 4 } }).ndim)
  end)

  it("is a view", function()
    local x = tide.tensor { { 1, 2, 3 } }
    local s = x:squeeze()
    assert.is_true(shares(x, s))
    x[0] = tide.tensor { 7, 8, 9 }
    assert.are.same({ 7, 8, 9 }, s:totable())
  end)

  it("rejects a dim that is not 1 and a bad axis", function()
    local x = tide.tensor { { { 1 }, { 2 }, { 3 } } }
    h.errors("cannot squeeze axis 1 of size 3 (shape [1, 3, 1])", tide.squeeze, x, 1)
    h.errors("axis 3 is out of range for a tensor of rank 3", tide.squeeze, x, 3)
    h.errors("squeeze: the input", tide.squeeze, nil)
  end)
end)

describe("expand_dims", function()
  it("inserts a size-1 dim; negative axes count from the end of the result", function()
    local x = tide.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.are.same({ 1, 2, 3 }, x:expand_dims(0).shape:as_list())
    assert.are.same({ 2, 1, 3 }, x:expand_dims(1).shape:as_list())
    assert.are.same({ 2, 3, 1 }, x:expand_dims(2).shape:as_list())
    assert.are.same({ 2, 3, 1 }, x:expand_dims(-1).shape:as_list())
    assert.are.same({ 1, 2, 3 }, x:expand_dims(-3).shape:as_list())
    assert.are.same({ { { 1, 2, 3 } }, { { 4, 5, 6 } } }, x:expand_dims(1):totable())
    assert.are.same({ 5 }, tide.expand_dims(tide.tensor(5), 0):totable())
    assert.are.same({ { 1 }, { 2 } }, tide.expand_dims({ 1, 2 }, { axis = -1 }):totable())
  end)

  it("is a view, also of a transposed tensor", function()
    local x = tide.tensor { { 1, 2 }, { 3, 4 } }
    local e = x:transpose():expand_dims(1)
    assert.are.same({ { { 1, 3 } }, { { 2, 4 } } }, e:totable())
    assert.is_true(shares(x, e))
    x[1] = tide.tensor { 0, 0 }
    assert.are.same({ { { 1, 0 } }, { { 2, 0 } } }, e:totable())
  end)

  it("rejects a bad or missing axis", function()
    local x = tide.tensor { { 1, 2, 3 } }
    h.errors("axis 3 is out of range for a tensor of rank 3", tide.expand_dims, x, 3)
    h.errors("axis -4 is out of range", tide.expand_dims, x, -4)
    h.errors("expand_dims: axis is required", tide.expand_dims, x)
    h.errors("must be an integer", tide.expand_dims, x, 0.5)
  end)
end)

describe("broadcast_to", function()
  it("repeats size-1 and missing leading dims with stride 0", function()
    local v = tide.tensor { 1, 2, 3 }
    local b = tide.broadcast_to(v, { 2, 3 })
    assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, b:totable())
    assert.are.same(0, tonumber(b.strides[0]))
    local c = tide.broadcast_to(tide.tensor { { 1 }, { 2 } }, { 2, 2, 3 })
    assert.are.same({ { { 1, 1, 1 }, { 2, 2, 2 } }, { { 1, 1, 1 }, { 2, 2, 2 } } }, c:totable())
    assert.are.same({ { 7, 7 } }, tide.broadcast_to(tide.tensor(7), { 1, 2 }):totable())
    assert.are.same({ 0, 3 }, v:broadcast_to { 0, 3 }.shape:as_list())
    local hf = tide.broadcast_to(tide.tensor({ 0.5 }, "float16"), { 2 })
    assert.are.same({ 0.5, 0.5 }, hf:totable())
  end)

  it("is a view: a write to the source shows in every repeat", function()
    local v = tide.tensor { 1, 2, 3 }
    local b = v:broadcast_to { 2, 3 }
    assert.is_true(shares(v, b))
    v[1] = 20
    assert.are.same({ { 1, 20, 3 }, { 1, 20, 3 } }, b:totable())
  end)

  it("rejects shapes numpy's rules forbid", function()
    local v = tide.tensor { 1, 2, 3 }
    h.errors("cannot broadcast shape [3] to [2, 2]", tide.broadcast_to, v, { 2, 2 })
    h.errors("cannot broadcast shape [3] to []", tide.broadcast_to, v, {shape = {}})
    h.errors("cannot broadcast", tide.broadcast_to, v, { -1, 3 })
    h.errors("broadcast_to: shape is required", tide.broadcast_to, v)
  end)

  it("rejects a shape whose element count overflows (never a wrapped size)", function()
    local v = tide.zeros { 100 } -- heap storage: a true view
    h.errors("broadcast_to: the result shape [2147483648, 2147483648, 4, 100] has too many elements",
      tide.broadcast_to, v, { 2 ^ 31, 2 ^ 31, 4, 100 })
    h.errors("broadcast_to: the result shape", tide.broadcast_to, tide.tensor { 1 }, { 2 ^ 31, 2 ^ 31, 4 })
  end)
end)

describe("contiguous", function()
  it("returns x itself when contiguous and a copy otherwise", function()
    local x = m34()
    assert.is_true(rawequal(x, tide.contiguous(x)))
    local t = x:transpose()
    assert.is_false(C.tide_tensor_is_contiguous(t))
    local c = t:contiguous()
    assert.is_true(C.tide_tensor_is_contiguous(c))
    assert.are.same(t:totable(), c:totable())
    assert.is_false(shares(x, c))
    local b = tide.broadcast_to(tide.tensor { 1.5, 2.5 }, { 2, 2 }):contiguous()
    assert.are.same({ 2, 1 }, { tonumber(b.strides[0]), tonumber(b.strides[1]) })
    assert.are.same({ { 1.5, 2.5 }, { 1.5, 2.5 } }, b:totable())
  end)
end)
