"""bench/linalg_peers.py PEER — the work of bench/linalg.lua in JAX or TensorFlow 2
(float32), same names and units; PEER is one of:
  jax      jax.numpy.linalg, each op under jax.jit
  tf       tf.linalg, eager
  tf-xla   prints nothing: XLA's CPU decompositions ran minutes per call at
           256x256 (svd did not finish in 4 minutes on a loaded 2-core AVX2
           machine; cholesky took 100 ms against tf's 2), so run.sh's third
           peer would hold the whole bench
An op the peer cannot run prints no line.
Threads: tide's count (TIDE_NUM_THREADS), set before the framework loads."""
import os
import sys

from peer_timing import emit, measure, threads

PEER = sys.argv[1] if len(sys.argv) > 1 else "tf"
if PEER not in ("jax", "tf", "tf-xla"):
    sys.exit(f"linalg_peers.py: unknown peer {PEER!r} (jax, tf, tf-xla)")
if PEER == "tf-xla":
    sys.exit(0)
T = threads()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

rng = np.random.default_rng(1)


def spd_np(n, b=None):
    shape = (b, n, n) if b else (n, n)
    a = rng.standard_normal(shape).astype(np.float32)
    return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=np.float32)).astype(np.float32)


if PEER == "jax":
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={T}")
    import jax
    import jax.numpy as jnp

    def const(x):
        return jax.device_put(x)

    def wait(x):
        return jax.block_until_ready(x)

    ops = [("inv", jnp.linalg.inv), ("cholesky", jnp.linalg.cholesky), ("qr", jnp.linalg.qr),
           ("svd", lambda x: jnp.linalg.svd(x, full_matrices=False)), ("eigh", jnp.linalg.eigh),
           ("det", jnp.linalg.det)]
    ops = [(name, jax.jit(f)) for name, f in ops]
else:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(T)
    tf.config.threading.set_inter_op_parallelism_threads(T)

    def const(x):
        return tf.constant(x)

    def wait(x):
        return x

    ops = [("inv", tf.linalg.inv), ("cholesky", tf.linalg.cholesky), ("qr", tf.linalg.qr),
           ("svd", tf.linalg.svd), ("eigh", tf.linalg.eigh), ("det", tf.linalg.det)]

for name, x, iters in [("256", spd_np(256), 3), ("256x64", spd_np(256, 64), 1), ("8x4096", spd_np(8, 4096), 3)]:
    x = const(x)
    for op, f in ops:
        try:
            wait(f(x))
        except Exception:  # noqa: BLE001 (a peer may lack the op on CPU)
            continue
        emit(op + "_" + name, measure(lambda: wait(f(x)), iters, 5) * 1e3, "ms")
