"""bench/saving_torch.py — bench/saving.lua's work with torch.save and torch.load
(a dict of 88 float32 tensors, 100 MiB), in MB/s, medians of 5; save_100mb_fsync
adds an fsync of the file, as tide's save does."""
import os
import tempfile

import torch
from torch_timing import emit, measure

path = os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "tide_bench_saving.pt")
g = torch.Generator().manual_seed(0)
weights = {f"big_{i:02d}": torch.randn(1024, 1024, generator=g) for i in range(1, 25)}
weights.update({f"small_{i:02d}": torch.randn(128, 128, generator=g) for i in range(1, 65)})
nbytes = sum(t.numel() * 4 for t in weights.values())


def save_fsync():
    torch.save(weights, path)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


emit("save_100mb", nbytes / measure(lambda: torch.save(weights, path), 1, 5) / 1e6, "MB/s")
emit("save_100mb_fsync", nbytes / measure(save_fsync, 1, 5) / 1e6, "MB/s")
emit("load_100mb", nbytes / measure(lambda: torch.load(path), 1, 5) / 1e6, "MB/s")
os.remove(path)
