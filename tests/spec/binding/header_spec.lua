-- The tensor header as Lua sees it: readable, never writable (kernels trust
-- it), its arrays read only inside their bounds, and no field a way to reach
-- memory outside the header. The layout matches C's (tests/c/test_tensor.c
-- checks the same offsets on the C side).
local tide = require "tide"
local ffi = require "ffi"
local h = require "helpers"

local function tensors()
  return { tide.tensor{{1, 2, 3}, {4, 5, 6}}, tide.ones{100, 3}, tide.tensor(2.5), tide.ones{4}:reshape{2, 2} }
end

describe("the tensor header from Lua", function()
  it("refuses writes to every field", function()
    for _, x in ipairs(tensors()) do
      local before = x:totable()
      for _, f in ipairs {
        function() x.dims[0] = 1e9 end, function() x.strides[0] = 1e9 end, function() x.dims[1] = -1 end,
        function() x.nelem = 1e6 end, function() x.ndim = 7 end, function() x.dt = 1 end,
        function() x.dev = 1 end, function() x.flags = 0 end, function() x.data = nil end,
        function() x.storage = nil end, function() x.dims = x.strides end,
        function() x.inline_data.sym.node = 5 end, function() x.inline_data.sym.graph_id = 1 end,
        function() x.inline_data.sym.index = 1 end,
      } do
        h.errors("attempt to write to constant location", f)
      end
      assert.are.same(before, x:totable()) -- nothing changed
    end
  end)

  it("lets the issue's probes fail cleanly, and the tensor keeps working", function()
    local x = tide.ones{2, 3}
    assert.has_error(function() x.dims[0] = 1e9 end)
    assert.are.equal(6, x:sum():item())
    assert.has_error(function() x.strides[0] = 1e9 end)
    assert.are.equal(6, x:sum():item())
    assert.has_error(function() x.nelem = 1e6 end)
    assert.are.same({6}, x:reshape{-1}.shape)
  end)

  it("reads dims and strides as Lua numbers, inside their bounds only", function()
    local x = tide.ones{2, 3, 4}
    assert.are.equal(2, x.dims[0])
    assert.are.equal(4, x.dims[2])
    assert.are.equal("number", type(x.dims[0]))
    assert.are.equal(12, x.strides[0])
    assert.are.equal(1, x.strides[2])
    local t = x:transpose()
    assert.are.equal(1, t.strides[0])
    for _, bad in ipairs { 8, -1, 1e9, -1e9, 0.5, 0 / 0, "x", true } do
      h.errors("tensor dims and strides are indexed by an integer in [0, 8)", function() return x.dims[bad] end)
      h.errors("tensor dims and strides are indexed by an integer in [0, 8)", function() return x.strides[bad] end)
    end
  end)

  it("hands out no pointer that reads or writes memory", function()
    local x = tide.ones{4}
    h.errors("attempt to perform arithmetic", function() return x.dims + 1 end)
    h.errors("attempt to perform arithmetic", function() return x.data + 1 end)
    h.errors("size of C type is unknown", function() return x.data[0] end)
    h.errors("size of C type is unknown", function() return x.storage[0] end)
    h.errors("no member named 'bytes'", function() return x.inline_data.bytes end)
    h.errors("no member named 'f64_'", function() return x.inline_data.f64_ end)
    h.errors("no member named 'i64_'", function() return x.inline_data.i64_ end)
    assert.is_truthy(tostring(ffi.typeof(x.data)):find("const void", 1, true)) -- untyped and const
  end)

  it("keeps the tensor's methods for names that are not fields", function()
    local x = tide.ones{2, 2}
    h.errors("cannot set 'shape' on a tensor", function() x.shape = {4} end)
    h.errors("tensor has no method or property 'nope'", function() return x.nope end)
    assert.are.same({2, 2}, x.shape)
  end)

  it("has the C layout", function()
    -- The same numbers as tests/c/test_tensor.c's layout check.
    local offsets = { data = 0, storage = 8, dims = 16, strides = 80, nelem = 144, ndim = 152, dt = 156, dev = 160,
                      flags = 164, inline_data = 168 }
    for field, off in pairs(offsets) do assert.are.equal(off, ffi.offsetof("tide_tensor", field), field) end
    assert.are.equal(200, ffi.sizeof("tide_tensor"))
    assert.are.equal(8, ffi.alignof("tide_tensor"))
    assert.are.equal(64, ffi.sizeof("tide_ffi_dims"))
  end)
end)
