"""bench/signal_peers.py PEER — the work of bench/signal.lua in TensorFlow 2 (float32), same names
and units; PEER is one of:
  tf       tf.signal eager, and stft under tf.function (the _traced line)
  tf-xla   the stft under tf.function(jit_compile=True) (the _traced line only)
  jax      jnp.fft.rfft under jax.jit (no stft in jax.numpy: its line is left out)
Threads: tide's count (TIDE_NUM_THREADS), set before the framework loads."""
import os
import sys

from peer_timing import emit, measure, threads

PEER = sys.argv[1] if len(sys.argv) > 1 else "tf"
if PEER not in ("jax", "tf", "tf-xla"):
    sys.exit(f"signal_peers.py: unknown peer {PEER!r} (jax, tf, tf-xla)")
T = threads()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

x_np = np.random.default_rng(1).standard_normal((32, 16000)).astype(np.float32)

if PEER == "jax":
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={T}")
    import jax
    import jax.numpy as jnp

    x = jax.device_put(x_np)
    f = jax.jit(jnp.fft.rfft)
    emit("rfft_32x16000", measure(lambda: jax.block_until_ready(f(x)), 10, 7) * 1e3, "ms")
    sys.exit(0)

import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(T)
tf.config.threading.set_inter_op_parallelism_threads(T)
x = tf.constant(x_np)


def stft(v):
    return tf.signal.stft(v, 400, 160, fft_length=512)


if PEER == "tf":
    emit("rfft_32x16000", measure(lambda: tf.signal.rfft(x), 10, 7) * 1e3, "ms")
    emit("stft_32x16000", measure(lambda: stft(x), 5, 7) * 1e3, "ms")
    traced = tf.function(stft)
else:
    traced = tf.function(stft, jit_compile=True)
emit("stft_32x16000_traced", measure(lambda: traced(x).numpy(), 5, 7) * 1e3, "ms")
