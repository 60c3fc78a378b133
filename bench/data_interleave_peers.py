# bench/data_interleave_peers.py PEER — bench/data_interleave.lua's pipelines in
# tf.data (PEER tf; jax and tf-xla have no tf.data form and print nothing):
# interleave over 16 TFRecord files of 4,000 32-byte records (also with a
# per-file label attached by the inner map) and over 1,000
# [64, 8] float32 tensors sliced into rows, num_parallel_calls None (printed as
# p1) and 2, batch(256); records (rows)/s, median of 5 passes.
import os, sys, tempfile, time

if sys.argv[1] != "tf":
    sys.exit(0)
import numpy as np
import tensorflow as tf

NFILES, NREC, NROWS = 16, 4000, 1000


def rate(ds, want, runs=5):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        n = 0
        for b in ds: n += (b[0] if isinstance(b, tuple) else b).shape[0]
        assert n == want, n
        times.append(time.perf_counter() - t0)
    times.sort()
    return want / times[runs // 2]


with tempfile.TemporaryDirectory() as d:
    names = []
    for f in range(1, NFILES + 1):
        names.append(f"{d}/part-{f:02d}.tfrecord")
        with tf.io.TFRecordWriter(names[-1]) as w:
            for i in range(1, NREC + 1): w.write(f"{f:08d}-{i:023d}".encode())
    files = tf.data.Dataset.from_tensor_slices(names)
    for p, npc in ((1, None), (2, 2)):
        ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=npc).batch(256)
        print(f"interleave_tfrecord_c_p{p}: {rate(ds, NFILES * NREC):.4g} records/s")
    labelled = tf.data.Dataset.from_tensor_slices((names, tf.range(NFILES, dtype=tf.int64)))
    for p, npc in ((1, None), (2, 2)):
        ds = labelled.interleave(lambda n, label: tf.data.TFRecordDataset(n).map(lambda r: (r, label)),
                                 cycle_length=4, num_parallel_calls=npc).batch(256)
        print(f"interleave_tfrecord_label_c_p{p}: {rate(ds, NFILES * NREC):.4g} records/s")

x = np.random.default_rng(1).random((NROWS, 64, 8), dtype=np.float32)
rows = tf.data.Dataset.from_tensor_slices(x)
for p, npc in ((1, None), (2, 2)):
    ds = rows.interleave(tf.data.Dataset.from_tensor_slices, cycle_length=4, num_parallel_calls=npc).batch(256)
    print(f"interleave_slices_c_p{p}: {rate(ds, NROWS * 64):.4g} rows/s")
