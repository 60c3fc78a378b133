#!/bin/sh
# tests/sh/test_headers.sh — every public header (kernels/include/tide/*.h)
# compiles alone as C99 (-pedantic -Werror) and as C++11, and gives C
# linkage: a C++ file taking the address of each function it declares refers
# to each by its plain C name (without extern "C" the names come out mangled).
# Run by tests/run.sh from the repository root.
set -u
CC=${CC:-cc}
CXX=${CXX:-g++}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check WHAT COMMAND...: run it quietly; a failure prints its output.
check() {
  what=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then
    passed=$((passed + 1))
  else
    printf 'FAIL %s:\n' "$what"
    cat "$tmp/out"
    failed=$((failed + 1))
  fi
}

if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "FAIL no C++ compiler ($CXX): install g++"
  failed=$((failed + 1))
fi

for h in kernels/include/tide/*.h; do
  name=$(basename "$h")
  printf '#include "tide/%s"\n#include "tide/%s" /* twice: the include guard */\n' "$name" "$name" >"$tmp/alone.c"
  check "$name as C99" "$CC" -std=c99 -pedantic -Wall -Wextra -Werror -Ikernels/include -c "$tmp/alone.c" \
    -o "$tmp/alone.o"
  # The functions it declares (one `TIDE_API type name(` per declaration).
  fns=$(sed -n 's/^TIDE_API[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$h")
  {
    printf '#include "tide/%s"\n' "$name"
    printf 'void *const tide_header_fns[] = { 0'
    for f in $fns; do printf ', reinterpret_cast<void *>(&%s)' "$f"; done
    printf ' };\n'
  } >"$tmp/alone.cpp"
  check "$name as C++11" "$CXX" -std=c++11 -pedantic -Wall -Wextra -Werror -Ikernels/include -c "$tmp/alone.cpp" \
    -o "$tmp/alone_cpp.o"
  n=$(for f in $fns; do echo "$f"; done | sort -u | grep -c .)
  plain=$(nm -u "$tmp/alone_cpp.o" 2>/dev/null | grep -cE ' U tide_')
  mangled=$(nm -u "$tmp/alone_cpp.o" 2>/dev/null | grep -E ' U _Z' | grep tide_ | head -3)
  check "$name: C linkage of its $n functions from C++ ($plain plain; mangled: $mangled)" \
    test "$plain" -eq "$n" -a -z "$mangled"
done

echo "sh headers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
