#!/bin/sh
# bench/run.sh — `make bench`: measures tide's ops, convolutions and traced
# functions and the same work in its peers in one run, plus the machine's
# memory bandwidth, and prints `name: value unit` lines with tide's speed
# ratio to each peer (above 1: tide is faster).
#
# Peers, all at tide's thread count T (TIDE_NUM_THREADS, default: the cores):
#   openblas OpenBLAS's sgemm called directly (the floor for tide's matmul)
#   torch    Debian's python3-torch, OMP_WAIT_POLICY=PASSIVE (its OpenMP
#            threads sleep between ops instead of spinning against tide's
#            measurements), OMP_NUM_THREADS=T and torch.set_num_threads(T)
#   jax      JAX from bench/.venv, XLA_FLAGS intra_op_parallelism_threads=T
#   tf       TensorFlow 2 (tensorflow-cpu) from bench/.venv, intra- and
#   tf-xla   inter-op pools of T threads; tf-xla compiles with jit_compile=True
# bench/venv.sh makes bench/.venv from PyPI when missing (TIDE_BENCH_VENV=DIR
# uses another venv, PEERS_PYTHON=PATH another python that has jax and
# tensorflow, e.g. /work/venv-tf/bin/python; JAX_PYTHON is read as the same);
# without one the JAX and TensorFlow columns are left out.
# A section's JAX/TF work is bench/<section>_peers.py PEER (PEER: jax, tf or
# tf-xla), printing the names its tide script prints.
set -eu
BUILD=${BUILD:-build}
threads=${TIDE_NUM_THREADS:-$(nproc)}
export TIDE_NUM_THREADS=$threads
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

peer_py=${PEERS_PYTHON:-${JAX_PYTHON:-}}
[ -n "$peer_py" ] || peer_py=$(bench/venv.sh) || peer_py=""

# section NAME: bench/NAME.lua, then (when they exist) bench/NAME_openblas.lua,
# bench/NAME_torch.py and bench/NAME_peers.py for each venv peer, each in a
# process of its own, then the lines with ratios.
section() {
  "$BUILD/tide" "bench/$1.lua" >"$out/$1.tide"
  set -- "$1" "$out/$1.tide"
  if [ -f "bench/$1_openblas.lua" ]; then
    "$BUILD/tide" "bench/$1_openblas.lua" >"$out/$1.openblas"
    set -- "$@" "$out/$1.openblas" openblas
  fi
  if [ -f "bench/$1_torch.py" ]; then
    OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 "bench/$1_torch.py" >"$out/$1.torch" \
      2>"$out/$1.torch.err" || { echo "# bench/$1_torch.py failed:" >&2; tail -n 3 "$out/$1.torch.err" >&2; }
    set -- "$@" "$out/$1.torch" torch
  fi
  if [ -n "$peer_py" ] && [ -f "bench/$1_peers.py" ]; then
    for p in jax tf tf-xla; do
      "$peer_py" "bench/$1_peers.py" "$p" >"$out/$1.$p" 2>"$out/$1.$p.err" ||
        { echo "# bench/$1_peers.py $p failed:" >&2; tail -n 3 "$out/$1.$p.err" >&2; }
      set -- "$@" "$out/$1.$p" "$p"
    done
  fi
  shift
  "$BUILD/tide" bench/compare.lua "$@"
}

cc -O3 -march=native -fopenmp bench/triad.c -o "$out/triad"
echo "# machine"
"$BUILD/tide" bench/timing.lua # its `# machine:` line: CPU, cores, caches, ISA, how products run
OMP_NUM_THREADS=$threads OMP_PROC_BIND=true "$out/triad" | tee "$out/triad.txt"
bw=$(sed -n 's/^triad.bandwidth: \([0-9.]*\) GB\/s$/\1/p' "$out/triad.txt")

# share NAME FILE [BW]: NAME's GB/s in FILE as a share of bandwidth BW (GB/s;
# default: the in-memory triad's).
share() {
  v=$(sed -n "s/^$1: \\([0-9.e+-]*\\) GB\\/s\$/\\1/p" "$2")
  b=${3:-$bw}
  if [ -n "$v" ] && [ -n "$b" ]; then
    awk -v n="$1" -v v="$v" -v b="$b" 'BEGIN { printf "%s_share_of_triad: %.1f %%\n", n, 100 * v / b }'
  fi
}

echo "# tide ops vs PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), JAX and TensorFlow (threads: $threads)"
section ops
share fma_10m "$out/ops.tide"
share sum_10m "$out/ops.tide"

echo "# the hot loops at each instruction set this CPU runs (baseline: a portable build without dispatch)"
"$BUILD/tide" bench/isa.lua

echo "# autodiff vs PyTorch autograd"
section autodiff

echo "# tide conv2d and pooling vs PyTorch (Fashion-MNIST-sized batches of 128; threads: $threads)"
section conv

echo "# the input pipeline (tide.data) vs torch.utils.data.DataLoader and tf.data (Fashion-MNIST, batches of 128; 20,000 of its images as TFRecords of Examples)"
export DATA_BENCH_RECORDS="$out/fmnist.tfrecord"
section data
echo "# interleave with cheap inner elements: its function in Lua per element (lua) and captured into C (c) vs tf.data"
section data_interleave
echo "# shard and unbatch per row, in C and in the Lua engine (rows per CPU second of the consumer's thread)"
section data_split

echo "# the cache stage: elements/s of a pass writing and one reading a memory and a file cache (Fashion-MNIST's 60,000 elements, then batch(128))"
DATA_BENCH_DIR="$out" section data_cache

echo "# index-driven ops (gather_nd, scatters, where, boolean_mask, unique, segments) vs PyTorch (threads: $threads)"
section index

echo "# attention: MultiHeadAttention forward, and forward + backward (batch 32, sequence 128, model 128, 4 heads; traced, and eager) vs nn.MultiheadAttention; tide.einsum in attention shapes vs torch.einsum (threads: $threads)"
section attention

echo "# tide.linalg's LAPACK ops (inv, cholesky, qr, svd, eigh, det; float32) on 256x256, a batch of 64 of them and 4096 8x8 matrices vs torch.linalg, tf.linalg (eager) and jax.numpy.linalg (threads: $threads)"
section linalg

echo "# tide.signal on 1 s of 16 kHz audio, batch 32 (float32): rfft of the whole signal, stft 400/160 with fft_length 512 (eager, and traced) vs torch.fft/torch.stft and tf.signal (threads: $threads)"
section signal

echo "# tide.trace vs PyTorch eager and TorchScript (the *_traced and *_fused lines: torch.jit.script), jax.jit and tf.function (threads: $threads)"
section trace
# The 10M chain against the in-memory triad, the 1M one against the triad on 1M floats (in cache).
bw1m=$(sed -n 's/^triad_1m.bandwidth: \([0-9.]*\) GB\/s$/\1/p' "$out/triad.txt")
share chain10_10m_fused "$out/trace.tide"
share chain10_1m_fused "$out/trace.tide" "$bw1m"

echo "# Keras training on Fashion-MNIST (bench/train.lua): one epoch of fit (batch 128, Adam 1e-3), test accuracy, predict per image, peak RSS; an MLP and a CNN, each in a process of its own, vs PyTorch eager and Keras on TF, TF+XLA and JAX (threads: $threads)"
section train

echo "# keras.applications inference (bench/applications.lua): ResNet50 and MobileNetV2 at 224x224, batch 1 and 8, predict_on_batch, ms per batch vs Keras 3 on TF (threads: $threads)"
section applications

echo "# text preprocessing in a tide.data map vs tf.data with the same layer: TextVectorization (int, length 64) and WordPiece (uncased, length 64; keras_hub's, needs tensorflow-text), batches of 256, 20,000 synthetic sentences, sentences/s (threads: $threads)"
section text
echo "# keras_hub's BytePairTokenizer (GPT-2 byte-level BPE, the 420-token fixture vocabulary, length 64) on the same 20,000 sentences: batches of 256 called in one thread, sentences/CPU-s, and in a tide.data / tf.data map; HF tokenizers' encode_batch beside it (threads: $threads)"
section text_bpe
echo "# JPEG pipeline: decode, resize to 64x64, random flip, batch 32 over 300 generated JPEGs (tide.data, map parallel 1 and AUTOTUNE; and the op chain in a Lua loop, eager and traced) vs tf.data map (parallel 1, AUTOTUNE), img/s (threads: $threads)"
export IMAGE_BENCH_DIR="$out/jpegs"
if [ -n "$peer_py" ] && "$peer_py" bench/image_peers.py make 2>/dev/null; then
  section image
else
  echo "# (skipped: bench/image_peers.py make needs TensorFlow to write the JPEGs)"
fi

echo "# building graphs as they grow: traced functions nested 100-3,000 deep, 8k-100k Lua-number constants, 32k Variable reads; fixed costs of tape:run and a traced call (tide only)"
"$BUILD/tide" bench/trace_build.lua

echo "# gradients through traced code: a tape outside a traced MLP step; a traced while_loop's gradient vs its iterations"
"$BUILD/tide" bench/autodiff_trace.lua

echo "# tide.summary: what a summary call costs the training loop (the writer queues; its thread writes)"
"$BUILD/tide" bench/summary.lua
echo "# embedding without Lua: tide_model_run per frame (bind the input, run, read the output; bench/embed_model.c) vs onnxruntime running the same 784-256-128-10 MLP as an ONNX model (bench/embed_peers.py, less its Python call floor), batch 1, at 1 thread and at each one's default; bench/trace.lua's LSTM cell as a SavedModel (tide only)"
mkdir -p "$out/embed"
"$BUILD/tide" bench/embed_model.lua "$out/embed"
"$BUILD/bench/embed_model" "$out/embed" >"$out/embed.tide"
# onnxruntime and onnx from PyPI: ONNX_PYTHON, else the peers' venv, else the project's venv, when one has them.
ort_py=""
for p in "${ONNX_PYTHON:-}" "$peer_py" /work/venv-tf/bin/python; do
  if [ -n "$p" ] && "$p" -c "import onnx, onnxruntime, safetensors, numpy" 2>/dev/null; then ort_py=$p; break; fi
done
if [ -n "$ort_py" ]; then
  "$ort_py" bench/embed_peers.py "$out/embed" >"$out/embed.ort" 2>"$out/embed.ort.err" ||
    { echo "# bench/embed_peers.py failed:" >&2; tail -n 3 "$out/embed.ort.err" >&2; }
else
  echo "# (no python with onnx and onnxruntime: pip install onnx onnxruntime, or set ONNX_PYTHON)"
fi
"$BUILD/tide" bench/compare.lua "$out/embed.tide" "$out/embed.ort" onnxruntime
grep -E '^(ort_python_call_floor|mlp_.*_python_)' "$out/embed.ort" 2>/dev/null || true
echo "# models from files (issue 28): an MLP 784-256-128-10, a small CNN (28x28x1) and MobileNetV2 (224x224) written by Keras 3 as a TF SavedModel and as ONNX (bench/model_files_gen.py), run through tide_model_run from each file (bench/model_files.c) vs onnxruntime on the ONNX file (less its Python call floor) and TF on the SavedModel (bench/model_files_peers.py); batch 1 and 8 (us per call, and _cpu: CPU time per call), time to the first prediction (_load, ms); 1 thread each"
if [ -n "$ort_py" ] && "$ort_py" -c "import keras, tensorflow" 2>/dev/null &&
  "$ort_py" bench/model_files_gen.py "$out/model_files" >"$out/model_files.gen" 2>"$out/model_files.gen.err"; then
  "$BUILD/bench/model_files" "$out/model_files" >"$out/model_files.tide"
  "$ort_py" bench/model_files_peers.py ort "$out/model_files" >"$out/model_files.ort" 2>"$out/model_files.ort.err" ||
    { echo "# bench/model_files_peers.py ort failed:" >&2; tail -n 3 "$out/model_files.ort.err" >&2; }
  "$ort_py" bench/model_files_peers.py tf "$out/model_files" >"$out/model_files.tf" 2>"$out/model_files.tf.err" ||
    { echo "# bench/model_files_peers.py tf failed:" >&2; tail -n 3 "$out/model_files.tf.err" >&2; }
  "$BUILD/tide" bench/compare.lua "$out/model_files.tide" "$out/model_files.ort" onnxruntime "$out/model_files.tf" tf
else
  echo "# (skipped: bench/model_files_gen.py needs a python with keras, tensorflow, onnx and onnxruntime: set ONNX_PYTHON)"
fi
echo "# embedded VMs (tide/vm.h): each limit's cost on Lua loops, tiny and big ops, and a call with a 784-float tensor"
"$BUILD/tide" bench/embed_vm.lua
echo "# start-up to the first op (tide -e running tide.tensor{1} + 1) vs python3 -c 'import torch' and importing tensorflow (medians of 21 runs)"
PEERS_PYTHON=${peer_py:-} "$BUILD/tide" bench/startup.lua
echo "# saving and loading 100 MiB of float32 weights: tide.safetensors (which always fsyncs) vs torch.save/torch.load and Python's safetensors with numpy (MB/s)"
"$BUILD/tide" bench/saving.lua >"$out/saving.tide"
OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=$threads /usr/bin/python3 bench/saving_torch.py >"$out/saving.torch" \
  2>"$out/saving.torch.err" || { echo "# bench/saving_torch.py failed:" >&2; tail -n 3 "$out/saving.torch.err" >&2; }
# Python's safetensors: SAFETENSORS_PYTHON, else the peers' venv, else the project's venv, when one has it.
st_py=""
for p in "${SAFETENSORS_PYTHON:-}" "$peer_py" /work/venv-tf/bin/python; do
  if [ -n "$p" ] && "$p" -c "import safetensors, numpy" 2>/dev/null; then st_py=$p; break; fi
done
if [ -n "$st_py" ]; then
  "$st_py" bench/saving_safetensors.py >"$out/saving.safetensors" 2>"$out/saving.safetensors.err" ||
    { echo "# bench/saving_safetensors.py failed:" >&2; tail -n 3 "$out/saving.safetensors.err" >&2; }
fi
"$BUILD/tide" bench/compare.lua "$out/saving.tide" "$out/saving.torch" torch "$out/saving.safetensors" safetensors
