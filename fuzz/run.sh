#!/bin/sh
# fuzz/run.sh — `make fuzz`: builds every fuzz/fuzz_<name>.c as a libFuzzer target
# (clang -fsanitize=fuzzer,address,undefined) and runs each for FUZZ_SECONDS (default
# 60); exits non-zero when any target finds a crash, a leak or an overread.
#
# A target is one file, fuzz/fuzz_<name>.c, defining LLVMFuzzerTestOneInput; its
# header comment names the engine files it tests on a line
#   * fuzz-sources: kernels/io/x.c kernels/io/y.c
# Those are compiled into the target with the sanitizers; the rest of the engine
# comes from $BUILD/libtide.so (make builds it first). A line
#   * fuzz-libs: hdf5 zip -lpng
# names what the sources need besides: pkg-config packages (or plain library
# names, given as -lNAME when pkg-config does not know them) and linker flags
# as they are. Optional beside it:
# fuzz/corpus/<name>/ (seed inputs, committed), fuzz/<name>.dict (tokens) and
# fuzz/<name>.lsan (LeakSanitizer suppressions, for leaks inside a system library)
# and fuzz/<name>.options (lines ASAN_OPTIONS=... and FUZZER_FLAGS=..., with why).
# The corpus grown while fuzzing lives in $BUILD/fuzz/corpus/<name>/, crash
# inputs in $BUILD/fuzz/crashes/<name>/. FUZZ_TARGETS="a b" runs only those.
set -u
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "make fuzz needs clang (apt-get install clang)" >&2; exit 2; }
[ -f "$BUILD/libtide.so" ] || { echo "make fuzz: $BUILD/libtide.so is missing (run make first)" >&2; exit 2; }

flags="-std=c11 -g -O1 -D_GNU_SOURCE -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Ikernels/include -I$BUILD/gen"
failed=""
targets=${FUZZ_TARGETS:-$(for f in fuzz/fuzz_*.c; do basename "$f" .c | sed 's/^fuzz_//'; done)}
for name in $targets; do
  src="fuzz/fuzz_$name.c"
  bin="$BUILD/fuzz/fuzz_$name"
  engine=$(sed -n 's/^.*fuzz-sources:[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*\(\*\/\)\{0,1\}$/\1/p' "$src" | sed 's/[[:space:]]*\*\/$//')
  libs=""
  for lib in $(sed -n 's/^.*fuzz-libs:[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*\(\*\/\)\{0,1\}$/\1/p' "$src" | sed 's/[[:space:]]*\*\/$//'); do
    case $lib in
      -*) libs="$libs $lib" ;;
      *) libs="$libs $(pkg-config --cflags --libs "$lib" 2>/dev/null || echo "-l$lib")" ;;
    esac
  done
  mkdir -p "$BUILD/fuzz/corpus/$name" "$BUILD/fuzz/crashes/$name"
  # shellcheck disable=SC2086
  "$CLANG" $flags -o "$bin" "$src" $engine -L"$BUILD" -ltide $libs -lcjson -lprotobuf-c -lz -lm -pthread -Wl,-rpath,"$(pwd)/$BUILD" ||
    { echo "fuzz $name: does not build"; failed="$failed $name"; continue; }
  seeds=""
  [ -d "fuzz/corpus/$name" ] && seeds="fuzz/corpus/$name"
  dict=""
  [ -f "fuzz/$name.dict" ] && dict="-dict=fuzz/$name.dict"
  lsan=""
  [ -f "fuzz/$name.lsan" ] && lsan="suppressions=fuzz/$name.lsan"
  asan=""
  extra=""
  if [ -f "fuzz/$name.options" ]; then
    asan=$(sed -n 's/^ASAN_OPTIONS=//p' "fuzz/$name.options")
    extra=$(sed -n 's/^FUZZER_FLAGS=//p' "fuzz/$name.options")
  fi
  echo "fuzz $name: $FUZZ_SECONDS s"
  # shellcheck disable=SC2086
  LSAN_OPTIONS="$lsan" ASAN_OPTIONS="$asan" "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 $extra \
    -artifact_prefix="$BUILD/fuzz/crashes/$name/" $dict "$BUILD/fuzz/corpus/$name" $seeds \
    >"$BUILD/fuzz/$name.log" 2>&1
  rc=$?
  tail -n 12 "$BUILD/fuzz/$name.log" | grep -E '^stat::|^#[0-9]+.*DONE|ERROR|SUMMARY' || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz $name: FAILED (exit $rc); see $BUILD/fuzz/$name.log and $BUILD/fuzz/crashes/$name/"
    failed="$failed $name"
  else
    echo "fuzz $name: no crash"
  fi
done
[ -z "$failed" ] || { echo "fuzz: failed:$failed"; exit 1; }
