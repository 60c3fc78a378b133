-- tests/spec/saved_model/tf_ops_more_spec.lua — the TF ops kernels/io/tf_ops_more.c maps (Einsum in its forms,
-- OneHot, ResourceGather, StridedSlice with a new axis and with run-time bounds) against TF 2.21's outputs
-- (tests/fixtures/tf_saved_model/ops_more_gen.py), and their errors.
local tide = require "tide"
local h = require "helpers"

local FIX = "tests/fixtures/tf_saved_model/"
local E = dofile(FIX .. "ops_more_expected.lua")

describe("TF SavedModel ops of Transformer encoders", function()
  local m = tide.saved_model.load(FIX .. "ops_more")
  local out = m.signatures.serving_default {
    x = tide.tensor(E.x, "float32"), ids = tide.tensor(E.ids, "int32"), n = tide.tensor(E.n, "int32") }

  for _, name in ipairs { "proj", "back", "scores", "outer", "trace_sum", "perm", "private" } do
    it("maps Einsum: " .. name, function() h.close(out[name], E[name], 1e-5) end)
  end

  it("maps OneHot (on and off values, axis 0)", function()
    h.close(out.one_hot, E.one_hot, 0)
    h.close(out.one_hot_axis0, E.one_hot_axis0, 0)
  end)

  it("maps ResourceGather (tf.gather of a variable)", function() h.close(out.gather, E.gather, 0) end)

  it("maps StridedSlice with a new axis", function() h.close(out.new_axis, E.new_axis, 0) end)

  it("maps StridedSlice with bounds known only at run time", function()
    h.close(out.head, E.head, 0)
    h.close(out.tail, E.tail, 0)
    h.close(out.at, E.at, 0)
    -- the bounds are read when the graph runs: another n, another slice
    local two = m.signatures.serving_default {
      x = tide.tensor(E.x, "float32"), ids = tide.tensor(E.ids, "int32"), n = tide.tensor(2, "int32") }
    assert.are.same({ 2, 2, 4 }, two.head.shape)
    assert.are.same({ 2, 2, 2 }, two.tail.shape)
    h.close(two.at, { E.x[1][2], E.x[2][2] }, 1e-7)
  end)
end)
