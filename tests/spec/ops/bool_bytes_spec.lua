-- Bool tensors over bytes other than 0 and 1 (from from_buffer, or wrapped C
-- memory): any nonzero byte is true, as in TF and numpy. A copy normalizes
-- the bytes to 1; a zero-copy view keeps them, and every op reads them as true.
local tide = require "tide"
local ffi = require "ffi"

describe("bool bytes other than 0 and 1", function()
  it("from_buffer copies map nonzero bytes to true (the issue's probe)", function()
    local b = tide.from_buffer(string.char(2, 3, 4, 5), {4}, "bool")
    assert.are.same({ true, true, true, true }, b:totable())
    assert.are.same({ 1, 1, 1, 1 }, b:cast("int32"):totable())
    assert.are.equal(4, b:cast("int32"):sum():item())
    local mem = ffi.new("uint8_t[5]", { 0, 2, 255, 1, 128 })
    local c = tide.from_buffer(mem, {5}, "bool")
    local raw = ffi.cast("const uint8_t *", c.data)
    for i, want in ipairs { 0, 1, 1, 1, 1 } do assert.are.equal(want, raw[i - 1]) end -- the copy holds 0 and 1
    assert.are.equal(0, mem[0]) -- the source is untouched
    assert.are.equal(255, mem[2])
  end)

  describe("a zero-copy view keeps the bytes, and every op reads nonzero as true", function()
    local mem = ffi.new("uint8_t[4]", { 0, 2, 255, 1 })
    local z = tide.from_buffer(mem, {4}, "bool", { copy = false })

    it("reads and prints them as true", function()
      assert.are.same({ false, true, true, true }, z:totable())
      assert.is_true(z[2]:item())
      assert.are.equal("tide.Tensor([False  True  True  True], shape=(4,), dtype=bool)", tostring(z))
    end)

    it("casts them to 1 in every dtype", function()
      for _, dt in ipairs { "int8", "uint8", "int32", "int64", "float32", "float64", "float16", "bfloat16", "bool" } do
        local c = z:cast(dt)
        local want = dt == "bool" and { false, true, true, true } or { 0, 1, 1, 1 }
        assert.are.same(want, c:totable(), dt)
      end
      assert.are.equal(3, z:cast("int32"):sum():item())
      assert.are.equal(3, tide.count_nonzero(z):item())
      assert.are.equal(0.75, z:cast("float32"):mean():item())
    end)

    it("gives reductions and logic ops the truth values", function()
      assert.is_true(tide.reduce_any(z):item())
      assert.is_false(tide.reduce_all(z):item())
      assert.is_true(tide.reduce_all(z:slice{ { 1, 4 } }):item())
      assert.are.same({ true, false, false, false }, tide.logical_not(z):totable())
      assert.are.same({ false, true, true, true }, tide.logical_and(z, z):totable())
      assert.are.same({ false, false, false, false }, tide.logical_xor(z, z):totable())
      assert.are.same({ true, true, true, true }, tide.equal(z, tide.tensor{ false, true, true, true }):totable())
      assert.are.same({ false, false, false, false },
        tide.not_equal(z, tide.tensor{ false, true, true, true }):totable())
    end)

    it("selects with them as true", function()
      assert.are.same({ 0, 1, 1, 1 }, tide.where(z, 1, 0):totable())
      assert.are.same({ 2, 3, 4 }, tide.boolean_mask(tide.tensor{ 1, 2, 3, 4 }, z):totable())
      assert.are.same({ { 1 }, { 2 }, { 3 } }, tide.where(z):totable())
      local u = tide.unique(z)
      assert.are.same({ false, true }, u:totable())
    end)

    it("reads them as true in traced (fused) graphs too", function()
      local f = tide.trace(function(x) return x:cast("int32") * 2 + 1, tide.logical_not(x) end)
      local a, b = f(z)
      assert.are.same({ 1, 3, 3, 3 }, a:totable())
      assert.are.same({ true, false, false, false }, b:totable())
      local g = tide.trace(function(x)
        return tide.cond(x[1], function() return tide.tensor(1) end, function() return tide.tensor(0) end)
      end)
      assert.are.equal(1, g(z):item())
    end)
  end)
end)
