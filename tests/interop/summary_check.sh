#!/bin/sh
# tests/interop/summary_check.sh — event files tide wrote read back by TensorBoard's
# event_accumulator and TF's TFRecordDataset (tests/interop/summary_check.py).
set -eu
"$PYTHON" tests/interop/summary_check.py "$BUILD/tide"
echo "interop summary: ok"
