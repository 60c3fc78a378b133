#!/bin/sh
# tests/sh/test_distribute_faults.sh — a worker that dies or hangs ends the
# job, with a clear message, within a bound (never a hang): under mpirun -np 2,
# rank 1 SIGKILLs itself (mpirun ends the survivor at once, and the survivor
# says so), sleeps instead of an all-reduce, broadcast or barrier (rank 0
# times out after TIMEOUT s naming the collective, and the job ends), or raises
# a Lua error (the job ends at once, not after the timeout); rank 0 catching
# the timeout still cannot end the job normally; a stuck worker cannot hold
# the others at exit; a worker that ends early is not counted in another's all-reduce.
# Prints how long each job took after rank 1 misbehaved.
# Skips without mpirun or libtide_mpi.so. Run by tests/run.sh (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
if ! command -v mpirun >/dev/null 2>&1 || [ ! -f "$BUILD/libtide_mpi.so" ]; then
  echo "SKIP: every distribute faults check (no mpirun or no $BUILD/libtide_mpi.so: install Open MPI with tools/deps.sh and make)"
  echo "sh distribute_faults: 0 passed, 0 failed"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
TIMEOUT=3
# Start-up and teardown on this shared 2-core machine (slower under the sanitizers).
SLACK=20
[ "${SANITIZE:-0}" = 1 ] && SLACK=40

now() { date +%s.%N; }
mtime() { stat -c %.9Y "$1" 2>/dev/null || echo 0; }
elapsed() { echo "$2 $1" | awk '{ printf "%.2f", $1 - $2 }'; }

# run NAME MODE TIMEOUT BOUND PATTERN...: the job must fail (not by the
# outer timeout) within BOUND seconds of rank 1's misbehaving, with each
# PATTERN (grep -E) in its output.
run() {
  name=$1 mode=$2 t=$3 bound=$4
  shift 4
  rm -f "$dir"/started*
  start=$(now)
  timeout $((bound + SLACK + 30)) $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_faults.lua "$mode" "$t" "$dir" \
    >"$dir/log" 2>&1
  rc=$?
  end=$(now)
  since=$start
  [ -f "$dir/started1" ] && since=$(mtime "$dir/started1")
  took=$(elapsed "$since" "$end")
  echo "faults $name: the job ended $took s after rank 1 misbehaved (timeout $t s, exit status $rc)"
  ok=1
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then echo "FAIL $name: exit status $rc (0: ended normally; 124: hung)"; ok=0; fi
  [ -f "$dir/started1" ] || { echo "FAIL $name: rank 1 never got to misbehave"; ok=0; }
  if awk -v a="$took" -v b="$bound" 'BEGIN { exit !(a > b) }'; then
    echo "FAIL $name: took $took s, over the bound of $bound s"; ok=0
  fi
  for p in "$@"; do
    grep -Eq -- "$p" "$dir/log" || { echo "FAIL $name: no line matching: $p"; ok=0; }
  done
  if [ "$ok" -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); cat "$dir/log"; fi
}

T=$TIMEOUT
# SIGKILL: Open MPI's mpirun sees the death and ends the survivor with SIGTERM at once (no timeout needed).
run "killed worker" kill 60 $((SLACK)) \
  "process rank 1 .* exited on signal 9" \
  "tide: worker 0 of 2 stopped by mpirun \(SIGTERM\) while waiting in all-reduce"
# Alive but stuck: the survivor's collective times out, names itself, and the job ends.
run "stuck worker, all-reduce" stuck $T $((T + SLACK)) \
  "all-reduce \(MPI_Iallreduce\) timed out on worker 0 of 2 after 3\.[0-9] s: another worker died or stopped answering" \
  "tide: worker 1 of 2 stopped by mpirun \(SIGTERM\)"
run "stuck worker, broadcast" stuck-bcast $T $((T + SLACK)) "broadcast \(MPI_Ibcast\) timed out on worker 0 of 2 after 3\.[0-9] s"
run "stuck worker, barrier" stuck-barrier $T $((T + SLACK)) "barrier \(MPI_Ibarrier\) timed out on worker 0 of 2 after 3\.[0-9] s"
# A Lua error on one worker ends the job at once (tide_dist_abort), long before the 60 s timeout.
# (rank 0 may not be inside its all-reduce yet when mpirun stops it: "while waiting in" is not asserted)
run "failed worker" error 60 $((SLACK)) "worker 1 failed on purpose" \
  "tide: worker 0 of 2 stopped by mpirun \(SIGTERM\)"
# A caught timeout: later collectives are refused at once, and exit ends the job instead of finalizing.
run "caught timeout" caught $T $((T + SLACK)) "caught: .*all-reduce \(MPI_Iallreduce\) timed out" \
  "then: .*barrier \(MPI_Ibarrier\): not started on worker 0, because an earlier collective failed" \
  "tide: worker 0 of 2 ends the job \(MPI_Abort\): a collective failed earlier"
# A worker ends its script while another is stuck: the meeting at exit times out (no MPI_Finalize hang).
run "stuck worker at exit" exit-stuck $T $((T + SLACK)) \
  "tide: the barrier at exit \(MPI_Ibarrier\) timed out on worker 0 of 2 after 3\.[0-9] s.*ending the job \(MPI_Abort\)"
# A worker ends its script while another makes an all-reduce: the other's all-reduce must not meet
# its barrier at exit (Open MPI matched them and summed a contribution never made); every
# collective first agrees across the workers on what it is, so both name the mismatch.
run "worker ended early" early-exit 60 $((SLACK)) \
  "refused: .*all-reduce \(MPI_Iallreduce\): collective #2 differs across the workers .*worker 0: an all-reduce of 10 float32; worker 1: the barrier at exit" \
  "tide: the barrier at exit \(MPI_Ibarrier\): collective #2 differs across the workers .*ending the job \(MPI_Abort\)"
# (Open MPI's own "MPI_ABORT was invoked" banner is not asserted: its
# show_help sometimes loses it, "ORTE_ERROR_LOG: Data unpack ...".)
# TIDE_DIST_TIMEOUT sets the default; a bad value is refused at start.
TIDE_DIST_TIMEOUT=2 run "TIDE_DIST_TIMEOUT" stuck "" $((2 + SLACK)) "timed out on worker 0 of 2 after 2\.[0-9] s.*the timeout is 2 s"
if TIDE_DIST_TIMEOUT=soon timeout 60 $MPIRUN -np 2 "$BUILD/tide" -e 'require("tide").distribute.num_workers()' >"$dir/log" 2>&1; then
  echo "FAIL a bad TIDE_DIST_TIMEOUT was accepted"; failed=$((failed + 1))
elif grep -q "TIDE_DIST_TIMEOUT must be a positive number of seconds (or inf), got 'soon'" "$dir/log"; then
  passed=$((passed + 1))
else
  echo "FAIL a bad TIDE_DIST_TIMEOUT: no clear message:"; cat "$dir/log"; failed=$((failed + 1))
fi

echo "sh distribute_faults: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
