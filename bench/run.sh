#!/bin/sh
# bench/run.sh — `make bench`: measures tide's ops, convolutions and traced functions and the same work in
# PyTorch (Debian's python3-torch, OMP_WAIT_POLICY=PASSIVE, tide's thread
# count) in one run, plus the machine's memory bandwidth, and prints
# `name: value unit` lines with ratios.
set -eu
BUILD=${BUILD:-build}
threads=${TIDE_NUM_THREADS:-$(nproc)}
export TIDE_NUM_THREADS=$threads
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cc -O3 -march=native -fopenmp bench/triad.c -o "$out/triad"
echo "# machine"
OMP_NUM_THREADS=$threads OMP_PROC_BIND=true "$out/triad" | tee "$out/triad.txt"

echo "# tide ops vs PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') (threads: $threads)"
"$BUILD/tide" bench/ops.lua >"$out/tide.txt"
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 bench/ops_torch.py >"$out/torch.txt"
"$BUILD/tide" bench/compare.lua "$out/tide.txt" "$out/torch.txt" torch

echo "# autodiff vs PyTorch autograd"
"$BUILD/tide" bench/autodiff.lua >"$out/tide_ad.txt"
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 bench/autodiff_torch.py >"$out/torch_ad.txt"
"$BUILD/tide" bench/compare.lua "$out/tide_ad.txt" "$out/torch_ad.txt" torch

# Shares of the machine's bandwidth for the bandwidth-bound work.
bw=$(sed -n 's/^triad.bandwidth: \([0-9.]*\) GB\/s$/\1/p' "$out/triad.txt")
for name in fma_10m sum_10m; do
  v=$(sed -n "s/^$name: \\([0-9.e+-]*\\) GB\\/s\$/\\1/p" "$out/tide.txt")
  [ -n "$v" ] && [ -n "$bw" ] && awk -v n="$name" -v v="$v" -v b="$bw" \
    'BEGIN { printf "%s_share_of_triad: %.1f %%\n", n, 100 * v / b }'
done

echo "# tide conv2d and pooling vs PyTorch (Fashion-MNIST-sized batches of 128; threads: $threads)"
"$BUILD/tide" bench/conv.lua >"$out/conv.txt"
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 bench/conv_torch.py >"$out/conv_torch.txt"
"$BUILD/tide" bench/compare.lua "$out/conv.txt" "$out/conv_torch.txt" torch

echo "# index-driven ops (gather_nd, scatters, where, boolean_mask, unique, segments) vs PyTorch (threads: $threads)"
"$BUILD/tide" bench/index.lua >"$out/index.txt"
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 bench/index_torch.py >"$out/index_torch.txt" 2>/dev/null
"$BUILD/tide" bench/compare.lua "$out/index.txt" "$out/index_torch.txt" torch

echo "# tide.trace vs PyTorch eager and TorchScript (lstm50_traced and chain10_10m_fused: torch.jit.script; threads: $threads)"
"$BUILD/tide" bench/trace.lua >"$out/trace.txt"
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 bench/trace_torch.py >"$out/trace_torch.txt"
"$BUILD/tide" bench/compare.lua "$out/trace.txt" "$out/trace_torch.txt" torch
# jax.jit on the same work, with the Python of a venv that has jax (JAX_PYTHON, e.g. /work/venv-tf/bin/python).
if [ -n "${JAX_PYTHON:-}" ]; then
  echo "# tide.trace vs jax.jit (threads: $threads)"
  "$JAX_PYTHON" bench/trace_jax.py 2>/dev/null >"$out/trace_jax.txt"
  "$BUILD/tide" bench/compare.lua "$out/trace.txt" "$out/trace_jax.txt" jax | grep -e '| jax'
fi
# The 10M chain against the in-memory triad, the 1M one against the triad on 1M floats (in cache).
bw1m=$(sed -n 's/^triad_1m.bandwidth: \([0-9.]*\) GB\/s$/\1/p' "$out/triad.txt")
for pair in "10m $bw" "1m $bw1m"; do
  set -- $pair
  v=$(sed -n "s/^chain10_$1_fused: \\([0-9.e+-]*\\) GB\\/s\$/\\1/p" "$out/trace.txt")
  if [ -n "$v" ] && [ -n "${2:-}" ]; then
    awk -v n="$1" -v v="$v" -v b="$2" 'BEGIN { printf "chain10_%s_fused_share_of_triad: %.1f %%\n", n, 100 * v / b }'
  fi
done

echo "# building graphs as they grow: traced functions nested 100-3,000 deep, 8k-100k Lua-number constants, 32k Variable reads; fixed costs of tape:run and a traced call (tide only)"
"$BUILD/tide" bench/trace_build.lua

echo "# gradients through traced code: a tape outside a traced MLP step; a traced while_loop's gradient vs its iterations"
"$BUILD/tide" bench/autodiff_trace.lua
