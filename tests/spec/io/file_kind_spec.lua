-- tests/spec/io/file_kind_spec.lua — a file handed to the wrong reader says what it
-- is and which tide function reads it (kernels/io/file_kind.c), over the samples of
-- tests/fixtures/file_kinds (gen.py) and the checkpoint fixtures.
local tide = require "tide"
local h = require "helpers"
local binding = require "tide.binding"
local tmp = require "tmp"

local ffi, C = binding.ffi, binding.C
local FIX = "tests/fixtures/file_kinds/"

local function kind(path)
  local phrase = ffi.new("const char *[1]")
  local k = C.tide_file_kind(path, phrase)
  return tonumber(k), phrase[0] ~= nil and ffi.string(phrase[0]) or nil
end

describe("tide_file_kind", function()
  it("tells each sample's format by its bytes (a folder by what it holds)", function()
    local cases = {
      { "model.weights.h5", "TIDE_FILE_HDF5", "an HDF5 file" },
      { "model.keras", "TIDE_FILE_KERAS", "a Keras .keras file" },
      { "torch.pt", "TIDE_FILE_TORCH_ZIP", "a PyTorch file" },
      { "legacy.pt", "TIDE_FILE_PICKLE", "a Python pickle" },
      { "arrays.npz", "TIDE_FILE_NPZ", "a NumPy .npz archive" },
      { "other.zip", "TIDE_FILE_ZIP", "a zip archive" },
      { "model.onnx", "TIDE_FILE_ONNX", "an ONNX model" },
      { "tf_saved_model", "TIDE_FILE_TF_SAVED_MODEL", "a TensorFlow SavedModel" },
      { "tf_saved_model/saved_model.pb", "TIDE_FILE_TF_SAVED_MODEL", "a TensorFlow SavedModel" },
      { "tf_saved_model/variables/variables.index", "TIDE_FILE_TF_INDEX", "the index of a TensorFlow checkpoint" },
      { "tf_saved_model/variables/variables.data-00000-of-00001", "TIDE_FILE_TF_DATA",
        "a data file of a TensorFlow checkpoint" },
      { "records.tfrecord", "TIDE_FILE_TFRECORD", "a TFRecord file: tide.data.TFRecordDataset reads it" },
      { "records.tfrecord.gz", "TIDE_FILE_GZIP", "gzip-compressed data" },
      { "../safetensors/python_all.safetensors", "TIDE_FILE_SAFETENSORS", "a safetensors file" },
      { "../npy/bool.npy", "TIDE_FILE_NPY", "a NumPy .npy file: tide.io.read_npy reads it" },
      { "../ckpt/module", "TIDE_FILE_CHECKPOINT_DIR", "a folder of checkpoints" },
    }
    for _, c in ipairs(cases) do
      local k, phrase = kind(FIX .. c[1])
      assert.are.equal(tonumber(C[c[2]]), k, c[1])
      assert.truthy(phrase and phrase:find(c[3], 1, true), c[1] .. ": " .. tostring(phrase))
    end
    assert.are.same({ tonumber(C.TIDE_FILE_UNKNOWN) }, { kind(FIX .. "garbage.bin") })
    assert.are.same({ tonumber(C.TIDE_FILE_UNKNOWN) }, { kind(FIX .. "missing") })
    local dir = tmp.dir("file_kind") .. "/model"
    tide.saved_model.save(tide.trace(function(x) return x * 2 end, { input_signature = { tide.TensorSpec({ 2 }) } }),
      dir)
    assert.are.equal(tonumber(C.TIDE_FILE_TIDE_SAVED_MODEL), (kind(dir)))
    tmp.remove(dir:match("^(.*)/model$"))
  end)
end)

describe("a reader handed another format", function()
  it("safetensors (and load_weights) names HDF5, .keras, TF's files and TFRecords", function()
    h.errors("safetensors: '" .. FIX .. "model.weights.h5' is not a safetensors file: it is an HDF5 file (Keras 3's " ..
      ".weights.h5: model:load_weights reads it", tide.safetensors.load_file, FIX .. "model.weights.h5")
    h.errors("it is a Keras .keras file", tide.safetensors.safe_open, FIX .. "model.keras")
    h.errors("it is the index of a TensorFlow checkpoint: tide.train.load_checkpoint reads the checkpoint",
      tide.safetensors.load_file, FIX .. "tf_saved_model/variables/variables.index")
    h.errors("it is a TFRecord file: tide.data.TFRecordDataset reads it", tide.safetensors.load_file,
      FIX .. "records.tfrecord")
    local m = tide.Sequential { tide.Input { shape = { 2 } }, tide.layers.Dense { 1 } }
    -- load_weights picks the reader by name: an HDF5 file under a safetensors name is named
    local misnamed = tmp.name(".safetensors")
    local src, dst = assert(io.open(FIX .. "model.weights.h5", "rb")), assert(io.open(misnamed, "wb"))
    dst:write(src:read("*a"))
    src:close()
    dst:close()
    h.errors("it is an HDF5 file", function() m:load_weights(misnamed) end)
    tmp.remove(misnamed)
    -- a corrupt safetensors file, or bytes tide knows nothing of, stay "corrupt"
    h.errors("'" .. FIX .. "garbage.bin' is corrupt", tide.safetensors.load_file, FIX .. "garbage.bin")
  end)

  it("read_npy names pickles, .npz archives and PyTorch files", function()
    h.errors("read_npy: '" .. FIX .. "legacy.pt' is not a .npy file: it is a Python pickle", tide.io.read_npy,
      FIX .. "legacy.pt")
    h.errors("it is a NumPy .npz archive (a zip of .npy files), which tide does not read", tide.io.read_npy,
      FIX .. "arrays.npz")
    h.errors("it is a PyTorch file (torch.save's zip around a pickle), which tide does not read", tide.io.read_npy,
      FIX .. "torch.pt")
    h.errors("is not a .npy file (it does not start with", tide.io.read_npy, FIX .. "garbage.bin")
  end)

  it("saved_model.load reads TF's SavedModel and names ONNX and .keras; load_model reads .keras", function()
    local tf = tide.saved_model.load(FIX .. "tf_saved_model")
    assert.are.equal("tensorflow", tf.format)
    h.errors("load_model: '" .. FIX .. "tf_saved_model' is a TensorFlow SavedModel, which holds no Keras model tide " ..
      "can rebuild; tide.saved_model.load runs its signatures", tide.models.load_model, FIX .. "tf_saved_model")
    -- tide's own SavedModel reader in C names it (what tide_model_load went through before it read TF's)
    local p = ffi.new("tide_saved_model *[1]")
    h.errors("saved model: " .. FIX .. "tf_saved_model is not a tide SavedModel: it is a TensorFlow SavedModel " ..
      "(saved_model.pb): tide.saved_model.load reads it; its variables are a TF checkpoint, which " ..
      "tide.train.load_checkpoint reads", function()
        if C.tide_saved_model_open(FIX .. "tf_saved_model", p) ~= 0 then binding.raise() end
      end)
    h.errors("it is an ONNX model: tide.onnx.load reads it", tide.saved_model.load, FIX .. "model.onnx")
    -- load_model reads .keras files (tests/spec/saving/keras_file_spec.lua); saved_model.load names them
    assert.is_true(rawget(tide.models.load_model(FIX .. "model.keras"), "built"))
    h.errors("it is a Keras .keras file (a zip of config.json and model.weights.h5): tide.models.load_model reads it",
      tide.saved_model.load, FIX .. "model.keras")
    h.errors("is not a directory", tide.saved_model.load, FIX .. "garbage.bin")
  end)

  it("read_idx, TFRecord datasets and the C checkpoint reader name what they were given", function()
    h.errors("read_idx: '" .. FIX .. "model.weights.h5' is not an IDX file: it is an HDF5 file", tide.io.read_idx,
      FIX .. "model.weights.h5")
    h.errors("is not an IDX file: it is a safetensors file", tide.io.read_idx,
      "tests/fixtures/safetensors/python_all.safetensors")
    h.errors("is not an IDX file of unsigned bytes (its magic number is wrong)", tide.io.read_idx, FIX .. "garbage.bin")
    local function records(path)
      local n = 0
      for _ in tide.data.TFRecordDataset(path):iter() do n = n + 1 end
      return n
    end
    h.errors("TFRecord file '" .. FIX .. "model.keras' is not a TFRecord file: it is a Keras .keras file", records,
      FIX .. "model.keras")
    h.errors("a GZIP file needs compression_type=\"GZIP\"", records, FIX .. "records.tfrecord.gz")
    h.errors("the checksum of the record's length does not match", records, FIX .. "garbage.bin")
    assert.are.equal(1, records(FIX .. "records.tfrecord"))
    local function bundle(prefix)
      local b = C.tide_tensor_bundle_open(prefix)
      if b == nil then binding.raise() end
      C.tide_tensor_bundle_close(b)
    end
    h.errors("TF checkpoint: '" .. FIX .. "model.weights.h5' is no checkpoint prefix (there is no '" .. FIX ..
      "model.weights.h5.index'): it is an HDF5 file", bundle, FIX .. "model.weights.h5")
    h.errors("is no checkpoint prefix (there is no '" .. FIX .. "tf_saved_model.index'): it is a TensorFlow SavedModel",
      bundle, FIX .. "tf_saved_model")
    h.errors("cannot open the index '" .. FIX .. "missing.index'", bundle, FIX .. "missing")
  end)

  it("load_checkpoint names what it was given, and reads a TF SavedModel's variables", function()
    h.errors("load_checkpoint: '" .. FIX .. "model.weights.h5' is no checkpoint: it is an HDF5 file",
      tide.train.load_checkpoint, FIX .. "model.weights.h5")
    h.errors("is no checkpoint: it is a TensorFlow SavedModel", tide.train.list_variables, FIX .. "tf_saved_model")
    h.errors("is no checkpoint: it is a data file of a TensorFlow checkpoint: tide.train.load_checkpoint reads the " ..
      "checkpoint (its prefix: the path before .data-)", tide.train.load_checkpoint,
      FIX .. "tf_saved_model/variables/variables.data-00000-of-00001")
    local r = tide.train.load_checkpoint(FIX .. "tf_saved_model/variables/variables")
    assert.are.same({ 1, 2 }, r:get_tensor("v/.ATTRIBUTES/VARIABLE_VALUE"):totable())
  end)
end)
