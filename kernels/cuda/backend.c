/* cuda/backend.c — libtide_cuda.so's one entry point: the table libtide loads
 * (its tide_backend: one kernel slot per registry op, the allocator, copies;
 * and the device queries). */
#include "cuda_internal.h"

#include <cublasLt.h>
#include <cudnn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tide_cuda_host *tcu_host;
bool tcu_tf32;

/* cudaGetDeviceCount honours CUDA_VISIBLE_DEVICES; a missing driver or GPU is
 * an error code here, which is "no GPU" with the reason, never a crash. */
static int device_count(char *why, size_t size) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e) {
    snprintf(why, size, "the CUDA runtime reports %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
    return 0;
  }
  if (n == 0) snprintf(why, size, "the CUDA runtime sees no GPU (CUDA_VISIBLE_DEVICES=%s)",
                       getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "<unset>");
  return n;
}

static tide_status device_info(int k, char *name, size_t size, int64_t *total_bytes) {
  struct cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, k);
  if (e) return tcu_fail(e, "device_info");
  snprintf(name, size, "%s", p.name);
  *total_bytes = (int64_t)p.totalGlobalMem;
  return TIDE_OK;
}

static tide_status copy(int k, tide_copy_kind kind, void *dst, const void *src, size_t nbytes) {
  tcu_device *d = tcu_device_get(k);
  if (!d) return tide_last_status();
  enum cudaMemcpyKind how = kind == TIDE_COPY_H2D ? cudaMemcpyHostToDevice
                            : kind == TIDE_COPY_D2H ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
  /* From pageable host memory the call returns once the source is staged, so
   * the caller may free it; D2H waits, since the host reads right after. */
  cudaError_t e = cudaMemcpyAsync(dst, src, nbytes, how, d->stream);
  if (!e && kind == TIDE_COPY_D2H) e = cudaStreamSynchronize(d->stream);
  return e ? tcu_fail(e, "copy between host and GPU") : TIDE_OK;
}

static tide_status synchronize(int k) {
  tcu_device *d = tcu_device_get(k);
  if (!d) return tide_last_status();
  cudaError_t e = cudaStreamSynchronize(d->stream);
  return e ? tcu_fail(e, "synchronize") : TIDE_OK;
}

/* Calls into each library, so all of them load and answer without a GPU. */
static void versions(int64_t out[5]) {
  int runtime = 0, driver = 0, major = 0, minor = 0;
  cudaRuntimeGetVersion(&runtime);
  if (cudaDriverGetVersion(&driver)) driver = 0;
  (void)cudaGetLastError();
  out[0] = runtime;
  out[1] = driver;
  out[2] = (int64_t)cublasLtGetVersion();
  out[3] = (int64_t)cudnnGetVersion();
  out[4] = nvrtcVersion(&major, &minor) == NVRTC_SUCCESS ? major * 1000 + minor * 10 : 0;
}

static void set_tf32(bool on) { __atomic_store_n(&tcu_tf32, on, __ATOMIC_RELAXED); }

/* The registry ops with a CUDA kernel, by family; the elementwise ones are
 * core/elementwise.def's rows (cuda/elementwise.cu has a kernel for each). */
static void fill_kernels(tide_backend *be) {
#define TIDE_UNARY(ID, ...) be->kernels[TIDE_OP_##ID] = tcu_k_unary;
#define TIDE_BINARY(ID, ...) be->kernels[TIDE_OP_##ID] = tcu_k_binary;
#include "../core/elementwise.def"
  static const int reduce[] = {TIDE_OP_SUM, TIDE_OP_MEAN, TIDE_OP_MAX, TIDE_OP_MIN, TIDE_OP_PROD, TIDE_OP_ANY,
                               TIDE_OP_ALL};
  static const int random[] = {TIDE_OP_RANDOM_UNIFORM, TIDE_OP_RANDOM_NORMAL, TIDE_OP_TRUNCATED_NORMAL};
  for (size_t i = 0; i < sizeof reduce / sizeof *reduce; i++) be->kernels[reduce[i]] = tcu_k_reduce;
  for (size_t i = 0; i < sizeof random / sizeof *random; i++) be->kernels[random[i]] = tcu_k_random;
  be->kernels[TIDE_OP_CAST] = tcu_k_cast;
  be->kernels[TIDE_OP_COPY] = tcu_k_cast;
  be->kernels[TIDE_OP_WHERE] = tcu_k_where;
  be->kernels[TIDE_OP_CLIP] = tcu_k_clip;
  be->kernels[TIDE_OP_MATMUL] = tcu_k_matmul;
}

__attribute__((visibility("default"))) tide_status tide_cuda_backend_init(const tide_cuda_host *host,
                                                                          tide_cuda_backend *be) {
  tcu_host = host;
  be->abi = TIDE_CUDA_BACKEND_ABI;
  be->size = sizeof *be;
  be->device_count = device_count;
  be->device_info = device_info;
  be->base.name = "cuda";
  be->base.alloc = tcu_alloc;
  be->base.free = tcu_free;
  be->base.memcpy = copy;
  be->synchronize = synchronize;
  be->set_memory_growth = tcu_set_memory_growth;
  be->set_memory_limit = tcu_set_memory_limit;
  be->memory_info = tcu_memory_info;
  be->device_used = tcu_device_used;
  be->set_tf32 = set_tf32;
  be->versions = versions;
  be->nccl_version = tcu_nccl_version;
  be->all_reduce_sum = tcu_all_reduce_sum;
  fill_kernels(&be->base);
  return TIDE_OK;
}
