-- tests/spec/ops/signal_spec.lua — tide.signal's transforms and spectral ops by behaviour:
-- round trips, the complex spelling, errors that name the op, traced calls, lengths that need the
-- Bluestein path, and float64 finite differences through the compositions (stft, dct, mdct, ...).
-- TF's values are checked by signal_fixtures_spec.lua.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"

local S = tide.signal
local R = gc.random

local function maxabs(a, b) return tide.reduce_max(tide.abs(a - b)):item() end

describe("tide.signal transforms", function()
  it("round-trips fft/ifft, rfft/irfft in 1 to 3 dims, float32 and float64", function()
    for _, dt in ipairs { "float32", "float64" } do
      local tol = dt == "float32" and 1e-5 or 1e-12
      for _, n in ipairs { 1, 2, 3, 7, 16, 60, 101, 257 } do
        local re, im = R({ 2, n }, -1, 1, n):cast(dt), R({ 2, n }, -1, 1, n + 1):cast(dt)
        local z = S.ifft(S.fft { real = re, imag = im })
        assert.is_true(maxabs(z.real, re) < tol and maxabs(z.imag, im) < tol, "fft round trip, n = " .. n)
        assert.is_true(maxabs(S.irfft(S.rfft(re), { n }), re) < tol, "rfft round trip, n = " .. n)
      end
      local x = R({ 2, 3, 4, 5 }, -1, 1, 9):cast(dt)
      assert.is_true(maxabs(S.irfft3d(S.rfft3d(x), { 3, 4, 5 }), x) < tol)
      assert.is_true(maxabs(S.irfft2d(S.rfft2d(x), { 4, 5 }), x) < tol)
    end
  end)

  it("matches a direct DFT, including prime lengths past the mixed radices (Bluestein)", function()
    for _, n in ipairs { 5, 67, 127, 211 } do
      local x = R({ n }, -1, 1, n)
      local xs = x:totable()
      local y = S.rfft(x)
      local yr, yi = y.real:totable(), y.imag:totable()
      for k = 0, math.floor(n / 2), math.max(1, math.floor(n / 9)) do
        local sr, si = 0, 0
        for j = 0, n - 1 do
          sr = sr + xs[j + 1] * math.cos(2 * math.pi * j * k / n)
          si = si - xs[j + 1] * math.sin(2 * math.pi * j * k / n)
        end
        assert.is_true(math.abs(yr[k + 1] - sr) < 1e-11 and math.abs(yi[k + 1] - si) < 1e-11, "n " .. n .. ", k " .. k)
      end
    end
  end)

  it("takes a real tensor as a complex input with a zero imaginary part, and keeps DC and Nyquist real", function()
    local x = tide.tensor({ 1, 2, 3, 4 }, "float64")
    local a, b = S.fft(x), S.rfft(x)
    h.close(a.real, { 10, -2, -2, -2 })
    h.close(a.imag, { 0, 2, 0, -2 })
    assert.are.same({ 0, 2, 0 }, b.imag:totable())
  end)

  it("shifts the zero frequency to the centre and back, complex values too", function()
    local x = tide.tensor { 0, 1, 2, 3, 4, -5, -4, -3, -2, -1 }
    assert.are.same({ -5, -4, -3, -2, -1, 0, 1, 2, 3, 4 }, S.fftshift(x):totable())
    assert.are.same(x:totable(), S.ifftshift(S.fftshift(x)):totable())
    local odd = tide.tensor { { 0, 1, 2 }, { 3, 4, -4 }, { -3, -2, -1 } }
    assert.are.same({ { 4, -4, 3 }, { -2, -1, -3 }, { 1, 2, 0 } }, S.ifftshift(odd):totable())
    local z = S.fftshift({ real = x, imag = x * 2 }, { axes = 0 })
    assert.are.same({ -10, -8, -6, -4, -2, 0, 2, 4, 6, 8 }, z.imag:totable())
  end)

  it("names the op, the argument and the shape in its errors", function()
    local x = tide.tensor({ 1, 2, 3, 4 }, "float32")
    h.errors("rfft: fft_length must not hold 0", S.rfft, x, { 0 })
    h.errors("irfft: fft_length must hold lengths >= 0, got -2", S.irfft, { real = x, imag = x }, { -2 })
    h.errors("rfft2d: fft_length must hold 2 lengths, got 1", S.rfft2d, tide.zeros({ 2, 2 }), { 4 })
    h.errors("rfft: input must be a float32 or float64 tensor", S.rfft, tide.tensor { 1, 2 })
    h.errors("fft2d: input must have rank >= 2", S.fft2d, { real = x, imag = x })
    h.errors("fft: the real and imaginary parts must have one shape", S.fft, { real = x, imag = tide.zeros({ 3 }) })
    h.errors("fft: dtype mismatch: imaginary part is float64 but real part is float32", S.fft, { real = x, imag = tide.zeros({ 4 }, "float64") })
    h.errors("fftnd: axes must be distinct", S.fftnd, { real = x, imag = x }, { axes = { 0, -1 } })
    h.errors("fftnd: norm must be", S.fftnd, { real = x, imag = x }, { norm = "both" })
    h.errors("fftshift: axis 1 is out of range", S.fftshift, x, 1)
  end)

  it("runs traced with None dims (the lengths from the input) and gives the same values", function()
    local x = R({ 3, 10 }, -1, 1, 5)
    local f = tide.trace(function(v)
      local y = S.rfft(v)
      return y.real, y.imag, S.irfft(y, { 10 })
    end, { input_signature = { tide.TensorSpec({ tide.None, tide.None }, "float64") } })
    local yr, yi, back = f(x)
    local want = S.rfft(x)
    assert.is_true(maxabs(yr, want.real) < 1e-12 and maxabs(yi, want.imag) < 1e-12)
    assert.is_true(maxabs(back, x) < 1e-12)
  end)

  it("says what its rfft gradient needs when the lengths are unknown while tracing", function()
    local f = tide.trace(function(v)
      local tape = tide.GradientTape()
      local loss = tape:run(function()
        tape:watch(v)
        return tide.reduce_sum(S.rfft(v).real)
      end)
      return tape:gradient(loss, v)
    end, { input_signature = { tide.TensorSpec({ tide.None }, "float64") } })
    h.errors("rfft's gradient needs the transform's lengths", f, R({ 6 }, -1, 1, 1))
  end)
end)

describe("tide.signal framing and spectral ops", function()
  it("frames and overlap-adds as TF, pad_end and axis included", function()
    local x = tide.range(10)
    assert.are.same({ { 0, 1, 2 }, { 2, 3, 4 }, { 4, 5, 6 }, { 6, 7, 8 } }, S.frame(x, 3, 2):totable())
    assert.are.same({ { 6, 7, 8 }, { 8, 9, -1 } }, S.frame(x, 3, 2, { pad_end = true, pad_value = -1 }):slice { { 3 } }:totable())
    assert.are.same({ 0, 12 }, S.frame(x, 12, 2).shape:as_list())
    assert.are.same({ 3, 4, 2 }, S.frame(tide.zeros({ 9, 2 }), 4, 2, { axis = 0 }).shape:as_list())
    h.close(S.overlap_and_add(tide.ones({ 3, 4 }), 2), { 1, 1, 2, 2, 2, 2, 1, 1 })
    h.errors("frame: frame_step must be an integer >= 1", S.frame, x, 3, 0)
    h.errors("frame: the length of axis 0 must be known", tide.trace(function(v) return S.frame(v, 2, 1) end,
      { input_signature = { tide.TensorSpec({ tide.None }, "float32") } }), tide.zeros({ 4 }))
    h.errors("overlap_and_add: signal must have rank >= 2", S.overlap_and_add, x, 2)
  end)

  it("reconstructs a signal from its stft with inverse_stft_window_fn", function()
    local x = R({ 2, 200 }, -1, 1, 3)
    local st = S.stft(x, 32, 8)
    assert.are.same({ 2, 22, 17 }, st.real.shape:as_list())
    local y = S.inverse_stft(st, 32, 8, { window_fn = S.inverse_stft_window_fn(8) })
    assert.is_true(maxabs(y:slice { {}, { 32, 168 } }, x:slice { {}, { 32, 168 } }) < 1e-12)
    h.errors("stft: signals must be a float tensor", S.stft, tide.tensor { 1, 2, 3 }, 2, 1)
    h.errors("stft: window_fn must be a function", S.stft, x, 16, 8, { window_fn = 3 })
  end)

  it("inverts each DCT type with idct up to TF's scale, and with ortho exactly", function()
    local x = R({ 2, 8 }, -1, 1, 4)
    for t = 1, 4 do
      local back = S.idct(S.dct(x, { type = t }), { type = t })
      local scale = t == 1 and 2 * (8 - 1) or 2 * 8
      assert.is_true(maxabs(back / scale, x) < 1e-12, "type " .. t)
      if t > 1 then assert.is_true(maxabs(S.idct(S.dct(x, t, nil, -1, "ortho"), t, nil, -1, "ortho"), x) < 1e-12) end
    end
    h.errors("dct: Normalization is not supported for the Type-I DCT", S.dct, x, { type = 1, norm = "ortho" })
    h.errors("idct: axis must be -1", S.idct, x, { axis = 0 })
  end)

  it("reconstructs with mdct and inverse_mdct (TDAC), and checks frame_length", function()
    local x = R({ 64 }, -1, 1, 6)
    local y = S.inverse_mdct(S.mdct(x, 16))
    assert.is_true(maxabs(y:slice { { 8, 56 } }, x:slice { { 8, 56 } }) < 1e-12)
    h.errors("mdct: The frame length must be a multiple of 4", S.mdct, x, 10)
  end)

  it("builds mel filters and MFCCs, and refuses bad bands", function()
    local m = S.linear_to_mel_weight_matrix(8, 33, 16000, 20, 8000, "float64")
    assert.are.same({ 33, 8 }, m.shape:as_list())
    assert.are.equal(0, tide.reduce_sum(m:slice { 0 }):item())
    h.errors("upper_edge_hertz must not be larger than the Nyquist", S.linear_to_mel_weight_matrix, 8, 33, 8000, 20, 5000)
    h.errors("lower_edge_hertz must be non-negative", S.linear_to_mel_weight_matrix, 8, 33, 8000, -1, 3000)
    local mf = S.mfccs_from_log_mel_spectrograms(R({ 3, 8 }, -1, 1, 7))
    assert.are.same({ 3, 8 }, mf.shape:as_list())
  end)

  it("differentiates through the compositions (float64 finite differences)", function()
    gc.check(function(x) local z = S.stft(x, 8, 4); return tide.stack { z.real, z.imag } end, { R({ 2, 24 }, -1, 1, 11) },
      { none = false })
    gc.check(function(re, im) return S.inverse_stft({ real = re, imag = im }, 8, 4) end,
      { R({ 5, 5 }, -1, 1, 12), R({ 5, 5 }, -1, 1, 13) }, { none = false })
    gc.check(function(x) return S.overlap_and_add(x, 3) end, { R({ 2, 4, 5 }, -1, 1, 14) }, { none = false })
    gc.check(function(x) return S.frame(x, 4, 3, { pad_end = true }) end, { R({ 11 }, -1, 1, 15) }, { none = false })
    for t = 1, 4 do
      gc.check(function(x) return S.dct(x, { type = t }) end, { R({ 2, 6 }, -1, 1, 15 + t) }, { none = false })
    end
    gc.check(function(x) return S.dct(x, { norm = "ortho", n = 9 }) end, { R({ 7 }, -1, 1, 20) }, { none = false })
    gc.check(function(x) return S.mdct(x, 8) end, { R({ 24 }, -1, 1, 21) }, { none = false })
    gc.check(function(x) return S.inverse_mdct(x) end, { R({ 3, 4 }, -1, 1, 22) }, { none = false })
    gc.check(S.mfccs_from_log_mel_spectrograms, { R({ 2, 10 }, -1, 1, 23) }, { none = false })
  end)
end)
