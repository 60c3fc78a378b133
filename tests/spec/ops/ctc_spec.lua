-- tests/spec/ops/ctc_spec.lua — the CTC names (tide.nn.ctc_loss, ctc_beam_search_decoder, collapse_repeated,
-- ctc_unique_labels; tide.ops.ctc_loss/ctc_decode, tide.losses.CTC/ctc) against TensorFlow's own results
-- (tests/fixtures/math/tf_ctc.lua, made by gen_ctc.py there), eagerly and traced, with gradients and errors.
local tide = require "tide"
local fx = require "tf_fixture"
local gc = require "gradcheck"
local h = require "helpers"

local F = fx.load("tf_ctc.lua")
local nn = tide.nn

local function sparse(i) return tide.SparseTensor(i[1], i[2], i[3]) end
local function unpack_decoded(decoded, lp)
  local out = {}
  for _, d in ipairs(decoded) do
    out[#out + 1] = d.indices
    out[#out + 1] = d.values
    out[#out + 1] = d.dense_shape
  end
  out[#out + 1] = lp
  return unpack(out)
end

local CALLS = {
  ctc_loss = function(i, a)
    return nn.ctc_loss(i[1], i[2], i[3], i[4], { blank_index = a.blank_index, logits_time_major = a.logits_time_major })
  end,
  ctc_loss_sparse = function(i, a) return nn.ctc_loss(sparse(i), i[4], nil, i[5], { blank_index = a.blank_index }) end,
  ctc_beam_search_decoder = function(i, a)
    return unpack_decoded(nn.ctc_beam_search_decoder(i[1], i[2], a.beam_width, a.top_paths))
  end,
  collapse_repeated = function(i) return nn.collapse_repeated(i[1], i[2]) end,
  ctc_unique_labels = function(i) return nn.ctc_unique_labels(i[1]) end,
  keras_ctc_loss = function(i, a) return tide.ops.ctc_loss(i[1], i[2], i[3], i[4], { mask_index = a.mask_index }) end,
  keras_ctc = function(i) return tide.losses.ctc(i[1], i[2]) end,
  keras_CTC = function(i) return tide.losses.CTC()(i[1], i[2]) end,
  keras_ctc_decode = function(i, a)
    return tide.ops.ctc_decode(i[1], i[2], { strategy = a.strategy, beam_width = a.beam_width, top_paths = a.top_paths,
      merge_repeated = a.merge_repeated, mask_index = a.mask_index })
  end,
}

-- TF sums in float32 through many ops (dense labels: its ctc_loss_dense); tide in float64 inside one kernel.
local differs = {}
for _, c in ipairs(F.cases) do differs[c.name] = { loose = 5e-5, grad_loose = 5e-5 } end
local SPEC = { calls = CALLS, errors = {}, differs = differs }
-- Ops whose result's size is a value: eager only.
local EAGER_ONLY = { ctc_beam_search_decoder = true, collapse_repeated = true, keras_ctc_decode = true }

describe("the CTC names against TensorFlow " .. F.tf_version .. " (tests/fixtures/math/tf_ctc.lua)", function()
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

  it("differentiates ctc_loss in float64 by finite differences (and traced with None dims)", function()
    local R = gc.random
    local labels, lab_len, seq_len = tide.tensor { { 1, 2, 2 }, { 3, 0, 0 } }, tide.tensor { 3, 1 }, tide.tensor { 5, 3 }
    gc.check(function(x) return nn.ctc_loss(labels, x, lab_len, seq_len, { blank_index = 0 }) end,
      { R({ 5, 2, 4 }, -2, 2, 1) })
    gc.check(function(x)
      return nn.ctc_loss(tide.tensor { { 1, 2, 2 }, { 2, 0, 0 } }, x, lab_len, seq_len, { blank_index = 3, logits_time_major = false })
    end,
      { R({ 2, 5, 4 }, -2, 2, 2):transpose { 0, 1, 2 } })
    gc.check(function(x) return tide.losses.ctc(tide.tensor { { 1, 2 }, { 3, 0 } }, x) end, { R({ 2, 4, 4 }, -2, 2, 3) })
  end)

  it("keeps its result's shape in a trace with None dims", function()
    local f = tide.trace(function(l, x, ll, sl) return nn.ctc_loss(l, x, ll, sl) end, { input_signature = {
      tide.TensorSpec({ tide.None, tide.None }, "int32"), tide.TensorSpec({ tide.None, tide.None, 4 }, "float32"),
      tide.TensorSpec({ tide.None }, "int32"), tide.TensorSpec({ tide.None }, "int32") } })
    local x = tide.random.normal({ 3, 2, 4 }, { seed = 5 })
    local want = nn.ctc_loss(tide.tensor { { 1, 2 }, { 3, 0 } }, x, tide.tensor { 2, 1 }, tide.tensor { 3, 2 })
    h.close(f(tide.tensor { { 1, 2 }, { 3, 0 } }, x, tide.tensor { 2, 1 }, tide.tensor { 3, 2 }), want:totable(), 1e-6)
  end)

  it("gives inf where no alignment fits and 0 for an empty label sequence in no time", function()
    local x = tide.zeros { 2, 2, 3 }
    local loss = nn.ctc_loss(tide.tensor { { 1, 1 }, { 0, 0 } }, x, tide.tensor { 2, 0 }, tide.tensor { 2, 0 }):totable()
    assert.are.equal(math.huge, loss[1])
    assert.are.equal(0, loss[2])
  end)

  it("refuses bad arguments with errors naming the op and argument", function()
    local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end
    local x, lab, ll, sl = tide.zeros { 4, 2, 3 }, tide.tensor { { 1, 2 }, { 1, 0 } }, tide.tensor { 2, 1 }, tide.tensor { 4, 4 }
    assert.matches("ctc_loss: labels%[0, 1%] = 3 is outside the classes %[0, 3%)",
      err(nn.ctc_loss, tide.tensor { { 1, 3 }, { 1, 0 } }, x, ll, sl))
    assert.matches("ctc_loss: labels%[1, 0%] = %-1 is outside", err(nn.ctc_loss, tide.tensor { { 1, 2 }, { -1, 0 } }, x, ll, sl))
    assert.matches("ctc_loss: labels%[0, 0%] = 1 is the blank_index",
      err(nn.ctc_loss, lab, x, ll, sl, { blank_index = 1 }))
    assert.matches("ctc_loss: blank_index must be in %[%-3, 3%) for 3 classes, got 3",
      err(nn.ctc_loss, lab, x, ll, sl, { blank_index = 3 }))
    assert.matches("ctc_loss: blank_index must be in", err(nn.ctc_loss, lab, x, ll, sl, { blank_index = -4 }))
    assert.matches("ctc_loss: label_length%[0%] = 3 is not in %[0, 2%]", err(nn.ctc_loss, lab, x, tide.tensor { 3, 1 }, sl))
    assert.matches("ctc_loss: logit_length%[1%] = 5 is not in %[0, 4%]", err(nn.ctc_loss, lab, x, ll, tide.tensor { 4, 5 }))
    assert.matches("ctc_loss: logit_length has a batch of 3", err(nn.ctc_loss, lab, x, ll, tide.tensor { 4, 4, 4 }))
    assert.matches("ctc_loss: labels must be 2%-D", err(nn.ctc_loss, tide.tensor { 1, 2 }, x, ll, sl))
    assert.matches("ctc_loss: logits must be 3%-D", err(nn.ctc_loss, lab, tide.zeros { 4, 2 }, ll, sl))
    assert.matches("ctc_loss: logits must be a float tensor", err(nn.ctc_loss, lab, tide.tensor { { { 1 } } }, ll, sl))
    assert.matches("ctc_loss: labels must be an int32 or int64 tensor", err(nn.ctc_loss, tide.zeros { 2, 2 }, x, ll, sl))
    assert.matches("ctc_loss: label_length is required", err(nn.ctc_loss, lab, x, nil, sl))
    assert.matches("ctc_loss: logit_length is required", err(nn.ctc_loss, lab, x, ll, nil))
    local sp = tide.SparseTensor(tide.tensor({ { 0, 0 } }, "int64"), tide.tensor { 1 }, { 2, 1 })
    assert.matches("ctc_loss: blank_index must be given when labels is a SparseTensor", err(nn.ctc_loss, sp, x, nil, sl))
    -- a second derivative, which TF refuses too
    local t1, t2 = tide.GradientTape(), tide.GradientTape()
    local v = tide.Variable(tide.zeros({ 4, 2, 3 }, "float64"))
    assert.matches("ctc_loss: its gradient has no gradient", err(function()
      local g = t2:run(function()
        local y = t1:run(function() return tide.reduce_sum(nn.ctc_loss(lab, v, ll, sl)) end)
        return tide.reduce_sum(tide.square(t1:gradient(y, v)))
      end)
      return t2:gradient(g, v)
    end))
    assert.matches("ctc_beam_search_decoder: top_paths must be in %[1, beam_width = 2%], got 3",
      err(nn.ctc_beam_search_decoder, x, sl, 2, 3))
    assert.matches("ctc_beam_search_decoder: inputs must be 3%-D", err(nn.ctc_beam_search_decoder, tide.zeros { 2, 3 }, sl))
    assert.matches("ctc_beam_search_decoder: sequence_length%[0%] = 5 is not in %[0, 4%]",
      err(nn.ctc_beam_search_decoder, x, tide.tensor { 5, 1 }))
    assert.matches("ctc_beam_search_decoder: the beam of sequence 0 holds 1 paths, fewer than top_paths = 2",
      err(nn.ctc_beam_search_decoder, tide.zeros { 1, 1, 1 }, tide.tensor { 1 }, 5, 2))
    assert.matches("collapse_repeated: labels must be 2%-D", err(nn.collapse_repeated, tide.tensor { 1 }, tide.tensor { 1 }))
    assert.matches("collapse_repeated: seq_length must be a 1%-D integer tensor of the batch size 1",
      err(nn.collapse_repeated, tide.tensor { { 1 } }, tide.tensor { 1, 1 }))
    assert.matches("ctc_unique_labels: labels must be an integer tensor", err(nn.ctc_unique_labels, tide.zeros { 1, 2 }))
    assert.matches("ctc_decode: strategy must be", err(tide.ops.ctc_decode, tide.zeros { 2, 4, 3 }, sl, { strategy = "x" }))
    assert.matches("ctc: y_true must be 2%-D", err(tide.losses.ctc, tide.tensor { 1 }, tide.zeros { 1, 2, 3 }))
    assert.matches("ctc: y_pred must be 3%-D", err(tide.losses.ctc, tide.tensor { { 1 } }, tide.zeros { 1, 2 }))
  end)
end)
