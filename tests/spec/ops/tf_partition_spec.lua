-- tests/spec/ops/tf_partition_spec.lua — tf's data-routing ops (stdlib/tide/ops/tf_partition.lua:
-- dynamic_partition, dynamic_stitch, tensor_scatter_nd_max/min, parallel_stack) against TensorFlow's own results
-- (tests/fixtures/math/tf_partition.lua, made by gen_tf_partition.py there), gradients by TF's and by FD.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_partition.lua")

local CALLS = {
  dynamic_partition = function(i, a)
    local parts = tide.dynamic_partition(i[1], i[2], a.num_partitions)
    if a.pick then return parts[a.pick] end
    return unpack(parts)
  end,
  dynamic_stitch = function(i, a)
    local idx, data = {}, {}
    for k = 1, a.n do idx[k], data[k] = i[k], i[a.n + k] end
    return tide.dynamic_stitch(idx, data)
  end,
  tensor_scatter_nd_max = function(i) return tide.tensor_scatter_nd_max(i[1], i[2], i[3]) end,
  tensor_scatter_nd_min = function(i) return tide.tensor_scatter_nd_min(i[1], i[2], i[3]) end,
  parallel_stack = function(i) return tide.parallel_stack { i[1], i[2] } end,
}

local ERRORS = {
  dynamic_partition = "dynamic_partition: partitions[1] = 2 is not in [0, 2)",
  tensor_scatter_nd_max = "tensor_scatter_nd_max: indices row 0 has 2 at position 0, not in [0, 2)",
  tensor_scatter_nd_min = "tensor_scatter_nd_min: indices row 0 has 2 at position 0, not in [0, 2)",
}

-- Ops whose indices size the result: eager only (a traced call with them is refused, checked below).
local EAGER_ONLY = { dynamic_partition = true, dynamic_stitch = true }

-- Where tide differs on purpose (docs/tf_differences.md): TF's gradient of dynamic_stitch gives an overwritten
-- entry (data[1][1] -> row 2, then data[2][2] -> row 2) the row's gradient too; tide's gather of the winners
-- gives it 0, the true derivative.
local DIFFERS = {
  ["dynamic_stitch grad"] = { grads = { { 0, -1.5 }, { 2.0, 1.5 } }, tf_grads = { { 1.5, -1.5 }, { 2.0, 1.5 } } },
}

local SPEC = { calls = CALLS, errors = ERRORS, differs = DIFFERS }

describe("tf's data-routing ops against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_partition.lua)",
  function()
    setup(function() tide.config.set_retracing_warning { enabled = false } end)
    teardown(function() tide.config.set_retracing_warning { enabled = true } end)

    it("has the fixture's cases, each known to the spec", function()
      assert.is_true(#F.cases >= 17)
      fx.check_known(F, SPEC)
    end)

    for _, g in ipairs(fx.by_op(F)) do
      it(g.op .. " (" .. #g.cases .. " cases)", function()
        for _, c in ipairs(g.cases) do
          fx.check_case(c, false, SPEC)
          -- (a traced out-of-range index reaches the segment op unchecked: eager refusals only)
          if not EAGER_ONLY[c.op] and not c.error then fx.check_case(c, true, SPEC) end
        end
      end)
    end

    it("differentiates in float64 by finite differences", function()
      local R = gc.random
      local opts = { none = false }
      gc.check(function(d) return tide.dynamic_partition(d, tide.tensor { 1, 0, 1 }, 2)[2] end,
        { R({ 3, 2 }, -1, 1, 1) }, opts)
      gc.check(function(a, b) return tide.dynamic_stitch({ tide.tensor { 2, 0 }, tide.tensor { 1, 2 } }, { a, b }) end,
        { R({ 2, 2 }, -1, 1, 2), R({ 2, 2 }, -1, 1, 3) }, opts)
      gc.check(function(t, u) return tide.tensor_scatter_nd_max(t, tide.tensor { { 1 }, { 3 } }, u) end,
        { R({ 4 }, -1, 1, 4), R({ 2 }, -1, 1, 5) }, opts)
    end)

    it("refuses bad arguments with errors naming the op and argument", function()
      local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
      local x = tide.zeros { 3 }
      assert.matches("dynamic_partition: num_partitions must be a whole number >= 1",
        err(tide.dynamic_partition, x, tide.tensor { 0, 0, 0 }, 0))
      assert.matches("dynamic_partition: partitions' shape %(2,%) must be a prefix of data's %(3,%)",
        err(tide.dynamic_partition, x, tide.tensor { 0, 0 }, 1))
      assert.matches("dynamic_partition: partitions must be int32 or int64", err(tide.dynamic_partition, x, x, 1))
      assert.matches("dynamic_partition: partitions must be known",
        err(tide.trace(function(d, p) return tide.dynamic_partition(d, p, 2)[1] end), x, tide.tensor { 0, 1, 0 }))
      assert.matches("dynamic_stitch: indices and data must be Lua lists", err(tide.dynamic_stitch, x, x))
      assert.matches("dynamic_stitch: indices and data must be non%-empty lists of one length, got 1 and 2",
        err(tide.dynamic_stitch, { tide.tensor { 0 } }, { x, x }))
      assert.matches("dynamic_stitch: no entry gives row 1",
        err(tide.dynamic_stitch, { tide.tensor { 0, 2 } }, { tide.zeros { 2 } }))
      assert.matches("dynamic_stitch: data%[1%]'s shape %(3,%) must start with indices%[1%]'s %(2,%)",
        err(tide.dynamic_stitch, { tide.tensor { 0, 1 } }, { x }))
      assert.matches("tensor_scatter_nd_max: updates must have shape %[2%]",
        err(tide.tensor_scatter_nd_max, x, tide.tensor { { 0 }, { 1 } }, tide.zeros { 3 }))
      assert.matches("tensor_scatter_nd_min: indices' last dim 2 must be in %[1, 1%]",
        err(tide.tensor_scatter_nd_min, x, tide.tensor { { 0, 1 } }, tide.zeros { 1 }))
      assert.matches("parallel_stack: values must be a non%-empty Lua list", err(tide.parallel_stack, {}))
    end)
  end)
