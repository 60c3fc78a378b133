#!/bin/sh
# tests/interop/tf_checkpoint_check.sh — checkpoints the TF at hand writes now
# (tests/fixtures/ckpt/gen.py into a temporary folder: a tf.Module of every dtype,
# Keras 3 models, sharded and sliced ones, corrupt copies) read by tide as TF reads
# them: tests/spec/train/tf_checkpoint_spec.lua run on that folder.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$PYTHON" tests/fixtures/ckpt/gen.py "$dir" >/dev/null 2>&1 || { "$PYTHON" tests/fixtures/ckpt/gen.py "$dir"; exit 1; }
TIDE_CKPT_FIXTURES="$dir" "$BUILD/tide" tests/run_busted.lua tests/spec/train/tf_checkpoint_spec.lua
echo "interop tf_checkpoint: ok"
