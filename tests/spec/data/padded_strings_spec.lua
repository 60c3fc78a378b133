-- tests/spec/data/padded_strings_spec.lua — padded_batch of string components
-- (run in Lua): padding with "" as TF does, or with a padding string given.
-- The expected values are what TF 2.21's padded_batch gave for the same inputs.
local tide = require "tide"
local h = require "helpers"
local D = tide.data.Dataset

-- A generator dataset of the given Lua values made into tensors by tide.tensor.
local function gen_ds(items, signature)
  return D.from_generator(function()
    local i = 0
    return function()
      i = i + 1
      local v = items[i]
      if v == nil then return nil end
      if signature[1] then return { tide.tensor(v[1]), tide.tensor(v[2], "int32") } end
      return tide.tensor(v)
    end
  end, { output_signature = signature })
end

local function totables(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:totable() end
  return out
end

describe("padded_batch of strings", function()
  local words = { { "a" }, { "b", "c", "d" }, { "e", "f" } }
  local sig = tide.TensorSpec({ tide.None }, "string")

  it("pads with the empty string by default", function()
    -- TF: [[[b'a', b'', b''], [b'b', b'c', b'd']], [[b'e', b'f']]]
    assert.are.same({ { { "a", "", "" }, { "b", "c", "d" } }, { { "e", "f" } } },
      totables(gen_ds(words, sig):padded_batch(2)))
  end)

  it("pads to padded_shapes with a padding string", function()
    -- TF: padded_shapes=[4], padding_values="<pad>"
    local want = { { { "a", "<pad>", "<pad>", "<pad>" }, { "b", "c", "d", "<pad>" }, { "e", "f", "<pad>", "<pad>" } } }
    assert.are.same(want, totables(gen_ds(words, sig):padded_batch(3, { padded_shapes = { 4 },
      padding_values = "<pad>" })))
    -- a 0-d string tensor as the padding value does the same
    assert.are.same(want, totables(gen_ds(words, sig):padded_batch(3, { padded_shapes = { 4 },
      padding_values = tide.tensor("<pad>") })))
  end)

  it("pads every dim of a matrix, keeping empty strings of the input", function()
    -- TF: [[[[b'x', b'-'], [b'-', b'-']], [[b'y', b'z'], [b'w', b'']]]]
    local ds = gen_ds({ { { "x" } }, { { "y", "z" }, { "w", "" } } }, tide.TensorSpec({ tide.None, tide.None }, "string"))
    assert.are.same({ { { { "x", "-" }, { "-", "-" } }, { { "y", "z" }, { "w", "" } } } },
      totables(ds:padded_batch(2, { padding_values = "-" })))
  end)

  it("pads a string and a number component of one element, each with its own value", function()
    -- TF: padding_values=("?", -1) gives ([[b'a', b'?'], [b'b', b'c']], [[1, -1], [2, 3]])
    local ds = gen_ds({ { { "a" }, { 1 } }, { { "b", "c" }, { 2, 3 } } },
      { tide.TensorSpec({ tide.None }, "string"), tide.TensorSpec({ tide.None }, "int32") })
    local got = {}
    for s, n in ds:padded_batch(2, { padding_values = { "?", -1 } }):iter() do
      got[#got + 1] = { s:totable(), n:totable(), n.dtype }
    end
    assert.are.same({ { { { "a", "?" }, { "b", "c" } }, { { 1, -1 }, { 2, 3 } }, "int32" } }, got)
    -- defaults: "" for the strings, 0 for the numbers
    got = {}
    for s, n in ds:padded_batch(2):iter() do got[#got + 1] = { s:totable(), n:totable() } end
    assert.are.same({ { { { "a", "" }, { "b", "c" } }, { { 1, 0 }, { 2, 3 } } } }, got)
  end)

  it("refuses a padding value of the wrong kind, as TF does", function()
    h.errors("padding_values for component 0 (string) must be a string, got number", function()
      gen_ds(words, sig):padded_batch(2, { padding_values = 0 })
    end)
    h.errors("padding_values for component 0 (int64) must be a number or bool, got the string", function()
      D.range(3):padded_batch(2, { padding_values = "x" })
    end)
    h.errors("must be a scalar", function()
      gen_ds(words, sig):padded_batch(2, { padding_values = tide.tensor { "a", "b" } })
    end)
  end)
end)
