"""bench/train_peers.py PEER [mlp|cnn] — the work of bench/train.lua in Keras 3
(TF 2.21's tf.keras), same names and units: one epoch of fit (batch 128,
Adam 1e-3, shuffled, the first epoch, its tracing included), the test
accuracy after it, predict's time per image on the 10,000 test images
(batch 128) and the peak RSS. Without a model each runs in a process of its
own. PEER is one of:
  tf       Keras on TensorFlow, as compile's defaults (tf.function, no XLA on a CPU)
  tf-xla   the same with compile(jit_compile=True)
  jax      Keras on JAX (KERAS_BACKEND=jax; jax.jit steps, XLA)
Threads: tide's count (TIDE_NUM_THREADS), TF's intra- and inter-op pools or
XLA's intra-op pool, set before the framework loads. Run with bench/.venv's
python (bench/venv.sh makes it; bench/run.sh runs this)."""
import os
import subprocess
import sys
import time

PEER = sys.argv[1] if len(sys.argv) > 1 else "tf"
if PEER not in ("jax", "tf", "tf-xla"):
    sys.exit(f"train_peers.py: unknown peer {PEER!r} (jax, tf, tf-xla)")
if len(sys.argv) < 3:
    for model in ("mlp", "cnn"):
        subprocess.run([sys.executable, sys.argv[0], PEER, model], check=True)
    sys.exit(0)
WHICH = sys.argv[2]
if WHICH not in ("mlp", "cnn"):
    sys.exit(f"train_peers.py: the model is mlp or cnn, got {WHICH!r}")

from peer_timing import emit, measure, threads
from train_data import load, peak_rss_mib

T = threads()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if PEER == "jax":
    os.environ["KERAS_BACKEND"] = "jax"
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={T}")
    import keras
else:
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(T)
    tf.config.threading.set_inter_op_parallelism_threads(T)
    keras = tf.keras

keras.utils.set_random_seed(0)
layers = keras.layers
if WHICH == "mlp":
    x_train, y_train, x_test, y_test = load((-1, 784))
    model = keras.Sequential([keras.Input((784,)), layers.Dense(256, activation="relu"),
                              layers.Dense(128, activation="relu"), layers.Dense(10)])
else:
    x_train, y_train, x_test, y_test = load((-1, 28, 28, 1))
    model = keras.Sequential([keras.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
                              layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2), layers.Flatten(),
                              layers.Dense(128, activation="relu"), layers.Dense(10)])
model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
              jit_compile=(PEER == "tf-xla") or "auto")

t0 = time.perf_counter()
model.fit(x_train, y_train, epochs=1, batch_size=128, verbose=0)
epoch = time.perf_counter() - t0
accuracy = model.evaluate(x_test, y_test, batch_size=128, verbose=0)[1]
per_image = measure(lambda: model.predict(x_test, batch_size=128, verbose=0), 1, 5) / len(x_test)

name = "train_" + WHICH
emit(name + "_epoch", epoch, "s")
emit(name + "_test_accuracy", accuracy, "acc")
emit(name + "_predict", per_image * 1e6, "us/image")
emit(name + "_peak_rss", peak_rss_mib(), "MiB")
