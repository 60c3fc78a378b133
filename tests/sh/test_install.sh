#!/bin/sh
# tests/sh/test_install.sh — `make install` into a temporary prefix works as a
# user's install: the installed tide runs (on the installed Lua library, from
# any folder), examples/embed builds with ONE cc line through
# `pkg-config --cflags --libs tide` and runs a few frames of a model trained by
# the installed tide; DESTDIR stages under another root; a relative PREFIX is
# refused. Run by tests/run.sh from the repository root (BUILD, SANITIZE set).
set -u
BUILD=${BUILD:-build}
SANITIZE=${SANITIZE:-0}
# Lua programs: the Lua collector exits without freeing everything (as
# tests/run.sh); game_loop, plain C, keeps leak detection.
C_ASAN_OPTIONS=${ASAN_OPTIONS:-}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out.txt
root=$(pwd)

check() { # check NAME COMMAND...: a pass when the command succeeds
  name=$1
  shift
  if "$@" >"$out" 2>&1; then
    passed=$((passed + 1))
  else
    printf 'FAIL %s\n' "$name"
    sed 's/^/  | /' "$out" | tail -n 20
    failed=$((failed + 1))
  fi
}

install_into() { # install_into PREFIX [DESTDIR]
  make --no-print-directory -s install BUILD="$BUILD" SANITIZE="$SANITIZE" PREFIX="$1" DESTDIR="${2:-}"
}

prefix=$tmp/prefix
check "make install PREFIX=$prefix" install_into "$prefix"

files_present() {
  for f in bin/tide lib/libtide.so lib/libtide_formats.so lib/libtidevm.so lib/pkgconfig/tide.pc include/tide/tide.h include/tide/model.h \
      include/tide/vm.h include/tide/npy.h include/tide/ops.def share/tide/lua/tide/init.lua \
      share/tide/lua/tide/cdef.lua share/tide/lua/tide/binding.lua share/tide/lua/tide/cli/init.lua \
      share/tide/lua/tide/repl/init.lua; do
    [ -f "$1/$f" ] || { echo "missing $1/$f"; return 1; }
  done
}
check "installed files" files_present "$prefix"

# The installed program, run from another folder, on the installed Lua library and libtide.
installed_tide_runs() {
  cd "$tmp" || return 1
  got=$("$prefix/bin/tide" -e "local tide = require 'tide'
print((tide.ones{2} + 1):totable()[2], package.searchpath('tide', package.path), package.loaded['tide.host'].lib)")
  rc=$?
  cd "$root" || return 1
  want="2	$prefix/share/tide/lua/tide/init.lua	$prefix/lib/libtide.so"
  [ "$rc" -eq 0 ] && [ "$got" = "$want" ] || { echo "tide -e printed '$got' (exit $rc), expected '$want'"; return 1; }
}
check "installed tide -e" installed_tide_runs

pc_fields() {
  PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs tide >"$tmp/pc.txt" || return 1
  grep -q -- "-I$prefix/include" "$tmp/pc.txt" && grep -q -- "-ltidevm -ltide" "$tmp/pc.txt" &&
    grep -q -- "-rpath,$prefix/lib" "$tmp/pc.txt" && [ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion tide)" = \
    "$("$prefix/bin/tide" -v | cut -d' ' -f2)" ] || { cat "$tmp/pc.txt"; return 1; }
}
check "tide.pc: cflags, libs, rpath, version" pc_fields

# examples/embed against the install: train with the installed tide (a
# small subset), one cc line through pkg-config, a few frames.
san=""
[ "$SANITIZE" = 1 ] && san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
game_loop_runs() {
  TIDE_EXAMPLE_SUBSET=2000 "$prefix/bin/tide" examples/embed/train.lua "$tmp/game" || return 1
  # shellcheck disable=SC2046,SC2086 # pkg-config's flags and san are lists of flags
  ${CC:-cc} examples/embed/game_loop.c $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs tide) $san \
    -o "$tmp/game_loop" || return 1
  ASAN_OPTIONS=$C_ASAN_OPTIONS "$tmp/game_loop" "$tmp/game" 30 >"$tmp/game.txt" || { cat "$tmp/game.txt"; return 1; }
  cat "$tmp/game.txt"
  grep -q '^frames: 30, classified right: ' "$tmp/game.txt" &&
    grep -Eq '^per-call latency: median [0-9.]+ us, p99 [0-9.]+ us$' "$tmp/game.txt"
}
check "examples/embed: train.lua, one cc line with pkg-config, game_loop" game_loop_runs

# DESTDIR stages the files under another root; tide.pc names the final PREFIX;
# the staged program runs where it lies (it finds its libraries and Lua beside it).
staged() {
  install_into /opt/tide "$tmp/stage" || return 1
  files_present "$tmp/stage/opt/tide" || return 1
  grep -qx 'prefix=/opt/tide' "$tmp/stage/opt/tide/lib/pkgconfig/tide.pc" || return 1
  [ "$("$tmp/stage/opt/tide/bin/tide" -e "print(require('tide').ones{3}:sum():item())")" = 3 ]
}
check "make install DESTDIR=... PREFIX=/opt/tide" staged

relative_refused() {
  ! install_into relative/prefix 2>"$tmp/err.txt" && grep -q "PREFIX must be an absolute path" "$tmp/err.txt" &&
    [ ! -e relative ]
}
check "a relative PREFIX is refused" relative_refused

echo "sh install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
