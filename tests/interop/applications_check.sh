#!/bin/sh
# tests/interop/applications_check.sh — full-size keras.applications models made by the Keras at
# hand (tests/fixtures/keras/apps_gen.py full, into a temporary folder: ResNet50, MobileNetV2,
# VGG16, EfficientNetB0 with random weights in Keras 3's and the legacy layout) loaded into
# tide.applications' models, whose outputs must be Keras's: tests/interop/applications_check.lua.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
APPS_GEN_OUT="$dir" "$PYTHON" tests/fixtures/keras/apps_gen.py full >"$dir/gen.log" 2>&1 || { cat "$dir/gen.log"; exit 1; }
"$BUILD/tide" tests/interop/applications_check.lua "$dir"
echo "interop applications: ok"
