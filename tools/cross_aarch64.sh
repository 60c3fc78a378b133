#!/bin/sh
# tools/cross_aarch64.sh — cross-builds tide for aarch64 on a Debian 12 x86-64 machine and runs its tests under
# qemu-user: the cross compiler, an arm64 sysroot of tide's dependencies, the build in build-aarch64/, the runs.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#
# Usage: tools/cross_aarch64.sh [setup|build|ctests|specs [SPEC...]|all]   (default: all = setup, build, ctests)
#   setup   as root: dpkg --add-architecture arm64, gcc-aarch64-linux-gnu and qemu-user-static; then the sysroot
#   build   make ARCH=aarch64 BUILD=build-aarch64 with the cross compiler (all + ctests; no CUDA, no MPI);
#           further arguments go to make
#   ctests  every C test under qemu-aarch64-static (tests/run.sh with TIDE_TEST_EXEC)
#   specs   the given spec files or folders (default tests/spec) under qemu; slow: TIDE_TEST_TIMEOUT applies
#
# The arm64 -dev packages are not installed on the machine (several, luajit's or openblas's alternatives among them,
# do not co-install with their amd64 twins, and installing them could change what the x86 build finds): they are
# fetched with `apt-get download` and unpacked with `dpkg -x` into build-aarch64/sysroot, which the compiler gets
# as --sysroot, pkg-config as PKG_CONFIG_SYSROOT_DIR and qemu as QEMU_LD_PREFIX (the arm64 loader, libraries and
# Lua C modules; busted's pure Lua files are read from the host's /usr/share, which qemu falls back to).
set -eu

cd "$(dirname "$0")/.."
OUT=${BUILD_AARCH64:-build-aarch64}
SYSROOT=$PWD/$OUT/sysroot
TRIPLE=aarch64-linux-gnu

# The arm64 packages whose closure (apt-cache depends --recurse) makes the sysroot: tools/deps.sh's -dev packages,
# libc's and the Lua C modules busted loads (lfs, system, term, yaml). No arm64 luajit: the host's writes the same
# (GC64, FR2) bytecode that the arm64 LuaJIT loads, so build-aarch64/lj comes from it.
ROOTS="libc6-dev libluajit-5.1-dev libopenblas-dev libopenblas-pthread-dev liblapacke-dev libreadline-dev zlib1g-dev
libdnnl-dev libcjson-dev libprotobuf-c-dev libpng-dev libjpeg62-turbo-dev libgif-dev libwebp-dev libjxl-dev
libpcre2-dev libhdf5-dev libzip-dev libicu-dev lua-filesystem lua-system lua-term lua-yaml"

have_pkg() {
  case "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" in *"install ok installed"*) return 0 ;; esac
  return 1
}

setup_host() {
  need=""
  dpkg --print-foreign-architectures | grep -qx arm64 || need=arch
  for p in gcc-aarch64-linux-gnu qemu-user-static; do have_pkg "$p" || need="$need $p"; done
  [ -z "$need" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "cross_aarch64.sh: needs root once for:$need (dpkg --add-architecture arm64; apt-get install" \
      "gcc-aarch64-linux-gnu qemu-user-static)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  dpkg --add-architecture arm64
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu qemu-user-static
}

# The sysroot: remade when ROOTS change (its stamp holds them), else left alone.
setup_sysroot() {
  stamp=$SYSROOT/.tide-sysroot
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ROOTS" ] && return 0
  debs=$PWD/$OUT/debs
  mkdir -p "$debs"
  rm -rf "$SYSROOT"
  mkdir -p "$SYSROOT"
  # The closure, arm64 names only (unqualified ones are amd64 tools or arch-all twins of arm64 names); OpenBLAS's
  # OpenMP and serial variants are left out: the pthread one is linked, as on x86.
  # shellcheck disable=SC2046
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances \
      $(for p in $ROOTS; do echo "$p:arm64"; done) |
    sed -n 's/^\([^ <][^ ]*\):arm64$/\1/p' | grep -Ev '^libopenblas0?-(openmp|serial)' | sort -u >"$debs/list"
  # Arch-all packages the closure names without a qualifier and that hold headers or Lua files the build needs.
  for p in libluajit-5.1-common; do echo "$p" >>"$debs/list"; done
  # One apt-get call for all that is not fetched yet (an apt-get start costs seconds).
  want=$(while read -r p; do
           ls "$debs/${p}"_*.deb >/dev/null 2>&1 && continue
           case "$p" in libluajit-5.1-common) echo "$p" ;; *) echo "$p:arm64" ;; esac
         done <"$debs/list")
  # shellcheck disable=SC2086
  [ -z "$want" ] || (cd "$debs" && apt-get download -qq $want)
  for d in "$debs"/*.deb; do dpkg -x "$d" "$SYSROOT"; done
  # Absolute symlinks point into the host's / once seen from outside the sysroot: make them relative.
  find "$SYSROOT" -type l | while read -r l; do
    t=$(readlink "$l")
    case "$t" in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$SYSROOT$t")" "$l" ;; esac
  done
  # What update-alternatives would have made: OpenBLAS's pthread build as the BLAS, LAPACK and openblas.pc.
  lib=$SYSROOT/usr/lib/$TRIPLE
  for f in libopenblas.so libopenblas.so.0 libblas.so libblas.so.3 liblapack.so liblapack.so.3; do
    [ -e "$lib/openblas-pthread/$f" ] && ln -sfn "openblas-pthread/$f" "$lib/$f"
  done
  ln -sfn ../openblas-pthread/pkgconfig/openblas.pc "$lib/pkgconfig/openblas.pc" 2>/dev/null ||
    ln -sfn ../openblas-pthread/openblas.pc "$lib/pkgconfig/openblas.pc"
  # HDF5's serial build as hdf5.pc (libhdf5-dev's alternative).
  ln -sfn hdf5-serial.pc "$lib/pkgconfig/hdf5.pc"
  [ -e "$lib/pkgconfig/openblas.pc" ] || { echo "cross_aarch64.sh: no openblas.pc in the sysroot" >&2; exit 1; }
  echo "$ROOTS" >"$stamp"
}

# The compiler as one word (the Makefile and tools/check_build_deps.sh take CC as a program name).
write_cc() {
  mkdir -p "$OUT/bin"
  cat >"$OUT/bin/$TRIPLE-cc" <<EOF
#!/bin/sh
exec $TRIPLE-gcc --sysroot="$SYSROOT" "\$@"
EOF
  chmod +x "$OUT/bin/$TRIPLE-cc"
}

cross_env() {
  export PKG_CONFIG_SYSROOT_DIR="$SYSROOT"
  export PKG_CONFIG_LIBDIR="$SYSROOT/usr/lib/$TRIPLE/pkgconfig:$SYSROOT/usr/share/pkgconfig"
  export QEMU_LD_PREFIX="$SYSROOT"
  export TIDE_TEST_EXEC=qemu-aarch64-static
}

# Extra arguments go to make (e.g. OPTLEVEL=-O1: a quicker build for a correctness run on a loaded machine).
build() {
  cross_env
  make --no-print-directory -j"${JOBS:-2}" ARCH=aarch64 BUILD="$OUT" CC="$PWD/$OUT/bin/$TRIPLE-cc" CUDA=0 MPI=0 \
    "$@" all ctests
}

case "${1:-all}" in
  setup) setup_host; setup_sysroot; write_cc ;;
  build) shift; write_cc; build "$@" ;;
  ctests) cross_env; BUILD=$OUT tests/run.sh --c-only ;;
  specs) shift; cross_env; [ $# -gt 0 ] || set -- tests/spec; BUILD=$OUT tests/run.sh "$@" ;;
  all) setup_host; setup_sysroot; write_cc; build; cross_env; BUILD=$OUT tests/run.sh --c-only ;;
  *) echo "usage: tools/cross_aarch64.sh [setup|build|ctests|specs [SPEC...]|all]" >&2; exit 2 ;;
esac
