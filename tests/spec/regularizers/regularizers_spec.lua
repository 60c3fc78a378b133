-- tests/spec/regularizers/regularizers_spec.lua — tide.regularizers against
-- Keras 3's values (tests/fixtures/keras/layers.lua), configs and errors.
local tide = require "tide"
local h = require "helpers"
local R = tide.regularizers
local F = dofile("tests/fixtures/keras/layers.lua")

describe("tide.regularizers", function()
  local w = tide.tensor(F.regularizers.w, "float32")

  it("l1, l2 and l1_l2 give Keras's penalties (l2 without the 1/2)", function()
    h.close(R.l1(0.01)(w), { F.regularizers.l1 }, 1e-6)
    h.close(R.l2(0.02)(w), { F.regularizers.l2 }, 1e-6)
    h.close(R.l1_l2 { l1 = 0.003, l2 = 0.004 }(w), { F.regularizers.l1_l2 }, 1e-6)
    h.close(R.L2()(tide.tensor({ 1, 2 }, "float64")), { 0.05 }, 1e-12) -- default factor 0.01
    h.close(R.L1()(tide.tensor({ 1, -2 }, "float64")), { 0.03 }, 1e-12)
    assert.are.equal(0, R.L1L2()(w):item())                            -- both factors default to 0
    assert.are.equal("float32", R.L1L2()(w).dtype)
  end)

  it("apply to Variables and differentiate", function()
    local v = tide.Variable({ 1, -2 })
    local tape = tide.GradientTape()
    local loss = tape:run(function() return R.l1_l2 { l1 = 0.5, l2 = 0.25 }(v) end)
    h.close(tape:gradient(loss, v), { 0.5 + 0.5, -0.5 - 1 }, 1e-6)
  end)

  it("get, serialize and from_config round-trip", function()
    assert.is_true(R.is_regularizer(R.get("l2")))
    assert.are.equal(0.01, R.get("l2").l2)
    local cfg = R.serialize(R.l1_l2 { l1 = 0.1, l2 = 0.2 })
    assert.are.same({ class_name = "L1L2", config = { l1 = 0.1, l2 = 0.2 } }, cfg)
    local back = R.get(cfg)
    assert.are.same({ 0.1, 0.2 }, { back.l1, back.l2 })
    local fn = function(x) return tide.reduce_sum(x) end
    assert.are.equal(fn, R.get(fn))
    assert.is_nil(R.get(nil))
    assert.are.equal(0.3, R.L2:from_config({ l2 = 0.3 }).l2)
  end)

  it("errors name what to change", function()
    h.errors("L2: l2 must be a non-negative number", R.l2, -1)
    h.errors("L1: l1 must be a non-negative number", R.l1, "x")
    h.errors("L1L2: unknown option 'l3'", R.l1_l2, { l3 = 1 })
    h.errors("unknown regularizer 'l3'", R.get, "l3")
    h.errors("expects a weight", function() R.l2(0.1)(nil) end)
  end)
end)
