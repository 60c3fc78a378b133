#!/bin/sh
# tools/device_bundle.sh — packs what the GPU machine lacks to run tide and its
# tests into one file: the Debian packages of every library tide's binaries
# load (LuaJIT, OpenBLAS, oneDNN, readline, cJSON, protobuf-c, libpng,
# libjpeg, pcre2, ...) and busted's Lua packages, unpacked with dpkg -x, plus
# tide's build outputs and an env.sh that points the loader and Lua at them.
#   tools/device_bundle.sh [BUILD] [OUT]     (defaults: build, BUILD/device_bundle.tar.xz)
# On the device machine (docs/gpu.md): tar xJf OUT -C /tmp/tide_bundle && . /tmp/tide_bundle/env.sh
# The CUDA libraries and glibc are left out: that machine has its own.
set -eu
BUILD=${1:-build}
OUT=${2:-$BUILD/device_bundle.tar.xz}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/bundle/root"
mkdir -p "$root" "$work/debs" "$work/bundle/build"

[ -f "$BUILD/libtide.so" ] || { echo "device_bundle: $BUILD/libtide.so is missing: run make first" >&2; exit 1; }

# Every library the binaries load, resolved on this machine.
bins="$BUILD/libtide.so $BUILD/libtide_formats.so $BUILD/libtidevm.so $BUILD/tide"
[ -f "$BUILD/libtide_cuda.so" ] && bins="$bins $BUILD/libtide_cuda.so"
# and the libraries libtide dlopens on first use (oneDNN, ICU: cpu/onednn_load.c, cpu/icu_load.c), which ldd
# cannot see.
dlopened=$(ldconfig -p | sed -nE 's/^[[:space:]]*(libdnnl\.so\.[0-9]+|libicuuc\.so\.[0-9]+) .*=> (\/[^ ]+)$/\2/p')
libs=$( { for b in $bins "$BUILD"/tests/test_*; do [ -f "$b" ] && ldd "$b" 2>/dev/null; done
          for d in $dlopened; do ldd "$d" 2>/dev/null; echo "$d => $d (0)"; done; } |
  sed -nE 's/.*=> (\/[^ ]+) .*/\1/p' | sort -u)

# Their packages, minus glibc's and the compiler runtime's (the device has
# those; a second glibc cannot be loaded beside the system's) and CUDA's.
pkgs=""
for l in $libs; do
  case "$l" in /usr/local/cuda*|*/libcuda.so*) continue ;; esac
  real=$(readlink -f "$l")
  p=$(dpkg -S "$real" 2>/dev/null | head -n 1 | cut -d: -f1) || p=""
  [ -n "$p" ] || p=$(dpkg -S "$l" 2>/dev/null | head -n 1 | cut -d: -f1) || p=""
  case "$p" in ""|libc6|libgcc-s1|libstdc++6) continue ;; esac
  pkgs="$pkgs $p"
done
# busted and what it loads (tests/run_busted.lua), and LuaJIT's own package.
pkgs="$pkgs lua-busted lua-cliargs lua-dkjson lua-filesystem lua-luassert lua-mediator lua-penlight lua-say lua-system
  lua-term libluajit-5.1-2 libluajit-5.1-common"
pkgs=$(echo $pkgs | tr ' ' '\n' | sort -u | tr '\n' ' ')
echo "device_bundle: packages: $pkgs"

(cd "$work/debs" && apt-get download $pkgs >/dev/null)
for d in "$work"/debs/*.deb; do dpkg -x "$d" "$root"; done

# tide's build outputs (no objects): the libraries, the program, the C tests, the FFI declarations.
for f in libtide.so libtide_formats.so libtidevm.so libtide_cuda.so tide; do
  [ -f "$BUILD/$f" ] && cp "$BUILD/$f" "$work/bundle/build/"
done
cp -r "$BUILD/lua" "$work/bundle/build/"
[ -d "$BUILD/tests" ] && cp -r "$BUILD/tests" "$work/bundle/build/"

cat >"$work/bundle/env.sh" <<'ENV'
# Source this (. ./env.sh) from the folder the bundle was unpacked into: the
# loader finds the bundled libraries, LuaJIT finds busted.
here=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
[ -d "$here/root" ] || here=$(pwd)
r="$here/root"
export LD_LIBRARY_PATH="$r/usr/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu/openblas-pthread:$r/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LUA_PATH="$r/usr/share/lua/5.1/?.lua;$r/usr/share/lua/5.1/?/init.lua;;"
export LUA_CPATH="$r/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;;"
export TIDE_BUNDLE="$here"
# The CUDA libraries libtide_cuda.so links: the toolkit's, or those pip put
# beside PyTorch (nvidia-*-cu13 wheels), wherever the loader does not find them already.
for lib in libcudart.so.13 libcublasLt.so.13 libcublas.so.13 libcudnn.so.9 libnvrtc.so.13; do
  ldconfig -p 2>/dev/null | grep -q "$lib" && continue
  d=$(find /usr/local /usr/lib /opt /root /home -name "$lib" 2>/dev/null | head -n 1)
  [ -n "$d" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$d")"
done
export LD_LIBRARY_PATH
ENV
mkdir -p "$(dirname "$OUT")"
tar -C "$work/bundle" -cJf "$OUT" .
echo "device_bundle: wrote $OUT ($(du -h "$OUT" | cut -f1))"
