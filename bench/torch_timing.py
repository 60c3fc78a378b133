"""bench/torch_timing.py — what every bench/*_torch.py peer times with, the
same way bench/timing.lua does for tide: PyTorch set to tide's thread count,
the median seconds per call over several runs, and `name: value unit` lines."""
import os
import statistics
import time

import torch

torch.set_num_threads(int(os.environ.get("TIDE_NUM_THREADS", os.cpu_count() or 1)))


def measure(fn, iters, runs=7):
    """Median seconds per call of fn over `runs` timings of `iters` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


def emit(name, value, unit):
    print(f"{name}: {value:.4g} {unit}", flush=True)
