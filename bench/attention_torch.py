"""bench/attention_torch.py — bench/attention.lua's work in PyTorch (same names and units):
nn.MultiheadAttention (batch_first, need_weights=False) forward, and forward + backward
(gradients of every weight and the query), and torch.einsum in attention shapes; with
OMP_WAIT_POLICY=PASSIVE and tide's thread count."""
import torch
from torch_timing import emit, measure

B, T, D, H = 32, 128, 128, 4
torch.manual_seed(0)
mha = torch.nn.MultiheadAttention(D, H, batch_first=True)
x = torch.randn(B, T, D)

mha.eval()
with torch.no_grad():
    emit("mha_forward", measure(lambda: mha(x, x, x, need_weights=False)[0], 10) * 1e3, "ms")

mha.train()
params = list(mha.parameters())


def fwd_bwd():
    q = x.detach().requires_grad_(True)
    out = mha(q, q, q, need_weights=False)[0]
    return torch.autograd.grad(out.sum(), [q] + params)


emit("mha_forward_backward", measure(fwd_bwd, 5) * 1e3, "ms")

q = torch.randn(B, H, T, D // H)
k = torch.randn(B, H, T, D // H)
p = torch.randn(B, H, T, T)
with torch.no_grad():
    emit("einsum_scores", measure(lambda: torch.einsum("bhqd,bhkd->bhqk", q, k), 20) * 1e3, "ms")
    emit("einsum_context", measure(lambda: torch.einsum("bhqk,bhkd->bhqd", p, k), 20) * 1e3, "ms")
