-- tests/spec/ops/tf_control_spec.lua — tf's functional control flow (stdlib/tide/tracing/tf_control.lua: map_fn,
-- foldl, foldr, scan, switch_case, case) against TensorFlow's own results (tests/fixtures/math/tf_control.lua,
-- made by gen_tf_control.py there), eagerly and traced, gradients by TF's and by finite differences.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_control.lua")

-- The functions the fixture's attrs.fn names (the same as gen_tf_control.py's lambdas).
local FN = {
  square = function(v) return v * v end,
  sum = function(v) return tide.reduce_sum(v) end,
  pair = function(p) return p[1] * p[2] end,
  add = function(a, v) return a + v end,
  double_add = function(a, v) return a * 2.0 + v end,
  ten_add = function(a, v) return a * 10 + v end,
  mul = function(a, v) return a * v end,
}

local CALLS = {
  map_fn = function(i, a)
    if a.fn == "pair" then return tide.map_fn(FN.pair, { i[1], i[2] }, { fn_output_signature = "float32" }) end
    return tide.map_fn(FN[a.fn], i[1])
  end,
  foldl = function(i, a) return tide.foldl(FN[a.fn], i[1], i[2]) end,
  foldr = function(i, a) return tide.foldr(FN[a.fn], i[1], i[2]) end,
  scan = function(i, a) return tide.scan(FN[a.fn], i[1], i[2], { reverse = a.reverse }) end,
  switch_case = function(i, a)
    local x = i[2]
    local branches = { function() return x + 1.0 end, function() return x * 2.0 end }
    if a.default then return tide.switch_case(i[1], branches, function() return x * 0.0 end) end
    branches[3] = function() return -x end
    return tide.switch_case(i[1], branches)
  end,
  case = function(i, a)
    local x = i[3]
    return tide.case({ { i[1], function() return x + 1.0 end }, { i[2], function() return x * 2.0 end } },
      function() return -x end, a.exclusive)
  end,
}

local ERRORS = { case = "case: more than one predicate is true (1 and 2) with exclusive=true" }

local SPEC = { calls = CALLS, errors = ERRORS, differs = {} }

describe("tf's functional control flow against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_control.lua)",
  function()
    setup(function() tide.config.set_retracing_warning { enabled = false } end)
    teardown(function() tide.config.set_retracing_warning { enabled = true } end)

    it("has the fixture's cases, each known to the spec", function()
      assert.is_true(#F.cases >= 27)
      fx.check_known(F, SPEC)
    end)

    for _, g in ipairs(fx.by_op(F)) do
      it(g.op .. " (" .. #g.cases .. " cases)", function()
        for _, c in ipairs(g.cases) do
          fx.check_case(c, false, SPEC)
          -- (exclusive=true is checked eagerly only: traced predicates are not known when the graph is built)
          if not c.error then fx.check_case(c, true, SPEC) end
        end
      end)
    end

    it("differentiates in float64 by finite differences", function()
      local R = gc.random
      local opts = { none = false } -- (the loops unroll over a known leading dim)
      gc.check(function(x) return tide.map_fn(function(v) return tide.sin(v) * v end, x) end, { R({ 3, 2 }, -1, 1, 1) },
        opts)
      gc.check(function(x, i) return tide.foldl(function(a, v) return a * v + a end, x, i) end,
        { R({ 3, 2 }, -1, 1, 2), R({ 2 }, -1, 1, 3) }, opts)
      gc.check(function(x) return tide.foldr(function(a, v) return a * v end, x) end, { R({ 3 }, 0.5, 1.5, 4) }, opts)
      gc.check(function(x) return tide.scan(function(a, v) return a * v end, x, nil, { reverse = true }) end,
        { R({ 3, 2 }, -1, 1, 5) }, opts)
    end)

    it("takes nests and integer-keyed branch tables", function()
      local x = tide.tensor({ 1, 2, 3 }, "float32")
      local r = tide.map_fn(function(p) return { s = p.a + p.b, d = p.a - p.b } end, { a = x, b = x * 2.0 })
      assert.are.same({ 3, 6, 9 }, r.s:totable())
      assert.are.same({ -1, -2, -3 }, r.d:totable())
      assert.are.equal("b", tide.switch_case(5, { [2] = function() return "a" end, [5] = function() return "b" end }))
      assert.are.equal("a", tide.switch_case(9, { [2] = function() return "a" end, [1] = function() return "c" end },
        function() return "a" end))
    end)

    it("refuses bad arguments with errors naming the op and argument", function()
      local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
      local x = tide.zeros { 2 }
      assert.matches("map_fn: fn must be a function", err(tide.map_fn, 1, x))
      assert.matches("map_fn: elems is empty", err(tide.map_fn, FN.square, tide.zeros { 0 }))
      assert.matches("map_fn: elems must have a leading dim", err(tide.map_fn, FN.square, tide.tensor(1)))
      assert.matches("map_fn: elems' leading dims differ: 2 and 3", err(tide.map_fn, FN.pair, { x, tide.zeros { 3 } }))
      assert.matches("map_fn: unknown option", err(tide.map_fn, FN.square, x, { bogus = 1 }))
      assert.matches("foldl: elems is empty and no initializer", err(tide.foldl, FN.add, tide.zeros { 0 }))
      assert.are.equal(7, tide.foldr(FN.add, tide.zeros { 0 }, 7))
      assert.matches("scan: elems needs a known leading dim",
        err(tide.trace(function(e) return tide.scan(FN.add, e) end, { tide.TensorSpec({ tide.None }, "float32") }), x))
      assert.matches("switch_case: branch_fns is empty", err(tide.switch_case, 0, {}))
      assert.matches("switch_case: branch 1 must be a function", err(tide.switch_case, 0, { FN.add, 3 }))
      assert.matches("switch_case: expected a 0%-d tensor", err(tide.switch_case, tide.tensor { 0, 1 }, { FN.add }))
      assert.matches("case: pred_fn_pairs must be a non%-empty list", err(tide.case, {}))
      assert.matches("case: pred_fn_pairs%[1%] must be {pred, fn}", err(tide.case, { true }))
      assert.matches("case: pred_fn_pairs%[1%]'s pred must be a bool", err(tide.case, { { 1, FN.add } }))
    end)
  end)
