-- tests/spec/regularizers/orthogonal_spec.lua — tide.regularizers.OrthogonalRegularizer against TF 2.21's Keras
-- (tests/fixtures/keras/regularizers_more.lua): rows and columns, a zero row, config, gradient, errors; and
-- the IdentityInitializer / OrthogonalInitializer names.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local R = tide.regularizers
local F = dofile("tests/fixtures/keras/regularizers_more.lua")

describe("OrthogonalRegularizer", function()
  it("gives Keras's penalties and configs", function()
    local w = tide.tensor(F.w, "float32")
    for _, c in ipairs(F.cases) do
      local reg = R.OrthogonalRegularizer { factor = c.factor, mode = c.mode }
      h.close(reg(w), c.float32, 1e-6)
      -- (Keras's config holds the factor rounded to float32: it keeps it as a float32 tensor)
      assert.are.equal(c.config.mode, reg:get_config().mode)
      h.close({ reg:get_config().factor }, { c.config.factor }, 1e-7)
      h.close(R.get { class_name = "OrthogonalRegularizer", config = reg:get_config() }(w), c.float32, 1e-6)
    end
    assert.are.equal(R.OrthogonalRegularizer, R.orthogonal_regularizer)
    assert.are.equal("OrthogonalRegularizer", R.serialize(R.orthogonal_regularizer()).class_name)
  end)

  it("regularizes a Dense kernel, and differentiates (float64)", function()
    local dense = tide.layers.Dense { 3, kernel_regularizer = R.OrthogonalRegularizer(0.5) }
    dense(tide.ones({ 1, 4 }))
    assert.are.equal(1, #dense.losses)
    gc.check(function(x) return R.OrthogonalRegularizer { 0.3, "columns" }(x) end,
      { gc.random({ 4, 3 }, -1, 1, 401) }, { none = false })
  end)

  it("names what is wrong", function()
    h.errors("factor must be a non-negative number", R.OrthogonalRegularizer, { factor = -1 })
    h.errors("mode must be \"rows\" or \"columns\"", R.OrthogonalRegularizer, { mode = "diagonal" })
    h.errors("the weight must have rank 2", R.OrthogonalRegularizer(), tide.ones({ 3 }))
    h.errors("expects a weight", R.OrthogonalRegularizer(), nil)
  end)
end)

describe("initializer aliases", function()
  it("IdentityInitializer and OrthogonalInitializer are Identity and Orthogonal", function()
    local I = tide.initializers
    assert.are.equal(I.Identity, I.IdentityInitializer)
    assert.are.equal(I.Orthogonal, I.OrthogonalInitializer)
    h.close(I.IdentityInitializer()({ 2, 2 }), { { 1, 0 }, { 0, 1 } }, 0)
    h.errors("unknown initializer 'Identity_Initializer'", I.get, "Identity_Initializer")
  end)
end)
