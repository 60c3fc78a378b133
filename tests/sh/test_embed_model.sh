#!/bin/sh
# tests/sh/test_embed_model.sh — end to end: a Lua script trains a Keras model
# and saves it (model:save) and a traced function (tide.saved_model.save); a C
# program loads each with tide_model_load and its outputs must match the Lua
# predictions (tests/sh/embed_model.lua, test_model --predict).
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Lua programs: the collector exits without freeing everything (tests/run.sh says why).
if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$BUILD/tide" tests/sh/embed_model.lua "$dir"; then
  passed=$((passed + 1))
else
  echo "FAIL tests/sh/embed_model.lua"
  failed=$((failed + 1))
fi
for m in keras traced; do
  if "$BUILD/tests/test_model" --predict "$dir/$m" "$dir/$m.txt"; then
    passed=$((passed + 1))
  else
    echo "FAIL $m: the C outputs differ from Lua's (or the model did not load)"
    failed=$((failed + 1))
  fi
done

echo "sh embed_model: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
