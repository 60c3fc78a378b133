/* cpu/gemm.c — the one float32/float64 GEMM of the CPU kernels (matmul, the
 * im2col convolutions): which library runs a product, and how it is split.
 *
 * - A product with one row or one column (a batch of 1 through a Dense
 *   layer) is a matrix-vector product: OpenBLAS's gemv, which streams the
 *   matrix once (1x784x256 on an AVX2 EPYC: 13 us against sgemm's 50, which
 *   packs the matrix first).
 * - Small products (up to SMALL_MNK multiply-adds) run on the calling thread
 *   through the library measured faster there on this machine
 *   (cpu/gemm_small.c: OpenBLAS's small-matrix kernels or oneDNN's sgemm).
 * - Larger ones are cut into tiles of C over tide's pool, about two per
 *   thread (so a thread that another program slows down takes fewer), each
 *   tile one call on its thread alone: oneDNN's sgemm for float32 (5-20%
 *   faster than OpenBLAS's on one thread from 128^3 up, on 2-core Xeon and
 *   EPYC machines), OpenBLAS's dgemm for float64.
 * - OpenBLAS is kept at one thread and oneDNN's OpenMP at one thread per
 *   caller: their own thread pools never start, so no second pool spins on
 *   the cores after a product (OpenBLAS's threads spin ~0.1 s after each
 *   call) while tide's pool wants them. */
#include "../core/linalg.h"
#include "../core/parallel.h"
#include "gemm_small.h"
#include "onednn_load.h"
#include "signals.h"

#include <cblas.h>
#include <stdio.h>

/* OpenBLAS runs a product of at most this many multiply-adds (M*N*K) on one
 * thread (interface/gemm.c: SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD). */
enum { SMALL_MNK = 65536 * 4 };

/* A tile is at least this many rows and columns: thinner tiles repack the
 * other operand too often (tiles of 128x128 and up lose under 5% to whole
 * products on one thread). Each tile repacks its panels of A and B, so
 * fewer tiles are faster when both cores are free: on the 2-core Xeon,
 * medians of 5 alternating rounds in GFLOP/s at 1, 2 and 4 tiles a thread:
 * 1024^3 408/405/384, 128x1024x1024 363/354/332, 2048^3 427/422/420; with
 * another program busy on one core all were within noise (~200; 2048^3
 * 215/234/258). Two a thread keeps most of both. */
enum { MIN_TILE = 128, TILES_PER_THREAD = 2 };

void tide_blas_single_thread(void) {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

/* y = alpha op(M) x + beta y through BLAS's gemv in dt; M is rows x cols
 * row-major with leading dimension ld. beta 0 must ignore y's old bits,
 * which may be NaN (OpenBLAS's scal by 0 keeps a NaN in some releases):
 * those y are zeroed first. */
static void gemv(int dt, bool trans, int64_t rows, int64_t cols, const void *mat, int64_t ld, const void *x,
                 int64_t incx, double beta, void *y, int64_t incy) {
  int64_t len = trans ? cols : rows;
  enum CBLAS_TRANSPOSE T = trans ? CblasTrans : CblasNoTrans;
  if (dt == TIDE_FLOAT32) {
    if (beta == 0)
      for (int64_t i = 0; i < len; i++) ((float *)y)[i * incy] = 0.0f;
    cblas_sgemv(CblasRowMajor, T, (blasint)rows, (blasint)cols, 1.0f, mat, (blasint)ld, x, (blasint)incx,
                (float)beta, y, (blasint)incy);
  } else {
    if (beta == 0)
      for (int64_t i = 0; i < len; i++) ((double *)y)[i * incy] = 0.0;
    cblas_dgemv(CblasRowMajor, T, (blasint)rows, (blasint)cols, 1.0, mat, (blasint)ld, x, (blasint)incx, beta, y,
                (blasint)incy);
  }
}

/* C = op(A) op(B) + beta C where op(A) has one row or op(B) one column. */
static void gemm_as_gemv(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                         const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  if (m == 1) { /* C's row = op(B)^T x, x = op(A)'s row (a column of A when ta) */
    int64_t incx = ta ? lda : 1;
    if (tb) gemv(dt, false, n, k, b, ldb, a, incx, beta, c, 1); /* B is n x k */
    else gemv(dt, true, k, n, b, ldb, a, incx, beta, c, 1);     /* B is k x n */
  } else { /* n == 1: C's column = op(A) x, x = op(B)'s column (a row of B when tb) */
    int64_t incx = tb ? 1 : ldb;
    if (ta) gemv(dt, true, k, m, a, lda, b, incx, beta, c, ldc); /* A is k x m */
    else gemv(dt, false, m, k, a, lda, b, incx, beta, c, ldc);   /* A is m x k */
  }
}

/* One product on the calling thread alone. */
static void gemm_here(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                      const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  if ((m == 1 || n == 1) && k > 0) {
    gemm_as_gemv(dt, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  double mnk = (double)m * (double)n * (double)k;
  /* oneDNN (loaded at the first product it runs) only when each call can be held to one OpenMP thread:
   * else it would start OpenMP threads in each tile; without it float32 goes to OpenBLAS. */
  if (dt == TIDE_FLOAT32 && (mnk > SMALL_MNK || tide_gemm_small_onednn(mnk)) && tide_onednn_available()) {
    omp_set_num_threads(1);
    sigset_t held;
    tide_hold_signals(&held); /* a handler inside oneDNN's sgemm corrupts the heap (cpu/signals.h) */
    dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, (float)beta, c, ldc);
    tide_release_signals(&held);
    return;
  }
  enum CBLAS_TRANSPOSE A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
  if (dt == TIDE_FLOAT32)
    cblas_sgemm(CblasRowMajor, A, B, (blasint)m, (blasint)n, (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb,
                (float)beta, c, (blasint)ldc);
  else
    cblas_dgemm(CblasRowMajor, A, B, (blasint)m, (blasint)n, (blasint)k, 1.0, a, (blasint)lda, b, (blasint)ldb,
                beta, c, (blasint)ldc);
}

typedef struct gemm_job {
  int dt;
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  const char *a, *b;
  char *c;
  double beta;
  int64_t rows, cols, tn; /* tile size, and tiles along N */
} gemm_job;

static void gemm_tiles(void *arg, int64_t t0, int64_t t1) {
  const gemm_job *j = arg;
  int64_t es = (int64_t)tide_dtype_size_unchecked(j->dt);
  for (int64_t t = t0; t < t1; t++) {
    int64_t r0 = t / j->tn * j->rows, c0 = t % j->tn * j->cols;
    int64_t mr = j->m - r0 < j->rows ? j->m - r0 : j->rows, nc = j->n - c0 < j->cols ? j->n - c0 : j->cols;
    /* op(A)'s rows r0.. and op(B)'s columns c0.., in BLAS's row-major layouts */
    const char *A = j->a + (j->ta ? r0 : r0 * j->lda) * es;
    const char *B = j->b + (j->tb ? c0 * j->ldb : c0) * es;
    char *C = j->c + (r0 * j->ldc + c0) * es;
    gemm_here(j->dt, j->ta, j->tb, mr, nc, j->k, A, j->lda, B, j->ldb, j->beta, C, j->ldc);
  }
}

/* Tile sizes for about `want` tiles of at least MIN_TILE rows and columns:
 * the longer side is halved first (square tiles repack least), and tile
 * columns are whole 64-byte lines. */
static void plan_tiles(gemm_job *j, int64_t want) {
  int64_t rows = j->m, cols = j->n;
  for (;;) {
    int64_t tm = (j->m + rows - 1) / rows, tn = (j->n + cols - 1) / cols;
    if (tm * tn >= want) break;
    bool halve_cols = cols / 2 >= MIN_TILE && (cols >= rows || rows / 2 < MIN_TILE);
    if (halve_cols) cols = ((cols + 1) / 2 + 15) / 16 * 16;
    else if (rows / 2 >= MIN_TILE) rows = (rows + 1) / 2;
    else break;
  }
  j->rows = rows, j->cols = cols;
  j->tn = (j->n + cols - 1) / cols;
}

void tide_cpu_gemm_serial(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                          const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  tide_blas_single_thread();
  gemm_here(dt, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void tide_cpu_gemm(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                   const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  tide_blas_single_thread();
  int threads = tide_parallel_threads();
  double mnk = (double)m * (double)n * (double)k;
  if (threads < 2 || mnk <= SMALL_MNK) {
    gemm_here(dt, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  gemm_job j = {dt, ta, tb, m, n, k, lda, ldb, ldc, a, b, c, beta, 0, 0, 0};
  plan_tiles(&j, (int64_t)TILES_PER_THREAD * threads);
  int64_t tiles = (m + j.rows - 1) / j.rows * j.tn;
  tide_parallel_for(tiles, 1, gemm_tiles, &j);
}

const char *tide_cpu_gemm_plan(void) {
  static char plan[400];
  snprintf(plan, sizeof plan,
           "one row or column: BLAS gemv; float32 up to %d multiply-adds: %s; larger: tiles over the pool, "
           "%s sgemm (float32) and OpenBLAS dgemm (float64), one thread each",
           SMALL_MNK, tide_gemm_small_plan(), tide_onednn_available() ? "oneDNN" : "OpenBLAS");
  return plan;
}
