#!/bin/sh
# tests/sh/test_checkpoint_kill.sh — checkpoints survive SIGKILL: a child tide
# process saves a 16 MiB checkpoint in a loop (CheckpointManager, max_to_keep=2),
# is killed at a random moment, 30 times; after each kill the latest checkpoint
# and every one the index lists load completely with consistent values, and the
# next child resumes from them; a temporary file a kill left is removed by the
# next save (the manager's cleanup of stale temporaries). Run by tests/run.sh (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
KILLS=${KILLS:-30}
passed=0
failed=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Lua programs leave the collector's memory at exit: no leak reports (as tests/run.sh).
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
mid_write=0
last=0
seed=$$
# Past start-up (slower under the sanitizers), then anywhere in a save or between saves.
base=0.2; span=1.3
[ "${SANITIZE:-0}" = 1 ] && { base=1.0; span=2.5; }
i=0
while [ "$i" -lt "$KILLS" ]; do
  i=$((i + 1))
  "$BUILD/tide" tests/sh/checkpoint_kill.lua child "$dir" >/dev/null 2>&1 &
  pid=$!
  delay=$(awk -v s="$seed" -v i="$i" -v b="$base" -v w="$span" 'BEGIN { srand(s + i); printf "%.3f", b + w * rand() }')
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  # A temporary file left behind means the kill landed inside a write; the
  # next save removes it (its process is gone).
  if ls -A "$dir" | grep -q '\.tmp-'; then
    mid_write=$((mid_write + 1))
    "$BUILD/tide" tests/sh/checkpoint_kill.lua once "$dir" >/dev/null 2>&1
    if ls -A "$dir" | grep -q '\.tmp-'; then
      printf 'FAIL kill %d: the next save left the stale temporary files: %s\n' "$i" "$(ls -A "$dir" | tr '\n' ' ')"
      failed=$((failed + 1))
      rm -f "$dir"/.*.tmp-*
    fi
  fi
  out=$("$BUILD/tide" tests/sh/checkpoint_kill.lua check "$dir" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'FAIL kill %d (after %s s): the checkpoints do not load:\n%s\n' "$i" "$delay" "$out"
    failed=$((failed + 1))
  elif [ "$out" != none ] && [ "$out" -lt "$last" ]; then
    printf 'FAIL kill %d: the latest checkpoint went back from step %s to %s\n' "$i" "$last" "$out"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
    [ "$out" != none ] && last=$out
  fi
done
echo "checkpoint kill: $KILLS kills, $mid_write inside a write, last complete step $last"
# The test means something only if saves completed and some kills hit a write.
if [ "$last" -gt 0 ] && [ "$mid_write" -gt 0 ]; then passed=$((passed + 1)); else
  echo "FAIL no save completed ($last) or no kill landed inside a write ($mid_write)"
  failed=$((failed + 1))
fi
echo "sh checkpoint_kill: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
