-- tests/spec/ops/sampled_losses_spec.lua — tf.nn's sampled losses (nce_loss, sampled_softmax_loss), the candidate
-- samplers and compute_accidental_hits against TensorFlow's own results (tests/fixtures/math/tf_sampled.lua, made by
-- gen_sampled.py there), with gradients; the samplers' random parts by their distributions.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"

local F = fx.load("tf_sampled.lua")
local nn = tide.nn

local function sv(a, dt)
  return { tide.tensor(a.sampled, "int64"), tide.tensor(a.true_expected, dt), tide.tensor(a.sampled_expected, dt) }
end
local function sampled_call(fn)
  return function(i, a)
    return fn(i[1], i[2], i[3], i[4], a.num_sampled, a.num_classes, { num_true = a.num_true,
      sampled_values = sv(a, i[1].dtype), remove_accidental_hits = a.remove_accidental_hits })
  end
end

local CALLS = {
  nce_loss = sampled_call(nn.nce_loss),
  sampled_softmax_loss = sampled_call(nn.sampled_softmax_loss),
  compute_accidental_hits = function(i, a) return nn.compute_accidental_hits(i[1], i[2], a.num_true) end,
  uniform_candidate_sampler = function(i, a)
    return (select(2, tide.random.uniform_candidate_sampler(i[1], 2, a.num_sampled, false, a.range_max, 1)))
  end,
  log_uniform_candidate_sampler = function(i, a)
    return (select(2, tide.random.log_uniform_candidate_sampler(i[1], 2, a.num_sampled, false, a.range_max, 1)))
  end,
  fixed_unigram_candidate_sampler = function(i, a)
    return (select(2, nn.fixed_unigram_candidate_sampler(i[1], 2, a.num_sampled, false, a.range_max,
      { distortion = a.distortion, num_reserved_ids = a.num_reserved_ids, unigrams = a.unigrams })))
  end,
  all_candidate_sampler = function(i, a) return nn.all_candidate_sampler(i[1], 2, a.num_sampled, true) end,
}
local differs = {}
for _, c in ipairs(F.cases) do differs[c.name] = { loose = 1e-5, grad_loose = 1e-5 } end
local SPEC = { calls = CALLS, differs = differs, errors = {
  all_candidate_sampler = "is out of range [0, 5)", log_uniform_candidate_sampler = "is out of range [0, 5)" } }
local EAGER_ONLY = { compute_accidental_hits = true, uniform_candidate_sampler = true, log_uniform_candidate_sampler = true,
  fixed_unigram_candidate_sampler = true, all_candidate_sampler = true }

describe("the sampled losses and candidate samplers against TensorFlow " .. F.tf_version, function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has the fixture's cases, each known to the spec", function()
    assert.is_true(#F.cases > 20)
    fx.check_known(F, SPEC)
  end)

  for _, g in ipairs(fx.by_op(F)) do
    it(g.op .. " (" .. #g.cases .. " cases)", function()
      for _, c in ipairs(g.cases) do
        fx.check_case(c, false, SPEC)
        if not EAGER_ONLY[c.op] then fx.check_case(c, true, SPEC) end
      end
    end)
  end

  it("differentiates the sampled losses in float64 by finite differences (and traced with None dims)", function()
    local R = gc.random
    local lab = tide.tensor({ { 1, 2 }, { 4, 0 }, { 3, 3 } }, "int64")
    local values = { tide.tensor({ 2, 5, 0 }, "int64"), tide.fill({ 3, 2 }, 0.3, "float64"), tide.tensor({ 0.2, 0.4, 0.1 }, "float64") }
    for _, fn in ipairs { nn.nce_loss, nn.sampled_softmax_loss } do
      gc.check(function(w, b, x) return fn(w, b, lab, x, 3, 6, { num_true = 2, sampled_values = values }) end,
        { R({ 6, 3 }, -1, 1, 1), R({ 6 }, -1, 1, 2), R({ 3, 3 }, -1, 1, 3) })
    end
  end)

  it("draws each sampler's ids from its distribution, unique when asked, with consistent expected counts", function()
    tide.random.set_seed(4)
    local tc = tide.tensor({ { 0 }, { 9 } }, "int64")
    local counts, n = {}, 400
    for _ = 1, n do
      local s = tide.random.log_uniform_candidate_sampler(tc, 1, 5, true, 10):totable()
      local seen = {}
      for _, id in ipairs(s) do
        assert.is_nil(seen[id], "unique draws repeat " .. id)
        assert.is_true(id >= 0 and id < 10)
        seen[id] = true
        counts[id] = (counts[id] or 0) + 1
      end
    end
    assert.is_true(counts[0] > counts[9] * 2, "log-uniform favours small ids")
    -- without unique: expected counts are p * num_sampled; the frequencies follow p
    local freq = {}
    for _ = 1, 200 do
      local s, te, se = nn.fixed_unigram_candidate_sampler(tc, 1, 8, false, 10,
        { unigrams = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 11 } })
      for _, id in ipairs(s:totable()) do freq[id] = (freq[id] or 0) + 1 end
      local t = te:totable()
      assert.near(0.4, t[1][1], 1e-6)
      assert.near(4.4, t[2][1], 1e-6)
      assert.equals(8, #se:totable())
    end
    assert.is_true(math.abs(freq[9] / 1600 - 0.55) < 0.06, "id 9 drawn with p = 0.55, got " .. freq[9] / 1600)
    local u = tide.random.uniform_candidate_sampler(tc, 1, 10, true, 10):totable()
    table.sort(u)
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, u)
    -- learned: a seeded sampler learns the true classes of its earlier calls
    for _ = 1, 30 do nn.learned_unigram_candidate_sampler(tide.tensor({ { 3 } }, "int64"), 1, 1, false, 4, 77) end
    local _, te = nn.learned_unigram_candidate_sampler(tide.tensor({ { 3 } }, "int64"), 1, 1, false, 4, 77)
    assert.near(31 / 34, te:totable()[1][1], 1e-6)
    -- the samples drawn inside the losses are usable eagerly
    local w, b, x = tide.random.normal { 10, 3 }, tide.zeros { 10 }, tide.random.normal { 2, 3 }
    assert.are.same({ 2 }, nn.nce_loss(w, b, tc, x, 3, 10).shape:as_list())
    assert.are.same({ 2 }, nn.sampled_softmax_loss(w, b, tc, x, 3, 10).shape:as_list())
  end)

  it("refuses bad arguments with errors naming the op and argument", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    local tc = tide.tensor({ { 1 }, { 2 } }, "int64")
    assert.matches("uniform_candidate_sampler: num_sampled = 5 is more than range_max = 3 with unique = true",
      err(tide.random.uniform_candidate_sampler, tc, 1, 5, true, 3))
    assert.matches("log_uniform_candidate_sampler: true_classes must be %[batch, num_true = 2%]",
      err(tide.random.log_uniform_candidate_sampler, tc, 2, 1, false, 3))
    assert.matches("log_uniform_candidate_sampler: unique is required",
      err(tide.random.log_uniform_candidate_sampler, tc, 1, 1, nil, 4))
    assert.matches("fixed_unigram_candidate_sampler: range_max = 5 must be the unigrams' count %(3%) plus num_reserved_ids %(0%)",
      err(nn.fixed_unigram_candidate_sampler, tc, 1, 1, false, 5, { unigrams = { 1, 2, 3 } }))
    assert.matches("fixed_unigram_candidate_sampler: cannot read vocab_file",
      err(nn.fixed_unigram_candidate_sampler, tc, 1, 1, false, 5, { vocab_file = "/nonexistent/vocab" }))
    assert.matches("compute_accidental_hits: sampled_candidates must be a 1%-D integer tensor",
      err(nn.compute_accidental_hits, tc, tide.zeros { 2 }, 1))
    local w, b, x = tide.zeros { 5, 2 }, tide.zeros { 5 }, tide.zeros { 2, 2 }
    assert.matches("nce_loss: labels must be %[batch, num_true = 1%]", err(nn.nce_loss, w, b, tide.tensor { 1, 2 }, x, 2, 5))
    assert.matches("nce_loss: sampled_values must be", err(nn.nce_loss, w, b, tc, x, 2, 5, { sampled_values = { 1 } }))
    assert.matches("sampled_softmax_loss: inputs must be 2%-D", err(nn.sampled_softmax_loss, w, b, tc, tide.zeros { 2 }, 2, 5))
    assert.matches("sampled_softmax_loss: inputs must be a float tensor",
      err(nn.sampled_softmax_loss, w, b, tc, tide.tensor { { 1, 2 } }, 2, 5))
  end)
end)
