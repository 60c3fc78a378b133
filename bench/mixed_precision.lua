-- bench/mixed_precision.lua — half types on the CPU: matmul GFLOP/s in float32,
-- float16 and bfloat16 (tide's kernels: float32 copies through sgemm, one
-- rounding), OpenBLAS's own bfloat16 GEMM (cblas_sbgemm) for comparison where
-- the library has it (Debian's 0.3.21 does not), and
-- one epoch of an MLP's fit on Fashion-MNIST (784-256-128-10, batch 128, Adam
-- 1e-3, traced step) under float32, mixed_bfloat16 and mixed_float16 with the
-- test accuracy after it. Medians; `name: value unit` lines.
local tide = require "tide"
local ffi = require "ffi"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

for _, n in ipairs { 256, 512, 1024 } do
  local base = tide.random.normal({ n, n }, { seed = 1 })
  local other = tide.random.normal({ n, n }, { seed = 2 })
  local f32 = 2 * n * n * n / 1e9
  for _, dt in ipairs { "float32", "float16", "bfloat16" } do
    local a, b = base:cast(dt), other:cast(dt)
    local s = timing.measure(function() return tide.matmul(a, b) end, n >= 1024 and 2 or 8, 5)
    timing.emit(string.format("matmul_%d_%s", n, dt), f32 / s, "GFLOP/s")
  end
  -- OpenBLAS's bfloat16 GEMM into a float32 result (what tide would call if it used it)
  local ok, blas = pcall(ffi.load, "openblas")
  if ok then
    pcall(ffi.cdef, [[ void cblas_sbgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
      const uint16_t *a, int lda, const uint16_t *b, int ldb, float beta, float *c, int ldc); ]])
    ok = pcall(function() return blas.cblas_sbgemm end)
    if not ok and n == 256 then print("# this OpenBLAS has no cblas_sbgemm (built without BUILD_BFLOAT16)") end
  end
  if ok then
    local a, b = base:cast("bfloat16"), other:cast("bfloat16")
    local c = tide.zeros({ n, n }, "float32")
    local pa, pb = ffi.cast("const uint16_t *", a.data), ffi.cast("const uint16_t *", b.data)
    local pc = ffi.cast("float *", c.data)
    local s = timing.measure(function()
      blas.cblas_sbgemm(101, 111, 111, n, n, n, 1, pa, n, pb, n, 0, pc, n)
    end, n >= 1024 and 2 or 8, 5)
    timing.emit(string.format("openblas_sbgemm_%d", n), f32 / s, "GFLOP/s")
  end
end

local DIR = os.getenv("FASHION_MNIST_DIR") or "/usr/share/datasets/fashion-mnist"
if not io.open(DIR .. "/train-images-idx3-ubyte.gz", "rb") then
  print("# no Fashion-MNIST under " .. DIR .. " (Debian's dataset-fashion-mnist): the MLP epochs are skipped")
  return
end
local read_idx = require("tide.io.idx").read_idx
local to_float = tide.trace(function(u) return tide.reshape(tide.cast(u, "float32") / 255, { -1, 784 }) end)
local x_train = to_float(read_idx(DIR .. "/train-images-idx3-ubyte.gz"))
local y_train = tide.cast(read_idx(DIR .. "/train-labels-idx1-ubyte.gz"), "int32")
local x_test = to_float(read_idx(DIR .. "/t10k-images-idx3-ubyte.gz"))
local y_test = tide.cast(read_idx(DIR .. "/t10k-labels-idx1-ubyte.gz"), "int32")
local L = tide.layers
for _, policy in ipairs { "float32", "mixed_bfloat16", "mixed_float16" } do
  tide.mixed_precision.set_global_policy(policy)
  tide.random.set_seed(0)
  local model = tide.Sequential { tide.Input { shape = { 784 } }, L.Dense { 256, activation = "relu" },
    L.Dense { 128, activation = "relu" }, L.Dense { 10 }, L.Activation { "softmax", dtype = "float32" } }
  model:compile { optimizer = tide.optimizers.Adam { learning_rate = 1e-3 }, loss = "sparse_categorical_crossentropy",
    metrics = { "accuracy" } }
  tide.mixed_precision.set_global_policy(nil)
  local t0 = timing.wall()
  model:fit(x_train, y_train, { epochs = 1, batch_size = 128, verbose = 0 })
  local epoch = timing.wall() - t0
  local r = model:evaluate(x_test, y_test, { batch_size = 128, verbose = 0, return_dict = true })
  timing.emit("mlp_epoch_" .. policy, epoch, "s")
  timing.emit("mlp_test_accuracy_" .. policy, r.accuracy, "")
end
