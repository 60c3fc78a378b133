"""bench/trace_jax.py — the work of bench/trace.lua under jax.jit, same names
and units: the 50-step LSTM cell of plain ops (lstm50_traced; the Python loop
unrolls while tracing, as tide.trace unrolls the Lua one) and the 10-op
elementwise chain on 1M and 10M float32 (chain10_1m_fused, chain10_10m_fused).
Run it with the Python of a venv that has jax: bench/run.sh does when
JAX_PYTHON names one (JAX_PYTHON=/work/venv-tf/bin/python make bench);
TIDE_NUM_THREADS sets XLA's CPU threads."""
import os
import statistics
import time

threads = int(os.environ.get("TIDE_NUM_THREADS", os.cpu_count() or 1))
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           f" --xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
                           f" intra_op_parallelism_threads={threads}")

import jax  # noqa: E402  (XLA reads its flags at import)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

STEPS, BATCH, INPUT, HIDDEN = 50, 1, 32, 32


def measure(fn, iters, runs=7):
    """Median seconds per call of fn over `runs` timings of `iters` calls, after a warm-up call."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


def emit(name, value, unit):
    print(f"{name}: {value:.4g} {unit}", flush=True)


def lstm(xs, h, c, wx, wh, b):
    for t in range(STEPS):
        gates = xs[t] @ wx + h @ wh + b
        i, f, g, o = jnp.split(gates, 4, axis=1)
        i, f, g, o = jax.nn.sigmoid(i), jax.nn.sigmoid(f), jnp.tanh(g), jax.nn.sigmoid(o)
        c = f * c + i * g
        h = o * jnp.tanh(c)
    return h, c


def chain(x):
    y = x * 1.5 + 0.5
    y = jnp.maximum(y, 0.0) - 0.25
    y = jnp.abs(y * x)
    y = jnp.minimum(y, 4.0) + x
    return jnp.square(y * 0.5)


rng = np.random.default_rng(0)
wx = jnp.asarray(rng.normal(0, 0.2, (INPUT, 4 * HIDDEN)), jnp.float32)
wh = jnp.asarray(rng.normal(0, 0.2, (HIDDEN, 4 * HIDDEN)), jnp.float32)
b = jnp.asarray(rng.normal(0, 0.1, (4 * HIDDEN,)), jnp.float32)
xs = jnp.asarray(rng.normal(0, 1, (STEPS, BATCH, INPUT)), jnp.float32)
h0, c0 = jnp.zeros((BATCH, HIDDEN), jnp.float32), jnp.zeros((BATCH, HIDDEN), jnp.float32)
jitted = jax.jit(lstm)
jh, _ = jitted(xs, h0, c0, wx, wh, b)
eh, _ = lstm(xs, h0, c0, wx, wh, b)
assert np.allclose(np.asarray(jh), np.asarray(eh), atol=1e-5)
emit("lstm50_traced", measure(lambda: jitted(xs, h0, c0, wx, wh, b)[0].block_until_ready(), 200, 9) * 1e6, "us")

chain_jit = jax.jit(chain)
for n, label, iters in ((1000 * 1000, "1m", 100), (10 * 1000 * 1000, "10m", 10)):
    x = jnp.asarray(rng.uniform(-1, 1, n), jnp.float32)
    assert np.allclose(np.asarray(chain_jit(x)), np.asarray(chain(x)), atol=1e-6)
    t = measure(lambda: chain_jit(x).block_until_ready(), iters, 9)
    # One array read and one written (write-allocate not counted, as STREAM's triad).
    emit(f"chain10_{label}_fused_time", t * 1e3, "ms")
    emit(f"chain10_{label}_fused", 2 * n * 4 / t / 1e9, "GB/s")
