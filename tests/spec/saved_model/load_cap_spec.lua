-- tests/spec/saved_model/load_cap_spec.lua — the load cap (kernels/io/load_cap.c): a small hostile model whose
-- load would compute gigabytes (ConstantOfShape of 2^28, a TF splat constant) is refused, naming the node and op.
local tide = require "tide"

local function refusal(f, ...)
  local ok, msg = pcall(f, ...)
  assert.is_false(ok)
  return tostring(msg)
end

describe("the load cap", function()
  it("refuses an ONNX model whose folded constants would pass it (fuzz_onnx's find), naming node and op", function()
    local path = "fuzz/corpus/onnx/regression-oom-constantofshape"
    local before = tide.config.memory_info().peak
    local msg = refusal(tide.onnx.load, path)
    assert.matches("ONNX model " .. path, msg, 1, true)
    assert.matches("node '/ConstantOfShape_1' (ConstantOfShape)", msg, 1, true)
    assert.matches("a tensor of 2147483680 bytes", msg, 1, true)
    assert.matches("capped at max(64 MiB, 8 x the 6", msg, 1, true)
    assert.matches("= 67108864 bytes; see docs/saved_model.md", msg, 1, true)
    -- refused before the storage was mapped: the peak grew by far less than the tensor
    assert.is_true(tide.config.memory_info().peak - before < 128 * 2 ^ 20)
  end)

  it("refuses a TF SavedModel whose splat constant would pass it, naming node and op", function()
    local dir = "tests/fixtures/tf_saved_model/const_bomb"
    local msg = refusal(tide.saved_model.load, dir)
    assert.matches("TF SavedModel " .. dir, msg, 1, true)
    assert.matches("(Const)", msg, 1, true)
    assert.matches("a tensor of 1073741824 bytes", msg, 1, true)
    assert.matches("capped at max(64 MiB, 8 x the", msg, 1, true)
  end)

  it("leaves models within it alone, and their later runs uncapped", function()
    local m = tide.onnx.load("tests/fixtures/onnx/cnn.onnx")
    assert.are.equal("onnx", m.format)
    local big = tide.zeros({ 64, 1024, 1024 }) -- 256 MiB after a load: no cap is left current
    assert.are.equal(0, tide.reduce_sum(big):item())
  end)
end)
