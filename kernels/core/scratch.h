/* core/scratch.h — charging this thread's memory account from inside the engine: the
 * refusal message naming the cap that refused, and kernels' big scratch buffers. */
#ifndef TIDE_CORE_SCRATCH_H
#define TIDE_CORE_SCRATCH_H
#include "internal.h"

/* Charge `bytes` to `a` and its parents (all within their limits, or none):
 * NULL when charged, else the account whose limit refused (a load's nested
 * cap, or the VM's around it), so the message names the cap that refused. */
tide_memory_account *tide_memory_account_try(tide_memory_account *a, int64_t bytes);
/* Set TIDE_ERR_MEMORY: "memory limit of <refuser's limit> bytes reached: <what> of
 * <nbytes> bytes does not fit beside the <its use> bytes in use". */
tide_status tide_memory_refused(const tide_memory_account *refuser, const char *what, size_t nbytes);

/* A kernel's temporary buffer (im2col patches, sort keys, unique's tables,
 * partial sums): 64-byte aligned, from tide_alloc, and charged to this
 * thread's memory account (a pool worker runs under its caller's), so a capped
 * VM's cap bounds a kernel's scratch as it does tensors. `op` and `what` name
 * it in the error (TIDE_ERR_MEMORY, set) when NULL is returned. Free with
 * tide_scratch_free and the same size, on any thread. */
void *tide_scratch_alloc(size_t nbytes, const char *op, const char *what);
void tide_scratch_free(void *p, size_t nbytes);

#endif
