/* cuda/cuda_internal.h — what the backend's C files share: per-GPU state
 * (stream, memory pool, counts, cuBLASLt handle), CUDA error reporting, the host table. */
#ifndef TIDE_CUDA_INTERNAL_H
#define TIDE_CUDA_INTERNAL_H

#include "../core/backend.h"
#include "launch.h"

#include <cuda_runtime_api.h>
#include <pthread.h>

/* One visible GPU. Created on first use (the moment its settings freeze). */
typedef struct tcu_device {
  pthread_mutex_t lock;
  bool started;              /* stream and pool made: settings are fixed */
  bool grow;                 /* grow on demand (default) or reserve at start */
  int64_t limit;             /* bytes; 0 = the whole GPU */
  int64_t current, peak;     /* bytes held by tensors (atomic) */
  cudaStream_t stream;       /* every kernel and copy of this GPU, in order */
  cudaMemPool_t pool;        /* the stream-ordered allocator's cache */
  int *bad;                  /* device flag for integer errors of binary ops */
  void *lt;                  /* cublasLtHandle_t, made at the first matmul */
  void *workspace;           /* cuBLASLt's workspace */
  size_t workspace_bytes;
} tcu_device;

extern tcu_device tcu_devices[TIDE_MAX_CUDA_DEVICES];
extern const tide_cuda_host *tcu_host;
extern bool tcu_tf32;

/* GPU k's state, started (stream, pool, reservation) on first call; NULL with an error set. */
tcu_device *tcu_device_get(int k);
/* A status for CUDA error e during `what` (TIDE_ERR_MEMORY for out-of-memory). */
tide_status tcu_fail(cudaError_t e, const char *what);
/* The status for a launcher's result r (0, a cudaError_t or TCU_UNSUPPORTED) of op def on dtype dt. */
tide_status tcu_launched(int r, const tide_op_def *def, int dt);
/* GPU ordinal of a tensor that lives on one. */
static inline int tcu_ordinal(const tide_tensor *t) { return tide_cuda_ordinal(t->dev); }

/* The caching allocator (allocator.c). */
tide_status tcu_alloc(int k, size_t nbytes, void **ptr);
void tcu_free(int k, void *ptr, size_t nbytes);
tide_status tcu_set_memory_growth(int k, bool grow);
tide_status tcu_set_memory_limit(int k, int64_t bytes);
tide_status tcu_memory_info(int k, int64_t *current, int64_t *peak);
bool tcu_device_used(int k);

/* NCCL across this process's GPUs (nccl.c): see tide_cuda_backend.all_reduce_sum. */
tide_status tcu_all_reduce_sum(int n_dev, const int *devs, int n_buf, const void *const *send, void *const *recv,
                               const int64_t *counts, const int *dtypes);
int tcu_nccl_version(void);

/* The op kernels (ops.c, matmul.c), in the registry's kernel signature. */
#define TCU_KERNEL(name)                                                                                   \
  tide_status name(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in, \
                   int n_out, tide_tensor *const *out)
TCU_KERNEL(tcu_k_unary);
TCU_KERNEL(tcu_k_binary);
TCU_KERNEL(tcu_k_where);
TCU_KERNEL(tcu_k_clip);
TCU_KERNEL(tcu_k_cast);
TCU_KERNEL(tcu_k_reduce);
TCU_KERNEL(tcu_k_random);
TCU_KERNEL(tcu_k_matmul);

#endif
