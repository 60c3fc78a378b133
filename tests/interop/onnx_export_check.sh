#!/bin/sh
# tests/interop/onnx_export_check.sh — ONNX files tide.onnx.export wrote pass onnx.checker
# and run in onnxruntime with tide's outputs (tests/interop/onnx_export_check.py).
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$BUILD/tide" tests/interop/onnx_export_write.lua "$dir"
"$PYTHON" tests/interop/onnx_export_check.py "$dir"
echo "interop onnx export: ok"
