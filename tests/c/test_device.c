/* tests/c/test_device.c — devices without a GPU: device names, the "no CUDA
 * device visible" errors, and the dispatch rule for tensors on a GPU (inputs on
 * one device, an op without a CUDA kernel refused), checked on headers that only claim to be on one. */
#include "util.h"

#include <stdlib.h>

/* A 3-element float tensor over host memory whose header says it is on `dev`:
 * the dispatch rule decides before any kernel reads it. */
static void fake_on(tide_tensor *t, float *data, int dev) {
  int64_t dims[1] = {3};
  *t = blank();
  CHECK(tide_tensor_wrap(t, data, TIDE_FLOAT32, 1, dims, NULL, NULL, NULL) == TIDE_OK);
  t->dev = dev;
}

int main(void) {
  /* No backend library: the first query loads nothing, and says why. */
  setenv("TIDE_CUDA_LIBRARY", "/nonexistent/libtide_cuda.so", 1);
  CHECK(tide_cuda_device_count() == 0);
  CHECK(contains(tide_cuda_unavailable_reason(), "did not load"));
  CHECK(!tide_op_has_cuda_kernel(TIDE_OP_ADD));
  CHECK(!tide_op_has_kernel(TIDE_CUDA, TIDE_OP_ADD) && tide_op_has_kernel(TIDE_CPU, TIDE_OP_ADD));
  CHECK(tide_backend_missing_primitives(TIDE_CUDA, NULL, 0) == -1 && contains(tide_last_error(), "did not load"));
  int64_t versions[5];
  CHECK(tide_cuda_library_versions(versions) == TIDE_ERR_UNSUPPORTED && contains(tide_last_error(), "did not load"));

  /* Names. */
  int dev = -1;
  CHECK(tide_device_parse("cpu", &dev) == TIDE_OK && dev == TIDE_CPU);
  CHECK(tide_device_parse("CPU:0", &dev) == TIDE_OK && dev == TIDE_CPU);
  CHECK(tide_device_parse("/device:CPU:0", &dev) == TIDE_OK && dev == TIDE_CPU);
  CHECK(tide_device_parse("cuda:0", &dev) == TIDE_ERR_UNSUPPORTED);
  CHECK(contains(tide_last_error(), "no CUDA device visible") && contains(tide_last_error(), "cuda:0") &&
        contains(tide_last_error(), "did not load"));
  CHECK(tide_device_parse("/device:GPU:0", &dev) == TIDE_ERR_UNSUPPORTED);
  CHECK(tide_device_parse("gpu", &dev) == TIDE_ERR_UNSUPPORTED);
  CHECK(tide_device_parse("tpu", &dev) == TIDE_ERR_VALUE && contains(tide_last_error(), "not a device name"));
  CHECK(tide_device_parse("cuda:x", &dev) == TIDE_ERR_VALUE && contains(tide_last_error(), "GPU number"));
  CHECK(tide_device_parse("cuda:-1", &dev) == TIDE_ERR_VALUE);
  CHECK(tide_device_parse(NULL, &dev) == TIDE_ERR_VALUE);
  char buf[32];
  CHECK(strcmp(tide_device_name(TIDE_CPU, buf, sizeof buf), "cpu") == 0);
  CHECK(strcmp(tide_device_name(TIDE_CUDA + 2, buf, sizeof buf), "cuda:2") == 0);

  /* GPU settings and queries name the missing GPU. */
  int64_t cur = -1, peak = -1;
  CHECK(tide_cuda_memory_info(0, &cur, &peak) == TIDE_ERR_UNSUPPORTED);
  CHECK(contains(tide_last_error(), "memory_info") && contains(tide_last_error(), "no CUDA device visible"));
  CHECK(tide_cuda_set_memory_growth(0, false) == TIDE_ERR_UNSUPPORTED);
  CHECK(tide_cuda_set_memory_limit(0, 1 << 20) == TIDE_ERR_UNSUPPORTED);
  CHECK(tide_cuda_set_memory_limit(0, -1) == TIDE_ERR_VALUE);
  CHECK(tide_cuda_synchronize(0) == TIDE_ERR_UNSUPPORTED);
  CHECK(!tide_cuda_device_used(0));
  CHECK(!tide_cuda_tf32_enabled());
  tide_cuda_enable_tf32(true);
  CHECK(tide_cuda_tf32_enabled());
  tide_cuda_enable_tf32(false);

  /* Moving tensors: to the CPU shares; to a GPU says none is there. */
  int64_t dims[1] = {3};
  tide_tensor x = blank(), y = blank();
  CHECK(tide_tensor_init_heap(&x, TIDE_FLOAT32, 1, dims) == TIDE_OK);
  CHECK(tide_tensor_to_device(&y, &x, TIDE_CPU) == TIDE_OK && y.data == x.data);
  tide_tensor_release(&y);
  y = blank();
  CHECK(tide_tensor_to_device(&y, &x, TIDE_CUDA) == TIDE_ERR_UNSUPPORTED);
  CHECK(contains(tide_last_error(), "no CUDA device visible") && y.data == NULL);
  CHECK(tide_tensor_to_device(&y, &x, -3) == TIDE_ERR_VALUE);

  /* Placed ops: on the CPU as usual; on a missing GPU an error. */
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.dtype = TIDE_FLOAT32;
  a.nints = 1;
  a.ints[0] = 4;
  a.scalars[1] = 1;
  tide_tensor r = blank();
  tide_tensor *rp = &r;
  CHECK(tide_op_run_device(TIDE_CPU, TIDE_OP_RANDOM_UNIFORM, &a, 0, NULL, 1, &rp) == TIDE_OK && r.nelem == 4);
  tide_tensor_release(&r);
  r = blank();
  CHECK(tide_op_run_device(TIDE_CUDA, TIDE_OP_RANDOM_UNIFORM, &a, 0, NULL, 1, &rp) == TIDE_ERR_UNSUPPORTED);
  CHECK(contains(tide_last_error(), "no CUDA device visible") && r.data == NULL);

  /* The dispatch rule on headers that claim to be on a GPU. */
  float da[3] = {1, 2, 3}, db[3] = {4, 5, 6};
  tide_tensor ga, gb, c = blank();
  fake_on(&ga, da, TIDE_CUDA);
  fake_on(&gb, db, TIDE_CUDA + 1);
  CHECK(tide_op_binary(TIDE_OP_ADD, &c, &x, &ga) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "add: input 1 is on cpu but input 2 is on cuda:0") && c.data == NULL);
  CHECK(tide_op_binary(TIDE_OP_MUL, &c, &ga, &x) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "input 1 is on cuda:0 but input 2 is on cpu"));
  /* A 0-d CPU tensor (a Lua number) would be copied up to join a GPU op: here that copy says no GPU is there. */
  tide_tensor two = blank();
  CHECK(tide_tensor_init(&two, TIDE_FLOAT32, 0, NULL) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_MUL, &c, &ga, &two) == TIDE_ERR_UNSUPPORTED);
  CHECK(contains(tide_last_error(), "no CUDA device visible") && c.data == NULL);
  tide_tensor_release(&two);
  CHECK(tide_op_binary(TIDE_OP_ADD, &c, &ga, &gb) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "cuda:0") && contains(tide_last_error(), "cuda:1"));
  /* Without the backend no op has a CUDA kernel: a clear error, nothing run. */
  CHECK(tide_op_unary(TIDE_OP_EXP, &c, &ga) == TIDE_ERR_UNSUPPORTED);
  CHECK(contains(tide_last_error(), "exp: no CUDA kernel") && contains(tide_last_error(), "cuda:0") &&
        contains(tide_last_error(), ":cpu()"));
  CHECK(tide_op_run_device(TIDE_CPU, TIDE_OP_EXP, NULL, 1, (const tide_tensor *const[]){&ga}, 1,
                           (tide_tensor *const[]){&c}) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "the op runs on cpu"));
  /* Inference alone does not care where the data is. */
  CHECK(tide_op_infer(TIDE_OP_ADD, NULL, 2, (const tide_tensor *const[]){&ga, &ga}, 1,
                      (tide_tensor *const[]){&c}) == TIDE_OK && c.nelem == 3);
  c = blank();
  /* Writes into GPU tensors are refused, not done on device memory from the host. */
  CHECK(tide_tensor_copy_into(&ga, &x) == TIDE_ERR_UNSUPPORTED);
  CHECK(tide_tensor_assign(&ga, &ga) == TIDE_ERR_UNSUPPORTED);
  tide_tensor_release(&ga);
  tide_tensor_release(&gb);
  tide_tensor_release(&x);
  return CHECK_SUMMARY("device");
}
