/* cpu/linalg_chol.c — triangular work: Cholesky factors (LAPACK's potrf) and
 * triangular solves (BLAS's trsm), batched, the solves broadcasting. */
#include "linalg_lapack.h"

#include <cblas.h>
#include <string.h>

/* ---- cholesky ------------------------------------------------------------------------ */

typedef struct chol_job {
  lk_mat a;
  tide_tensor *out;
  int64_t n;
} chol_job;

static tide_status chol_one(lk_batch *b, int64_t i, char *scratch) {
  const chol_job *j = b->ctx;
  lapack_int n = (lapack_int)j->n;
  size_t es = b->es;
  lk_load(&j->a, i, false, scratch, n);
  lapack_int info = lk_potrf(b->dt, 'L', n, scratch, n); /* reads the lower triangle, as TF */
  if (info < 0) return lk_fail(b, i, TIDE_ERR_VALUE, "LAPACK's potrf refused argument %d", (int)-info);
  if (info > 0) { /* not positive definite: TF fills the lower triangle with NaN and goes on */
    for (lapack_int c = 0; c < n; c++) lk_fill_nan(b->dt, n - c, scratch + (size_t)(c * n + c) * es);
  }
  for (lapack_int c = 1; c < n; c++) memset(scratch + (size_t)(c * n) * es, 0, (size_t)c * es); /* the upper part */
  lk_store(es, n, n, scratch, n, false, lk_out_at(j->out, i, n, n));
  return TIDE_OK;
}

tide_status tide_cpu_cholesky(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  chol_job j;
  lk_mat_of(&j.a, x, 0, NULL);
  j.out = out[0];
  j.n = x->dims[x->ndim - 1];
  int64_t dims[2] = {j.n, j.n};
  tide_status st = lk_check_dims(def, 1, dims);
  if (st || j.n == 0) return st;
  size_t es = tide_dtype_size_unchecked(x->dt);
  lk_batch b;
  lk_batch_init(&b, def, x->dt, tide_dims_product(x->ndim - 2, x->dims), (size_t)(j.n * j.n) * es,
                (double)j.n * (double)j.n * (double)j.n / 3, chol_one, &j);
  return lk_batch_run(&b);
}

/* ---- triangular solve -------------------------------------------------------------------- */

typedef struct trsm_job {
  lk_mat a, b;                    /* read for the output's batch dims (broadcast) */
  tide_tensor *out;
  int64_t n, k;
  bool lower, adjoint;
} trsm_job;

static tide_status trsm_one(lk_batch *bt, int64_t i, char *scratch) {
  const trsm_job *j = bt->ctx;
  int64_t n = j->n, k = j->k;
  char *x = lk_out_at(j->out, i, n, k);
  lk_load(&j->b, i, true, x, k);       /* b^T column-major: b row-major, the output's layout */
  lk_load(&j->a, i, true, scratch, n); /* a row-major */
  CBLAS_UPLO uplo = j->lower ? CblasLower : CblasUpper;
  CBLAS_TRANSPOSE tr = j->adjoint ? CblasTrans : CblasNoTrans;
  if (bt->dt == TIDE_FLOAT64)
    cblas_dtrsm(CblasRowMajor, CblasLeft, uplo, tr, CblasNonUnit, (blasint)n, (blasint)k, 1.0, (double *)scratch,
                (blasint)n, (double *)x, (blasint)k);
  else
    cblas_strsm(CblasRowMajor, CblasLeft, uplo, tr, CblasNonUnit, (blasint)n, (blasint)k, 1.0f, (float *)scratch,
                (blasint)n, (float *)x, (blasint)k);
  return TIDE_OK;
}

tide_status tide_cpu_triangular_solve(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *y = out[0];
  trsm_job j;
  int nb = y->ndim - 2;
  lk_mat_of(&j.a, in[0], nb, y->dims);
  lk_mat_of(&j.b, in[1], nb, y->dims);
  j.out = y;
  j.n = y->dims[nb], j.k = y->dims[nb + 1];
  j.lower = (attrs->flags & TIDE_ATTR_LOWER) != 0;
  j.adjoint = (attrs->flags & TIDE_ATTR_ADJOINT) != 0;
  int64_t dims[4] = {j.n, j.n, j.n, j.k};
  tide_status st = lk_check_dims(def, 2, dims);
  if (st || y->nelem == 0) return st;
  size_t es = tide_dtype_size_unchecked(y->dt);
  lk_batch b;
  lk_batch_init(&b, def, y->dt, tide_dims_product(nb, y->dims), (size_t)(j.n * j.n) * es,
                (double)j.n * (double)j.n * (double)j.k, trsm_one, &j);
  return lk_batch_run(&b);
}
