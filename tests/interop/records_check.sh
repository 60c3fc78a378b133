#!/bin/sh
# tests/interop/records_check.sh — TFRecords tide wrote (plain, GZIP, ZLIB; Examples
# of every feature kind from serialize_example) read by TF's tf.data.TFRecordDataset
# and tf.io.parse_example with the values tide put in.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$BUILD/tide" tests/interop/records_write.lua "$dir"
"$PYTHON" tests/interop/records_check.py "$dir"
echo "interop records: ok"
