-- tests/spec/utils/audio_spec.lua — tide.audio.decode_wav against tf.audio.decode_wav (every case and error of
-- tests/fixtures/keras_utils/gen_audio.py), in a traced map, and audio_dataset_from_directory against Keras 3.
local tide = require "tide"
local json = require "tide.json"
local U = tide.utils

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function err(pattern, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.matches(pattern, tostring(e), 1, true)
end

local K = json.decode(read("tests/fixtures/keras_utils/audio.json"), "audio.json")
local TREE = "tests/fixtures/keras_utils/audio"
local DEC = "tests/fixtures/keras_utils/audio_decode/"

describe("tide.audio.decode_wav", function()
  for _, c in ipairs(K.decode) do
    it(string.format("%s, desired_channels %d, desired_samples %d: as TF", c.file, c.desired_channels, c.desired_samples),
      function()
        local bytes = read(DEC .. c.file)
        local o = { desired_channels = c.desired_channels, desired_samples = c.desired_samples }
        if c.error then
          err("decode_wav: " .. c.error, tide.audio.decode_wav, bytes, o)
        else
          local a, r = tide.audio.decode_wav(bytes, o)
          assert.are.equal("float32", a.dtype)
          assert.are.same(c.shape, a.shape)
          if c.shape[1] > 0 and c.shape[2] > 0 then assert.are.same(c.audio, a:totable()) end
          assert.are.equal("int32", r.dtype)
          assert.are.equal(c.rate, r:item())
        end
      end)
  end

  it("takes a string scalar or uint8 bytes, and runs in a traced map", function()
    local bytes = read(DEC .. "stereo.wav")
    local a1 = tide.audio.decode_wav(tide.constant(bytes))
    local a2 = tide.audio.decode_wav(tide.io.read_file(DEC .. "stereo.wav"))
    assert.are.same(a1:totable(), a2:totable())
    local ds = tide.data.Dataset.from_tensor_slices(tide.constant({ DEC .. "stereo.wav", DEC .. "mono8k.wav" }))
      :map(function(p) local a, r = tide.audio.decode_wav(tide.io.read_file(p), { desired_channels = 1 }); return a, r end)
    local got = {}
    for a, r in ds:iter() do got[#got + 1] = { a.shape[1], r:item() } end
    assert.are.same({ { 3, 16000 }, { 3, 8000 } }, got)
  end)

  it("names wrong arguments", function()
    err("decode_wav: desired_channels must be -1", tide.audio.decode_wav, "x", { desired_channels = -2 })
    err("decode_wav: desired_samples must be an integer", tide.audio.decode_wav, "x", { desired_samples = 1.5 })
    err("decode_wav: contents must be the WAV bytes", tide.audio.decode_wav, 5)
    err("decode_wav: contents must be a scalar string tensor", tide.audio.decode_wav, tide.constant({ "a", "b" }))
  end)
end)

local function elements(ds)
  local out = {}
  for x, y in ds:iter() do out[#out + 1] = { audio = x:totable(), labels = y:totable() } end
  return out
end

local function close(want, got, what)
  assert.are.equal(type(want), type(got), what)
  if type(want) == "table" then
    assert.are.equal(#want, #got, what)
    for i = 1, #want do close(want[i], got[i], what) end
  else
    assert(math.abs(want - got) < 1e-7, what)
  end
end

-- The files of a run, as (audio, labels) pairs in any order: the shuffled order within a pass is tide's.
local function pairs_of(run)
  local out = {}
  for _, b in ipairs(run) do
    for i = 1, #b.audio do out[#out + 1] = json.encode { b.audio[i], b.labels[i] } end
  end
  table.sort(out)
  return out
end

describe("tide.utils.audio_dataset_from_directory", function()
  local D = K.datasets
  it("gives Keras's batches in order: each batch padded to its longest file", function()
    local ds = U.audio_dataset_from_directory(TREE, { batch_size = 2, shuffle = false, verbose = false })
    assert.are.same(D.class_names, ds.class_names)
    close(D.plain, elements(ds), "plain")
  end)

  it("cuts or pads each file to output_sequence_length, with Keras's categorical and binary labels", function()
    close(D.fixed_len, elements(U.audio_dataset_from_directory(TREE, { batch_size = 3, shuffle = false,
      output_sequence_length = 4, label_mode = "categorical", verbose = false })), "fixed_len")
    close(D.binary, elements(U.audio_dataset_from_directory(TREE, { batch_size = 5, shuffle = false,
      label_mode = "binary", verbose = false })), "binary")
  end)

  it("splits as Keras does for a seed: the same files in each subset", function()
    local tr, va = unpack(U.audio_dataset_from_directory(TREE, { batch_size = 8, validation_split = 0.4,
      subset = "both", seed = 3, output_sequence_length = 8, verbose = false }))
    assert.are.same(pairs_of(D.split_train), pairs_of(elements(tr)))
    assert.are.same(pairs_of(D.split_val), pairs_of(elements(va)))
  end)

  it("checks sampling_rate against the files instead of resampling", function()
    local ds = U.audio_dataset_from_directory(TREE, { sampling_rate = 16000, shuffle = false, verbose = false })
    assert.truthy(ds)
    err("is sampled at 16000 Hz, not sampling_rate = 8000: tide does not resample", U.audio_dataset_from_directory,
      TREE, { sampling_rate = 8000, verbose = false })
    err("sampling_rate should have an integer value", U.audio_dataset_from_directory, TREE, { sampling_rate = 1.5 })
    err("sampling_rate should be higher than 0", U.audio_dataset_from_directory, TREE, { sampling_rate = 0 })
  end)

  it("names what is wrong", function()
    local op = "audio_dataset_from_directory: "
    err(op .. "cannot set both ragged and output_sequence_length", U.audio_dataset_from_directory, TREE,
      { ragged = true, output_sequence_length = 3 })
    err(op .. "ragged = true is not supported", U.audio_dataset_from_directory, TREE, { ragged = true })
    err(op .. "output_sequence_length must be a positive integer", U.audio_dataset_from_directory, TREE,
      { output_sequence_length = 0 })
    local empty = os.tmpname()
    os.remove(empty)
    assert(os.execute("mkdir -p '" .. empty .. "/a' && echo x > '" .. empty .. "/a/notes.txt'"))
    err(op .. "no audio files found in '" .. empty .. "'", U.audio_dataset_from_directory, empty, { verbose = false })
    os.execute("rm -rf '" .. empty .. "'")
    local three = os.tmpname()
    os.remove(three)
    for _, c in ipairs { "a", "b", "c" } do
      assert(os.execute(string.format("mkdir -p '%s/%s' && cp '%s/up/up0.wav' '%s/%s/'", three, c, TREE, three, c)))
    end
    err(op .. "label_mode=\"binary\" needs exactly 2 classes, found 3 (a, b, c)", U.audio_dataset_from_directory,
      three, { label_mode = "binary", verbose = false })
    os.execute("rm -rf '" .. three .. "'")
  end)
end)
