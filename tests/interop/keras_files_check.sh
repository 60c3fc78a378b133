#!/bin/sh
# tests/interop/keras_files_check.sh — tide's .keras and .weights.h5 files loaded by
# Keras 3 (same predictions, optimizer state), and .keras files Keras writes now
# loaded by tide.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$BUILD/tide" tests/interop/keras_files_write.lua "$dir"
"$PYTHON" tests/interop/keras_files_check.py "$dir" 2>&1 | grep -v -i "warning" || true
[ -f "$dir/keras_lstm.json" ] || { echo "interop keras_files: Keras's side failed"; exit 1; }
"$BUILD/tide" tests/interop/keras_files_write.lua "$dir" check
echo "interop keras_files: ok"
