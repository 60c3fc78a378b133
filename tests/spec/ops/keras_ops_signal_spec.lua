-- tests/spec/ops/keras_ops_signal_spec.lua — tide.ops' Fourier names (ops/keras_signal.lua): gradients, traces,
-- round trips and errors. Their values against Keras 3 are keras_ops_spec's (tests/fixtures/keras_ops/cases.json).
local tide = require "tide"
local gc = require "gradcheck"
local h = require "helpers"

local o = tide.ops
local R = gc.random

local function maxabs(a, b) return tide.reduce_max(tide.abs(a - b)):item() end

describe("tide.ops Fourier names (keras.ops)", function()
  it("takes Keras's (real, imag) pair as a list or as tide.signal's {real =, imag =}", function()
    local re, im = R({ 2, 6 }, -1, 1, 1), R({ 2, 6 }, -1, 1, 2)
    local a1, b1 = o.fft { re, im }
    local a2, b2 = o.fft { real = re, imag = im }
    assert.are.same(a1:totable(), a2:totable())
    assert.are.same(b1:totable(), b2:totable())
    local z = tide.signal.fft { real = re, imag = im }
    assert.are.same(z.real:totable(), a1:totable())
  end)

  it("round-trips: ifft2 of fft2, irfft of rfft, istft of stft", function()
    local re, im = R({ 2, 3, 4 }, -1, 1, 3), R({ 2, 3, 4 }, -1, 1, 4)
    local fr, fi = o.fft2 { re, im }
    local br, bi = o.ifft2 { fr, fi }
    assert.is_true(maxabs(br, re) < 1e-12 and maxabs(bi, im) < 1e-12)
    local x = R({ 3, 10 }, -1, 1, 5)
    assert.is_true(maxabs(o.irfft({ o.rfft(x) }, { fft_length = 10 }), x) < 1e-12)
    local sig = R({ 2, 64 }, -1, 1, 6)
    local sr, si = o.stft(sig, 16, 4, 16)
    assert.are.same({ 2, 17, 9 }, sr.shape:as_list())
    local y = o.istft({ sr, si }, 16, 4, 16, { length = 64 })
    assert.are.same({ 2, 64 }, y.shape:as_list())
    -- inside, where every sample lies in sequence_length / sequence_stride frames, the window's squares divide out
    assert.is_true(maxabs(y:slice { {}, { 12, 52 } }, sig:slice { {}, { 12, 52 } }) < 1e-12)
  end)

  it("takes window = false as no window (Keras's None)", function()
    local sig = R({ 40 }, -1, 1, 7)
    local ar, ai = o.stft(sig, 8, 4, 8, { window = false })
    local br, bi = o.stft(sig, 8, 4, 8, { window = tide.ones({ 8 }, "float64") })
    assert.is_true(maxabs(ar, br) < 1e-12 and maxabs(ai, bi) < 1e-12)
    local y = o.istft({ ar, ai }, 8, 4, 8, { window = false, center = false })
    assert.are.same({ 48 }, y.shape:as_list()) -- 11 frames of the centred (padded) signal, kept whole
  end)

  it("gives the same values traced as eager", function()
    local sig = tide.cast(R({ 2, 32 }, -1, 1, 8), "float32")
    local f = tide.trace(function(x)
      local r, i = o.stft(x, 8, 4, 8)
      local fr, fi = o.fft { r, i }
      return r, fi, o.istft({ r, i }, 8, 4, 8), o.extract_sequences(x, 5, 3), o.irfft { o.rfft(x) }
    end)
    local got = { f(sig) }
    local r, i = o.stft(sig, 8, 4, 8)
    local _, fi = o.fft { r, i }
    local want = { r, fi, o.istft({ r, i }, 8, 4, 8), o.extract_sequences(sig, 5, 3), o.irfft { o.rfft(sig) } }
    for k = 1, #want do assert.is_true(maxabs(got[k], want[k]) < 1e-5, "result " .. k) end
  end)

  it("has float64 finite-difference gradients", function()
    local re, im = R({ 2, 5 }, -1, 1, 9), R({ 2, 5 }, -1, 1, 10)
    gc.check(function(a, b) local r, i = o.fft { a, b }; return r + 0.5 * i end, { re, im }, { none = false })
    local re3, im3 = R({ 2, 3, 4 }, -1, 1, 11), R({ 2, 3, 4 }, -1, 1, 12)
    gc.check(function(a, b) local r, i = o.fft2 { a, b }; return r - i end, { re3, im3 }, { none = false })
    gc.check(function(a, b) local r, i = o.ifft2 { a, b }; return r + i end, { re3, im3 }, { none = false })
    gc.check(function(a) local r, i = o.rfft(a, { fft_length = 8 }); return tide.concat({ r, i }, -1) end, { re },
      { none = false })
    gc.check(function(a, b) return o.irfft({ a, b }, { fft_length = 7 }) end, { re, im }, { none = false })
    local sig = R({ 2, 30 }, -1, 1, 13)
    gc.check(function(x) local r, i = o.stft(x, 6, 3, 8); return r + i end, { sig }, { none = false })
    local sr, si = R({ 4, 5 }, -1, 1, 14), R({ 4, 5 }, -1, 1, 15)
    gc.check(function(a, b) return o.istft({ a, b }, 8, 3, 8, { window = "hamming" }) end, { sr, si }, { none = false })
    gc.check(function(x) return o.extract_sequences(x, 4, 3) end, { sig }, { none = false })
  end)

  it("names the op and the argument in its errors", function()
    local x = tide.tensor({ 1, 2, 3, 4 }, "float32")
    h.errors("fft: x must be a pair {real, imag} of float tensors", o.fft, x)
    h.errors("fft: x must be a pair {real, imag}", o.fft, { x })
    h.errors("fft: x's real and imaginary parts must have one shape, got (4,) and (3,)", o.fft,
      { x, tide.tensor({ 1, 2, 3 }, "float32") })
    h.errors("fft: x's real and imaginary parts must be float tensors, got int32 and int32", o.fft,
      { tide.tensor { 1 }, tide.tensor { 2 } })
    h.errors("fft: x's real and imaginary parts must have one dtype, got float32 and float64", o.fft,
      { x, tide.cast(x, "float64") })
    h.errors("fft2: input must have rank >= 2", o.fft2, { x, x })
    h.errors("rfft: fft_length must be an integer, got 2.5", o.rfft, x, { fft_length = 2.5 })
    h.errors("stft: x must be float32 or float64, got int32", o.stft, tide.tensor { 1, 2, 3 }, 2, 1, 2)
    h.errors("stft: fft_length must be >= sequence_length, got fft_length 4 and sequence_length 8", o.stft,
      tide.zeros({ 32 }), 8, 2, 4)
    h.errors('stft: window must be "hann", "hamming", a tensor of sequence_length or false, got "blackman"', o.stft,
      tide.zeros({ 32 }), 8, 2, 8, { window = "blackman" })
    h.errors("stft: window must have shape [sequence_length] = [8], got (3,)", o.stft, tide.zeros({ 32 }), 8, 2, 8,
      { window = { 1, 2, 3 } })
    h.errors("stft: sequence_stride must be an integer >= 1, got 0", o.stft, tide.zeros({ 32 }), 8, 0, 8)
    h.errors("istft: x must have rank >= 2", o.istft, { x, x }, 4, 2, 4)
    h.errors("extract_sequences: sequence_length must be an integer >= 1, got 0", o.extract_sequences, x, 0, 1)
  end)
end)
