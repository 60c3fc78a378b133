#!/bin/sh
# tests/sh/test_distribute_resume.sh — kill and resume under mpirun -np 2:
# two workers train with BackupAndRestore; worker 1 is SIGKILLed in the
# middle of epoch 2; the job ends with a clear message within a bound; run
# again, it resumes from the backup of epoch 1's end (runs epochs 2 and 3
# only) and ends with the same weights as an uninterrupted 2-worker run, on
# both workers, and deletes its backup. Skips without mpirun or
# libtide_mpi.so. Run by tests/run.sh (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
if ! command -v mpirun >/dev/null 2>&1 || [ ! -f "$BUILD/libtide_mpi.so" ]; then
  echo "SKIP: every distribute resume check (no mpirun or no $BUILD/libtide_mpi.so: install Open MPI with tools/deps.sh and make)"
  echo "sh distribute_resume: 0 passed, 0 failed"
  exit 0
fi
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
BOUND=20 # seconds from the kill to the job's end (mpirun notices the death at once; this machine is shared)
[ "${SANITIZE:-0}" = 1 ] && BOUND=40

check() { # name, command...
  name=$1; shift
  if "$@" >"$dir/log" 2>&1; then passed=$((passed + 1)); else
    echo "FAIL $name:"; cat "$dir/log"; failed=$((failed + 1))
  fi
}
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# The two files hold the same numbers (bit for bit, as printed with %.9g).
same() { [ -s "$1" ] && cmp -s "$1" "$2"; }

check "uninterrupted, 2 workers" timeout 300 $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_resume.lua \
  "$dir/ref" "$dir/backup-ref"
check "uninterrupted: no backup left" test ! -e "$dir/backup-ref"

# Killed: worker 1 writes its pid mid-epoch 2 and waits; SIGKILL it there.
timeout 300 $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_resume.lua "$dir/run" "$dir/backup" "$dir/pid1" \
  >"$dir/killed.log" 2>&1 &
job=$!
waited=0
while [ ! -s "$dir/pid1" ] && [ "$waited" -lt 3000 ]; do sleep 0.1; waited=$((waited + 1)); done
if [ -s "$dir/pid1" ]; then
  pid=$(cat "$dir/pid1")
  sleep 0.5 # worker 0 is then surely waiting in its next all-reduce
  start=$(date +%s.%N)
  kill -9 "$pid"
  wait "$job"
  rc=$?
  took=$(echo "$(date +%s.%N) $start" | awk '{ printf "%.2f", $1 - $2 }')
  pid=
  echo "resume: the job ended $took s after worker 1 was killed (exit status $rc)"
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && awk -v a="$took" -v b="$BOUND" 'BEGIN { exit !(a <= b) }'; then ok
  else bad "the killed job: exit status $rc after $took s (bound $BOUND s)"; cat "$dir/killed.log"; fi
  if grep -q "process rank 1 .* exited on signal 9" "$dir/killed.log" &&
     grep -q "tide: worker 0 of 2 stopped by mpirun (SIGTERM) while waiting in all-reduce" "$dir/killed.log"; then ok
  else bad "the killed job's messages:"; cat "$dir/killed.log"; fi
else
  bad "worker 1 never reached the kill point"; cat "$dir/killed.log"
  kill "$job" 2>/dev/null
  wait "$job"
fi
check "the killed job left a backup" test -s "$dir/backup/latest.safetensors"

# Again: resumes at epoch 2 and ends as the uninterrupted run.
check "resumed, 2 workers" timeout 300 $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_resume.lua "$dir/run" "$dir/backup"
check "resumed at epoch 2 (worker 0)" grep -qx "2 3" "$dir/run.epochs0"
check "resumed at epoch 2 (worker 1)" grep -qx "2 3" "$dir/run.epochs1"
check "resumed = uninterrupted (worker 0)" same "$dir/ref.rank0" "$dir/run.rank0"
check "resumed = uninterrupted (worker 1)" same "$dir/ref.rank1" "$dir/run.rank1"
check "the uninterrupted workers agree" same "$dir/ref.rank0" "$dir/ref.rank1"
check "the finished job deleted its backup" test ! -e "$dir/backup"

echo "sh distribute_resume: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
