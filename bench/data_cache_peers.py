# bench/data_cache_peers.py PEER — bench/data_cache.lua's cases in tf.data
# (PEER tf; jax and tf-xla have no tf.data form and print nothing):
# from_tensor_slices -> cache() or cache(file) -> batch(128), elements/s of
# the first pass (writing) and a later one (reading), median of 3, a fresh
# cache per writing run; the file in DATA_BENCH_DIR (default /tmp).
import glob, gzip, os, sys, time
import numpy as np

if sys.argv[1] != "tf":
    sys.exit(0)
import tensorflow as tf

d = "/usr/share/datasets/fashion-mnist"
with gzip.open(f"{d}/train-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
with gzip.open(f"{d}/train-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
n = len(x)
prefix = os.path.join(os.environ.get("DATA_BENCH_DIR", "/tmp"), f"tf_bench_cache_{os.getpid()}")

def remove():
    for p in glob.glob(prefix + "*"):
        os.remove(p)

def one_pass(ds):
    t0 = time.perf_counter()
    count = 0
    for a, b in ds: count += a.shape[0]
    assert count == n
    return time.perf_counter() - t0

def median(t):
    return sorted(t)[len(t) // 2]

for kind in ("memory", "file"):
    writes, reads = [], []
    for _ in range(3):
        remove()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).cache(prefix if kind == "file" else "").batch(128)
        writes.append(one_pass(ds))
        reads.append(one_pass(ds))
    print(f"cache_{kind}_write: {n / median(writes):.4g} elements/s")
    print(f"cache_{kind}_read: {n / median(reads):.4g} elements/s")
remove()
