# bench/data_peers.py PEER — bench/data.lua's pipeline in tf.data (PEER tf;
# jax and tf-xla have no tf.data form and print nothing): parallel 1 and
# AUTOTUNE, samples/s over an epoch, median of 3; its shard(2, 0) and
# unbatch-then-rebatch forms (AUTOTUNE); and the TFRecord file
# bench/data.lua wrote (DATA_BENCH_RECORDS) parsed record by record and batch
# by batch, records/s, median of 3 passes.
import gzip, os, sys, time
import numpy as np

if sys.argv[1] != "tf":
    sys.exit(0)
import tensorflow as tf

d = "/usr/share/datasets/fashion-mnist"
with gzip.open(f"{d}/train-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
with gzip.open(f"{d}/train-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)

def rate(parallel):
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10000, seed=1)
          .map(lambda a, b: (tf.expand_dims(tf.cast(a, tf.float32), -1) / 255, b), num_parallel_calls=parallel)
          .batch(128).prefetch(tf.data.AUTOTUNE))
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        n = 0
        for a, b in ds: n += a.shape[0]
        times.append(time.perf_counter() - t0)
    times.sort()
    return len(x) / times[1]

print(f"fmnist_pipeline_parallel1: {rate(1):.4g} samples/s")
print(f"fmnist_pipeline_autotune: {rate(tf.data.AUTOTUNE):.4g} samples/s")


def split_rate(ds, want):
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        n = 0
        for a, b in ds: n += a.shape[0]
        assert n == want, n
        times.append(time.perf_counter() - t0)
    times.sort()
    return want / times[1]


def scale(a, b): return tf.expand_dims(tf.cast(a, tf.float32), -1) / 255, b


auto = tf.data.AUTOTUNE
sharded = (tf.data.Dataset.from_tensor_slices((x, y)).shard(2, 0).shuffle(10000, seed=1)
           .map(scale, num_parallel_calls=auto).batch(128).prefetch(auto))
print(f"fmnist_shard2: {split_rate(sharded, len(x) // 2):.4g} samples/s")
unbatched = (tf.data.Dataset.from_tensor_slices((x, y)).batch(256).map(scale, num_parallel_calls=auto).unbatch()
             .batch(128).prefetch(auto))
print(f"fmnist_unbatch: {split_rate(unbatched, len(x)):.4g} samples/s")

path = os.environ.get("DATA_BENCH_RECORDS", "/tmp/tide_data_bench.tfrecord")
features = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}


def records_rate(ds):
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        n = 0
        for e in ds: n += e["label"].shape[0]
        times.append(time.perf_counter() - t0)
    times.sort()
    return n / times[1]


if os.path.exists(path):
    def single(parallel):
        return (tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, features),
                                                  num_parallel_calls=parallel)
                .batch(128).prefetch(tf.data.AUTOTUNE))
    print(f"tfrecord_parse_single_parallel1: {records_rate(single(1)):.4g} records/s")
    print(f"tfrecord_parse_single_autotune: {records_rate(single(tf.data.AUTOTUNE)):.4g} records/s")
    batched = (tf.data.TFRecordDataset(path).batch(128).map(lambda r: tf.io.parse_example(r, features))
               .prefetch(tf.data.AUTOTUNE))
    print(f"tfrecord_batch_parse_example: {records_rate(batched):.4g} records/s")
