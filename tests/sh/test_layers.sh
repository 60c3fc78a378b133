#!/bin/sh
# tests/sh/test_layers.sh — the floors of the house (DESIGN §1), checked twice:
# no #include points up or sideways between folders, and no object calls a
# function of a folder it may not call (nm's undefined symbols against the
# symbols each folder's objects define); and libtidevm needs no readline.
# Run by tests/run.sh from the repository root (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# forbid FOLDER PATTERN WHY: no file under FOLDER includes a header whose
# path matches PATTERN (an extended regex, anchored after `#include "` or `<`).
forbid() {
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]($2)" "$1" --include='*.c' --include='*.h' \
    --include='*.cu' --include='*.cuh')
  if [ -z "$hits" ]; then
    passed=$((passed + 1))
  else
    printf 'FAIL %s must not include %s (%s):\n%s\n' "$1" "$2" "$3" "$hits"
    failed=$((failed + 1))
  fi
}

forbid kernels/core '([^">]*/)?(cpu|graph|io|data|model|cuda|dist)/|tide_proto/' 'core reaches kernels only through the backend tables, and graph through the recorder hook'
forbid kernels/cpu '([^">]*/)?(graph|io|data|model|cuda)/|tide_proto/' 'backends sit below graphs and file formats'
forbid kernels/graph '([^">]*/)?(cpu|io|data|model|cuda)/' 'graph -> core (and the proto leaf)'
forbid kernels/io '([^">]*/)?(cpu|data|model|cuda)/' 'io -> core, graph (and the proto leaf)'
forbid kernels/data '([^">]*/)?(cpu|model|cuda)/|tide_proto/' 'data -> graph, io'
forbid kernels/model '([^">]*/)?(cpu|data|cuda)/|tide_proto/' 'model -> graph, io'
forbid kernels/cuda '([^">]*/)?(cpu|graph|io|data|model|dist)/' 'cuda -> core only through its table'
forbid kernels '(lua|lauxlib|lualib|luajit)\.h|([^">]*/)?(vm|repl|cli|bindings)/' 'the engine never calls Lua'
forbid vm '([^">]*/)?(repl|cli|readline)/' 'libtidevm embeds in programs that have no REPL'
forbid repl '([^">]*/)?cli/' 'the program sits on top: cli -> repl -> vm'

# ---- calls: the same floors at the link level ----------------------------------------
# The folders of libtide, each built into $OBJ/<folder>/ (proto: the compiled
# schemas, a leaf graph and io share), and whom each may call.
OBJ=$BUILD/obj/kernels
FOLDERS="core cpu graph io data model proto"
may_call() {
  case $1 in
    cpu) echo "core" ;;
    graph) echo "core proto" ;;
    io) echo "core graph proto" ;;
    data | model) echo "core graph io" ;;
    *) echo "" ;; # core (but for the exceptions below) and proto call no other folder
  esac
}

# The objects of folder $1 that a source still makes (a stale object of a
# removed file must not decide): x.o, x.avx2.o (SIMD levels) and x.cu.o from
# kernels/$1/x.c or x.cu; x.pb-c.o from kernels/proto/x.proto.
objects_of() {
  for o in "$OBJ/$1"/*.o; do
    b=$(basename "$o")
    b=${b%%.*}
    for src in "kernels/$1/$b.c" "kernels/$1/$b.cu" "kernels/$1/$b.proto"; do
      if [ -f "$src" ]; then
        echo "$o"
        break
      fi
    done
  done
}

defs_of() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
undefs_of() { nm -u "$@" 2>/dev/null | awk 'NF == 2 && ($1 == "U" || $1 == "w") { print $2 }' | sort -u; }

# Core names kernel code in two objects only, both expanded from ops.def: the
# CPU backend's table (its kernel column, and cpu/'s fused runner) and the
# op table (each row's inference and unknown-rank rule: io defines a few).
ops_def_column() {
  printf '#define TIDE_OP(id, name, nin, nout, dts, out, infer, cpu, flags) %s\n#include "tide/ops.def"\n' "$1" |
    "$CC" -E -P -Ikernels/include -x c - | tr ' ' '\n' | grep . | sort -u
}
{ ops_def_column cpu; echo tide_cpu_fused_runner; } | sort -u >"$tmp/allowed.backend_cpu.o"
ops_def_column 'infer infer##_rank' >"$tmp/allowed.registry.o"

built=1
for f in $FOLDERS; do
  set -- $(objects_of "$f")
  if [ $# -eq 0 ]; then
    echo "FAIL $OBJ/$f: no objects (build first)"
    failed=$((failed + 1))
    built=0
  fi
  defs_of "$@" >"$tmp/def.$f"
done

# check_calls FOLDER: each object of FOLDER calls only what its floor allows.
check_calls() {
  f=$1
  ok=$(may_call "$f")
  : >"$tmp/bad"
  for o in $(objects_of "$f"); do
    undefs_of "$o" >"$tmp/undef"
    allowed="$tmp/allowed.$(basename "$o")"
    for g in $FOLDERS; do
      [ "$g" = "$f" ] && continue
      case " $ok " in *" $g "*) continue ;; esac
      comm -12 "$tmp/undef" "$tmp/def.$g" >"$tmp/hits"
      if [ "$f" = core ] && [ -f "$allowed" ]; then
        comm -23 "$tmp/hits" "$allowed" >"$tmp/left" && mv "$tmp/left" "$tmp/hits"
      fi
      [ -s "$tmp/hits" ] && echo "  $(basename "$o") calls $g: $(tr '\n' ' ' <"$tmp/hits")" >>"$tmp/bad"
    done
  done
  if [ -s "$tmp/bad" ]; then
    if [ -n "$ok" ]; then rule="may call only $ok"; else rule="may call no other folder"; fi
    [ "$f" = core ] && rule="$rule (but ops.def's columns in registry.o and backend_cpu.o)"
    printf 'FAIL kernels/%s %s (DESIGN §1):\n%s\n' "$f" "$rule" "$(cat "$tmp/bad")"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}
if [ "$built" = 1 ]; then
  for f in $FOLDERS; do check_calls "$f"; done
fi

# cuda and dist are libraries of their own that libtide loads; they reach
# core through the tables it fills. libtide_cuda.so may also use libtide's
# public API (what any program links: core's exported functions), nothing
# internal and nothing of another folder; libtide_mpi.so names nothing of libtide.
nm -D --defined-only "$BUILD/libtide.so" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/exported"
cat "$tmp"/def.* | sort -u >"$tmp/def.all"
set -- $(objects_of cuda)
if [ $# -gt 0 ]; then
  undefs_of "$@" | comm -12 - "$tmp/def.all" >"$tmp/hits"
  comm -12 "$tmp/exported" "$tmp/def.core" | comm -23 "$tmp/hits" - >"$tmp/bad"
  if [ -s "$tmp/bad" ]; then
    printf 'FAIL kernels/cuda may call only core'"'"'s public API and its table: it calls %s\n' "$(tr '\n' ' ' <"$tmp/bad")"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
fi
if [ -f "$BUILD/libtide_mpi.so" ]; then
  nm -D --undefined-only "$BUILD/libtide_mpi.so" | awk '{ print $NF }' | sort -u | comm -12 - "$tmp/def.all" >"$tmp/bad"
  if [ -s "$tmp/bad" ]; then
    printf 'FAIL libtide_mpi.so (kernels/dist) reaches core only through its table: it calls %s\n' "$(tr '\n' ' ' <"$tmp/bad")"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
fi

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
