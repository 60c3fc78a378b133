#!/bin/sh
# Runs every C test, shell check (tests/sh) and busted spec against the built
# engine, then prints one line "N passed, N failed" that counts all of them.
# Exit status is non-zero when anything failed. Called by `make test` (BUILD,
# SANITIZE set).
set -u
BUILD=${BUILD:-build}
export BUILD
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ "${SANITIZE:-0}" = 1 ]; then
  export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi

# Run one test program and add up its closing line: "c NAME: P passed, F
# failed" (C tests) or "sh NAME: ..." (shell checks of the tree and build).
# A crash without that line counts as one failure.
run_counted() {
  "$1" >"$log" 2>&1
  rc=$?
  cat "$log"
  line=$(grep -E '^(c|sh) [^:]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
    passed=$((passed + p))
    failed=$((failed + f))
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { echo "$1 exited with $rc"; failed=$((failed + 1)); }
  else
    echo "$1: crashed or printed no summary (exit $rc)"
    failed=$((failed + 1))
  fi
}

# The binaries come from tests/c/test_*.c, so a stale one from a removed source never runs.
for src in tests/c/test_*.c; do
  t="$BUILD/tests/$(basename "$src" .c)"
  [ -x "$t" ] || { echo "$t: not built"; failed=$((failed + 1)); continue; }
  run_counted "$t"
done
for t in tests/sh/test_*.sh; do
  run_counted "$t"
done

# busted specs run inside the tide program, so they test the real host. Files
# are not insulated: one tide library per Lua state, as in real programs
# (insulation reloads modules, which would make second copies of them).
# The Lua collector exits without freeing everything; leaks there are not tide's.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$BUILD"/tide tests/run_busted.lua --no-auto-insulate --output=plainTerminal tests/spec >"$log" 2>&1
rc=$?
cat "$log"
summary=$(grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' "$log" | tail -n 1)
if [ -n "$summary" ]; then
  s=$(echo "$summary" | sed -E 's/^([0-9]+) success.*/\1/')
  f=$(echo "$summary" | sed -E 's/^[0-9]+ success(es)? \/ ([0-9]+) failure.*/\2/')
  e=$(echo "$summary" | sed -E 's/.* \/ ([0-9]+) errors? \/.*/\1/')
  passed=$((passed + s))
  failed=$((failed + f + e))
else
  echo "busted: crashed or printed no summary (exit $rc)"
  failed=$((failed + 1))
fi

# The examples in docs/api.md run again and must print what the page shows.
TIDE="$BUILD/tide" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$BUILD"/tide docs/check_examples.lua >"$log" 2>&1
rc=$?
cat "$log"
line=$(grep -E '^[0-9]+ examples, [0-9]+ failed' "$log" | tail -n 1)
if [ -n "$line" ]; then
  n=$(echo "$line" | sed -E 's/^([0-9]+) examples, ([0-9]+) failed.*/\1/')
  f=$(echo "$line" | sed -E 's/^([0-9]+) examples, ([0-9]+) failed.*/\2/')
  passed=$((passed + n - f))
  failed=$((failed + f))
else
  echo "docs/check_examples.lua: crashed or printed no summary (exit $rc)"
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
