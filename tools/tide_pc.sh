#!/bin/sh
# Writes tide's pkg-config file (tide.pc) for an install under PREFIX on
# stdout; `make install` puts it in PREFIX/lib/pkgconfig. The one cc line of
# a host program is then `cc app.c $(pkg-config --cflags --libs tide)`.
#   Libs: libtide (the engine, tide/model.h, tide/tide.h) and libtidevm
#   (tide/vm.h, a LuaJIT state), with an rpath to PREFIX/lib so the program
#   runs without LD_LIBRARY_PATH wherever PREFIX is.
#   Requires.private: luajit, which libtidevm links; vm.h names no Lua type,
#   so hosts that use lua.h themselves add `pkg-config --libs luajit`.
#   Libs.private: what libtide links (only a static link would need them).
# Usage: tools/tide_pc.sh PREFIX VERSION "LIBS_PRIVATE"
set -eu
prefix=$1
version=$2
libs_private=$3
cat <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: tide
Description: tide deep-learning runtime: tensor engine, SavedModels from C (tide/model.h), embedded LuaJIT (tide/vm.h)
Version: $version
Requires.private: luajit
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -ltidevm -ltide
Libs.private: $libs_private
PC
