"""bench/conv_torch.py — the work of bench/conv.lua in PyTorch eager mode, same
names and units. Run with OMP_WAIT_POLICY=PASSIVE and tide's thread count
(bench/run.sh sets both). Each figure is PyTorch's best of its two layouts
(NCHW, its default, and channels_last, which matches tide's NHWC)."""

import torch
from torch_timing import emit, measure
import torch.nn.functional as F

torch.manual_seed(0)


def layouts(*ts):
    """The tensors in NCHW, then in channels_last."""
    yield ts
    yield tuple(t.contiguous(memory_format=torch.channels_last) for t in ts)


CONVS = [("conv1", (128, 1, 28, 28), (32, 1, 3, 3)), ("conv2", (128, 32, 14, 14), (64, 32, 3, 3))]

for name, xs, ws in CONVS:
    n = xs[0]
    x0, w0 = torch.rand(xs), torch.rand(ws) * 0.2 - 0.1
    dy0 = torch.rand(n, ws[0], xs[2], xs[3])
    fwd, fwd_bwd = [], []
    for x, w, dy in layouts(x0, w0, dy0):
        with torch.no_grad():
            fwd.append(measure(lambda: F.conv2d(x, w, padding=1), 20))
        xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()

        def step():
            y = F.conv2d(xr, wr, padding=1)
            return torch.autograd.grad(y, (xr, wr), dy)

        fwd_bwd.append(measure(step, 10))
    t = min(fwd)
    emit(f"{name}_fwd", n / t, "img/s")
    emit(f"{name}_fwd_time", t * 1e3, "ms")
    t = min(fwd_bwd)
    emit(f"{name}_fwd_bwd", n / t, "img/s")
    emit(f"{name}_fwd_bwd_time", t * 1e3, "ms")

x0, dy0 = torch.rand(128, 32, 28, 28), torch.rand(128, 32, 14, 14)
fwd, fwd_bwd = [], []
for x, dy in layouts(x0, dy0):
    with torch.no_grad():
        fwd.append(measure(lambda: F.max_pool2d(x, 2), 20))
    xr = x.clone().requires_grad_()

    def pool_step():
        y = F.max_pool2d(xr, 2)
        return torch.autograd.grad(y, xr, dy)

    fwd_bwd.append(measure(pool_step, 10))
emit("maxpool_fwd", 128 / min(fwd), "img/s")
emit("maxpool_fwd_bwd", 128 / min(fwd_bwd), "img/s")
