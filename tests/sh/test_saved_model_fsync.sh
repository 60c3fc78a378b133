#!/bin/sh
# tests/sh/test_saved_model_fsync.sh — a SavedModel is durable before it is in
# place: under strace, saving a traced function and a Keras model (each into a
# new folder, then replacing it) fsyncs every file of the model (saved_model.json,
# variables and constants), then the model's folder, before the folder is moved
# into place, and the parent folder after (tests/sh/saved_model_fsync.lua
# saves and reads the trace). Needs strace; without it the check is skipped, named.
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
if ! command -v strace >/dev/null 2>&1; then
  echo "SKIP 1: strace is not installed (the SavedModel fsync check)"
  echo "sh saved_model_fsync: 0 passed, 0 failed"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! strace -f -qq -e trace=openat,fsync,fdatasync,close,rename,renameat,renameat2 -o "$dir/strace" \
    "$BUILD/tide" tests/sh/saved_model_fsync.lua save "$dir" >"$dir/out" 2>&1; then
  echo "FAIL the program failed:"; cat "$dir/out"; failed=$((failed + 1))
else
  "$BUILD/tide" tests/sh/saved_model_fsync.lua check "$dir/strace" >"$dir/verdict" 2>&1
  if grep -qx "models moved into place: 4" "$dir/verdict" && ! grep -q "PROBLEM" "$dir/verdict"; then
    passed=$((passed + 1))
  else
    echo "FAIL SavedModel durability:"; cat "$dir/verdict"
    failed=$((failed + 1))
  fi
fi
echo "sh saved_model_fsync: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
