"""bench/ops_torch.py — the work of bench/ops.lua in PyTorch eager mode, same
names and units. Run with OMP_WAIT_POLICY=PASSIVE and the thread count tide
uses (bench/run.sh sets both), so PyTorch is measured at its best here."""

import torch
from torch_timing import emit, measure

torch.manual_seed(0)


with torch.inference_mode():
    for n in (1, 100, 10000):
        a, b = torch.rand(n), torch.rand(n)
        iters = 100000 if n == 10000 else 1000000
        def add10():
            for _ in range(10):
                a + b
        t = measure(add10, iters // 10 // 10)
        emit(f"add_{n}", t / 10 * 1e6, "us")

    x = torch.rand(100)
    t = measure(lambda: torch.tanh(torch.exp(torch.sin(x) * 0.5 + x) - x * x + 1) * 2 - x, 20000)
    emit("chain10_100", t * 1e6, "us")

    n = 10_000_000
    a, b, c = torch.rand(n), torch.rand(n), torch.rand(n)
    t = measure(lambda: a * b + c, 3)
    emit("fma_10m", 6 * n * 4 / t / 1e9, "GB/s")
    emit("fma_10m_time", t * 1e3, "ms")

    t = measure(lambda: a.sum(), 5, 9)
    emit("sum_10m", n * 4 / t / 1e9, "GB/s")

    for n in (256, 1024, 2048):
        a, b = torch.rand(n, n), torch.rand(n, n)
        iters = 50 if n == 256 else (5 if n == 1024 else 2)
        t = measure(lambda: a @ b, iters, 5)
        emit(f"matmul_{n}", 2 * n**3 / t / 1e9, "GFLOP/s")
