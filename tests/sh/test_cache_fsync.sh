#!/bin/sh
# tests/sh/test_cache_fsync.sh — ds:cache(filename) makes its file durable:
# under strace, the temporary file is fsynced before it is renamed into place,
# and the folder is fsynced after the rename, for the C engine's cache stage
# and the Lua engine's (both write through kernels/data/cache_file.c). Needs
# strace; without it the check says so and counts nothing as passed.
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
if ! command -v strace >/dev/null 2>&1; then
  echo "SKIP 2: strace is not installed (the cache's 2 fsync checks)"
  echo "sh cache_fsync: 0 passed, 0 failed"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for engine in c lua; do
  path="$dir/$engine.cache"
  trace="$dir/$engine.strace"
  if ! strace -f -qq -e trace=openat,fsync,fdatasync,rename,renameat,renameat2 -o "$trace" \
      "$BUILD/tide" tests/sh/cache_fsync.lua "$path" "$engine" >"$dir/out" 2>&1; then
    echo "FAIL $engine: the program failed:"; cat "$dir/out"
    failed=$((failed + 1)); continue
  fi
  # The order: openat(tmp) = fd ... fsync(fd) ... rename(tmp, path) ... openat(dir) = dfd ... fsync(dfd)
  verdict=$(awk -v path="$path" -v dir="$dir" '
    /openat\(.*\.tmp-/ && / = [0-9]+$/ { n = split($0, a, " = "); tmpfd = a[n]; next }
    /fsync\(/ { match($0, /fsync\([0-9]+/); fd = substr($0, RSTART + 6, RLENGTH - 6)
                if (fd == tmpfd && !renamed) synced = 1
                if (fd == dirfd && renamed) dirsynced = 1; next }
    /rename/ && index($0, "\"" path "\"") && / = 0$/ { if (synced) renamed = 1; else early = 1; next }
    /openat\(/ && index($0, "\"" dir "\"") && /O_DIRECTORY/ && / = [0-9]+$/ { n = split($0, a, " = "); dirfd = a[n]; next }
    END {
      if (early) print "renamed before the temporary file was fsynced"
      else if (!renamed) print "no fsync of the temporary file followed by its rename into place"
      else if (!dirsynced) print "the folder was not fsynced after the rename"
      else print "ok"
    }' "$trace")
  if [ "$verdict" = ok ]; then passed=$((passed + 1)); else
    echo "FAIL $engine engine: $verdict; trace:"; grep -E 'tmp-|fsync|rename|O_DIRECTORY' "$trace" | tail -n 20
    failed=$((failed + 1))
  fi
done
echo "sh cache_fsync: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
