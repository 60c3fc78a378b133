/* core/linalg.h — what the linalg/creation/random family's inference and CPU
 * kernels share: matmul's shape plan, range sizes, and the CPU GEMM. */
#ifndef TIDE_CORE_LINALG_H
#define TIDE_CORE_LINALG_H

#include "registry.h"

/* matmul's shapes: out = batch + [M, N] (a dim dropped for a 1-D operand). */
typedef struct tide_mm_dims {
  int nb;                          /* broadcast batch rank */
  int64_t batch[TIDE_MAX_DIMS];    /* broadcast batch dims */
  int64_t m, k, n;
  bool a_vec, b_vec;               /* 1-D operands (numpy: vector, its dim removed) */
  bool ta, tb;                     /* transpose flags that apply (ignored for 1-D) */
} tide_mm_dims;

/* Plan a matmul of a and b under attrs' TRANSPOSE_* flags; errors name `op`. */
tide_status tide_matmul_dims(const char *op, const tide_attrs *attrs, const tide_tensor *a, const tide_tensor *b,
                             tide_mm_dims *d);

/* Elements of range(start, limit, delta) in dtype dt, as TF's Range op
 * counts them; -1 with an error naming `op` when the arguments are invalid. */
int64_t tide_range_count(const char *op, double start, double limit, double delta, int dt);

/* C = op(A) op(B) + beta C in dt (float32 or float64), row-major with BLAS's
 * leading dimensions, split over the pool when large (cpu/gemm.c). */
void tide_cpu_gemm(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                   const void *b, int64_t ldb, double beta, void *c, int64_t ldc);
/* The same product on the calling thread alone (for kernels that split work themselves). */
void tide_cpu_gemm_serial(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                          const void *b, int64_t ldb, double beta, void *c, int64_t ldc);
/* Keep OpenBLAS at one thread: tide's pool splits the work (cpu/gemm.c). */
void tide_blas_single_thread(void);

#endif
