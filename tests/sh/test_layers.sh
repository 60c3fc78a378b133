#!/bin/sh
# tests/sh/test_layers.sh — the floors of the house (DESIGN §1): no #include
# points up or sideways between folders, and libtidevm needs no readline.
# Run by tests/run.sh from the repository root (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
passed=0
failed=0

# forbid FOLDER PATTERN WHY: no file under FOLDER includes a header whose
# path matches PATTERN (an extended regex, anchored after `#include "` or `<`).
forbid() {
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]($2)" "$1" --include='*.c' --include='*.h')
  if [ -z "$hits" ]; then
    passed=$((passed + 1))
  else
    printf 'FAIL %s must not include %s (%s):\n%s\n' "$1" "$2" "$3" "$hits"
    failed=$((failed + 1))
  fi
}

forbid kernels/core '([^">]*/)?(cpu|graph)/' 'core reaches kernels only through the op table, and graph through the recorder hook'
forbid kernels/cpu '([^">]*/)?graph/' 'backends sit below graphs'
forbid kernels '(lua|lauxlib|lualib|luajit)\.h|([^">]*/)?(vm|repl|cli|bindings)/' 'the engine never calls Lua'
forbid vm '([^">]*/)?(repl|cli|readline)/' 'libtidevm embeds in programs that have no REPL'
forbid repl '([^">]*/)?cli/' 'the program sits on top: cli -> repl -> vm'

# The same for the built library: a host that embeds tide links no readline.
if [ ! -f "$BUILD/libtidevm.so" ]; then
  echo "FAIL $BUILD/libtidevm.so: not built"
  failed=$((failed + 1))
elif readelf -d "$BUILD/libtidevm.so" | grep -q 'NEEDED.*readline'; then
  echo "FAIL $BUILD/libtidevm.so links readline"
  failed=$((failed + 1))
else
  passed=$((passed + 1))
fi

echo "sh layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
