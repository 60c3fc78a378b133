"""bench/trace_torch.py — the work of bench/trace.lua in PyTorch, same names
and units: the 50-step LSTM cell of plain ops in eager mode (lstm50_eager)
and under torch.jit.script (lstm50_traced: TorchScript is PyTorch's graph
mode), and the 10-op chain on 1M and 10M float32 in eager mode and scripted.
Run with OMP_WAIT_POLICY=PASSIVE and tide's thread count (bench/run.sh)."""
import time
from typing import List, Tuple

import torch
from torch_timing import emit, measure

torch.manual_seed(0)

STEPS, BATCH, INPUT, HIDDEN = 50, 1, 32, 32


def lstm(xs: torch.Tensor, h: torch.Tensor, c: torch.Tensor, wx: torch.Tensor, wh: torch.Tensor,
         b: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    x: List[torch.Tensor] = xs.unbind(0)
    for t in range(50):
        gates = torch.matmul(x[t], wx) + torch.matmul(h, wh) + b
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
    return h, c


def chain(x: torch.Tensor) -> torch.Tensor:
    y = x * 1.5 + 0.5
    y = torch.relu(y) - 0.25
    y = torch.abs(y * x)
    y = torch.minimum(y, torch.tensor(4.0)) + x
    return torch.square(y * 0.5)


with torch.no_grad():
    wx = torch.randn(INPUT, 4 * HIDDEN) * 0.2
    wh = torch.randn(HIDDEN, 4 * HIDDEN) * 0.2
    b = torch.randn(4 * HIDDEN) * 0.1
    xs = torch.randn(STEPS, BATCH, INPUT)
    h0, c0 = torch.zeros(BATCH, HIDDEN), torch.zeros(BATCH, HIDDEN)
    scripted = torch.jit.script(lstm)
    for _ in range(5):  # the profiling executor optimizes after a few calls
        scripted(xs, h0, c0, wx, wh, b)
    eh, _ = lstm(xs, h0, c0, wx, wh, b)
    sh, _ = scripted(xs, h0, c0, wx, wh, b)
    assert torch.allclose(eh, sh, atol=1e-5)
    emit("lstm50_eager", measure(lambda: lstm(xs, h0, c0, wx, wh, b), 50, 9) * 1e6, "us")
    emit("lstm50_traced", measure(lambda: scripted(xs, h0, c0, wx, wh, b), 200, 9) * 1e6, "us")
    t0 = time.perf_counter()
    for _ in range(5):
        s = torch.jit.script(lstm)
        s(xs, h0, c0, wx, wh, b)
        s(xs, h0, c0, wx, wh, b)  # scripting compiles lazily, over the first calls
    emit("lstm50_trace", (time.perf_counter() - t0) / 5 * 1e3, "ms")

    chain_scripted = torch.jit.script(chain)
    for n, label, iters in ((1000 * 1000, "1m", 100), (10 * 1000 * 1000, "10m", 10)):
        x = torch.rand(n) * 2 - 1
        for _ in range(5):
            chain_scripted(x)
        t_eager = measure(lambda: chain(x), 3, 7)
        t_script = measure(lambda: chain_scripted(x), iters, 9)
        emit(f"chain10_{label}_eager_time", t_eager * 1e3, "ms")
        emit(f"chain10_{label}_fused_time", t_script * 1e3, "ms")
        emit(f"chain10_{label}_eager", 2 * n * 4 / t_eager / 1e9, "GB/s")
        emit(f"chain10_{label}_fused", 2 * n * 4 / t_script / 1e9, "GB/s")
