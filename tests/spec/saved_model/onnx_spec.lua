-- tests/spec/saved_model/onnx_spec.lua — ONNX models read by tide (kernels/io/onnx_*.c, saved_model/onnx.lua):
-- models PyTorch's exporter and onnx.helper wrote (tests/fixtures/onnx/gen.py) match onnxruntime's outputs;
-- unmapped ops, opsets tide does not read, broken files and wrong inputs give clear errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"

local FIX = "tests/fixtures/onnx/"
local E = dofile(FIX .. "expected.lua")

local function f32(v) return tide.tensor(v, "float32") end

local function copy_bytes(src, dst, n)
  local f = assert(io.open(src, "rb"))
  local data = f:read("*a")
  f:close()
  local o = assert(io.open(dst, "wb"))
  o:write(n and data:sub(1, n) or data)
  o:close()
  return #data
end

describe("tide.onnx.load", function()
  it("runs PyTorch's MLP by ONNX's names (Gemm, Relu, Softmax), any batch", function()
    local m = tide.onnx.load(FIX .. "mlp.onnx")
    assert.are.equal("onnx", m.format)
    assert.are.equal(14, m.opset)
    assert.are.same({ "x" }, { m.inputs[1].name })
    assert.are.same({ "probs" }, { m.outputs[1].name })
    local y = m { x = f32(E.mlp.in_x) }
    h.close(y.probs, E.mlp.out_probs, 1e-6)
    h.close(m(f32(E.mlp.in_x)), E.mlp.out_probs, 1e-6) -- one input: m(t) gives the first output
    h.close(m(f32({ E.mlp.in_x[2] })), { E.mlp.out_probs[2] }, 1e-6)
    h.close(m.functions.serving_default(f32(E.mlp.in_x)), E.mlp.out_probs, 1e-6)
  end)

  it("runs a CNN: Conv (pads, strides, dilations, groups, depthwise), pools, Flatten, Gemm", function()
    local m = tide.onnx.load(FIX .. "cnn.onnx")
    h.close(m { image = f32(E.cnn.in_image) }.logits, E.cnn.out_logits, 2e-5)
  end)

  it("runs ConvTranspose, ceil_mode pools, a pool that counts no padding, and Conv1d", function()
    local m = tide.onnx.load(FIX .. "cnn2.onnx")
    h.close(m(f32(E.cnn2.in_x)), E.cnn2.out_y, 2e-5)
  end)

  it("maps NCHW chains with no transpose between ops, and keeps NCHW where an op reads it", function()
    -- layout.onnx (gen_layout.py): Conv, BatchNormalization, Clip, depthwise Conv, Relu, Mul/Add by
    -- constants, a residual Add, Conv, MaxPool; a Transpose, a Flatten and a Where read NCHW values.
    local EL = dofile(FIX .. "expected_layout.lua")
    local m = tide.onnx.load(FIX .. "layout.onnx")
    local r = m { x = f32(EL.in_x), mask = tide.tensor(EL.in_mask, "bool") }
    for _, k in ipairs { "y", "t", "f", "s", "w" } do h.close(r[k], EL["out_" .. k], 1e-5) end
    local one = m { x = f32({ EL.in_x[2] }), mask = tide.tensor({ EL.in_mask[2] }, "bool") } -- another batch size
    h.close(one.y, { EL.out_y[2] }, 1e-5)
    h.close(one.f, { EL.out_f[2] }, 1e-5)
    -- kernels/io/onnx_layout.c: mapped op by op (each Conv, BatchNormalization and MaxPool transposing
    -- in and out) this graph kept 9 transposes; now 5: the input's, and one per NCHW value outputs read
    local binding = require "tide.binding"
    local text = binding.ffi.string(binding.C.tide_graph_text(binding.C.tide_onnx_model_graph(m._onnx)))
    local n = 0
    for _ in text:gmatch("= transpose%(") do n = n + 1 end
    assert.are.equal(5, n)
  end)

  it("runs BatchNormalization, LayerNormalization, reductions and Tile", function()
    local m = tide.onnx.load(FIX .. "ops.onnx")
    local r = m { x = f32(E.ops.in_x) }
    h.close(r.bn, E.ops.out_bn, 1e-5)
    h.close(r.ln, E.ops.out_ln, 1e-5)
    h.close(r.red, E.ops.out_red, 1e-5)
    h.close(r.tiled, E.ops.out_tiled, 0)
  end)

  it("runs Einsum (two operands, a summed label, one operand), GatherElements and Trilu", function()
    local m = tide.onnx.load(FIX .. "ops2.onnx")
    local E2 = E.ops2
    local r = m { a = f32(E2.in_a), b = f32(E2.in_b), gi = tide.tensor(E2.in_gi, "int64") }
    h.close(r.scores, E2.out_scores, 1e-5)
    h.close(r.contract, E2.out_contract, 1e-5)
    h.close(r.swapped, E2.out_swapped, 0)
    h.close(r.picked, E2.out_picked, 1e-5)
    h.close(r.upper, E2.out_upper, 0)
    h.close(r.lower, E2.out_lower, 0)
  end)

  it("runs CumSum (exclusive, reverse), TopK (any axis, smallest, ints, ties) and GatherND (negatives, batch_dims)", function()
    local m = tide.onnx.load(FIX .. "ops3.onnx")
    local E3 = dofile(FIX .. "expected3.lua")
    local r = m { x = f32(E3.in_x), t = f32(E3.in_t), ti = tide.tensor(E3.in_ti, "int32"), d = f32(E3.in_d),
      gi = tide.tensor(E3.in_gi, "int64"), bi = tide.tensor(E3.in_bi, "int64") }
    h.close(r.cs, E3.out_cs, 1e-6)
    h.close(r.cs_er, E3.out_cs_er, 1e-6)
    for _, k in ipairs { "tk", "tk2", "tki" } do
      h.close(r[k .. "_v"], E3["out_" .. k .. "_v"], 0)
      assert.are.equal("int64", r[k .. "_i"].dtype)
      h.close(r[k .. "_i"], E3["out_" .. k .. "_i"], 0)
    end
    assert.are.equal("int32", r.tki_v.dtype)
    h.close(r.gnd, E3.out_gnd, 0)
    h.close(r.gnd_b, E3.out_gnd_b, 0)
    h.close(m { x = f32({ E3.in_x[2] }), t = f32(E3.in_t), ti = tide.tensor(E3.in_ti, "int32"), d = f32(E3.in_d),
      gi = tide.tensor(E3.in_gi, "int64"), bi = tide.tensor(E3.in_bi, "int64") }.cs, { E3.out_cs[2] }, 1e-6)
    local R = FIX .. "refused/"
    h.errors("node 'tk' (TopK): its K must be known when the model loads", tide.onnx.load, R .. "topk_free_k.onnx")
    h.errors("node 'cs' (CumSum): its axis must be known when the model loads", tide.onnx.load,
      R .. "cumsum_free_axis.onnx")
    h.errors("node 'tk' (TopK): TopK's axis 2 is out of range for rank 2", tide.onnx.load, R .. "topk_axis.onnx")
    h.errors("node 'gn' (GatherND): GatherND's batch_dims 1 and 2-long index tuples do not fit data of rank 2",
      tide.onnx.load, R .. "gathernd_batch.onnx")
  end)

  it("runs a Transformer encoder layer (attention by MatMul, Softmax, LayerNormalization, Erf)", function()
    local m = tide.onnx.load(FIX .. "transformer.onnx")
    assert.are.equal(17, m.opset)
    h.close(m { tokens = f32(E.transformer.in_tokens) }.encoded, E.transformer.out_encoded, 2e-5)
  end)

  it("runs Resize, Slice, Gather, Split, Expand, Where, Pad and friends", function()
    local m = tide.onnx.load(FIX .. "dynamic.onnx")
    local r = m { x = f32(E.dynamic.in_x), idx = tide.tensor(E.dynamic.in_idx, "int64") }
    h.close(r.y, E.dynamic.out_y, 2e-5)
    assert.are.equal("float64", r.m.dtype)
    h.close(r.m, E.dynamic.out_m, 2e-5)
  end)

  it("runs Pad's edge, reflect and wrap modes and Resize's nearest, linear and cubic modes as onnxruntime", function()
    local m = tide.onnx.load(FIX .. "resample.onnx")
    local E3 = E.resample
    local y = m { x = f32(E3.in_x), s = f32(E3.in_s) }
    for _, name in ipairs({ "pad_reflect", "pad_edge", "pad_wrap", "pad_reflect_1d", "near_asym_floor",
      "near_half_rpf", "near_asym_x3", "near_half_floor_x2", "near_x2", "near_align_ceil", "near_1d" }) do
      assert(y[name], name)
      h.close(y[name], E3["out_" .. name], 0) -- picked, not computed: exact
    end
    for _, name in ipairs({ "lin_align", "lin_asym", "lin_half", "lin_pytorch", "lin_symmetric", "cubic_half",
      "cubic_excl", "lin_axes" }) do
      assert(y[name], name)
      h.close(y[name], E3["out_" .. name], 2e-6)
    end
  end)

  it("runs PyTorch's LSTM and GRU (batch_first, initial states, bidirectional) unrolled, any batch", function()
    local m = tide.onnx.load(FIX .. "rnn.onnx")
    local R = E.rnn
    local y = m { x = f32(R.in_x), h0 = f32(R.in_h0), c0 = f32(R.in_c0) }
    for _, name in ipairs({ "lstm_y", "lstm_h", "lstm_c", "gru_y", "gru_h", "lstm2_y" }) do
      assert(y[name], name)
      h.close(y[name], R["out_" .. name], 2e-5)
    end
    local one = m { x = f32({ R.in_x[2] }), h0 = f32({ { R.in_h0[1][2] } }), c0 = f32({ { R.in_c0[1][2] } }) }
    h.close(one.gru_y, { R.out_gru_y[2] }, 2e-5)
  end)

  it("runs LSTM reverse with peepholes and layout 1, and GRU with linear_before_reset 0 (onnx.reference)", function()
    local m = tide.onnx.load(FIX .. "rnn2.onnx")
    local R = E.rnn2
    local y = m { x = f32(R.in_x), xb = f32(R.in_xb) }
    for _, name in ipairs({ "ly", "lh", "gy", "gh" }) do
      assert(y[name], name)
      h.close(y[name], R["out_" .. name], 2e-5)
    end
  end)

  it("refuses what the new mappings cannot follow, naming node, op and why", function()
    local R = FIX .. "refused/"
    h.errors("node 'pad' (Pad): Pad's edge, reflect and wrap modes need the padded axes' sizes when the model loads "
      .. "(axis 1 is not known)", tide.onnx.load, R .. "pad_edge_free_axis.onnx")
    h.errors("node 'rs' (Resize): Resize's coordinate_transformation_mode tf_crop_and_resize is not mapped",
      tide.onnx.load, R .. "resize_crop.onnx")
    h.errors("node 'lstm' (LSTM): LSTM is unrolled over its time steps, whose number must be known when the model "
      .. "loads (X's axis 0 is free)", tide.onnx.load, R .. "lstm_free_time.onnx")
    h.errors("node 'lstm' (LSTM): LSTM with activations, clip or input_forget is not mapped", tide.onnx.load,
      R .. "lstm_clip.onnx")
    h.errors("node 'gru' (GRU): GRU with sequence_lens shorter than the sequence is not mapped", tide.onnx.load,
      R .. "gru_short_lens.onnx")
    h.errors("node 'gru' (GRU): GRU's W, R, B or P do not fit hidden_size 2, 1 direction(s) and 3 inputs",
      tide.onnx.load, R .. "gru_wrong_w.onnx")
    -- index lists a few bytes ask for are refused by the load cap before they are allocated
    h.errors("node 'rs' (Resize): memory limit of 67108864 bytes reached", tide.onnx.load, R .. "resize_huge.onnx")
    h.errors("node 'pad' (Pad): memory limit of 67108864 bytes reached", tide.onnx.load, R .. "pad_huge.onnx")
  end)

  it("reads initializers kept as external data beside the model", function()
    local m = tide.onnx.load(FIX .. "ext/model.onnx")
    h.close(m(f32(E.mlp.in_x)), E.mlp.out_probs, 1e-6)
  end)

  it("lists every unmapped op at once, naming a node of each", function()
    local ok, msg = pcall(tide.onnx.load, FIX .. "unmapped.onnx")
    assert.is_false(ok)
    assert.matches("uses 2 ops that tide does not map", msg, 1, true)
    assert.matches("Det (node 'det1')", msg, 1, true)
    assert.matches("Hardmax (node 'hm')", msg, 1, true)
    assert.is_nil(msg:find("det2", 1, true)) -- one line per op
  end)

  it("refuses an opset outside the ones it reads", function()
    h.errors("uses opset 9; tide reads opsets 13 to 21", tide.onnx.load, FIX .. "opset9.onnx")
  end)

  it("says a truncated or corrupt file is one, and names a missing one", function()
    local dir = tmp.dir("onnx")
    local n = copy_bytes(FIX .. "cnn.onnx", dir .. "/cut.onnx", 2000)
    assert.is_true(n > 2000)
    h.errors("cut.onnx is corrupt (not an ONNX ModelProto, or truncated)", tide.onnx.load, dir .. "/cut.onnx")
    local f = assert(io.open(dir .. "/junk.onnx", "wb"))
    f:write("\8\7\18\4junk and then some bytes that are not a protobuf \255\255\255")
    f:close()
    h.errors("junk.onnx is corrupt", tide.onnx.load, dir .. "/junk.onnx")
    h.errors("no-such.onnx", tide.onnx.load, dir .. "/no-such.onnx")
    -- external data that is gone, or shorter than the tensors need
    os.execute(string.format("cp -r '%sext' '%s/ext'", FIX, dir))
    copy_bytes(FIX .. "ext/weights.bin", dir .. "/ext/weights.bin", 40)
    h.errors("runs past the end of", tide.onnx.load, dir .. "/ext/model.onnx")
    os.remove(dir .. "/ext/weights.bin")
    h.errors("external data", tide.onnx.load, dir .. "/ext/model.onnx")
    h.errors("onnx.load: path must be a file name string", tide.onnx.load, 42)
    tmp.remove(dir)
  end)

  it("keeps no tensor of a refused load (fuzz_onnx's find: a Constant that declares no outputs)", function()
    local path = "fuzz/corpus/onnx/regression-leak-node-without-outputs"
    h.errors("node '/Slice_3' (Slice): its input '/Constant_16_output_0' is made by no earlier node", tide.onnx.load, path)
    collectgarbage()
    collectgarbage()
    local before = tide.config.memory_info().current
    for _ = 1, 5 do pcall(tide.onnx.load, path) end
    collectgarbage()
    collectgarbage()
    assert.are.equal(before, tide.config.memory_info().current)
  end)

  it("says what a call got wrong: names, dtypes, shapes", function()
    local m = tide.onnx.load(FIX .. "cnn.onnx")
    h.errors("ONNX model: input 'image' is missing", m, { x = f32(E.cnn.in_image) })
    h.errors("ONNX model has no input named 'extra' (it has image)", m,
      { image = f32(E.cnn.in_image), extra = f32(1) })
    h.errors("input 'image' is float64 (2, 3, 16, 16), but the model takes float32 (None, 3, 16, 16)", m,
      { image = tide.tensor(E.cnn.in_image, "float64") })
    h.errors("input 'image' is float32 (2, 3, 8, 8), but the model takes float32 (None, 3, 16, 16)", m,
      { image = tide.zeros({ 2, 3, 8, 8 }) })
    local d = tide.onnx.load(FIX .. "dynamic.onnx")
    h.errors("ONNX model takes 2 inputs (x, idx): call it with a table", d, f32(E.dynamic.in_x))
  end)

  it("is named by the readers of other formats", function()
    h.errors("it is an ONNX model: tide.onnx.load reads it", tide.saved_model.load, FIX .. "mlp.onnx")
  end)
end)
