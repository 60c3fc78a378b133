/* core/backend.h — the seam between core and the CUDA backend that libtide
 * loads at run time (kernels/cuda -> libtide_cuda.so): the table it fills. */
#ifndef TIDE_CORE_BACKEND_H
#define TIDE_CORE_BACKEND_H

#include "registry.h"
#include "linalg.h"

/* Bumped whenever the table's layout changes: a stale libtide_cuda.so is refused. */
enum { TIDE_CUDA_BACKEND_ABI = 2 };

typedef enum tide_copy_kind { TIDE_COPY_H2D = 0, TIDE_COPY_D2H = 1, TIDE_COPY_D2D = 2 } tide_copy_kind;

/* What core lends the backend: its internal helpers (hidden symbols of libtide). */
typedef struct tide_cuda_host {
  tide_status (*reduce_axes)(const tide_op_def *def, const tide_attrs *attrs, int ndim, bool *mask);
  tide_status (*matmul_dims)(const char *op, const tide_attrs *attrs, const tide_tensor *a, const tide_tensor *b,
                             tide_mm_dims *d);
} tide_cuda_host;

/* GPU k below is an ordinal among the visible GPUs; every call may fail with
 * an error set (never a crash), and kernels run on the device's stream. */
typedef struct tide_cuda_backend {
  int abi;
  size_t size; /* sizeof(tide_cuda_backend) as the backend was built: another ops.def or layout is refused */
  /* Visible GPUs; 0 with `why` filled when the driver or the GPUs are missing. */
  int (*device_count)(char *why, size_t why_size);
  tide_status (*device_info)(int k, char *name, size_t size, int64_t *total_bytes);
  /* The caching, stream-ordered allocator: blocks go back to k's cache. */
  tide_status (*alloc)(int k, size_t nbytes, void **ptr);
  void (*free)(int k, void *ptr, size_t nbytes);
  /* A contiguous copy; D2H waits for the stream (the host reads right after). */
  tide_status (*memcpy)(int k, tide_copy_kind kind, void *dst, const void *src, size_t nbytes);
  tide_status (*synchronize)(int k);
  tide_status (*set_memory_growth)(int k, bool grow);
  tide_status (*set_memory_limit)(int k, int64_t bytes);
  tide_status (*memory_info)(int k, int64_t *current, int64_t *peak);
  bool (*device_used)(int k);
  void (*set_tf32)(bool on);
  /* The loaded libraries' versions: CUDA runtime, driver (0: none), cuBLASLt, cuDNN, NVRTC (major * 1000 + minor * 10). */
  void (*versions)(int64_t out[5]);
  /* NCCL's version code (major * 10000 + minor * 100 + patch; 0: unknown), without a GPU. */
  int (*nccl_version)(void);
  /* Sum each buffer b < n_buf over GPUs devs[0..n_dev): send[b * n_dev + i]
   * (on devs[i], counts[b] elements of dtype dtypes[b]) into recv[b * n_dev + i]
   * on the same GPU, in one NCCL group, ordered on each GPU's stream. */
  tide_status (*all_reduce_sum)(int n_dev, const int *devs, int n_buf, const void *const *send, void *const *recv,
                                const int64_t *counts, const int *dtypes);
  /* One slot per registry op (indexed by op id), NULL where the op has no
   * CUDA kernel. Outputs arrive allocated on the inputs' device. */
  tide_kernel_fn kernels[TIDE_NUM_OPS];
} tide_cuda_backend;

/* The one symbol libtide_cuda.so exports: fill *be (zeroed by the caller). */
typedef tide_status (*tide_cuda_backend_init_fn)(const tide_cuda_host *host, tide_cuda_backend *be);
#define TIDE_CUDA_BACKEND_INIT "tide_cuda_backend_init"

/* GPU ordinal of a dev code (dev >= TIDE_CUDA). */
static inline int tide_cuda_ordinal(int dev) { return dev - TIDE_CUDA; }

/* ---- core/device.c, for the registry ---- */
/* The loaded backend, or NULL (no library, wrong ABI): loads it on first use. */
const tide_cuda_backend *tide_cuda_backend_get(void);
/* Give `t`, whose contiguous layout is set, a new buffer on device dev. */
tide_status tide_device_alloc_data(tide_tensor *t, int dev);
/* The backend's COPY kernel (views that must copy on a GPU; only called for
 * GPU tensors, which exist only once the backend loaded). */
tide_kernel_fn tide_device_copy_kernel(void);
/* Run op `def` on device dev (a GPU): every input must be there (the registry's cold path). */
tide_status tide_device_op_run(int dev, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out);

#endif
