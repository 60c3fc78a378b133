/* core/backend.h — one table per device (tide_backend: a kernel per registry
 * op, the fused-node runner, memory and copies) that the registry, the views,
 * the copies and the graph executor pick their code from; the CPU's
 * (core/backend_cpu.c) and the CUDA one libtide_cuda.so fills when libtide
 * loads it at run time (kernels/cuda), inside the larger table below. */
#ifndef TIDE_CORE_BACKEND_H
#define TIDE_CORE_BACKEND_H

#include "registry.h"
#include "linalg.h"

typedef struct tide_fused_runner tide_fused_runner; /* tide/fused.h */

typedef enum tide_copy_kind { TIDE_COPY_H2D = 0, TIDE_COPY_D2H = 1, TIDE_COPY_D2D = 2 } tide_copy_kind;

/* A device's backend. Unit k below is an ordinal among the device's units
 * (a GPU among the visible GPUs; the CPU is unit 0); every call may fail
 * with an error set, never a crash. */
typedef struct tide_backend {
  const char *name; /* "cpu", "cuda" */
  /* One slot per registry op (indexed by op id), NULL where the device has
   * no kernel for it. Kernels get their outputs allocated on the inputs'
   * device (view ops and TIDE_OPF_DATA_SHAPE ops make their own). The CPU's
   * fills every slot: ops.def's CPU column. */
  tide_kernel_fn kernels[TIDE_NUM_OPS];
  /* Runs the graph's fused nodes (tide/fused.h); NULL: none yet. */
  const tide_fused_runner *fused;
  /* The device's allocator: blocks go back to unit k's cache. */
  tide_status (*alloc)(int k, size_t nbytes, void **ptr);
  void (*free)(int k, void *ptr, size_t nbytes);
  /* A contiguous copy between the host and unit k, or within k; D2H waits
   * for the device (the host reads right after). */
  tide_status (*memcpy)(int k, tide_copy_kind kind, void *dst, const void *src, size_t nbytes);
} tide_backend;

/* The CPU's backend (core/backend_cpu.c): the one place core names kernel
 * code, ops.def's CPU column and cpu/'s fused-node runner. */
extern const tide_backend tide_cpu_backend;
/* cpu/fused.c's runner, which tide_cpu_backend holds. */
extern const tide_fused_runner tide_cpu_fused_runner;

/* The backend of device code dev: the CPU's, or a GPU's once libtide_cuda.so
 * has loaded (NULL before, or for an unknown device). */
const tide_backend *tide_backend_for(int dev);


/* ---- the CUDA backend's table (libtide_cuda.so) ---- */

/* Bumped whenever the table's layout changes: a stale libtide_cuda.so is refused. */
enum { TIDE_CUDA_BACKEND_ABI = 3 };

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
  /* The device's table: kernels, fused runner (none yet), allocator, copies. */
  tide_backend base;
  /* Visible GPUs; 0 with `why` filled when the driver or the GPUs are missing. */
  int (*device_count)(char *why, size_t why_size);
  tide_status (*device_info)(int k, char *name, size_t size, int64_t *total_bytes);
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
} tide_cuda_backend;

/* The one symbol libtide_cuda.so exports: fill *be (zeroed by the caller). */
typedef tide_status (*tide_cuda_backend_init_fn)(const tide_cuda_host *host, tide_cuda_backend *be);
#define TIDE_CUDA_BACKEND_INIT "tide_cuda_backend_init"

/* GPU ordinal of a dev code (dev >= TIDE_CUDA). */
static inline int tide_cuda_ordinal(int dev) { return dev - TIDE_CUDA; }

/* ---- core/device.c, for the registry ---- */
/* The loaded backend, or NULL (no library, wrong ABI): loads it on first use. */
const tide_cuda_backend *tide_cuda_backend_get(void);
/* A contiguous tensor of src's elements on src's device: another reference
 * when src is one, else a copy by the device's COPY kernel. */
tide_status tide_device_contiguous(tide_tensor *dst, const tide_tensor *src);
/* Give `t`, whose contiguous layout is set, a new buffer on device dev. */
tide_status tide_device_alloc_data(tide_tensor *t, int dev);
/* Run op `def` on device dev (a GPU): every input must be there (the registry's cold path). */
tide_status tide_device_op_run(int dev, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out);

#endif
