/* tide/device.h — devices: which GPUs the CUDA backend (libtide_cuda.so, loaded
 * at run time) sees, moving tensors between devices, and the GPU memory settings. */
#ifndef TIDE_DEVICE_H
#define TIDE_DEVICE_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"
#include "tide/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor's `dev` is TIDE_CPU, or TIDE_CUDA + k for GPU k (cuda:0 is TIDE_CUDA). */
enum { TIDE_MAX_CUDA_DEVICES = 64 };

/* GPUs the CUDA backend sees (CUDA_VISIBLE_DEVICES honoured). 0 when there is
 * no backend library, no driver or no GPU; tide_cuda_unavailable_reason() says which.
 * The first call loads the backend; a failure to load is never fatal. */
TIDE_API int tide_cuda_device_count(void);
/* Why tide_cuda_device_count() is 0 ("" when it is not). */
TIDE_API const char *tide_cuda_unavailable_reason(void);
/* Parse "cpu", "cuda", "gpu", "cuda:K", "gpu:K" or "/device:GPU:K" into a dev
 * code; for a GPU, checks that GPU K is visible (else the error says why). */
TIDE_API tide_status tide_device_parse(const char *name, int *dev);
/* "cpu" or "cuda:K" for a dev code, written into buf; returns buf. */
TIDE_API const char *tide_device_name(int dev, char *buf, size_t size);
/* GPU k's product name and total memory in bytes. */
TIDE_API tide_status tide_cuda_device_info(int k, char *name, size_t size, int64_t *total_bytes);

/* Make the blank header `dst` hold src's values on device `dev` (a copy; the
 * same device gives another reference). Strings stay on the CPU. */
TIDE_API tide_status tide_tensor_to_device(tide_tensor *dst, const tide_tensor *src, int dev);

/* GPU memory settings, as tf.config's: they must come before GPU k is first
 * used (an allocation), else TIDE_ERR_VALUE. Growth on demand is the default;
 * growth off reserves the limit (or most of the GPU) at first use. */
TIDE_API tide_status tide_cuda_set_memory_growth(int k, bool grow);
/* Cap GPU k's allocator at `bytes` (0: no cap). */
TIDE_API tide_status tide_cuda_set_memory_limit(int k, int64_t bytes);
/* Bytes of GPU k held by tensors now and at most so far. */
TIDE_API tide_status tide_cuda_memory_info(int k, int64_t *current, int64_t *peak);
/* True once GPU k has had an allocation (its settings are fixed from then on). */
TIDE_API bool tide_cuda_device_used(int k);
/* Let float32 matmuls use TF32 tensor cores (off by default, unlike TF). */
TIDE_API void tide_cuda_enable_tf32(bool on);
TIDE_API bool tide_cuda_tf32_enabled(void);
/* Wait until the work queued on GPU k has finished (for timing). */
TIDE_API tide_status tide_cuda_synchronize(int k);
/* tide_op_run on device dev: every input must be there; ops without inputs
 * (fill, random) make their result there. */
TIDE_API tide_status tide_op_run_device(int dev, int op, const tide_attrs *attrs, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out);
/* Versions of the libraries the CUDA backend loaded, as each reports it: CUDA
 * runtime, driver (0 without one), cuBLASLt, cuDNN, NVRTC (major * 1000 + minor * 10).
 * Fails when the backend library did not load; needs no GPU. */
TIDE_API tide_status tide_cuda_library_versions(int64_t out[5]);
/* Sum tensors across GPUs with NCCL (MirroredStrategy's all-reduce): for each
 * t < n_tensors, in[t * n_dev + i] (i < n_dev: one GPU per replica, the same
 * GPUs for every t, the same dtype and shape across replicas) summed into
 * out[t * n_dev + i], a new contiguous tensor on in's GPU (out are blank
 * headers). Every tensor goes in one NCCL group. */
TIDE_API tide_status tide_device_all_reduce_sum(int n_dev, int n_tensors, const tide_tensor *const *in,
                                                tide_tensor *const *out);
/* NCCL's version (major * 10000 + minor * 100 + patch), 0 without the backend; needs no GPU. */
TIDE_API int tide_nccl_version(void);
/* True when op `op` has a CUDA kernel (false without a backend). */
TIDE_API bool tide_op_has_cuda_kernel(int op);
/* True when the backend of device code dev (TIDE_CPU; TIDE_CUDA + k once the
 * CUDA library loaded, a GPU or not) has a kernel for op: the CPU's has one for every op. */
TIDE_API bool tide_op_has_kernel(int dev, int op);
/* The primitive ops (TIDE_OPF_PRIMITIVE: those every backend must implement)
 * that dev's backend has no kernel for, in op order: up to `max` op codes into
 * `ops` (may be NULL with max 0). Returns how many there are, or -1 with an
 * error when dev has no backend (the CUDA library did not load). */
TIDE_API int tide_backend_missing_primitives(int dev, int *ops, int max);

#ifdef __cplusplus
}
#endif
#endif
