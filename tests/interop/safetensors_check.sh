#!/bin/sh
# tests/interop/safetensors_check.sh — tide's safetensors files in Python's
# safetensors (same names, dtypes, shapes, values, metadata; a model's weights and
# a checkpoint too), and files Python writes now read back in tide.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$BUILD/tide" tests/interop/safetensors_write.lua "$dir"
"$PYTHON" tests/interop/safetensors_check.py "$dir"
"$BUILD/tide" tests/interop/safetensors_write.lua "$dir" check
echo "interop safetensors: ok"
