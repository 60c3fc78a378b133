"""bench/index_torch.py — the work of bench/index.lua in PyTorch eager mode,
same names and units (advanced indexing, index_add, scatter_reduce, nonzero,
masked selection and unique stand in for TF's index-driven ops)."""

import torch
from torch_timing import emit, measure

torch.manual_seed(1)
N, W = 1_000_000, 16

with torch.inference_mode():
    params = torch.rand(1000, 1000)
    pairs = torch.randint(0, 1000, (N, 2))
    emit("gather_nd_1m", measure(lambda: params[pairs[:, 0], pairs[:, 1]], 5) * 1e3, "ms")

    rows = torch.randint(0, 1000, (N,))
    upd, base = torch.rand(N, W), torch.zeros(1000, W)
    emit("scatter_nd_add_1m", measure(lambda: base.index_add(0, rows, upd), 3) * 1e3, "ms")

    sorted_ids = torch.arange(N) // 1000
    emit("segment_sum_1m", measure(lambda: torch.zeros(1000, W).index_add_(0, sorted_ids, upd), 3) * 1e3, "ms")
    emit("unsorted_segment_sum_1m", measure(lambda: torch.zeros(1000, W).index_add_(0, rows, upd), 3) * 1e3, "ms")
    expanded = rows[:, None].expand(N, W)
    emit("unsorted_segment_max_1m", measure(
        lambda: torch.zeros(1000, W).scatter_reduce_(0, expanded, upd, "amax", include_self=False), 3) * 1e3, "ms")

    cond = torch.rand(10 * N) < 0.5
    emit("where_10m", measure(lambda: torch.nonzero(cond), 3) * 1e3, "ms")
    mask = torch.rand(N) < 0.5
    emit("boolean_mask_1m", measure(lambda: upd[mask], 3) * 1e3, "ms")

    vals = torch.randint(0, 10000, (N,), dtype=torch.int32)
    emit("unique_1m", measure(lambda: torch.unique(vals, sorted=False, return_inverse=True), 3) * 1e3, "ms")
