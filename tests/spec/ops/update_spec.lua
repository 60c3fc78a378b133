-- tests/spec/ops/update_spec.lua — slice_update (tf.tensor_strided_slice_update):
-- values for every kind of slice spec, strided inputs, dtypes, a copy that
-- leaves x alone, and its errors.
local tide = require "tide"
local h = require "helpers"
local slice_update = tide.slice_update

-- A fresh 3x4 tensor {{1..4},{5..8},{9..12}}.
local function m34(dt)
  return tide.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }, dt or "float32")
end

describe("slice_update", function()
  it("replaces a range of columns", function()
    local y = slice_update(m34(), { {}, { 1, 3 } }, tide.tensor({ { 0, -1 }, { -2, -3 }, { -4, -5 } }, "float32"))
    assert.are.same({ { 1, 0, -1, 4 }, { 5, -2, -3, 8 }, { 9, -4, -5, 12 } }, y:totable())
    assert.are.equal("float32", y.dtype)
    assert.are.same({ 3, 4 }, y.shape:as_list())
    -- the method form
    assert.are.same({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 0, 0, 0, 0 } },
      m34():slice_update({ 2 }, tide.zeros({ 4 })):totable())
  end)

  it("replaces a row (a shrunk index) and one element", function()
    assert.are.same({ { 1, 2, 3, 4 }, { -1, -2, -3, -4 }, { 9, 10, 11, 12 } },
      slice_update(m34(), { 1 }, { -1, -2, -3, -4 }):totable())
    assert.are.same({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 70 } },
      slice_update(m34(), { -1, -1 }, 70):totable())
  end)

  it("follows steps, negative steps and clamped bounds as x:slice does", function()
    local u = tide.tensor({ { 10, 20 }, { 30, 40 }, { 50, 60 } }, "float32")
    -- rows 2, 1, 0 and columns 3, 1
    assert.are.same({ { 1, 60, 3, 50 }, { 5, 40, 7, 30 }, { 9, 20, 11, 10 } },
      slice_update(m34(), { { nil, nil, -1 }, { nil, nil, -2 } }, u):totable())
    assert.are.same({ { 0, 2, 0, 4 }, { 5, 6, 7, 8 }, { 0, 10, 0, 12 } },
      slice_update(m34(), { { 0, 99, 2 }, { -100, 3, 2 } }, tide.zeros({ 2, 2 })):totable())
  end)

  it("accepts '...' and tide.newaxis (update has the slice's shape with its new axes)", function()
    assert.are.same({ { 1, 0, 3, 4 }, { 5, 0, 7, 8 }, { 9, 0, 11, 12 } },
      slice_update(m34(), { "...", 1 }, tide.zeros({ 3 })):totable())
    assert.are.same({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { -3, -2, -1, 12 } },
      slice_update(m34(), { tide.newaxis, 2, { 2, nil, -1 } }, tide.tensor({ { -1, -2, -3 } }, "float32")):totable())
  end)

  it("leaves x unchanged and returns a new tensor", function()
    local x = m34()
    local y = slice_update(x, { 0 }, tide.zeros({ 4 }))
    assert.are.same({ 1, 2, 3, 4 }, x[0]:totable())
    assert.are.same({ 0, 0, 0, 0 }, y[0]:totable())
    -- an update that is a view of x itself
    local z = slice_update(x, { { 0, 2 } }, x:slice { { 1, 3 } })
    assert.are.same({ { 5, 6, 7, 8 }, { 9, 10, 11, 12 }, { 9, 10, 11, 12 } }, z:totable())
  end)

  it("takes strided x and update (transposed and stepped views)", function()
    local xt = m34():transpose()          -- 4x3
    local u = tide.tensor({ { 1, 2, 3, 4, 5, 6 }, { 7, 8, 9, 10, 11, 12 } }, "float32"):slice { {}, { nil, nil, 2 } }
    local y = slice_update(xt, { { 1, 3 } }, u)   -- u is {{1, 3, 5}, {7, 9, 11}}
    assert.are.same({ { 1, 5, 9 }, { 1, 3, 5 }, { 7, 9, 11 }, { 4, 8, 12 } }, y:totable())
    local v = slice_update(xt, { {}, 0 }, tide.tensor({ 10, 20, 30, 40 }, "float32"):slice { { nil, nil, -1 } })
    assert.are.same({ { 40, 5, 9 }, { 30, 6, 10 }, { 20, 7, 11 }, { 10, 8, 12 } }, v:totable())
  end)

  it("works for every dtype family and a Lua table update of x's dtype", function()
    for _, dt in ipairs { "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64" } do
      local y = slice_update(m34(dt), { 2, { 1, 3 } }, { 0, 1 })
      assert.are.equal(dt, y.dtype)
      assert.are.same({ 9, 0, 1, 12 }, y[2]:totable())
    end
    local b = tide.tensor { { true, false }, { false, true } }
    assert.are.same({ { true, true }, { false, true } }, slice_update(b, { 0, 1 }, true):totable())
  end)

  it("handles an empty slice and a 0-d x", function()
    local y = slice_update(m34(), { { 2, 2 } }, tide.zeros({ 0, 4 }))
    assert.are.same(m34():totable(), y:totable())
    local s = slice_update(tide.tensor(3.5), {}, tide.tensor(1.25))
    assert.are.equal(1.25, s:item())
  end)

  it("writes large tensors (the parallel copy path)", function()
    local x = tide.zeros({ 300, 500 }, "float64")
    local y = slice_update(x, { { 10, 290, 7 }, { nil, nil, -3 } }, tide.ones({ 40, 167 }, "float64"))
    assert.are.equal(40 * 167, tide.reduce_sum(y):item())
    assert.are.equal(1, y[10][499]:item())
    assert.are.equal(0, y[11][499]:item())
    assert.are.equal(0, tide.reduce_sum(x):item())
  end)

  it("refuses an update of another shape, naming both shapes", function()
    local err = h.errors("slice_update: update has shape [2, 2] but the slice has shape [3, 2]", slice_update, m34(),
      { {}, { 1, 3 } }, tide.zeros({ 2, 2 }))
    assert.truthy(err:find("[3, 4]", 1, true))
    h.errors("update has shape [1, 2] but the slice has shape [2]", slice_update, m34(), { 0, { 0, 2 } },
      tide.zeros({ 1, 2 }))
    -- no broadcasting, as TF
    h.errors("update has shape [] but the slice has shape [4]", slice_update, m34(), { 0 }, 5)
    h.errors("slice_update: update has shape (3,) but the slice has shape (1, 3)", slice_update, m34(),
      { tide.newaxis, 0, { 1, 4 } }, tide.zeros({ 3 }))
  end)

  it("refuses an update of another dtype", function()
    h.errors("slice_update: update is float64 but x is float32 (convert with :cast(\"float32\"))", slice_update,
      m34(), { 0 }, tide.zeros({ 4 }, "float64"))
    h.errors("slice_update", slice_update, tide.tensor { true, false }, { 0 }, 1)
  end)

  it("refuses bad specs", function()
    h.errors("slice_update: index 3 is out of range for dimension 0 of size 3", slice_update, m34(), { 3 },
      tide.zeros({ 4 }))
    h.errors("slice_update: step cannot be zero", slice_update, m34(), { { 0, 2, 0 } }, tide.zeros({ 2, 4 }))
    h.errors("slice_update: 3 indices for a tensor of rank 2", slice_update, m34(), { 0, 0, 0 }, 1)
    h.errors("slice_update: only one '...' is allowed", slice_update, m34(), { "...", "..." }, 1)
    h.errors("slice_update: index must be an integer", slice_update, m34(), { 0.5 }, 1)
    h.errors("slice_update: entry 1 must be an index", slice_update, m34(), { "x" }, 1)
    h.errors("slice_update: expected a table spec", slice_update, m34(), 0, 1)
  end)

  it("refuses nil arguments", function()
    h.errors("slice_update: x is nil", slice_update, nil, { 0 }, 1)
    h.errors("slice_update: spec is nil", slice_update, m34(), nil, 1)
    h.errors("slice_update: update is nil", slice_update, m34(), { 0 })
  end)
end)
