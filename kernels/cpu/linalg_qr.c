/* cpu/linalg_qr.c — orthogonal factorizations: QR (LAPACK's geqrf, orgqr),
 * and least squares (TF's MatrixSolveLs: Cholesky of the regularized Gramian
 * when fast, else the complete orthogonal decomposition, gelsy). */
#include "linalg_lapack.h"

#include <cblas.h>
#include <float.h>
#include <string.h>

/* ---- qr -------------------------------------------------------------------------------- */

typedef struct qr_job {
  lk_mat a;
  tide_tensor *q, *r;
  int64_t m, n, k, c;             /* k = min(m, n); c = q's columns and r's rows: m (full) or k */
  lapack_int lwork;
} qr_job;

static tide_status qr_one(lk_batch *b, int64_t i, char *scratch) {
  const qr_job *j = b->ctx;
  size_t es = b->es;
  lapack_int m = (lapack_int)j->m, n = (lapack_int)j->n, k = (lapack_int)j->k, c = (lapack_int)j->c;
  lapack_int ld = m > 0 ? m : 1, wide = n > c ? n : c;
  char *a = scratch, *tau = a + (size_t)ld * (size_t)(wide > 0 ? wide : 1) * es;
  char *work = tau + (size_t)(k > 0 ? k : 1) * es;
  lk_load(&j->a, i, false, a, ld);
  lapack_int info = m > 0 && n > 0 ? lk_geqrf(b->dt, m, n, a, ld, tau, work, j->lwork) : 0;
  if (info != 0) return lk_fail(b, i, TIDE_ERR_VALUE, "LAPACK's geqrf failed (info %d)", (int)info);
  /* r: the upper triangle of the first c rows (zeros below, and in rows past n when full) */
  char *r = lk_out_at(j->r, i, c, n);
  memset(r, 0, (size_t)(c * n) * es);
  for (lapack_int row = 0; row < c && row < m; row++)
    for (lapack_int col = row; col < n; col++) memcpy(r + (size_t)(row * n + col) * es, a + (size_t)(col * ld + row) * es, es);
  /* q: the first c columns of the product of k reflectors */
  if (m > 0 && c > 0) {
    info = lk_orgqr(b->dt, m, c, k, a, ld, tau, work, j->lwork);
    if (info != 0) return lk_fail(b, i, TIDE_ERR_VALUE, "LAPACK's orgqr failed (info %d)", (int)info);
  }
  lk_store(es, m, c, a, ld, false, lk_out_at(j->q, i, m, c));
  return TIDE_OK;
}

tide_status tide_cpu_qr(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  qr_job j;
  lk_mat_of(&j.a, x, 0, NULL);
  j.q = out[0], j.r = out[1];
  j.m = x->dims[x->ndim - 2], j.n = x->dims[x->ndim - 1];
  j.k = j.m < j.n ? j.m : j.n;
  j.c = (attrs->flags & TIDE_ATTR_FULL_MATRICES) ? j.m : j.k;
  int64_t dims[6] = {j.m, j.n > j.c ? j.n : j.c, j.m, j.c, j.c, j.n}; /* the work matrix, q, r */
  tide_status st = lk_check_dims(def, 3, dims);
  if (st) return st;
  int dt = x->dt;
  double w1[2] = {0, 0}, w2[2] = {0, 0}, dummy[1] = {0};
  lapack_int m = (lapack_int)j.m, n = (lapack_int)j.n, ld = m > 0 ? m : 1;
  double q1 = m > 0 && n > 0 && lk_geqrf(dt, m, n, dummy, ld, dummy, w1, -1) == 0 ? lk_queried(dt, w1) : 1;
  double q2 = m > 0 && j.c > 0 && lk_orgqr(dt, m, (lapack_int)j.c, (lapack_int)j.k, dummy, ld, dummy, w2, -1) == 0
                  ? lk_queried(dt, w2) : 1;
  if ((st = lk_work_size(def, q1 > q2 ? q1 : q2, &j.lwork)) != TIDE_OK) return st;
  size_t es = tide_dtype_size_unchecked(dt);
  size_t scratch = ((size_t)ld * (size_t)(dims[1] > 0 ? dims[1] : 1) + (size_t)(j.k > 0 ? j.k : 1) + (size_t)j.lwork) * es;
  lk_batch b;
  lk_batch_init(&b, def, dt, tide_dims_product(x->ndim - 2, x->dims), scratch,
                4.0 * (double)j.m * (double)j.n * (double)(j.k > 0 ? j.k : 1), qr_one, &j);
  return lk_batch_run(&b);
}

/* ---- least squares ------------------------------------------------------------------------ */

typedef struct ls_job {
  lk_mat a, b;
  tide_tensor *out;
  int64_t m, n, k;
  double l2;
  bool fast;
  lapack_int lwork;               /* gelsy's */
} ls_job;

/* C (p x p, column-major) = op(A) op(A)^T + l2 I for the m x n column-major A: A^T A when over (p = n), else A A^T. */
static void gramian(int dt, bool over, lapack_int m, lapack_int n, const void *a, double l2, void *c) {
  lapack_int p = over ? n : m, kk = over ? m : n;
  CBLAS_TRANSPOSE tr = over ? CblasTrans : CblasNoTrans;
  if (dt == TIDE_FLOAT64) {
    cblas_dsyrk(CblasColMajor, CblasLower, tr, p, kk, 1.0, a, m, 0.0, c, p);
    for (lapack_int t = 0; t < p; t++) ((double *)c)[t * p + t] += l2;
  } else {
    cblas_ssyrk(CblasColMajor, CblasLower, tr, p, kk, 1.0f, a, m, 0.0f, c, p);
    for (lapack_int t = 0; t < p; t++) ((float *)c)[t * p + t] += (float)l2;
  }
}

/* C (rows x cols) = op(A) B for column-major operands (leading dims lda, ldb, ldc). */
static void gemm_cm(int dt, bool ta, lapack_int rows, lapack_int cols, lapack_int inner, const void *a, lapack_int lda,
                    const void *b, lapack_int ldb, void *c, lapack_int ldc) {
  CBLAS_TRANSPOSE t = ta ? CblasTrans : CblasNoTrans;
  if (dt == TIDE_FLOAT64)
    cblas_dgemm(CblasColMajor, t, CblasNoTrans, rows, cols, inner, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  else
    cblas_sgemm(CblasColMajor, t, CblasNoTrans, rows, cols, inner, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

static tide_status ls_one(lk_batch *bt, int64_t i, char *scratch) {
  const ls_job *j = bt->ctx;
  int dt = bt->dt;
  size_t es = bt->es;
  lapack_int m = (lapack_int)j->m, n = (lapack_int)j->n, k = (lapack_int)j->k;
  lapack_int mm = m > 0 ? m : 1, big = m > n ? m : n;
  if (big < 1) big = 1;
  char *a = scratch, *b = a + (size_t)mm * (size_t)(n > 0 ? n : 1) * es;
  char *rest = b + (size_t)big * (size_t)(k > 0 ? k : 1) * es;
  char *x = lk_out_at(j->out, i, n, k);
  lk_load(&j->a, i, false, a, mm);
  lk_load(&j->b, i, false, b, big);
  if (n == 0 || k == 0) return TIDE_OK;
  if (m == 0) { /* no equations: the minimum-norm solution is 0 */
    memset(x, 0, (size_t)(n * k) * es);
    return TIDE_OK;
  }
  if (!j->fast) {
    lapack_int *jpvt = (lapack_int *)rest, rank = 0;
    char *work = rest + ((size_t)n * sizeof(lapack_int) + 7) / 8 * 8;
    memset(jpvt, 0, (size_t)n * sizeof(lapack_int));
    double rcond = (dt == TIDE_FLOAT64 ? DBL_EPSILON : FLT_EPSILON) * (double)(m < n ? m : n);
    lapack_int info = lk_gelsy(dt, m, n, k, a, mm, b, big, jpvt, rcond, &rank, work, j->lwork);
    if (info != 0) return lk_fail(bt, i, TIDE_ERR_VALUE, "LAPACK's gelsy failed (info %d)", (int)info);
    lk_store(es, n, k, b, big, false, x);
    return TIDE_OK;
  }
  /* TF's fast path: X = (A^T A + l2 I)^-1 A^T B when m >= n, else A^T (A A^T + l2 I)^-1 B; a Gramian that is
   * not positive definite gives NaN, as TF's Cholesky does */
  bool over = m >= n;
  lapack_int p = over ? n : m;
  char *c = rest, *t = c + (size_t)(p * p) * es;
  gramian(dt, over, m, n, a, j->l2, c);
  lapack_int info = lk_potrf(dt, 'L', p, c, p);
  if (info > 0) {
    lk_fill_nan(dt, (int64_t)n * k, x);
    return TIDE_OK;
  }
  if (over) { /* t (n x k) = A^T B, then solved in place */
    gemm_cm(dt, true, n, k, m, a, mm, b, big, t, n);
    lk_potrs(dt, 'L', n, k, c, n, t, n);
    lk_store(es, n, k, t, n, false, x);
  } else { /* solve (A A^T + l2 I) t = B in b's first m rows, then t2 = A^T t */
    lk_potrs(dt, 'L', m, k, c, m, b, big);
    gemm_cm(dt, true, n, k, m, a, mm, b, big, t, n);
    lk_store(es, n, k, t, n, false, x);
  }
  return TIDE_OK;
}

tide_status tide_cpu_matrix_solve_ls(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *a = in[0], *rhs = in[1];
  ls_job j;
  memset(&j, 0, sizeof j);
  lk_mat_of(&j.a, a, 0, NULL);
  lk_mat_of(&j.b, rhs, 0, NULL);
  j.out = out[0];
  j.m = a->dims[a->ndim - 2], j.n = a->dims[a->ndim - 1], j.k = rhs->dims[rhs->ndim - 1];
  j.l2 = attrs->scalars[0];
  j.fast = attrs->n != 0;
  if (!(j.l2 >= 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: l2_regularizer must be >= 0, got %g", def->name, j.l2);
  int64_t big = j.m > j.n ? j.m : j.n, p = j.m < j.n ? j.m : j.n;
  int64_t dims[8] = {j.m, j.n, big, j.k, p, p, j.n, j.k}; /* a, b, the Gramian, x */
  tide_status st = lk_check_dims(def, 4, dims);
  if (st) return st;
  int dt = a->dt;
  size_t es = tide_dtype_size_unchecked(dt);
  int64_t mm = j.m > 0 ? j.m : 1, bb = big > 0 ? big : 1, kk = j.k > 0 ? j.k : 1, nn = j.n > 0 ? j.n : 1;
  size_t rest;
  if (!j.fast) {
    double w[2] = {0, 0}, dummy[1] = {0};
    lapack_int jp = 0, rank = 0;
    double q = j.m > 0 && j.n > 0 && j.k > 0 &&
                       lk_gelsy(dt, (lapack_int)j.m, (lapack_int)j.n, (lapack_int)j.k, dummy, (lapack_int)mm,
                               dummy, (lapack_int)bb, &jp, 0.0, &rank, w, -1) == 0
                   ? lk_queried(dt, w) : 1;
    if ((st = lk_work_size(def, q, &j.lwork)) != TIDE_OK) return st;
    rest = ((size_t)nn * sizeof(lapack_int) + 7) / 8 * 8 + (size_t)j.lwork * es;
  } else {
    int64_t p = j.m >= j.n ? j.n : j.m;
    rest = (size_t)(p * p + nn * kk) * es;
  }
  size_t scratch = (size_t)(mm * nn + bb * kk) * es + rest;
  lk_batch b;
  lk_batch_init(&b, def, dt, tide_dims_product(a->ndim - 2, a->dims), scratch,
                2.0 * (double)j.m * (double)j.n * (double)(j.n + j.k), ls_one, &j);
  return lk_batch_run(&b);
}
