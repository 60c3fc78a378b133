"""bench/autodiff_torch.py — bench/autodiff.lua's chain in PyTorch autograd
(same names and units), with OMP_WAIT_POLICY=PASSIVE and tide's thread count."""

import torch
from torch_timing import emit, measure as median

N_OPS = 100


def chain(x):
    y = x
    for _ in range(N_OPS // 4):
        y = torch.tanh(torch.sin(y * 0.9 + 0.1))
    return y


with torch.no_grad():
    emit("chain100_eager", median(lambda: chain(torch.tensor([0.5])), 500) / N_OPS * 1e6, "us/op")

x = torch.tensor([0.5], requires_grad=True)


def step():
    y = chain(x)
    (g,) = torch.autograd.grad(y.sum(), x)
    return g


emit("chain100_tape_forward_backward", median(step, 200) / N_OPS * 1e6, "us/op")
