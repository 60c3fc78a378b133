"""bench/applications_peers.py PEER — bench/applications.lua's models in Keras 3 on TensorFlow:
keras.applications.ResNet50 and MobileNetV2 (weights=None) at 224x224, batch 1 and 8,
model.predict_on_batch, ms per batch (wall medians, and the process's CPU time per batch). PEER: tf; jax and tf-xla print nothing.
Threads: tide's count (TIDE_NUM_THREADS), set before TensorFlow loads."""
import os
import sys
import time

from peer_timing import emit, measure, threads

MODE = sys.argv[1] if len(sys.argv) > 1 else "tf"
if MODE != "tf":
    sys.exit(0)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

T = threads()
tf.config.threading.set_intra_op_parallelism_threads(T)
tf.config.threading.set_inter_op_parallelism_threads(T)
import keras  # noqa: E402

ONLY = os.environ.get("APPS_BENCH_ONLY")
RUNS = int(os.environ.get("APPS_BENCH_RUNS", "5"))
for name, make in (("resnet50", lambda: keras.applications.ResNet50(weights=None)),
                   ("mobilenet_v2", lambda: keras.applications.MobileNetV2(weights=None))):
    if ONLY and ONLY != name:
        continue
    model = make()
    for batch in (1, 8):
        x = np.random.default_rng(1).uniform(size=(batch, 224, 224, 3)).astype(np.float32)
        calls = [0]

        def run():
            calls[0] += 1
            return model.predict_on_batch(x)
        cpu = time.process_time()
        s = measure(run, 2 if batch == 1 else 1, RUNS)
        cpu = (time.process_time() - cpu) / calls[0]
        emit(f"{name}_224_b{batch}", s * 1e3, "ms")
        emit(f"{name}_224_b{batch}_cpu", cpu * 1e3, "ms")
