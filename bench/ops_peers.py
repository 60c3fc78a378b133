"""bench/ops_peers.py PEER — the work of bench/ops.lua in JAX or TensorFlow 2,
same names and units; PEER is one of:
  jax      eager ops (each op dispatched on its own, waited for), jax.jit for matmul
  tf       eager ops, tf.function for matmul
  tf-xla   eager ops, tf.function(jit_compile=True) for matmul
Threads: tide's count (TIDE_NUM_THREADS), set before the framework loads:
XLA's intra-op pool for JAX (XLA_FLAGS), intra- and inter-op pools for TF.
Run with bench/.venv's python (bench/venv.sh makes it; bench/run.sh runs this)."""
import os
import sys

from peer_timing import emit, measure, threads

PEER = sys.argv[1] if len(sys.argv) > 1 else "jax"
if PEER not in ("jax", "tf", "tf-xla"):
    sys.exit(f"ops_peers.py: unknown peer {PEER!r} (jax, tf, tf-xla)")
T = threads()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

if PEER == "jax":
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={T}")
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)

    def uniform(*shape):
        return jax.device_put(rng.random(shape, dtype=np.float32))

    def wait(x):
        return x.block_until_ready()

    add = lambda a, b: a + b
    chain = lambda x: jnp.tanh(jnp.exp(jnp.sin(x) * 0.5 + x) - x * x + 1) * 2 - x
    fma = lambda a, b, c: a * b + c
    total = jnp.sum
    matmul = jax.jit(jnp.matmul)
else:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(T)
    tf.config.threading.set_inter_op_parallelism_threads(T)
    tf.random.set_seed(0)

    def uniform(*shape):
        return tf.random.uniform(shape, dtype=tf.float32)

    def wait(x):
        return x

    add = tf.add
    chain = lambda x: tf.tanh(tf.exp(tf.sin(x) * 0.5 + x) - x * x + 1) * 2 - x
    fma = lambda a, b, c: a * b + c
    total = tf.reduce_sum
    matmul = tf.function(tf.matmul, jit_compile=(PEER == "tf-xla"))

# Tiny ops: the eager dispatch cost.
for n in (1, 100, 10000):
    a, b = uniform(n), uniform(n)
    iters = 20000 if n == 10000 else 50000

    def add10():
        for _ in range(10):
            wait(add(a, b))

    emit(f"add_{n}", measure(add10, iters // 10) / 10 * 1e6, "us")

x = uniform(100)
emit("chain10_100", measure(lambda: wait(chain(x)), 5000) * 1e6, "us")

n = 10_000_000
a, b, c = uniform(n), uniform(n), uniform(n)
t = measure(lambda: wait(fma(a, b, c)), 3)
emit("fma_10m", 6 * n * 4 / t / 1e9, "GB/s")
emit("fma_10m_time", t * 1e3, "ms")
t = measure(lambda: wait(total(a)), 5, 9)
emit("sum_10m", n * 4 / t / 1e9, "GB/s")

for n in (256, 1024, 2048):
    a, b = uniform(n, n), uniform(n, n)
    iters = 50 if n == 256 else (5 if n == 1024 else 2)
    wait(matmul(a, b))  # compile
    t = measure(lambda: wait(matmul(a, b)), iters, 5)
    emit(f"matmul_{n}", 2 * n**3 / t / 1e9, "GFLOP/s")
