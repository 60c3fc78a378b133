#!/bin/sh
# tests/sh/test_examples.sh — the Keras examples still run: each trains one
# epoch on 2,000 Fashion-MNIST images (TIDE_EXAMPLE_SUBSET) and must print a
# test accuracy well above chance (0.1), and each names Debian's package
# dataset-fashion-mnist when the data is missing. Run by tests/run.sh from the
# repository root (BUILD names the build folder); `make test` installs the data.
set -u
BUILD=${BUILD:-build}
# Lua programs: the Lua collector exits without freeing everything (as tests/run.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
MIN_ACCURACY=0.3 # one epoch on 2,000 images gives 0.6-0.75; an untrained model 0.1
passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fail() {
  printf 'FAIL %s\n' "$1"
  sed 's/^/  | /' "$out" | tail -n 15
  failed=$((failed + 1))
}

for example in fashion_mnist_mlp fashion_mnist_cnn custom_loop; do
  script=examples/$example.lua
  TIDE_EXAMPLE_SUBSET=2000 "$BUILD/tide" "$script" >"$out" 2>&1
  rc=$?
  accuracy=$(sed -n 's/^test accuracy: \([0-9.]*\)$/\1/p' "$out" | tail -n 1)
  if [ "$rc" -ne 0 ]; then
    fail "$script exited with $rc"
  elif [ -z "$accuracy" ]; then
    fail "$script printed no 'test accuracy: X' line"
  elif ! awk -v a="$accuracy" -v m="$MIN_ACCURACY" 'BEGIN { exit !(a > m) }'; then
    fail "$script: test accuracy $accuracy after one epoch on 2,000 images, expected above $MIN_ACCURACY"
  else
    passed=$((passed + 1))
  fi

  FASHION_MNIST_DIR=/nonexistent/fashion-mnist "$BUILD/tide" "$script" >"$out" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then
    fail "$script succeeded without its data"
  elif ! grep -q "/nonexistent/fashion-mnist/.* is missing; install Debian's package dataset-fashion-mnist" "$out"; then
    fail "$script without its data: no message naming the missing file and dataset-fashion-mnist"
  else
    passed=$((passed + 1))
  fi
done

# examples/text_classification.lua (a TF Hub BERT SavedModel fine-tuned through tide.hub.KerasLayer): --fast
# trains the tiny BERT of tests/fixtures/tf_saved_model on 192 sentences; a missing model is named.
"$BUILD/tide" examples/text_classification.lua --fast >"$out" 2>&1
rc=$?
accuracy=$(sed -n 's/^test accuracy: \([0-9.]*\)$/\1/p' "$out" | tail -n 1)
if [ "$rc" -ne 0 ] || [ -z "$accuracy" ] || ! awk -v a="$accuracy" 'BEGIN { exit !(a > 0.75) }'; then
  fail "examples/text_classification.lua --fast: exit $rc, test accuracy '$accuracy' (expected above 0.75)"
else
  passed=$((passed + 1))
fi
"$BUILD/tide" examples/text_classification.lua --fast --model /nonexistent/bert >"$out" 2>&1
if [ $? -eq 0 ] || ! grep -q "/nonexistent/bert/assets/vocab.txt is missing" "$out"; then
  fail "examples/text_classification.lua with a missing model: no error naming its vocab.txt"
else
  passed=$((passed + 1))
fi

# examples/transfer_learning.lua (TF's transfer learning guide: image folder, frozen backbone, fine-tuning, saving):
# --fast writes 3 x 40 Fashion-MNIST PNGs, trains a random MobileNetV2 (alpha 0.35) head 2 epochs and fine-tunes 1,
# and asserts itself (checkpoint reload, frozen backbone untouched, BatchNormalization statistics kept, both saved
# forms reload); the test accuracy must be above chance (1/3) by 0.1 here too. A missing dataset is named.
tl_out=$(mktemp -d)
"$BUILD/tide" examples/transfer_learning.lua --fast --out "$tl_out" >"$out" 2>&1
rc=$?
accuracy=$(sed -n 's/^test accuracy: \([0-9.]*\)$/\1/p' "$out" | tail -n 1)
if [ "$rc" -ne 0 ] || [ -z "$accuracy" ] || ! awk -v a="$accuracy" 'BEGIN { exit !(a > 0.4333) }'; then
  fail "examples/transfer_learning.lua --fast: exit $rc, test accuracy '$accuracy' (expected above 0.4333)"
elif [ ! -f "$tl_out/best_model.keras" ] || [ ! -f "$tl_out/final_model.keras" ] || [ ! -d "$tl_out/saved_model" ]; then
  fail "examples/transfer_learning.lua --fast: best_model.keras, final_model.keras or saved_model/ missing in --out"
else
  passed=$((passed + 1))
fi
rm -rf "$tl_out"/*
FASHION_MNIST_DIR=/nonexistent/fashion-mnist "$BUILD/tide" examples/transfer_learning.lua --fast --out "$tl_out" >"$out" 2>&1
if [ $? -eq 0 ] || ! grep -q "/nonexistent/fashion-mnist/.* is missing; install Debian's package dataset-fashion-mnist" "$out"; then
  fail "examples/transfer_learning.lua without its data: no message naming the missing file and dataset-fashion-mnist"
else
  passed=$((passed + 1))
fi
rm -rf "$tl_out"

# examples/training_techniques.lua --fast: gradient accumulation (both ways) equal to one big step,
# recompute_grad's same gradients and lower peak, mixed precision's loss scale, the profiler every N
# steps, jit_compile, run_functions_eagerly, check_numerics and shape asserts: each section asserts.
"$BUILD/tide" examples/training_techniques.lua --fast >"$out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "^all techniques checked$" "$out"; then
  fail "examples/training_techniques.lua --fast: exit $rc, or no 'all techniques checked'"
else
  passed=$((passed + 1))
fi

echo "sh examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
