"""bench/signal_torch.py — the work of bench/signal.lua with torch.fft and torch.stft (float32),
same names and units: torch.stft with center=False and a periodic Hann window frames as
tf.signal.stft does."""

import torch
from torch_timing import emit, measure

torch.manual_seed(1)
x = torch.randn(32, 16000)
win = torch.hann_window(400)

with torch.inference_mode():
    emit("rfft_32x16000", measure(lambda: torch.fft.rfft(x), 10, 7) * 1e3, "ms")
    emit("stft_32x16000", measure(lambda: torch.stft(x, 512, hop_length=160, win_length=400, window=win,
                                                      center=False, return_complex=True), 5, 7) * 1e3, "ms")
