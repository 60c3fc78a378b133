"""bench/image_peers.py MODE — the JPEG pipeline of bench/image.lua in TensorFlow.
  make     write the bench's JPEGs (IMAGE_BENCH_N of them, default 300, 120 to
           200 pixels a side, RGB, quality 90) into IMAGE_BENCH_DIR with
           tf.io.encode_jpeg; bench/run.sh runs this first
  tf       tf.data over the same bytes (held in memory, as tide's run holds
           them): decode_jpeg -> resize to 64x64 -> random_flip_left_right ->
           batch(32), with map parallelism 1 and AUTOTUNE, in images/s
  jax, tf-xla  nothing (no JPEG pipeline of their own)
Threads: tide's count (TIDE_NUM_THREADS), set before TensorFlow loads."""
import os
import sys
import time
import statistics

from peer_timing import emit, threads

MODE = sys.argv[1] if len(sys.argv) > 1 else "tf"
if MODE in ("jax", "tf-xla"):
    sys.exit(0)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

T = threads()
tf.config.threading.set_intra_op_parallelism_threads(T)
tf.config.threading.set_inter_op_parallelism_threads(T)
DIR = os.environ.get("IMAGE_BENCH_DIR", "/tmp/tide_image_bench")
N = int(os.environ.get("IMAGE_BENCH_N", "300"))


def make():
    os.makedirs(DIR, exist_ok=True)
    rng = np.random.RandomState(0)
    for i in range(N):
        h, w = rng.randint(120, 201, size=2)
        y, x = np.mgrid[0:h, 0:w]
        img = np.stack([np.sin(x * (0.05 + 0.01 * k) + y * 0.03 * (k + 1) + i) for k in range(3)], -1)
        img = (img * 0.4 + 0.5 + rng.rand(h, w, 3) * 0.1) * 255
        data = tf.io.encode_jpeg(np.clip(img, 0, 255).astype(np.uint8), quality=90).numpy()
        with open(os.path.join(DIR, f"{i:04d}.jpg"), "wb") as f:
            f.write(data)


def pipeline():
    files = sorted(f for f in os.listdir(DIR) if f.endswith(".jpg"))
    blobs = [open(os.path.join(DIR, f), "rb").read() for f in files]

    def prep(b):
        x = tf.io.decode_jpeg(b, channels=3)
        x = tf.image.resize(x, (64, 64))
        return tf.image.random_flip_left_right(x, seed=1)

    for name, par in (("jpeg_pipeline_parallel1", 1), ("jpeg_pipeline_autotune", tf.data.AUTOTUNE)):
        ds = tf.data.Dataset.from_tensor_slices(blobs).map(prep, num_parallel_calls=par).batch(32)
        for _ in ds:  # warm-up epoch (tracing the map function)
            pass
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            n = 0
            for b in ds:
                n += int(b.shape[0])
            times.append(n / (time.perf_counter() - t0))
        emit(name, statistics.median(times), "img/s")


if MODE == "make":
    make()
elif MODE == "tf":
    pipeline()
else:
    sys.exit(f"image_peers.py: unknown mode {MODE!r} (make, tf, jax, tf-xla)")
