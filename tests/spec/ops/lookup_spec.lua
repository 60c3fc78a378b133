-- tests/spec/ops/lookup_spec.lua — tide.lookup (kernels/cpu/lookup.c, ragged.c): hashed vocabularies as
-- tensors (table, find with Keras's OOV slots), ragged_to_tensor, and TextVectorization's token ops (ngrams,
-- characters); values, errors, a big vocabulary, data-map threads. Keras's layers over them are checked against
-- TF in tests/spec/layers/text_vectorization_spec.lua and preprocessing_categorical_spec.lua.
local tide = require "tide"
local h = require "helpers"
local LK = tide.lookup
local NG = require "tide.layers.preprocessing.text_ngrams"

describe("tide.lookup", function()
  it("finds strings and ints, with Keras's OOV slots", function()
    local v = tide.tensor { "a", "bb", "", "ccc" }
    local t = LK.table(v)
    assert.are.same({ 8 }, t.shape:as_list())
    h.close(LK.find(tide.tensor { { "bb", "x" }, { "", "ccc" } }, v, t, { first = 2, num_oov = 1 }),
      { { 3, 1 }, { 4, 5 } }, 0)
    h.close(LK.find(tide.tensor { "zz", "a" }, v, t), { -1, 0 }, 0)
    local iv = tide.tensor({ 7, -2, 40 }, "int64")
    -- unknown ints: first - num_oov + floormod(key, num_oov)
    h.close(LK.find(tide.tensor { 40, 5, -7, 7 }, iv, LK.table(iv), { first = 4, num_oov = 3 }), { 6, 3, 3, 4 }, 0)
  end)

  it("keeps a repeated token's first index, and finds every token of a 30k vocabulary", function()
    local v = tide.tensor { "x", "y", "x" }
    h.close(LK.find(tide.tensor { "x", "y" }, v, LK.table(v)), { 0, 1 }, 0)
    local words, keys, want = {}, {}, {}
    for i = 1, 30000 do words[i] = "w" .. i end
    for i = 1, 2000 do keys[i] = "w" .. (i * 17) ; want[i] = i * 17 <= 30000 and i * 17 - 1 or -1 end
    local bv = tide.tensor(words)
    h.close(LK.find(tide.tensor(keys), bv, LK.table(bv)), want, 0)
  end)

  it("runs traced and in a C data map", function()
    local v = tide.tensor { "a", "b" }
    local t = LK.table(v)
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor { "b", "q", "a" })
      :map(function(x) return LK.find(x, v, t, { first = 1, num_oov = 1 }) end)
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local got = {}
    for x in ds:iter() do got[#got + 1] = x:item() end
    assert.are.same({ 2, 0, 1 }, got)
  end)

  it("refuses what is not a table of this vocabulary, keys of another dtype, and bad OOV counts", function()
    local v = tide.tensor { "a", "b", "c" }
    h.errors("the table has 2 slots", function() LK.find(tide.tensor { "a" }, v, LK.table(tide.tensor { "a" })) end)
    h.errors("must have the vocabulary's dtype", function()
      LK.find(tide.tensor { 1.5 }, v, LK.table(v))
    end)
    h.errors("at most one OOV slot", function() LK.find(tide.tensor { "a" }, v, LK.table(v), { first = 2, num_oov = 2 }) end)
    h.errors("must be at least the OOV slots", function() LK.find(tide.tensor { "a" }, v, LK.table(v), { first = 0, num_oov = 1 }) end)
    h.errors("the table must be lookup_table's int64 vector", function()
      LK.find(tide.tensor { "a" }, v, tide.tensor { 1, 2, 3, 4, 5, 6, 7, 8 })
    end)
    -- a forged table naming a slot past the vocabulary
    local forged = tide.fill({ 8 }, 5):cast("int64")
    h.errors("names a slot past the vocabulary", function() LK.find(tide.tensor { "a" }, v, forged) end)
    h.errors("the vocabulary must be string or int64", function() LK.table(tide.tensor { 1.5 }) end)
    h.errors("the vocabulary must be a vector", function() LK.table(tide.tensor { { "a" } }) end)
    h.errors("table must be the tensor", function() LK.find(tide.tensor { "a" }, v, { 1 }) end)
  end)
end)

describe("ragged_to_tensor", function()
  it("pads short rows, cuts long ones, keeps strings' references", function()
    local rs = tide.tensor({ 0, 2, 2, 5 }, "int64")
    h.close(LK.ragged_to_tensor(tide.tensor { 1, 2, 3, 4, 5 }, rs, 0), { { 1, 2, 0 }, { 0, 0, 0 }, { 3, 4, 5 } }, 0)
    h.close(LK.ragged_to_tensor(tide.tensor { 1, 2, 3, 4, 5 }, rs, -1, 2), { { 1, 2 }, { -1, -1 }, { 3, 4 } }, 0)
    local s = LK.ragged_to_tensor(tide.tensor { "a", "b", "c", "d", "e" }, rs, "-", 4)
    assert.are.same({ { "a", "b", "-", "-" }, { "-", "-", "-", "-" }, { "c", "d", "e", "-" } }, s:totable())
    -- RaggedTensor's own to_tensor gives the same
    local r = tide.strings.split(tide.tensor { "x y", "", "z" })
    assert.are.same(r:to_tensor():totable(), LK.ragged_to_tensor(r.values, r.row_splits, ""):totable())
  end)

  it("refuses bad row_splits and defaults", function()
    local v = tide.tensor { 1, 2 }
    h.errors("row_splits must start at 0 and end at the 2 values", function()
      LK.ragged_to_tensor(v, tide.tensor({ 0, 1 }, "int64"), 0)
    end)
    h.errors("must not decrease", function() LK.ragged_to_tensor(v, tide.tensor({ 0, 2, 1, 2 }, "int64"), 0) end)
    h.errors("row_splits must be a non-empty int64 vector", function() LK.ragged_to_tensor(v, tide.tensor { 0, 2 }, 0) end)
    h.errors("the default must be a scalar", function()
      LK.ragged_to_tensor(v, tide.tensor({ 0, 2 }, "int64"), { 0, 0 })
    end)
    h.errors("the width must be >= 0", function() LK.ragged_to_tensor(v, tide.tensor({ 0, 2 }, "int64"), 0, -1) end)
    h.errors("values must be", function()
      LK.ragged_to_tensor(tide.tensor { 1.5 }, tide.tensor({ 0, 1 }, "int64"), 0)
    end)
  end)
end)

describe("TextVectorization's token ops", function()
  it("ngrams row by row, width by width (TF's strings.ngrams, no padding)", function()
    local v, rs = NG.ngrams(tide.tensor { "a", "b", "c", "d" }, tide.tensor({ 0, 3, 3, 4 }, "int64"), { 1, 2, 3 })
    assert.are.same({ "a", "b", "c", "a b", "b c", "a b c", "d" }, v:totable())
    assert.are.same({ 0, 6, 6, 7 }, rs:totable())
    local w = NG.ngrams(tide.tensor { "x", "y" }, tide.tensor({ 0, 2 }, "int64"), { 2 }, "_")
    assert.are.same({ "x_y" }, w:totable())
    h.errors("n-gram widths must be >= 1", function()
      NG.ngrams(tide.tensor { "x" }, tide.tensor({ 0, 1 }, "int64"), { 0 })
    end)
    h.errors("row_splits must start at 0", function() NG.ngrams(tide.tensor { "x" }, tide.tensor({ 0, 3 }, "int64"), { 1 }) end)
  end)

  it("splits UTF-8 characters (an invalid byte is one of its own)", function()
    local v, rs = NG.characters(tide.tensor { "a\195\169", "", "\255z" })
    assert.are.same({ "a", "\195\169", "\255", "z" }, v:totable())
    assert.are.same({ 0, 2, 2, 4 }, rs:totable())
    h.errors("the input must be a string vector", function() NG.characters(tide.tensor { { "a" } }) end)
  end)
end)
