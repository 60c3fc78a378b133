#!/bin/sh
# Runs every C test, every shell check of the tree and build (tests/sh), every busted spec file (each in a process of its own, so
# a crash names its file) and the docs examples against the built engine; ends
# with one line per kind of test and then "N passed, N failed" counting them all.
# Exit status is non-zero when anything failed. Called by `make test` (BUILD,
# SANITIZE set). With arguments (spec files or folders), runs only those specs:
#   tests/run.sh tests/spec/ops/math_spec.lua tests/spec/grad
# `tests/run.sh --c-only` runs the C tests alone. TIDE_TEST_EXEC, when set, is a
# program the C tests and the tide program run under (tools/cross_aarch64.sh
# sets qemu-aarch64-static where no binfmt handler runs foreign binaries).
# Every program and spec file runs under a time limit (TIDE_TEST_TIMEOUT
# seconds, default 900, four times that under SANITIZE): one that hangs fails,
# named, instead of stalling the suite. Checks that cannot run here (no GPU,
# no mpirun, no strace) are printed by their program as one line
# "SKIP N: why" (N, the checks not run, may be left out): counted apart, never
# as passes, and named again in the summary.
set -u
BUILD=${BUILD:-build}
export BUILD
log=$(mktemp)
# What failed, said again just above the summary: a CI log is often read from
# its tail, and the full output of a failing file scrolls far above it.
failures=$(mktemp)
# What was skipped, one line per SKIP line: "  program: N: why".
skips=$(mktemp)
trap 'rm -f "$log" "$failures" "$skips"' EXIT
# Keeps the first lines of a failing file's failure and error blocks.
remember_failures() {
  { echo "== $1"
    sed -n '/^\(Failure\|Error\) -> /,$p' "$log" | head -n 60
  } >>"$failures"
}
# A C test's or shell check's FAIL lines (or, when it printed no summary, its last lines).
remember_fail_lines() {
  if ! grep -qE '^(c|sh) [^:]+: [0-9]+ passed, [0-9]+ failed$' "$log"; then
    { echo "== $1: crashed or printed no summary; its last lines:"; tail -n 20 "$log"; } >>"$failures"
  elif grep -q '^FAIL' "$log"; then
    { echo "== $1"; grep '^FAIL' "$log" | head -n 30; } >>"$failures"
  fi
}

if [ "${SANITIZE:-0}" = 1 ]; then
  export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
# Lua programs: the Lua collector exits without freeing everything, and those
# leaks are not tide's (the C tests keep leak detection).
LUA_ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# The time limit of one program or spec file; `timeout` exits 124 when it
# struck (TERM, then KILL 10 s later for one that ignores TERM).
if [ -n "${TIDE_TEST_TIMEOUT:-}" ]; then limit=$TIDE_TEST_TIMEOUT
elif [ "${SANITIZE:-0}" = 1 ]; then limit=3600
else limit=900; fi
timed() { timeout -k 10 "$limit" "$@"; }
# Say that `$1` ran past the limit (its exit status $2 is 124 or 137).
timed_out() {
  echo "$1: timed out after ${limit}s (TIDE_TEST_TIMEOUT): killed"
  { echo "== $1: timed out after ${limit}s; its last lines:"; tail -n 20 "$log"; } >>"$failures"
}

# Count the SKIP lines of the program `$1` that wrote $log.
skip_checks=0
note_skips() {
  grep -E '^SKIP( [0-9]+)?: ' "$log" | sed "s|^SKIP|  $1:|" >>"$skips"
  n=$(sed -nE 's/^SKIP ([0-9]+): .*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
  skip_checks=$((skip_checks + n))
}

# The "P passed, F failed" numbers of a summary line.
passed_of() { echo "$1" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/'; }
failed_of() { echo "$1" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/'; }

# C tests print "c NAME: P passed, F failed"; a crash without that line counts
# as one failure. The binaries come from tests/c/test_*.c, so a stale one from
# a removed source never runs.
c_passed=0; c_failed=0; c_programs=0
run_c_tests() {
  for src in tests/c/test_*.c; do
    t="$BUILD/tests/$(basename "$src" .c)"
    c_programs=$((c_programs + 1))
    [ -x "$t" ] || { echo "$t: not built"; c_failed=$((c_failed + 1)); continue; }
    # shellcheck disable=SC2086
    timed ${TIDE_TEST_EXEC:-} "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    note_skips "$t"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then timed_out "$t" "$rc"; c_failed=$((c_failed + 1)); continue; fi
    remember_fail_lines "$t"
    line=$(grep -E '^c [^:]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ -n "$line" ]; then
      p=$(passed_of "$line"); f=$(failed_of "$line")
      c_passed=$((c_passed + p)); c_failed=$((c_failed + f))
      [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { echo "$t exited with $rc"; c_failed=$((c_failed + 1)); }
    else
      echo "$t: crashed or printed no summary (exit $rc)"
      c_failed=$((c_failed + 1))
    fi
  done
}

# Shell checks of the tree and the build (tests/sh/test_*.sh) print
# "sh NAME: P passed, F failed", counted as C tests are.
sh_passed=0; sh_failed=0; sh_programs=0
run_sh_tests() {
  for t in tests/sh/test_*.sh; do
    sh_programs=$((sh_programs + 1))
    timed "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    note_skips "$t"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then timed_out "$t" "$rc"; sh_failed=$((sh_failed + 1)); continue; fi
    remember_fail_lines "$t"
    line=$(grep -E '^sh [^:]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ -n "$line" ]; then
      p=$(passed_of "$line"); f=$(failed_of "$line")
      sh_passed=$((sh_passed + p)); sh_failed=$((sh_failed + f))
      [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { echo "$t exited with $rc"; sh_failed=$((sh_failed + 1)); }
    else
      echo "$t: crashed or printed no summary (exit $rc)"
      sh_failed=$((sh_failed + 1))
    fi
  done
}

# busted specs run inside the tide program, so they test the real host; one
# process per file (files are not insulated: one tide library per Lua state,
# as in real programs). A file's pending tests count as failed: a test that
# cannot run is not a pass. A file that crashes or prints no summary counts
# as one failure, named.
s_passed=0; s_failed=0; s_errors=0; s_pending=0; s_crashed=0; s_files=0
bad_files=""
run_specs() {
  files=$(for a in "$@"; do
            if [ -d "$a" ]; then find "$a" -name '*_spec.lua' -type f; else echo "$a"; fi
          done | LC_ALL=C sort)
  for file in $files; do
    s_files=$((s_files + 1))
    ASAN_OPTIONS="$LUA_ASAN_OPTIONS" \
      timed ${TIDE_TEST_EXEC:-} "$BUILD"/tide tests/run_busted.lua --output=plainTerminal "$file" >"$log" 2>&1
    rc=$?
    note_skips "$file"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      cat "$log"
      timed_out "$file" "$rc"
      s_crashed=$((s_crashed + 1))
      bad_files="$bad_files $file(timed out)"
      continue
    fi
    summary=$(grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' "$log" | tail -n 1)
    if [ -z "$summary" ]; then
      cat "$log"
      echo "$file: crashed or printed no summary (exit $rc)"
      { echo "== $file: crashed or printed no summary (exit $rc); its last lines:"; tail -n 20 "$log"; } >>"$failures"
      s_crashed=$((s_crashed + 1))
      bad_files="$bad_files $file(crashed)"
      continue
    fi
    s=$(echo "$summary" | sed -E 's/^([0-9]+) success.*/\1/')
    f=$(echo "$summary" | sed -E 's/^[0-9]+ success(es)? \/ ([0-9]+) failure.*/\2/')
    e=$(echo "$summary" | sed -E 's/.* \/ ([0-9]+) errors? \/.*/\1/')
    pd=$(echo "$summary" | sed -E 's/.* \/ ([0-9]+) pending.*/\1/')
    s_passed=$((s_passed + s)); s_failed=$((s_failed + f)); s_errors=$((s_errors + e)); s_pending=$((s_pending + pd))
    grep -E '^SKIP( [0-9]+)?: ' "$log"
    if [ "$f" -ne 0 ] || [ "$e" -ne 0 ] || [ "$pd" -ne 0 ]; then
      cat "$log"
      remember_failures "$file"
      bad_files="$bad_files $file"
    elif [ "$rc" -ne 0 ]; then
      cat "$log"
      echo "$file: exited with $rc after its tests passed"
      s_crashed=$((s_crashed + 1))
      bad_files="$bad_files $file(exit $rc)"
    else
      echo "$file: $s passed"
    fi
  done
}

# The examples in docs/api.md run again and must print what the page shows.
d_passed=0; d_failed=0
run_doc_examples() {
  TIDE="$BUILD/tide" ASAN_OPTIONS="$LUA_ASAN_OPTIONS" timed "$BUILD"/tide docs/check_examples.lua >"$log" 2>&1
  rc=$?
  cat "$log"
  line=$(grep -E '^[0-9]+ examples, [0-9]+ failed' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    n=$(echo "$line" | sed -E 's/^([0-9]+) examples, ([0-9]+) failed.*/\1/')
    f=$(echo "$line" | sed -E 's/^([0-9]+) examples, ([0-9]+) failed.*/\2/')
    d_passed=$((n - f)); d_failed=$f
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { echo "docs/check_examples.lua exited with $rc"; d_failed=$((d_failed + 1)); }
  else
    echo "docs/check_examples.lua: crashed or printed no summary (exit $rc)"
    d_failed=1
  fi
}

c_only=0
if [ "${1:-}" = --c-only ]; then
  c_only=1; shift
  run_c_tests
elif [ $# -gt 0 ]; then
  run_specs "$@"
else
  run_c_tests
  run_sh_tests
  run_specs tests/spec
  run_doc_examples
fi

spec_bad=$((s_failed + s_errors + s_pending + s_crashed))
if [ -s "$failures" ]; then
  echo
  echo "what failed (repeated from above):"
  cat "$failures"
fi
echo
{ [ $# -eq 0 ] || [ $c_only = 1 ]; } && echo "C tests: $c_passed assertions passed, $c_failed failed ($c_programs programs)"
[ $# -gt 0 ] || [ $c_only = 1 ] || echo "shell checks: $sh_passed passed, $sh_failed failed ($sh_programs scripts)"
[ $c_only = 1 ] || echo "specs: $s_passed passed, $spec_bad failed ($s_failed failures, $s_errors errors, $s_pending pending," \
  "$s_crashed crashed, in $s_files files)"
[ -n "$bad_files" ] && echo "spec files that failed:$bad_files"
if [ -s "$skips" ]; then
  echo "skipped (could not run here; not counted as passed): $skip_checks checks counted, in $(cut -d: -f1 "$skips" |
    sort -u | wc -l) programs or files:"
  cat "$skips"
fi
[ $# -gt 0 ] || [ $c_only = 1 ] || echo "doc examples: $d_passed passed, $d_failed failed"
passed=$((c_passed + sh_passed + s_passed + d_passed))
failed=$((c_failed + sh_failed + spec_bad + d_failed))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
