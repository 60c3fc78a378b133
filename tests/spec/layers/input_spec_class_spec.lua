-- tests/spec/layers/input_spec_class_spec.lua — keras.layers.InputSpec as tide.layers.InputSpec: a layer's
-- input_spec made of one checks rank, axis sizes, shape and dtype at each call; config and errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

local function layer_with(spec)
  local cls = L.Layer:extend("SpecHolder")
  function cls:init() self.input_spec = spec end
  function cls:call(x) return x end
  return cls()
end

describe("InputSpec", function()
  it("checks rank, axes, shape and dtype at each call", function()
    local l = layer_with(L.InputSpec { ndim = 2, axes = { [-1] = 3 } })
    h.close(l(tide.ones({ 2, 3 })), tide.ones({ 2, 3 }), 0)
    h.errors("expected axis -1 of the input to have size 3", l, tide.ones({ 2, 4 }))
    h.errors("expected an input of rank 2", l, tide.ones({ 3 }))
    local shaped = layer_with(L.InputSpec { shape = { tide.None, 3 } })
    h.close(shaped(tide.ones({ 5, 3 })), tide.ones({ 5, 3 }), 0)
    h.errors("expected an input of shape (None, 3)", shaped, tide.ones({ 5, 2 }))
    local typed = layer_with(L.InputSpec { dtype = "int32", min_ndim = 1, max_ndim = 2 })
    assert.are.equal("int32", typed(tide.tensor({ 1, 2 }, "int32")).dtype)
    h.errors("expected an input of dtype int32, got int64", typed, tide.tensor({ 1 }, "int64"))
    h.errors("expected an input of rank <= 2", typed, tide.tensor({ { { 1 } } }, "int32"))
    -- a symbolic input in a functional model is checked too
    h.errors("expected axis -1 of the input to have size 3", l, L.Input { shape = { 4 } })
  end)

  it("round-trips its config and prints its fields", function()
    local s = L.InputSpec { shape = { tide.None, 3 }, dtype = "float32" }
    assert.are.equal(2, s.ndim)
    local again = L.InputSpec:from_config(s:get_config())
    assert.are.same(s:get_config(), again:get_config())
    assert.truthy(tostring(s):find("ndim=2", 1, true))
  end)

  it("refuses bad fields, naming them", function()
    h.errors("InputSpec: ndim must be an integer >= 0", L.InputSpec, { ndim = -1 })
    h.errors("InputSpec: dtype must be a dtype name", L.InputSpec, { dtype = "float33" })
    h.errors("InputSpec: shape must be a list of dims", L.InputSpec, { shape = 3 })
    h.errors("InputSpec: axis 2 is out of range for ndim 2", L.InputSpec, { ndim = 2, axes = { [2] = 1 } })
    h.errors("InputSpec: axes[0] must be an integer >= 0", L.InputSpec, { axes = { [0] = "x" } })
    h.errors("unknown", L.InputSpec, { rank = 2 })
  end)
end)
