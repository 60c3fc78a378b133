-- tests/spec/nest_fixtures_spec.lua — tide.nest against TensorFlow 2.21's tf.nest
-- (and Keras 3's keras.tree for mixed keys): tests/fixtures/nest/cases.lua, written by gen.py beside it.
local tide = require "tide"
local h = require "helpers"

local nest = tide.nest
local CASES = dofile("tests/fixtures/nest/cases.lua")

-- What the spec expects in tide's message for each kind of mismatch TF names.
local CATEGORY = {
  count = "different numbers of values",
  type = "different kinds of node",
  keys = "different keys",
  leaf = "against a",
}

describe("tide.nest against tf.nest", function()
  it("has cases of every kind", function()
    assert.is_true(#CASES.structures >= 15)
    assert.is_true(#CASES.pairs >= 15)
    assert.is_true(#CASES.pack_errors >= 4)
  end)

  for _, c in ipairs(CASES.structures) do
    it("flattens in " .. c.ref .. "'s order: " .. c.name, function()
      assert.are.same(c.flat, nest.flatten(c.structure))
      local paths = nest.flatten_with_path(c.structure)
      assert.are.equal(#c.flat, #paths)
      for i, p in ipairs(paths) do assert.are.equal(c.flat[i], p[2]) end
    end)

    it("packs, maps and zips as " .. c.ref .. " does: " .. c.name, function()
      assert.are.same(c.packed, nest.pack_sequence_as(c.structure, c.values))
      assert.are.same(c.mapped, nest.map_structure(function(x) return "<" .. tostring(x) .. ">" end, c.structure))
      assert.are.same(c.other, nest.pack_sequence_as(c.structure, nest.flatten(c.other)))
      assert.are.same(c.zipped, nest.map_structure(function(a, b) return tostring(a) .. ":" .. tostring(b) end,
        c.structure, c.other))
      nest.assert_same_structure(c.structure, c.packed)
    end)
  end

  for _, c in ipairs(CASES.pairs) do
    it("judges structures as tf.nest does: " .. c.name, function()
      local same, why = nest.same_structure(c.a, c.b, c.check_types)
      assert.are.equal(c.same, same, why)
      if c.same then
        nest.assert_same_structure(c.a, c.b, c.check_types)
        nest.assert_same_structure(c.b, c.a, { check_types = c.check_types })
      else
        local err = h.errors("nest.assert_same_structure: the two structures differ at ", nest.assert_same_structure,
          c.a, c.b, c.check_types)
        assert(err:find(CATEGORY[c.category], 1, true), c.category .. ": " .. err)
        assert.is_false((nest.same_structure(c.b, c.a, c.check_types)))
      end
    end)
  end

  for _, c in ipairs(CASES.pack_errors) do
    it("refuses to pack as tf.nest does: " .. c.name, function()
      h.errors(string.format("nest.pack_sequence_as: the structure has %d lea%s, but flat has %d value", c.leaves,
        c.leaves == 1 and "f" or "ves", #c.flat), nest.pack_sequence_as, c.structure, c.flat)
    end)
  end
end)
