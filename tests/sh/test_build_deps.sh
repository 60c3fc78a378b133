#!/bin/sh
# tests/sh/test_build_deps.sh — `make` on a machine without tide's build
# dependencies stops at once with one line naming them and `make deps`.
# Run by tests/run.sh from the repository root; `make -n` compiles nothing.
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL # this runs under `make test`: start a make of its own
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check WHAT: count the status of the command just before as a check, saying WHAT when it failed.
check() {
  if [ $? -eq 0 ]; then passed=$((passed + 1)); else echo "FAIL build deps: $1"; failed=$((failed + 1)); fi
}
# says FILE WORDS...: FILE holds every word.
says() {
  f=$1
  shift
  for w in "$@"; do grep -qF -- "$w" "$f" || return 1; done
}

# This machine has them: the check is silent and make goes on.
out=$(tools/check_build_deps.sh cc)
[ -z "$out" ]
check "the check prints nothing when all is there (got: $out)"

# No LuaJIT or OpenBLAS for pkg-config: make stops before compiling, in one line.
mkdir "$tmp/pc"
! PKG_CONFIG_LIBDIR="$tmp/pc" make -n all >"$tmp/out" 2>&1
check "make without pkg-config's LuaJIT and OpenBLAS fails"
[ "$(wc -l <"$tmp/out")" -eq 1 ]
check "the message is one line"
says "$tmp/out" "LuaJIT" "OpenBLAS" "make deps" "libopenblas-dev"
check "the message names LuaJIT, OpenBLAS, make deps and the packages: $(cat "$tmp/out")"

# No pkg-config on PATH at all.
mkdir "$tmp/bin"
for t in sh cc make; do ln -s "$(command -v $t)" "$tmp/bin/$t"; done
! PATH="$tmp/bin" make -n all >"$tmp/out" 2>&1
check "make without pkg-config fails"
says "$tmp/out" "pkg-config" "make deps"
check "the message names pkg-config and make deps: $(cat "$tmp/out")"

# A compiler that finds no oneDNN or readline headers.
cat >"$tmp/bin/nohdr-cc" <<'CC'
#!/bin/sh
src=$(cat)
case "$src" in *dnnl.h* | *readline/*) exit 1 ;; esac
printf '%s\n' "$src" | cc "$@"
CC
chmod +x "$tmp/bin/nohdr-cc"
out=$(tools/check_build_deps.sh "$tmp/bin/nohdr-cc")
case "$out" in *"oneDNN"*"readline"*"libdnnl-dev libreadline-dev"*) true ;; *) false ;; esac
check "missing headers are named with their packages: $out"

# Goals that install the dependencies first, and clean, are not stopped.
PKG_CONFIG_LIBDIR="$tmp/pc" make -n deps clean >"$tmp/out" 2>&1
check "make deps and make clean run without them: $(cat "$tmp/out")"

echo "sh build_deps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
