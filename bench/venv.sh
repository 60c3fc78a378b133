#!/bin/sh
# bench/venv.sh — prints the python of a venv that has the bench's PyPI peers
# (TensorFlow 2 for the CPU, JAX), making bench/.venv from PyPI when missing.
# TIDE_BENCH_VENV=DIR uses another venv that has them. Exit status 1 (and a
# note on stderr) when none can be had: the bench then runs without them.
set -u
TF_VERSION=2.21.0
JAX_VERSION=0.10.2
venv=${TIDE_BENCH_VENV:-bench/.venv}
check='import jax, tensorflow'

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "$(cd "$venv" && pwd)/bin/python"
  exit 0
fi
if [ -n "${TIDE_BENCH_VENV:-}" ]; then
  echo "bench/venv.sh: $venv has no python with jax and tensorflow" >&2
  exit 1
fi
echo "bench/venv.sh: making $venv (tensorflow-cpu==$TF_VERSION, jax==$JAX_VERSION from PyPI)" >&2
if ! python3 -m venv "$venv" >&2 ||
   ! "$venv/bin/pip" install -q "tensorflow-cpu==$TF_VERSION" "jax==$JAX_VERSION" "jaxlib==$JAX_VERSION" >&2 ||
   ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "bench/venv.sh: could not make $venv (tools/deps.sh bench installs python3-venv; PyPI must be reachable)" >&2
  exit 1
fi
echo "$(cd "$venv" && pwd)/bin/python"
