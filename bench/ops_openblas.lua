-- bench/ops_openblas.lua — the peer that sets the floor for tide's matmul:
-- OpenBLAS's cblas_sgemm called directly on bench/ops.lua's products, with
-- tide's thread count, in a process of its own (bench/run.sh shows it as
-- the "openblas" column). Same names and units as bench/ops.lua.
local tide = require "tide"
local ffi = require "ffi"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

ffi.cdef [[ void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                             const float *a, int lda, const float *b, int ldb, float beta,
                             float *c, int ldc);
            void openblas_set_num_threads(int n); ]]
local blas = ffi.load("openblas")
blas.openblas_set_num_threads(tide.config.get_num_threads())

for _, n in ipairs { 256, 1024, 2048 } do
  local a, b = ffi.new("float[?]", n * n), ffi.new("float[?]", n * n)
  for i = 0, n * n - 1 do a[i], b[i] = math.random(), math.random() end
  local c = ffi.new("float[?]", n * n)
  local iters = n == 256 and 50 or (n == 1024 and 5 or 2)
  local t = measure(function() blas.cblas_sgemm(101, 111, 111, n, n, n, 1, a, n, b, n, 0, c, n) end, iters, 7)
  emit("matmul_" .. n, 2 * n * n * n / t / 1e9, "GFLOP/s")
end
