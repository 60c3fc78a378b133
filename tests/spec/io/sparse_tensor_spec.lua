-- tests/spec/io/sparse_tensor_spec.lua — tide.SparseTensor: construction (TF's
-- indices/values/dense_shape), its checks, and to_dense for numbers and strings.
local tide = require "tide"

local function error_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(err)
end

describe("tide.SparseTensor", function()
  it("holds int64 indices and dense_shape and the values", function()
    local sp = tide.SparseTensor({ { 0, 1 }, { 2, 0 } }, tide.tensor({ 5, 6 }, "float32"), { 3, 2 })
    assert.are.equal("int64", sp.indices.dtype)
    assert.are.equal("int64", sp.dense_shape.dtype)
    assert.are.same({ 3, 2 }, sp:shape_list())
    assert.are.equal("float32", sp:value_dtype())
    local kw = tide.SparseTensor { indices = { { 1 } }, values = { 7 }, dense_shape = { 4 } }
    assert.are.same({ 0, 7, 0, 0 }, kw:to_dense():totable())
    assert.matches("SparseTensor%(indices=", tostring(sp))
  end)

  it("to_dense puts the values at their indices and the default elsewhere", function()
    local sp = tide.SparseTensor({ { 0, 1 }, { 2, 0 } }, tide.tensor({ 5, 6 }, "int64"), { 3, 2 })
    assert.are.same({ { 0, 5 }, { 0, 0 }, { 6, 0 } }, sp:to_dense():totable())
    assert.are.same({ { -1, 5 }, { -1, -1 }, { 6, -1 } }, sp:to_dense(-1):totable())
    assert.are.equal("int64", sp:to_dense().dtype)
    local empty = tide.SparseTensor({}, tide.zeros({ 0 }, "float32"), { 2, 3 })
    assert.are.same({ { 9, 9, 9 }, { 9, 9, 9 } }, empty:to_dense(9):totable())
  end)

  it("to_dense of string values gives a string tensor", function()
    local sp = tide.SparseTensor({ { 0, 0 }, { 1, 1 } }, tide.tensor({ "a", "b" }, "string"), { 2, 2 })
    local d = sp:to_dense()
    assert.are.equal("string", d.dtype)
    assert.are.same({ { "a", "" }, { "", "b" } }, d:totable())
    assert.are.same({ { "a", "-" }, { "-", "b" } }, sp:to_dense("-"):totable())
    assert.matches("must be a string", error_of(sp.to_dense, sp, 0))
  end)

  it("refuses inconsistent parts with clear errors", function()
    assert.matches("expects indices, values and dense_shape", error_of(tide.SparseTensor, { { 0 } }))
    assert.matches("indices must be %[N, 2%]", error_of(tide.SparseTensor, { { 0 } }, { 1 }, { 2, 2 }))
    assert.matches("values must be %[2%]", error_of(tide.SparseTensor, { { 0 }, { 1 } }, { 1 }, { 2 }))
    assert.matches("dense_shape must be 1%-D", error_of(tide.SparseTensor, { { 0 } }, { 1 }, { { 2 } }))
    assert.matches("must be int64", error_of(tide.SparseTensor, tide.tensor { { 0 } }, { 1 }, { 2 }))
  end)
end)
