"""bench/peer_timing.py — what every Python peer (bench/*_torch.py, bench/*_peers.py)
times with, the way bench/timing.lua does for tide: the thread count tide uses,
the median seconds per call over several runs, and `name: value unit` lines.
It imports no framework: each peer sets its own threads from `threads()`."""
import os
import statistics
import time


def threads():
    """The thread count tide runs with (bench/run.sh exports TIDE_NUM_THREADS)."""
    return int(os.environ.get("TIDE_NUM_THREADS", os.cpu_count() or 1))


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
