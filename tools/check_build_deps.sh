#!/bin/sh
# tools/check_build_deps.sh — what `make` needs before it compiles anything.
# Prints nothing when all is there; else one line naming what is missing and
# the command that installs it. Usage: tools/check_build_deps.sh [CC]
cc=${1:-cc}
missing=""
packages=""

# need WHAT PACKAGE: WHAT is missing; the Debian PACKAGE brings it.
need() {
  missing="${missing:+$missing, }$1"
  packages="$packages $2"
}

# True when the compiler finds the header <$1>.
has_header() {
  printf '#include <%s>\n' "$1" | "$cc" -E -x c - >/dev/null 2>&1
}

if ! command -v "$cc" >/dev/null 2>&1; then
  need "a C compiler ($cc)" build-essential
fi
if ! command -v pkg-config >/dev/null 2>&1; then
  need "pkg-config (it finds LuaJIT and OpenBLAS)" pkg-config
else
  pkg-config --exists luajit || need "LuaJIT (pkg-config luajit)" libluajit-5.1-dev
  # Without OpenBLAS's own flags a system cblas.h is used and fails on `blasint`.
  pkg-config --exists openblas || need "OpenBLAS (pkg-config openblas)" libopenblas-dev
  # HDF5's headers sit in a folder of their own (hdf5/serial) that pkg-config names.
  pkg-config --exists hdf5 || need "HDF5 (pkg-config hdf5)" libhdf5-dev
fi
if command -v "$cc" >/dev/null 2>&1; then
  has_header dnnl.h || need "oneDNN (dnnl.h)" libdnnl-dev
  has_header lapack.h || need "LAPACK's C declarations (lapack.h)" liblapacke-dev
  has_header readline/readline.h || need "readline (readline/readline.h)" libreadline-dev
  has_header zlib.h || need "zlib (zlib.h)" zlib1g-dev
  has_header cjson/cJSON.h || need "cJSON (cjson/cJSON.h)" libcjson-dev
  has_header protobuf-c/protobuf-c.h || need "protobuf-c (protobuf-c/protobuf-c.h)" libprotobuf-c-dev
  printf '#define PCRE2_CODE_UNIT_WIDTH 8\n#include <pcre2.h>\n' | "$cc" -E -x c - >/dev/null 2>&1 ||
    need "PCRE2 (pcre2.h)" libpcre2-dev
  { has_header unicode/unorm2.h && has_header unicode/uscript.h; } ||
    need "ICU (unicode/unorm2.h, unicode/uscript.h: the tokenizers and unicode_script)" libicu-dev
  has_header png.h || need "libpng (png.h)" libpng-dev
  has_header jpeglib.h || need "libjpeg-turbo (jpeglib.h)" libjpeg62-turbo-dev
  has_header gif_lib.h || need "giflib (gif_lib.h)" libgif-dev
  has_header webp/demux.h || need "libwebp (webp/decode.h, webp/demux.h)" libwebp-dev
  has_header jxl/decode.h || need "libjxl (jxl/decode.h)" libjxl-dev
  has_header zip.h || need "libzip (zip.h)" libzip-dev
fi
if ! command -v luajit >/dev/null 2>&1; then
  need "the LuaJIT program (luajit: compiles tide's Lua to bytecode)" luajit
fi
if ! command -v protoc-c >/dev/null 2>&1; then
  need "the protobuf-c compiler (protoc-c)" protobuf-c-compiler
fi

[ -z "$missing" ] && exit 0
echo "tide cannot build: missing $missing. Install what is missing with 'make deps' as root (it runs tools/deps.sh), or: apt-get install$packages"
