-- tests/support/grad_cases_signal.lua — tf.signal's float64 finite-difference cases for
-- tests/support/grad_cases.lua (which merges them): fft, ifft, rfft, irfft in 1 to 3 dims,
-- cropped and padded lengths. A complex result is checked as its parts stacked.
local tide = require "tide"
local gc = require "gradcheck"

local M = {}
local R = gc.random
local S = tide.signal

local function parts(z) return tide.stack({ z.real, z.imag }, 0) end
local function cx(fn, ...)
  local extra = { ... }
  return function(re, im) return parts(fn({ real = re, imag = im }, unpack(extra))) end
end

function M.fft(add)
  add("1-D, length 6", cx(S.fft), { R({ 6 }, -1, 1, 1), R({ 6 }, -1, 1, 2) })
  add("1-D batch, length 5 (radix 5)", cx(S.fft), { R({ 2, 5 }, -1, 1, 3), R({ 2, 5 }, -1, 1, 4) })
  add("2-D", cx(S.fft2d), { R({ 3, 4 }, -1, 1, 5), R({ 3, 4 }, -1, 1, 6) })
  add("3-D", cx(S.fft3d), { R({ 2, 2, 3 }, -1, 1, 7), R({ 2, 2, 3 }, -1, 1, 8) })
  add("fftnd cropped and padded", cx(S.fftnd, { fft_length = { 2, 5 } }), { R({ 3, 4 }, -1, 1, 9), R({ 3, 4 }, -1, 1, 10) },
    { none = false })
  add("length 67 (Bluestein)", cx(S.fft), { R({ 67 }, -1, 1, 11), R({ 67 }, -1, 1, 12) })
end

function M.ifft(add)
  add("1-D, length 7", cx(S.ifft), { R({ 7 }, -1, 1, 13), R({ 7 }, -1, 1, 14) })
  add("2-D batch", cx(S.ifft2d), { R({ 2, 2, 3 }, -1, 1, 15), R({ 2, 2, 3 }, -1, 1, 16) })
  add("3-D", cx(S.ifft3d), { R({ 2, 3, 2 }, -1, 1, 17), R({ 2, 3, 2 }, -1, 1, 18) })
end

-- rfft's and irfft's gradients weigh the half spectrum by the transform's length, which must be
-- known when the gradient is built: no None-dims trace for them (docs/tf_differences.md).
local NO_NONE = { none = false }

function M.rfft(add)
  add("even length", function(x) return parts(S.rfft(x)) end, { R({ 2, 8 }, -1, 1, 19) }, NO_NONE)
  add("odd length", function(x) return parts(S.rfft(x)) end, { R({ 7 }, -1, 1, 20) }, NO_NONE)
  add("length 1", function(x) return parts(S.rfft(x)) end, { R({ 3, 1 }, -1, 1, 21) }, NO_NONE)
  add("fft_length shorter (crop)", function(x) return parts(S.rfft(x, { 5 })) end, { R({ 8 }, -1, 1, 22) }, NO_NONE)
  add("fft_length longer (pad)", function(x) return parts(S.rfft(x, { 10 })) end, { R({ 2, 7 }, -1, 1, 23) }, NO_NONE)
  add("2-D", function(x) return parts(S.rfft2d(x)) end, { R({ 3, 4 }, -1, 1, 24) }, NO_NONE)
  add("2-D odd, padded", function(x) return parts(S.rfft2d(x, { 4, 5 })) end, { R({ 3, 3 }, -1, 1, 25) }, NO_NONE)
  add("3-D", function(x) return parts(S.rfft3d(x)) end, { R({ 2, 3, 4 }, -1, 1, 26) }, NO_NONE)
  add("second order", function(x) return parts(S.rfft(x)) * parts(S.rfft(x)) end, { R({ 6 }, -1, 1, 27) },
    { second_order = true, none = false })
end

function M.irfft(add)
  local function ir(fn, ...)
    local extra = { ... }
    return function(re, im) return fn({ real = re, imag = im }, unpack(extra)) end
  end
  add("to an even length", ir(S.irfft, { 8 }), { R({ 2, 5 }, -1, 1, 28), R({ 2, 5 }, -1, 1, 29) }, NO_NONE)
  add("to an odd length", ir(S.irfft, { 7 }), { R({ 4 }, -1, 1, 30), R({ 4 }, -1, 1, 31) }, NO_NONE)
  add("default length", ir(S.irfft), { R({ 5 }, -1, 1, 32), R({ 5 }, -1, 1, 33) }, NO_NONE)
  add("fft_length shorter (crop)", ir(S.irfft, { 4 }), { R({ 6 }, -1, 1, 34), R({ 6 }, -1, 1, 35) }, NO_NONE)
  add("fft_length longer (pad)", ir(S.irfft, { 12 }), { R({ 3 }, -1, 1, 36), R({ 3 }, -1, 1, 37) }, NO_NONE)
  add("2-D", ir(S.irfft2d, { 3, 6 }), { R({ 3, 4 }, -1, 1, 38), R({ 3, 4 }, -1, 1, 39) }, NO_NONE)
  add("3-D", ir(S.irfft3d, { 2, 2, 5 }), { R({ 2, 2, 3 }, -1, 1, 40), R({ 2, 2, 3 }, -1, 1, 41) }, NO_NONE)
end

return M
