-- tests/spec/ops/scatter_spec.lua — scatter_add (gather's inverse): values,
-- repeated indices, axes and batch_dims, dtypes, strided inputs, the parallel
-- path against a plain Lua loop, and its errors.
local lcg_step = require "lcg"
local tide = require "tide"
local h = require "helpers"
-- tide.scatter_add once init.lua exports it
local scatter_add = tide.scatter_add or require("tide.ops.scatter").scatter_add

local f32 = function(v) return tide.tensor(v, "float32") end

describe("scatter_add", function()
  it("adds rows of updates at indices along axis 0; repeats accumulate", function()
    local r = scatter_add(tide.ones({ 4, 2 }), { 1, 3, 1 }, f32{ { 1, 2 }, { 3, 4 }, { 5, 6 } })
    assert.are.same({ 4, 2 }, r.shape:as_list())
    assert.are.equal("float32", r.dtype)
    h.close(r, { { 1, 1 }, { 7, 9 }, { 1, 1 }, { 4, 5 } })
  end)

  it("leaves base unchanged (it returns a new tensor)", function()
    local base = f32{ 1, 2, 3 }
    local r = scatter_add(base, { 0 }, f32{ 10 })
    h.close(r, { 11, 2, 3 })
    h.close(base, { 1, 2, 3 })
  end)

  it("is the inverse of gather: updates shaped like gather's output", function()
    -- indices [2, 2] along axis 1 of a [2, 3, 2] base: updates [2, 2, 2, 2]
    local base = tide.zeros({ 2, 3, 2 })
    local idx = tide.tensor{ { 0, 2 }, { 2, 2 } }
    local upd = tide.reshape(tide.range(1, 17, 1, "float32"), { 2, 2, 2, 2 })
    local r = scatter_add(base, idx, upd, 1)
    h.close(r, {
      { { 1, 2 }, { 0, 0 }, { 3 + 5 + 7, 4 + 6 + 8 } },
      { { 9, 10 }, { 0, 0 }, { 11 + 13 + 15, 12 + 14 + 16 } },
    })
    -- and gather reads back what scatter_add wrote into zeros, for distinct indices
    local g = tide.gather(scatter_add(tide.zeros({ 3, 2 }), { 2, 0 }, f32{ { 1, 2 }, { 3, 4 } }), { 2, 0 })
    h.close(g, { { 1, 2 }, { 3, 4 } })
  end)

  it("takes axis, negative axes and batch_dims as tf.gather does", function()
    local base = tide.zeros({ 2, 3 })
    local idx = tide.tensor{ { 0, 2, 2 }, { 1, 1, 0 } }
    local upd = f32{ { 1, 2, 3 }, { 4, 5, 6 } }
    local want = { { 1, 0, 5 }, { 6, 9, 0 } }
    h.close(scatter_add(base, idx, upd, { axis = 1, batch_dims = 1 }), want)
    h.close(scatter_add(base, idx, upd, { axis = -1, batch_dims = -1 }), want)
    h.close(scatter_add(base, idx, upd, { batch_dims = 1 }), want) -- axis defaults to batch_dims
    h.close(scatter_add(base, idx, upd, 1, 1), want)
    -- axis 1 without batch dims: updates [2] + [2, 3]
    local r = scatter_add(tide.zeros({ 2, 3 }), tide.tensor{ 2, 0 }, f32{ { 1, 2 }, { 3, 4 } }, -1)
    h.close(r, { { 2, 0, 1 }, { 4, 0, 3 } })
  end)

  it("takes 0-d indices (one block) and int64 indices", function()
    h.close(scatter_add(tide.zeros({ 3, 2 }), tide.tensor(1), f32{ 5, 6 }), { { 0, 0 }, { 5, 6 }, { 0, 0 } })
    h.close(scatter_add(tide.zeros({ 3 }), tide.tensor({ 2, 2 }, "int64"), f32{ 1, 2 }), { 0, 0, 3 })
  end)

  it("works for every numeric dtype (halves accumulate in float32)", function()
    for _, dt in ipairs { "float32", "float64", "int8", "uint8", "int32", "int64" } do
      local r = scatter_add(tide.tensor({ 1, 2, 3 }, dt), { 2, 0, 2 }, tide.tensor({ 4, 5, 6 }, dt))
      assert.are.equal(dt, r.dtype)
      h.close(r, { 6, 2, 13 })
    end
    for _, dt in ipairs { "float16", "bfloat16" } do
      local r = scatter_add(tide.tensor({ 1, 2, 3 }, dt), { 2, 0, 2 }, tide.tensor({ 0.5, 5, 6 }, dt))
      assert.are.equal(dt, r.dtype)
      h.close(r, { 6, 2, 9.5 })
    end
    -- 1024 additions of 1 into a half: float32 accumulation keeps it exact
    local idx = {}
    for i = 1, 1024 do idx[i] = 0 end
    h.close(scatter_add(tide.zeros({ 1 }, "float16"), idx, tide.ones({ 1024 }, "float16")), { 1024 })
  end)

  it("accepts strided base, indices and updates", function()
    local base = f32{ { 1, 2, 3 }, { 4, 5, 6 } }:transpose() -- [3, 2]
    local idx = tide.tensor{ 0, 9, 2, 9, 2 }:slice{ { 0, 5, 2 } } -- {0, 2, 2}
    local upd = f32{ { 10, 20, 30 }, { 40, 50, 60 } }:transpose() -- [3, 2]
    h.close(scatter_add(base, idx, upd), { { 11, 44 }, { 2, 5 }, { 3 + 20 + 30, 6 + 50 + 60 } })
  end)

  it("handles empty indices and empty tensors", function()
    h.close(scatter_add(f32{ 1, 2 }, tide.zeros({ 0 }, "int32"), tide.zeros({ 0 })), { 1, 2 })
    local r = scatter_add(tide.zeros({ 0, 3 }), tide.zeros({ 0 }, "int32"), tide.zeros({ 0, 3 }))
    assert.are.same({ 0, 3 }, r.shape:as_list())
  end)

  it("matches a plain loop on large inputs (the parallel path)", function()
    local N, I, inner = 37, 6000, 24
    local idx, ref = {}, {}
    local s = 1
    for i = 1, I do
      s = lcg_step(s)
      idx[i] = s % N
    end
    local upd = tide.reshape(tide.cast(tide.range(I * inner) % 7, "float64"), { I, inner })
    local uv = upd:totable()
    for n = 1, N do
      ref[n] = {}
      for j = 1, inner do ref[n][j] = 0 end
    end
    for i = 1, I do
      local row = ref[idx[i] + 1]
      for j = 1, inner do row[j] = row[j] + uv[i][j] end
    end
    h.close(scatter_add(tide.zeros({ N, inner }, "float64"), idx, upd), ref)
    -- the same through batch_dims: two batches writing their own halves
    local b2 = scatter_add(tide.zeros({ 2, N, inner }, "float64"), tide.stack{ tide.tensor(idx), tide.tensor(idx) },
      tide.stack{ upd, upd }, { axis = 1, batch_dims = 1 })
    h.close(b2, { ref, ref })
  end)

  describe("errors", function()
    local base = tide.zeros({ 3, 2 })
    it("an index out of range is an index error naming it", function()
      h.errors("indices[1] = 3 is not in [0, 3)", scatter_add, base, { 0, 3 }, tide.zeros({ 2, 2 }))
      h.errors("indices[0] = -1 is not in [0, 3)", scatter_add, base, { -1 }, tide.zeros({ 1, 2 }))
      h.errors("indices[1, 0] = 7", scatter_add, base, { { 0 }, { 7 } }, tide.zeros({ 2, 1, 2 }))
    end)

    it("rejects wrong dtypes", function()
      h.errors("indices must be int32 or int64, got float32", scatter_add, base, f32{ 0 }, tide.zeros({ 1, 2 }))
      h.errors("updates are float64 but base is float32", scatter_add, base, { 0 },
        tide.zeros({ 1, 2 }, "float64"))
      h.errors("scatter_add: base must be a numeric tensor", scatter_add, tide.tensor{ true, false }, { 0 },
        tide.tensor{ true })
    end)

    it("rejects an updates shape other than gather's output", function()
      h.errors("updates have shape [2, 3] but must have shape [2, 2]", scatter_add, base, { 0, 1 },
        tide.zeros({ 2, 3 }))
      h.errors("must have shape [3, 1]", scatter_add, base, { 1 }, tide.zeros({ 3 }), 1)
    end)

    it("rejects bad axes and batch_dims", function()
      h.errors("axis 2 is out of range", scatter_add, base, { 0 }, tide.zeros({ 1, 2 }), 2)
      h.errors("batch_dims 2 is out of range", scatter_add, base, { 0 }, tide.zeros({ 1, 2 }),
        { axis = 1, batch_dims = 2 })
      h.errors("batch_dims (1) must be less than or equal to axis (0)", scatter_add, base, { { 0 }, { 1 }, { 0 } },
        tide.zeros({ 3, 2 }), { axis = 0, batch_dims = 1 })
      h.errors("must agree on their first 1 dims", scatter_add, base, { { 0 }, { 1 } }, tide.zeros({ 2, 1 }),
        { axis = 1, batch_dims = 1 })
      h.errors("base must have at least one dimension", scatter_add, tide.tensor(1, "float32"), tide.tensor(0),
        f32(1))
      h.errors("unknown option 'axes'", scatter_add, base, { 0 }, tide.zeros({ 1, 2 }), { axes = 0 })
    end)

    it("rejects nil arguments", function()
      h.errors("base is nil", scatter_add, nil, { 0 }, tide.zeros({ 1, 2 }))
      h.errors("indices is nil", scatter_add, base, nil, tide.zeros({ 1, 2 }))
      h.errors("updates is nil", scatter_add, base, { 0 })
    end)
  end)
end)
