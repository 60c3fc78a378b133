-- tests/spec/ops/einsum_spec.lua — tide.einsum beyond TF's values (einsum_fixtures_spec.lua):
-- float64 finite-difference gradients (eager, and traced with None dims) for many equations,
-- what a traced einsum records, the argument forms, and errors TF's fixtures do not cover.
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"

local rand = gc.random

-- equation, operand shapes
local GRAD_CASES = {
  { "ij,jk->ik", { { 2, 3 }, { 3, 4 } } },
  { "ij,kj->ik", { { 2, 3 }, { 4, 3 } } },
  { "ji,jk->ki", { { 3, 2 }, { 3, 4 } } },
  { "i,i->", { { 5 }, { 5 } } },
  { "i,j->ij", { { 3 }, { 2 } } },
  { "ij->ji", { { 2, 3 } } },
  { "ij->j", { { 2, 3 } } },
  { "ii->i", { { 3, 3 } } },
  { "ii", { { 3, 3 } } },
  { "iji->ij", { { 2, 3, 2 } } },
  { "iii->i", { { 2, 2, 2 } } },
  { "bij,bjk->bik", { { 2, 2, 3 }, { 2, 3, 4 } } },
  { "bhqd,bhkd->bhqk", { { 2, 2, 3, 4 }, { 2, 2, 5, 4 } } },
  { "aecd,abcd->acbe", { { 2, 5, 3, 4 }, { 2, 3, 3, 4 } } },
  { "acbe,aecd->abcd", { { 2, 3, 2, 5 }, { 2, 5, 3, 4 } } },
  { "abc,cde->abde", { { 2, 3, 4 }, { 4, 2, 3 } } },
  { "abcd,cde->abe", { { 2, 3, 2, 4 }, { 2, 4, 5 } } },
  { "abc,bcd->ad", { { 2, 3, 4 }, { 3, 4, 2 } } },
  { "...ij,...jk->...ik", { { 3, 2, 3 }, { 1, 3, 4 } } },
  { "...a,...a->...a", { { 2, 1, 3 }, { 4, 3 } } },
  { "i...j,j...k->i...k", { { 2, 3, 3 }, { 3, 1, 2 } } },
  { "ij,jk,kl->il", { { 2, 3 }, { 3, 4 }, { 4, 2 } } },
  { "ij,jk,ki->", { { 2, 3 }, { 3, 4 }, { 4, 2 } } },
  { "a,b,c->abc", { { 2 }, { 3 }, { 2 } } },
  { "i,ij,j->", { { 3 }, { 3, 4 }, { 4 } } },
  { "ii,i->i", { { 3, 3 }, { 3 } } },
  { ",ij->ij", { {}, { 2, 3 } } },
  { "ab,cd->", { { 2, 3 }, { 2, 2 } } },
}

describe("einsum", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  describe("gradients (float64 finite differences, and traced with None dims)", function()
    for n, c in ipairs(GRAD_CASES) do
      it(c[1], function()
        local xs = {}
        for i, s in ipairs(c[2]) do xs[i] = rand(s, -1, 1, n * 10 + i) end
        gc.check(function(...) return tide.einsum(c[1], ...) end, xs)
      end)
    end

    it("second order through a nonlinearity", function()
      gc.check(function(a, b) return tide.tanh(tide.einsum("bij,bjk->bik", a, b)) end,
        { rand({ 2, 2, 3 }, -1, 1, 1), rand({ 2, 3, 2 }, -1, 1, 2) }, { second_order = true })
    end)

    it("second order of a diagonal", function()
      gc.check(function(a) return tide.einsum("ii->i", a) * tide.einsum("ii->i", a) end,
        { rand({ 3, 3 }, -1, 1, 3) }, { second_order = true })
    end)
  end)

  describe("traced", function()
    -- the ops a traced call records (a count per op name)
    local function recorded(f, ...)
      local text = tide.trace(f):get_concrete_function(...):graph_text()
      local counts = {}
      for op in text:gmatch("= ([%w_]+)%(") do counts[op] = (counts[op] or 0) + 1 end
      return counts, text
    end

    it("records attention's einsums as one matmul between views", function()
      local q, k = tide.ones { 2, 6, 3, 4 }, tide.ones { 2, 5, 3, 4 }
      local counts, text = recorded(function(a, b) return tide.einsum("aecd,abcd->acbe", b, a) end, q, k)
      assert.are.same({ transpose = 2, matmul = 1 }, counts, text)
      counts, text = recorded(function(a, b) return tide.einsum("bhqd,bhkd->bhqk", a, b) end,
        tide.ones { 2, 3, 6, 4 }, tide.ones { 2, 3, 5, 4 })
      assert.are.same({ matmul = 1 }, counts, text)
    end)

    it("records a projection as reshapes around one matmul", function()
      local counts, text = recorded(function(x, w) return tide.einsum("abc,cde->abde", x, w) end,
        tide.ones { 2, 3, 4 }, tide.ones { 4, 2, 3 })
      assert.are.same({ reshape = 3, matmul = 1 }, counts, text)
    end)

    it("keeps the known dims when several are unknown", function()
      local f = tide.trace(function(x, w) return tide.einsum("abc,cde->abde", x, w) end,
        { input_signature = { tide.TensorSpec({ tide.None, tide.None, 4 }), tide.TensorSpec({ 4, 2, 3 }) } })
      local cf = f:get_concrete_function()
      assert.are.equal("(None, None, 2, 3)", tostring(cf.structured_outputs[1].shape))
      h.close(f(tide.ones { 2, 3, 4 }, tide.ones { 4, 2, 3 }), tide.fill({ 2, 3, 2, 3 }, 4))
    end)

    it("refuses an operand of unknown rank, naming it", function()
      local f = tide.trace(function(x) return tide.einsum("ij->ji", x) end,
        { input_signature = { tide.TensorSpec(nil, "float32") } })
      assert.has_error(function() f(tide.ones { 2, 3 }) end)
      local ok, err = pcall(f, tide.ones { 2, 3 })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("einsum: operand 0 has an unknown rank", 1, true), tostring(err))
    end)
  end)

  describe("arguments", function()
    local a = tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    local b = tide.tensor({ { 5, 6 }, { 7, 8 } }, "float32")

    it("takes the operands as one list, Variables and Lua tables", function()
      local want = tide.matmul(a, b)
      h.close(tide.einsum("ij,jk->ik", { a, b }), want)
      h.close(tide.einsum("ij,jk->ik", tide.Variable(a), b), want)
      h.close(tide.einsum("ij,jk->ik", tide.Variable(a), tide.Variable(b)), want)
      assert.are.same({ { 19, 22 }, { 43, 50 } }, tide.einsum("ij,jk->ik", { { 1, 2 }, { 3, 4 } },
        { { 5, 6 }, { 7, 8 } }):totable())
    end)

    it("is tide.linalg.einsum too", function()
      assert.are.equal(tide.einsum, tide.linalg.einsum)
    end)

    it("gives a new tensor for an equation that changes nothing", function()
      local y = tide.einsum("ij->ij", a)
      assert.is_false(rawequal(a, y))
      y:copy_(tide.zeros { 2, 2 })
      assert.are.same({ { 1, 2 }, { 3, 4 } }, a:totable())
    end)

    it("names a bad equation or operand", function()
      local function err(...)
        local ok, e = pcall(tide.einsum, ...)
        assert.is_false(ok)
        return tostring(e)
      end
      assert.truthy(err(42, a):find("einsum: the equation must be a string", 1, true))
      assert.truthy(err("ij"):find("einsum: expects at least one operand", 1, true))
      assert.truthy(err("ij,jk", a, nil):find("einsum: operand 1 is nil", 1, true) or
        err("ij,jk", a, nil):find("got 1 inputs", 1, true))
      assert.truthy(err("i.j", a):find("incorrect format", 1, true))
      assert.truthy(err("i...j...", a):find("incorrect format", 1, true))
      assert.truthy(err("ij->i,j", a):find("incorrect format", 1, true))
      assert.truthy(err("ij,jk->ik", a, tide.ones({ 2, 2 }, "int32")):find("operand 1 is int32 but operand 0 is float32",
        1, true))
      assert.truthy(err("ij", tide.ones({ 2, 2 }, "uint8")):find("operand 0 is uint8", 1, true))
    end)
  end)
end)
