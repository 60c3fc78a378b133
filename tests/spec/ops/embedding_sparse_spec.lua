-- tests/spec/ops/embedding_sparse_spec.lua — tide.nn.embedding_lookup_sparse and safe_embedding_lookup_sparse
-- (ops/embedding_sparse.lua) against TensorFlow's own results (tests/fixtures/math/tf_embedding_sparse.lua, made by
-- gen_embedding.py there), eagerly and traced, with gradients and errors.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_embedding_sparse.lua")
local nn = tide.nn

local function sp(i, v, s) return tide.SparseTensor(i, v, s) end
local CALLS = {
  embedding_lookup_sparse = function(i, a)
    local w = i[5] and sp(i[2], i[5], i[4]) or nil
    return nn.embedding_lookup_sparse(i[1], sp(i[2], i[3], i[4]), w, { combiner = a.combiner, max_norm = a.max_norm })
  end,
  safe_embedding_lookup_sparse = function(i, a)
    local w = i[5] and sp(i[2], i[5], i[4]) or nil
    return nn.safe_embedding_lookup_sparse(i[1], sp(i[2], i[3], i[4]), w, { combiner = a.combiner, default_id = a.default_id })
  end,
}
local differs = {}
for _, c in ipairs(F.cases) do differs[c.name] = { loose = 1e-5, grad_loose = 1e-5 } end
local SPEC = { calls = CALLS, errors = {}, differs = differs }

describe("the sparse embedding lookups against TensorFlow " .. F.tf_version, function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has the fixture's cases, each known to the spec", function()
    assert.is_true(#F.cases >= 20)
    fx.check_known(F, SPEC)
  end)

  for _, g in ipairs(fx.by_op(F)) do
    it(g.op .. " (" .. #g.cases .. " cases)", function()
      for _, c in ipairs(g.cases) do
        fx.check_case(c, false, SPEC)
        fx.check_case(c, true, SPEC)
      end
    end)
  end

  it("differentiates into params and weights by finite differences", function()
    local R = gc.random
    local idx, ids = tide.tensor({ { 0, 0 }, { 0, 1 }, { 2, 0 } }, "int64"), tide.tensor({ 1, 3, 1 }, "int64")
    local s = sp(idx, ids, { 3, 2 })
    gc.check(function(p, w) return nn.embedding_lookup_sparse(p, s, sp(idx, w, { 3, 2 }), { combiner = "sqrtn" }) end,
      { R({ 4, 2 }, -1, 1, 1), R({ 3 }, 0.5, 2, 2) }, { none = false })
    gc.check(function(p) return nn.safe_embedding_lookup_sparse(p, s, nil, { combiner = "mean", default_id = 0 }) end,
      { R({ 4, 2 }, -1, 1, 3) }, { none = false })
  end)

  it("refuses bad arguments with errors naming the op and argument", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    local s = sp(tide.tensor({ { 0, 0 } }, "int64"), tide.tensor({ 1 }, "int64"), { 1, 1 })
    assert.matches("embedding_lookup_sparse: sp_ids must be a SparseTensor", err(nn.embedding_lookup_sparse, tide.zeros { 2, 2 }, tide.tensor { 1 }))
    assert.matches("embedding_lookup_sparse: combiner must be one of", err(nn.embedding_lookup_sparse, tide.zeros { 2, 2 }, s, nil, { combiner = "max" }))
    assert.matches("embedding_lookup_sparse: params must be a float tensor", err(nn.embedding_lookup_sparse, tide.tensor { { 1 } }, s, nil))
    assert.matches("safe_embedding_lookup_sparse: sparse_ids must be 2%-D",
      err(nn.safe_embedding_lookup_sparse, tide.zeros { 2, 2 }, sp(tide.tensor({ { 0, 0, 0 } }, "int64"), tide.tensor({ 1 }, "int64"), { 1, 1, 1 })))
    assert.matches("sp_weights must be nil or a SparseTensor", err(nn.embedding_lookup_sparse, tide.zeros { 2, 2 }, s, tide.tensor { 1 }))
  end)
end)
