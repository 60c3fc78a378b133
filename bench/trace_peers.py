"""bench/trace_peers.py PEER — the work of bench/trace.lua in JAX or TensorFlow 2,
same names and units; PEER is one of:
  jax      jax.jit (the *_traced and *_fused lines) and eager JAX (*_eager)
  tf       tf.function and eager TensorFlow
  tf-xla   tf.function(jit_compile=True) and eager TensorFlow
The work: the 50-step LSTM cell of plain ops (lstm50_*; the Python loop
unrolls while tracing, as tide.trace unrolls the Lua one) and the 10-op
elementwise chain on 1M and 10M float32 (chain10_1m_*, chain10_10m_*).
Threads: tide's count (TIDE_NUM_THREADS), set before the framework loads.
Run with the peers' python (bench/venv.sh; bench/run.sh runs this)."""
import os
import sys

import numpy as np

from peer_timing import emit, measure, threads

PEER = sys.argv[1] if len(sys.argv) > 1 else "jax"
if PEER not in ("jax", "tf", "tf-xla"):
    sys.exit(f"trace_peers.py: unknown peer {PEER!r} (jax, tf, tf-xla)")
T = threads()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
STEPS, BATCH, INPUT, HIDDEN = 50, 1, 32, 32

if PEER == "jax":
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen={'true' if T > 1 else 'false'}"
                               f" intra_op_parallelism_threads={T}")
    import jax
    import jax.numpy as jnp

    asarray = lambda a: jnp.asarray(a, jnp.float32)
    compile_fn = jax.jit
    wait = lambda x: x.block_until_ready()
    split4 = lambda g: jnp.split(g, 4, axis=1)
    sigmoid, tanh = jax.nn.sigmoid, jnp.tanh
    maximum, minimum, absolute, square = jnp.maximum, jnp.minimum, jnp.abs, jnp.square
else:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(T)
    tf.config.threading.set_inter_op_parallelism_threads(T)
    asarray = lambda a: tf.constant(a, tf.float32)
    compile_fn = lambda f: tf.function(f, jit_compile=(PEER == "tf-xla"))
    wait = lambda x: x  # TF hands back results that are ready (CPU ops run synchronously)
    split4 = lambda g: tf.split(g, 4, axis=1)
    sigmoid, tanh = tf.sigmoid, tf.tanh
    maximum, minimum, absolute, square = tf.maximum, tf.minimum, tf.abs, tf.square


def lstm(xs, h, c, wx, wh, b):
    for t in range(STEPS):
        gates = xs[t] @ wx + h @ wh + b
        i, f, g, o = split4(gates)
        i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
        c = f * c + i * g
        h = o * tanh(c)
    return h, c


def chain(x):
    y = x * 1.5 + 0.5
    y = maximum(y, 0.0) - 0.25
    y = absolute(y * x)
    y = minimum(y, 4.0) + x
    return square(y * 0.5)


rng = np.random.default_rng(0)
wx = asarray(rng.normal(0, 0.2, (INPUT, 4 * HIDDEN)))
wh = asarray(rng.normal(0, 0.2, (HIDDEN, 4 * HIDDEN)))
b = asarray(rng.normal(0, 0.1, (4 * HIDDEN,)))
xs = asarray(rng.normal(0, 1, (STEPS, BATCH, INPUT)))
h0, c0 = asarray(np.zeros((BATCH, HIDDEN))), asarray(np.zeros((BATCH, HIDDEN)))
compiled = compile_fn(lstm)
ch, _ = compiled(xs, h0, c0, wx, wh, b)
eh, _ = lstm(xs, h0, c0, wx, wh, b)
assert np.allclose(np.asarray(ch), np.asarray(eh), atol=1e-5)
emit("lstm50_eager", measure(lambda: wait(lstm(xs, h0, c0, wx, wh, b)[0]), 10, 7) * 1e6, "us")
emit("lstm50_traced", measure(lambda: wait(compiled(xs, h0, c0, wx, wh, b)[0]), 200, 9) * 1e6, "us")

chain_compiled = compile_fn(chain)
for n, label, iters in ((1000 * 1000, "1m", 100), (10 * 1000 * 1000, "10m", 10)):
    x = asarray(rng.uniform(-1, 1, n))
    assert np.allclose(np.asarray(chain_compiled(x)), np.asarray(chain(x)), atol=1e-6)
    t = measure(lambda: wait(chain_compiled(x)), iters, 9)
    # One array read and one written (write-allocate not counted, as STREAM's triad).
    emit(f"chain10_{label}_fused_time", t * 1e3, "ms")
    emit(f"chain10_{label}_fused", 2 * n * 4 / t / 1e9, "GB/s")
