"""bench/linalg_torch.py — the work of bench/linalg.lua with torch.linalg,
same names and units (float32; torch's SVD gives U, S, Vh: the same work)."""

import torch
from torch_timing import emit, measure

torch.manual_seed(1)


def spd(n, b=None):
    shape = (b, n, n) if b else (n, n)
    a = torch.randn(*shape)
    return a @ a.transpose(-1, -2) / n + torch.eye(n)


ops = [("inv", torch.linalg.inv), ("cholesky", torch.linalg.cholesky), ("qr", torch.linalg.qr),
       ("svd", lambda x: torch.linalg.svd(x, full_matrices=False)), ("eigh", torch.linalg.eigh),
       ("det", torch.linalg.det)]
with torch.inference_mode():
    for name, x, iters in [("256", spd(256), 3), ("256x64", spd(256, 64), 1), ("8x4096", spd(8, 4096), 3)]:
        for op, f in ops:
            emit(op + "_" + name, measure(lambda: f(x), iters, 5) * 1e3, "ms")
