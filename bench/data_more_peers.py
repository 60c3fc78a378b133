# bench/data_more_peers.py PEER — bench/data_more.lua's pipelines in tf.data
# (PEER tf; other peers have no tf.data form and print nothing): input
# elements/s, median of 5 passes, batched by 1,000 at the end as the Lua script.
import sys, time

if sys.argv[1] != "tf":
    sys.exit(0)
import tensorflow as tf

D, r, N = tf.data.Dataset, tf.data.Dataset.range, 100000


def rate(ds, n_out, n_in=None):
    times = []
    ds = ds.batch(1000)
    for _ in range(5):
        t0 = time.perf_counter()
        n = sum(int(b.shape[0]) for b in ds)
        assert n == n_out, n
        times.append(time.perf_counter() - t0)
    times.sort()
    return (n_in or n_out) / times[2]


def emit(name, v):
    print(f"{name}: {v:.4g} elements/s")


emit("flat_map_c", rate(r(2000).flat_map(lambda x: r(x, x + 50)), N))
emit("window8_flat_map_batch", rate(r(20000).window(8, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(8)), 19993, 20000))
emit("scan_cumsum", rate(r(N).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s)), N))
emit("unique", rate(r(N).map(lambda x: x % 1000).unique(), 1000, N))
emit("sample_from_datasets", rate(D.sample_from_datasets([r(N // 2), r(N // 2)], seed=1), N))
emit("group_by_window", rate(r(N).group_by_window(lambda x: x % 10, lambda k, w: w.batch(32), window_size=32).unbatch(), N))
