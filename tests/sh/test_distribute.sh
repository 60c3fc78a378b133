#!/bin/sh
# tests/sh/test_distribute.sh — MultiWorkerMirroredStrategy over Open MPI: a
# small MLP trained 30 steps by 2 workers (mpirun -np 2, each on its half of
# every global batch) ends with the same weights, to float32 rounding, as 1
# worker on the whole batch (also with experimental_distribute_dataset, with
# the step traced, and with model:fit over tensors, a dataset and files); both
# workers hold identical weights and log 1 worker's metrics; mutations (no
# all-reduce, per-worker metrics) are caught. Skips,
# saying so, without mpirun or libtide_mpi.so. Run by tests/run.sh (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
if ! command -v mpirun >/dev/null 2>&1 || [ ! -f "$BUILD/libtide_mpi.so" ]; then
  echo "SKIP: every distribute check (no mpirun or no $BUILD/libtide_mpi.so: install Open MPI with tools/deps.sh and make)"
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
# The all_reduce_sum op itself: buckets, dtypes, views, traced, its gradient.
check "all_reduce_sum across 2 workers" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_collective.lua
# The custom loop again with the step traced (tide.trace): the all-reduce is
# a graph node, one MPI call per step for every gradient.
check "2 workers, traced step" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_mlp.lua "$dir/tr" "$STEPS" traced
cp "$dir/log" "$dir/traced.log"
grep '^step_ms\|^mpi_calls' "$dir/traced.log" | sed 's/^/2 workers traced /'
check "traced step: one MPI call per step" grep -qx 'mpi_calls_per_step: 1.00' "$dir/traced.log"
check "traced step = 1 worker" compare "$dir/one" "$dir/tr" 1e-5
check "traced step: the workers hold equal weights" compare "$dir/tr" "$dir/tr.rank1" 0

# fit, its step traced: 1 worker and 2 (each its rows of every shuffled
# global batch, the last split unevenly) end with the same weights; both
# workers log the loss and accuracy 1 worker logs (the metrics' states are
# summed over the workers before result()); only the chief's CSVLogger writes.
fit_pair() { # name, mode: runs 1 and 2 workers into $dir/<name>1, $dir/<name>2
  mkdir -p "$dir/${1}1" "$dir/${1}2"
  check "fit $2, 1 worker" "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/${1}1/w" "$dir/${1}1" "$2"
  check "fit $2, 2 workers" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/${1}2/w" "$dir/${1}2" "$2"
  check "fit $2: 2 workers = 1 worker" compare "$dir/${1}1/w.rank0" "$dir/${1}2/w.rank0" 1e-5
  check "fit $2: the workers hold equal weights" compare "$dir/${1}2/w.rank0" "$dir/${1}2/w.rank1" 0
  check "fit $2: the workers log equal losses" compare "$dir/${1}2/w.loss0" "$dir/${1}2/w.loss1" 0
  check "fit $2: the logged loss is 1 worker's" compare "$dir/${1}1/w.loss0" "$dir/${1}2/w.loss0" 1e-5
  check "fit $2: the logged accuracy is 1 worker's" compare "$dir/${1}1/w.acc0" "$dir/${1}2/w.acc0" 1e-6
}
fit_pair fit tensors
check "fit: the step is traced" grep -qx traced "$dir/fit2/w.info0"
check "fit: only the chief's CSVLogger writes" test -s "$dir/fit2/log0.csv" -a ! -e "$dir/fit2/log1.csv"
fit_pair fite eager
check "fit eager: the step is eager" grep -qx eager "$dir/fite2/w.info0"
# fit(dataset): the global batches as a dataset, sharded by data.
fit_pair fitd dataset
check "fit(dataset): sharded by data" grep -qx DATA "$dir/fitd2/w.info0"
# fit(TextLineDataset over 4 files): sharded by file, 2 of them each; the
# shards end at different steps (51 and 50 batches), which the workers agree on.
mkdir -p "$dir/fitf"
check "fit(files), 2 workers" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/fitf/w" "$dir/fitf" files
check "fit(files): sharded by file" grep -qx FILE "$dir/fitf/w.info0"
check "fit(files): the workers hold equal weights" compare "$dir/fitf/w.rank0" "$dir/fitf/w.rank1" 0
check "fit(files): the shards are disjoint and hold every line" sh -c \
  "[ \$(cat '$dir/fitf/w.ids0' '$dir/fitf/w.ids1' | sort -n | uniq | wc -l) -eq 201 ] &&
   [ \$(cat '$dir/fitf/w.ids0' '$dir/fitf/w.ids1' | wc -l) -eq 201 ] &&
   [ \$(wc -l < '$dir/fitf/w.ids0') -eq 101 ]"

# Mutations: each must break the check that guards it.
fails() { ! "$@"; }
mkdir -p "$dir/mut1" "$dir/mut2"
check "mutation: fit without the all-reduce runs" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/mut1/w" "$dir/mut1" tensors no_all_reduce
check "mutation: without the all-reduce, 2 workers != 1 worker" fails compare "$dir/fit1/w.rank0" "$dir/mut1/w.rank0" 1e-5
check "mutation: fit with local metrics runs" $MPIRUN -np 2 "$BUILD/tide" tests/sh/distribute_fit.lua "$dir/mut2/w" "$dir/mut2" tensors local_metrics
check "mutation: local metrics are not 1 worker's" fails compare "$dir/fit1/w.loss0" "$dir/mut2/w.loss0" 1e-5

echo "sh distribute: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
