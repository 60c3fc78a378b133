#!/bin/sh
# tests/sh/test_distribute.sh — MultiWorkerMirroredStrategy over Open MPI: a
# small MLP trained 30 steps by 2 workers (mpirun -np 2, each on its half of
# every global batch) ends with the same weights, to float32 rounding, as 1
# worker on the whole batch (also with experimental_distribute_dataset, and
# with model:fit); and both workers hold identical weights. Skips,
# saying so, without mpirun or libtide_mpi.so. Run by tests/run.sh (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
if ! command -v mpirun >/dev/null 2>&1 || [ ! -f "$BUILD/libtide_mpi.so" ]; then
  echo "distribute: skipped (no mpirun or no $BUILD/libtide_mpi.so: install Open MPI with tools/deps.sh and make)"
  echo "sh distribute: 0 passed, 0 failed"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
# Root may run mpirun only when told; this 2-core machine needs --oversubscribe.
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
STEPS=30

check() { # name, command...
  name=$1; shift
  if "$@" >"$dir/log" 2>&1; then passed=$((passed + 1)); else
    echo "FAIL $name:"; cat "$dir/log"; failed=$((failed + 1))
  fi
}

# max |a - b| / max(1, |a|) over two files of one number per line.
compare() { # a b tolerance
  [ -s "$1" ] && [ -s "$2" ] || { echo "missing or empty: $1 or $2"; return 1; }
  [ "$(wc -l < "$1")" -eq "$(wc -l < "$2")" ] || { echo "different weight counts: $1, $2"; return 1; }
  paste "$1" "$2" | awk -v tol="$3" '
    { d = $1 - $2; if (d < 0) d = -d; s = $1 < 0 ? -$1 : $1; if (s < 1) s = 1; r = d / s; if (r > worst) worst = r; n++ }
    END { printf "%d weights, worst relative difference %.3g (tolerance %g)\n", n, worst, tol; exit !(n > 0 && worst <= tol) }'
}

check "1 worker" "$BUILD/tide" tests/sh/distribute_mlp.lua "$dir/one" "$STEPS"
grep '^step_ms' "$dir/log" | sed 's/^/1 worker /'
check "2 workers" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_mlp.lua "$dir/two" "$STEPS"
grep '^step_ms' "$dir/log" | sed 's/^/2 workers /'
# The workers mirror each other exactly (same sums, same updates).
check "2 workers hold equal weights" compare "$dir/two" "$dir/two.rank1" 0
# 1 vs 2 workers: the sums are grouped differently, so float32 rounding differs.
check "2 workers = 1 worker on the global batch" compare "$dir/one" "$dir/two" 1e-5
# The same with the global batches as a dataset each worker takes its part of.
check "2 workers, distributed dataset" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_mlp.lua "$dir/ds" "$STEPS" dataset
check "distributed dataset = 1 worker" compare "$dir/one" "$dir/ds" 1e-5
# Which rows each worker's part of a distributed dataset holds; uneven splits refused.
check "distributed datasets" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_datasets.lua
# fit: 1 worker and 2 (each its rows of every shuffled global batch, the
# last split unevenly) end with the same weights; the workers log the same
# loss, near 1 worker's (each averages its own batches); only the chief's CSVLogger writes.
mkdir -p "$dir/fit1" "$dir/fit2"
check "fit, 1 worker" "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/fit1/w" "$dir/fit1"
check "fit, 2 workers" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/fit2/w" "$dir/fit2"
check "fit: 2 workers = 1 worker" compare "$dir/fit1/w.rank0" "$dir/fit2/w.rank0" 1e-5
check "fit: the workers hold equal weights" compare "$dir/fit2/w.rank0" "$dir/fit2/w.rank1" 0
check "fit: the workers log equal losses" compare "$dir/fit2/w.loss0" "$dir/fit2/w.loss1" 0
check "fit: the logged loss is near 1 worker's" compare "$dir/fit1/w.loss0" "$dir/fit2/w.loss0" 1e-3
check "fit: only the chief's CSVLogger writes" test -s "$dir/fit2/log0.csv" -a ! -e "$dir/fit2/log1.csv"

echo "sh distribute: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
