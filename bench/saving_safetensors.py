"""bench/saving_safetensors.py — bench/saving.lua's work with Python's safetensors
(safetensors.numpy save_file/load_file; 88 float32 arrays, 100 MiB), in MB/s,
medians of 5; save_100mb_fsync adds an fsync of the file, as tide's save does."""
import os
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_timing import emit, measure  # noqa: E402

path = os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "tide_bench_saving_py.safetensors")
rng = np.random.default_rng(0)
weights = {f"big_{i:02d}": rng.standard_normal((1024, 1024), dtype=np.float32) for i in range(1, 25)}
weights.update({f"small_{i:02d}": rng.standard_normal((128, 128), dtype=np.float32) for i in range(1, 65)})
nbytes = sum(a.nbytes for a in weights.values())


def save_fsync():
    save_file(weights, path)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


emit("save_100mb", nbytes / measure(lambda: save_file(weights, path), 1, 5) / 1e6, "MB/s")
emit("save_100mb_fsync", nbytes / measure(save_fsync, 1, 5) / 1e6, "MB/s")
emit("load_100mb", nbytes / measure(lambda: load_file(path), 1, 5) / 1e6, "MB/s")
os.remove(path)
