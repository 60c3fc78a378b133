-- tests/spec/optimizers/build_cut_short_spec.lua — Optimizer:build is all or
-- nothing: one cut short (Ctrl-C at the REPL during a first fit, an error)
-- leaves no variable with some of its slots, and the next build makes them all.
local tide = require "tide"

describe("Optimizer:build cut short", function()
  it("undoes the slots it made, and a later build makes every slot", function()
    local vars = { tide.Variable(tide.ones{2, 3}, { name = "w" }), tide.Variable(tide.zeros{3}, { name = "b" }) }
    local opt = tide.optimizers.Adam{ learning_rate = 0.1 }
    local before = #opt.variables
    local made, real = 0, opt.add_variable_from_reference
    opt.add_variable_from_reference = function(self, ...) -- fail on the third slot
      made = made + 1
      if made == 3 then error("interrupted!") end
      return real(self, ...)
    end
    local ok, err = pcall(opt.build, opt, vars)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("interrupted!", 1, true), tostring(err))
    assert.is_false(opt.built)
    assert.are.equal(before, #opt.variables)
    assert.is_nil(opt:get_slot(vars[1], "momentum"))
    opt.add_variable_from_reference = nil -- the class's again

    opt:build(vars)
    assert.is_true(opt.built)
    for _, v in ipairs(vars) do
      assert.is_not_nil(opt:get_slot(v, "momentum"), v.name)
      assert.is_not_nil(opt:get_slot(v, "velocity"), v.name)
    end
    assert.are.equal(before + 4, #opt.variables)
    opt:apply({ tide.ones{2, 3}, tide.ones{3} }, vars)
    assert.are.equal(1, opt.iterations:numpy())
  end)
end)
