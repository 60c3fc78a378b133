#!/bin/sh
# tests/interop/run.sh — `make interop`: every tests/interop/*_check.sh (live round
# trips between tide and Python's libraries: PYTHON names a venv's python with
# tensorflow-cpu, tensorboard and safetensors); ends with "N passed, N failed".
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/work/venv-tf/bin/python}
export BUILD PYTHON
[ -x "$PYTHON" ] || { echo "make interop needs a python with the interop packages: INTEROP_PYTHON=$PYTHON is missing" >&2; exit 2; }
passed=0
failed=0
for check in tests/interop/*_check.sh; do
  if "$check"; then
    passed=$((passed + 1))
  else
    echo "FAIL $check"
    failed=$((failed + 1))
  fi
done
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
