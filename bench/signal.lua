-- bench/signal.lua — tide.signal on 1 s of 16 kHz audio, batch 32 (float32): rfft of the whole
-- signal, and stft with 25 ms frames every 10 ms (400 / 160, fft_length 512, Hann window);
-- bench/signal_peers.py (TensorFlow) and bench/signal_torch.py (PyTorch) do the same work.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

tide.random.set_seed(1)
local x = tide.random.normal({ 32, 16000 })
local S = tide.signal

timing.emit("rfft_32x16000", timing.measure(function() return S.rfft(x) end, 10, 7) * 1e3, "ms")
timing.emit("stft_32x16000", timing.measure(function() return S.stft(x, 400, 160, { fft_length = 512 }) end, 5, 7) * 1e3,
  "ms")
local traced = tide.trace(function(v)
  local z = S.stft(v, 400, 160, { fft_length = 512 })
  return z.real, z.imag
end)
timing.emit("stft_32x16000_traced", timing.measure(function() return traced(x) end, 5, 7) * 1e3, "ms")
