#!/bin/sh
# tests/sh/test_cuda_build.sh — the CUDA backend's build: libtide_cuda.so is a
# separate library with sm_90 code and compute_90 PTX, linking the CUDA libraries (cudart, cuBLAS(Lt), cuDNN, NVRTC, NCCL)
# that libtide itself never links; a missing library or GPU is "no GPU", never a crash.
# Skips (saying so, counting nothing) when nvcc is absent or the build was made with CUDA=0.
set -u
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lib="$BUILD/libtide_cuda.so"

check() {
  if [ $? -eq 0 ]; then passed=$((passed + 1)); else echo "FAIL cuda build: $1"; failed=$((failed + 1)); fi
}

if [ ! -x "$CUDA_HOME/bin/nvcc" ] || [ "${CUDA:-}" = 0 ]; then
  echo "SKIP: every CUDA build check ($( [ "${CUDA:-}" = 0 ] && echo "built with CUDA=0" || echo "no nvcc at $CUDA_HOME/bin/nvcc"))"
  echo "sh test_cuda_build: 0 passed, 0 failed"
  exit 0
fi

[ -f "$lib" ]
check "$lib was built (nvcc is at $CUDA_HOME/bin/nvcc)"

# The one entry point libtide looks up, and no other tide_ symbol of its own.
nm -D --defined-only "$lib" >"$tmp/nm" 2>&1
grep -qE ' T tide_cuda_backend_init$' "$tmp/nm"
check "libtide_cuda.so exports tide_cuda_backend_init"
[ "$(grep -cE ' [TDB] tide_' "$tmp/nm")" -eq 1 ]
check "tide_cuda_backend_init is its only exported tide_ symbol: $(grep -E ' [TDB] tide_' "$tmp/nm" | tr '\n' ' ')"

# It links the CUDA libraries (all found), and libtide; libtide links none of them.
ldd "$lib" >"$tmp/ldd" 2>&1
for l in libcudart libcublasLt libcublas libcudnn libnvrtc libnccl libtide.so; do
  grep -q "$l" "$tmp/ldd"
  check "libtide_cuda.so links $l"
done
! grep -q "not found" "$tmp/ldd"
check "every library of libtide_cuda.so is found: $(grep 'not found' "$tmp/ldd" | tr '\n' ' ')"
ldd "$BUILD/libtide.so" >"$tmp/ldd_core" 2>&1
! grep -qE 'libcuda|libcublas|libcudnn|libnvrtc|libnccl' "$tmp/ldd_core"
check "libtide.so links no CUDA library (it loads the backend at run time)"

# MirroredStrategy's all-reduce calls NCCL itself (nccl.c): communicators for
# the process's GPUs made together, grouped all-reduces, errors reported.
nm -D --undefined-only "$lib" >"$tmp/nm_u" 2>&1
for s in ncclCommInitAll ncclGroupStart ncclAllReduce ncclGroupEnd ncclCommDestroy ncclGetErrorString ncclGetVersion; do
  grep -qE " U $s\$" "$tmp/nm_u"
  check "libtide_cuda.so calls $s"
done
nm -D --defined-only "$(ldd "$lib" | awk '/libnccl/ {print $3}')" 2>/dev/null | grep -qE ' [TW] ncclCommInitAll(@.*)?$'
check "the libnccl it links defines ncclCommInitAll"

# Hopper code and a PTX fallback, read without cuobjdump (not in every
# toolkit install): the fat binary section, the SASS's ptxas options, the PTX text.
objdump -h "$lib" | grep -q '\.nv_fatbin'
check "libtide_cuda.so has a .nv_fatbin section"
strings "$lib" >"$tmp/strings"
grep -q -- '-arch sm_90' "$tmp/strings"
check "libtide_cuda.so holds code ptxas compiled for sm_90"
grep -q '^\.target sm_90' "$tmp/strings"
check "libtide_cuda.so holds compute_90 PTX (.target sm_90)"

# No backend library: no GPU, with the reason, and the program goes on.
cat >"$tmp/gpus.lua" <<'LUA'
local tide = require "tide"
local ffi = require "ffi"
print("gpus " .. #tide.config.list_physical_devices("GPU"))
print("reason " .. ffi.string(require("tide.binding").C.tide_cuda_unavailable_reason()))
print("sum " .. (tide.tensor{1, 2} + 1):sum():item())
print("nccl " .. require("tide.binding").C.tide_nccl_version())
local ok, v = pcall(tide.config.cuda_versions)
if ok then print(string.format("versions runtime %d cublaslt %d cudnn %d nvrtc %d", v.cuda_runtime, v.cublaslt, v.cudnn, v.nvrtc))
else print("versions error " .. tostring(v)) end
LUA
# Lua programs end without freeing LuaJIT's heap: leaks are not checked here (as tests/run.sh does for specs).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
TIDE_CUDA_LIBRARY="$tmp/none.so" "$BUILD/tide" "$tmp/gpus.lua" >"$tmp/out" 2>&1
check "without the backend library the program runs: $(cat "$tmp/out")"
grep -q '^gpus 0$' "$tmp/out" && grep -q 'did not load' "$tmp/out" && grep -q '^sum 5$' "$tmp/out"
check "without the backend library: 0 GPUs, the reason, CPU ops work: $(cat "$tmp/out")"
cp "$tmp/out" "$tmp/out.nolib"

# The real backend with no GPU visible (CUDA_VISIBLE_DEVICES empty): the runtime's reason.
CUDA_VISIBLE_DEVICES= "$BUILD/tide" "$tmp/gpus.lua" >"$tmp/out" 2>&1
check "with CUDA_VISIBLE_DEVICES empty the program runs: $(cat "$tmp/out")"
grep -q '^gpus 0$' "$tmp/out" && grep -q 'CUDA runtime' "$tmp/out" && grep -q '^sum 5$' "$tmp/out"
check "with CUDA_VISIBLE_DEVICES empty: 0 GPUs, the CUDA runtime's reason: $(cat "$tmp/out")"
# Each CUDA library loads and answers without a GPU (cudart, cuBLASLt, cuDNN 9, NVRTC).
grep -qE '^versions runtime [1-9][0-9]+ cublaslt [1-9][0-9]+ cudnn 9[0-9]+ nvrtc [1-9][0-9]+$' "$tmp/out"
check "the CUDA libraries report their versions with no GPU: $(grep versions "$tmp/out")"
grep -q 'versions error.*did not load' "$tmp/out.nolib"
check "without the backend library, cuda_versions says it did not load: $(cat "$tmp/out.nolib")"
# NCCL loads and reports its version with no GPU (2.x: 2xxyy), and 0 without the backend.
nccl_h="$CUDA_HOME/include/nccl.h"
want=$(awk '/#define NCCL_VERSION_CODE/ {print $3}' "$nccl_h" 2>/dev/null)
[ -n "$want" ] || want='2[0-9]{4}'
grep -qE "^nccl $want\$" "$tmp/out"
check "NCCL reports its version ${want:-} with no GPU: $(grep nccl "$tmp/out")"
grep -q '^nccl 0$' "$tmp/out.nolib"
check "without the backend library, the NCCL version is 0: $(grep nccl "$tmp/out.nolib")"

echo "sh test_cuda_build: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
