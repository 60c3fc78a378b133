-- tests/spec/layers/audio_spec.lua — the spectrogram layers (STFTSpectrogram, MelSpectrogram) and
-- the STFT initializer against Keras 3's values (tests/fixtures/signal/layers.lua: outputs, the
-- weights Keras initializes, configs, errors), traced with a None batch, and their gradients.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local CASES = dofile("tests/fixtures/signal/layers.lua")

local function make(e) return tide.tensor(e.values, e.dtype):reshape(e.shape) end

local function flat(t)
  local out = {}
  local function walk(v) if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end end
  walk(t:totable())
  return out
end

-- angle: values at the branch cut (+-pi) compare modulo 2 pi.
local function matches(what, t, e, tol, angle)
  assert(table.concat(t.shape:as_list(), ",") == table.concat(e.shape, ","),
    string.format("%s: shape (%s), Keras gives (%s)", what, table.concat(t.shape:as_list(), ","), table.concat(e.shape, ",")))
  local vals = flat(t)
  for i, want in ipairs(e.values) do
    local v = vals[i]
    local d = math.abs(v - want)
    if angle then d = math.min(d, math.abs(d - 2 * math.pi)) end
    assert(d <= tol * math.max(1, math.abs(want)),
      string.format("%s: value %d is %s, Keras gives %s", what, i, tostring(v), tostring(want)))
  end
end

-- Keras's option values in tide's spelling (None is false for window).
local function options(o)
  local out = {}
  for k, v in pairs(o) do out[k] = v end
  return out
end

describe("spectrogram layers against Keras 3", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)
  it("has fixtures", function() assert.is_true(#CASES >= 15) end)
  for _, c in ipairs(CASES) do
    it(c.name, function()
      local cls = tide.layers[c.cls]
      if c.error then
        h.errors(c.error, function() return cls(options(c.opts)) end)
        return
      end
      local layer = cls(options(c.opts))
      local x = make(c.x)
      local y = layer(x)
      local tol = c.tol or 2e-5
      local angle = c.opts.mode == "angle"
      matches(c.name, y, c.y, tol, angle)
      local ws = layer.weights
      assert.are.equal(#c.weights, #ws)
      for i, w in ipairs(ws) do matches(c.name .. ", weight " .. i, w:value(), c.weights[i], 1e-6) end
      local cfg = layer:get_config()
      for k, v in pairs(c.config) do
        assert.are.same(v, cfg[k], c.name .. ": config " .. k)
      end
      -- traced with a None batch: the same values
      local spec = c.x.shape
      local sig = {}
      for i = 1, #spec do sig[i] = i == 1 and #spec > 1 and tide.None or spec[i] end
      local f = tide.trace(function(v) return layer(v) end, { input_signature = { tide.TensorSpec(sig, "float32") } })
      matches(c.name .. " (traced)", f(x), c.y, tol, angle)
    end)
  end
end)

describe("spectrogram layers", function()
  it("train their STFT kernels and round-trip their config", function()
    local layer = tide.layers.STFTSpectrogram { mode = "magnitude", frame_length = 8, frame_step = 4, dtype = "float64" }
    local x = gc.random({ 2, 24, 1 }, -1, 1, 3)
    gc.check_layer(layer, x)
    local again = tide.layers.STFTSpectrogram:from_config(layer:get_config())
    assert.are.equal("magnitude", again.mode)
    assert.are.equal(2, #layer.trainable_weights)
  end)

  it("gives channels_first the channels_last values, transposed (Keras's TF backend cannot run it on a CPU)", function()
    local x = gc.random({ 2, 40, 1 }, -1, 1, 4)
    for _, expand in ipairs { false, true } do
      local last = tide.layers.STFTSpectrogram { mode = "log", frame_length = 8, frame_step = 4, expand_dims = expand }
      local first = tide.layers.STFTSpectrogram { mode = "log", frame_length = 8, frame_step = 4, expand_dims = expand,
        data_format = "channels_first" }
      local a, b = last(x), first(tide.transpose(x, { 0, 2, 1 }))
      local want = expand and tide.transpose(a, { 0, 3, 1, 2 }) or tide.transpose(a, { 0, 2, 1 })
      h.close(b, want:totable(), 1e-12)
    end
  end)

  it("differentiates MelSpectrogram's output with respect to its input", function()
    local layer = tide.layers.MelSpectrogram { fft_length = 16, sequence_stride = 4, num_mel_bins = 4,
      sampling_rate = 1000, power_to_db = false, dtype = "float64" }
    gc.check(function(v) return layer(v) end, { gc.random({ 2, 20 }, -1, 1, 5) }, { none = false })
  end)

  it("refuses what Keras refuses, naming the layer", function()
    h.errors("STFT: window must be \"hann\", \"hamming\"", tide.layers.STFTSpectrogram, { window = "blackman" })
    h.errors("STFTSpectrogram: Invalid input type", function()
      return tide.layers.STFTSpectrogram { frame_length = 4 }(tide.zeros({ 1, 8, 1 }, "int32"))
    end)
    h.errors("MelSpectrogram: If a string is passed to `window`", tide.layers.MelSpectrogram, { window = "kaiser" })
    h.errors("STFT: side should be 'real' or 'imag'", tide.initializers.STFT, { side = "both" })
  end)

  it("makes the STFT initializer's kernels by name and alias", function()
    local k = tide.initializers.get("stft")({ 4, 1, 3 })
    h.close(k:slice { {}, 0, 0 }, { 0, math.sqrt(0.5), math.sqrt(0.5), 0 }, 1e-6)
    local imag = tide.initializers.STFTInitializer { side = "imag", window = false, scaling = false }({ 4, 1, 3 })
    h.close(imag:slice { {}, 0, 1 }, { 0, -1, 0, 1 }, 1e-6)
  end)
end)
