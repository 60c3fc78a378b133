/* cpu/linalg_lu.c — what LAPACK's LU factorization (getrf) gives: inverses,
 * determinants and their logs, the factors themselves, and linear solves. */
#include "linalg_lapack.h"

#include <math.h>
#include <string.h>

typedef struct lu_job {
  int op;
  lk_mat a, b;                    /* the matrices, and the right-hand sides (matrix_solve) */
  const tide_tensor *x;           /* the matrix input, for messages */
  tide_tensor *const *out;
  int64_t n, k;                   /* a is n x n; b n x k */
  bool adjoint;
  lapack_int lwork;               /* getri's workspace (matrix_inverse) */
} lu_job;

/* Bytes of one problem's n x n matrix, rounded up to 8: what follows it (ipiv, then lu's int64 permutation or
 * float64 work) stays aligned for float32's odd n too. */
static size_t a_bytes(int64_t n, size_t es) { return ((size_t)(n * n) * es + 7) / 8 * 8; }

/* Where each part of one problem's scratch starts: a (n x n), ipiv, then b or getri's work. */
static void lu_parts(const lu_job *j, size_t es, char *scratch, char **a, lapack_int **ipiv, char **rest) {
  size_t na = a_bytes(j->n, es);
  *a = scratch;
  *ipiv = (lapack_int *)(scratch + na);
  *rest = scratch + na + ((size_t)(j->n > 0 ? j->n : 1) * sizeof(lapack_int) + 7) / 8 * 8;
}

/* After getrf: true when every pivot is nonzero (NaN counts as zero, as TF's |pivot| > 0 test). */
static bool pivots_nonzero(int dt, int64_t n, const void *a) {
  for (int64_t i = 0; i < n; i++) {
    double p = dt == TIDE_FLOAT64 ? ((const double *)a)[i * n + i] : ((const float *)a)[i * n + i];
    if (!(fabs(p) > 0)) return false;
  }
  return true;
}

static tide_status lu_one(lk_batch *bt, int64_t i, char *scratch) {
  const lu_job *j = bt->ctx;
  int dt = bt->dt;
  size_t es = bt->es;
  lapack_int n = (lapack_int)j->n;
  char *a, *rest;
  lapack_int *ipiv;
  lu_parts(j, es, scratch, &a, &ipiv, &rest);
  lk_load(&j->a, i, j->adjoint, a, n > 0 ? n : 1);
  lapack_int info = n > 0 ? lk_getrf(dt, n, n, a, n, ipiv) : 0;
  char where[200];
  if (info < 0) return lk_fail(bt, i, TIDE_ERR_VALUE, "LAPACK's getrf refused argument %d", (int)-info);
  switch (j->op) {
  case TIDE_OP_MATRIX_DETERMINANT:
  case TIDE_OP_LOG_MATRIX_DETERMINANT: {
    /* sign and log|det| in double: a product of many pivots under- or overflows where its log does not */
    double logabs = 0, sign = 1;
    for (lapack_int r = 0; r < n; r++) {
      double p = dt == TIDE_FLOAT64 ? ((double *)a)[r * n + r] : ((float *)a)[r * n + r];
      if (ipiv[r] != r + 1) sign = -sign;
      if (p < 0) sign = -sign;
      logabs += log(fabs(p));
    }
    if (isnan(logabs)) sign = NAN;
    else if (logabs == -INFINITY) sign = 0; /* singular: TF's sign 0, log -inf, det 0 */
    if (j->op == TIDE_OP_MATRIX_DETERMINANT) {
      double det = sign == 0 ? 0 : sign * exp(logabs);
      if (dt == TIDE_FLOAT64) ((double *)j->out[0]->data)[i] = det;
      else ((float *)j->out[0]->data)[i] = (float)det;
    } else if (dt == TIDE_FLOAT64) {
      ((double *)j->out[0]->data)[i] = sign, ((double *)j->out[1]->data)[i] = logabs;
    } else {
      ((float *)j->out[0]->data)[i] = (float)sign, ((float *)j->out[1]->data)[i] = (float)logabs;
    }
    return TIDE_OK;
  }
  case TIDE_OP_LU: {
    if (!pivots_nonzero(dt, n, a))
      return lk_fail(bt, i, TIDE_ERR_VALUE, "Input is not invertible: %s is singular (a zero pivot in its LU "
                     "factorization)", lk_where(where, sizeof where, j->x, i));
    lk_store(es, n, n, a, n, false, lk_out_at(j->out[0], i, n, n));
    /* LAPACK's row swaps (1-based, in order) as TF's permutation: row r of L U is row perm[r] of the input */
    int64_t *perm = (int64_t *)rest;
    for (lapack_int r = 0; r < n; r++) perm[r] = r;
    for (lapack_int r = 0; r < n; r++) {
      int64_t t = perm[r];
      perm[r] = perm[ipiv[r] - 1];
      perm[ipiv[r] - 1] = t;
    }
    char *p = (char *)j->out[1]->data;
    for (lapack_int r = 0; r < n; r++) {
      if (j->out[1]->dt == TIDE_INT64) ((int64_t *)p)[i * n + r] = perm[r];
      else ((int32_t *)p)[i * n + r] = (int32_t)perm[r];
    }
    return TIDE_OK;
  }
  case TIDE_OP_MATRIX_INVERSE:
    if (!pivots_nonzero(dt, n, a))
      return lk_fail(bt, i, TIDE_ERR_VALUE, "Input is not invertible: %s is singular (a zero pivot in its LU "
                     "factorization)", lk_where(where, sizeof where, j->x, i));
    if (n > 0 && (info = lk_getri(dt, n, a, n, ipiv, rest, j->lwork)) != 0)
      return lk_fail(bt, i, TIDE_ERR_VALUE, "Input is not invertible: LAPACK's getri failed (info %d) on %s",
                     (int)info, lk_where(where, sizeof where, j->x, i));
    lk_store(es, n, n, a, n, false, lk_out_at(j->out[0], i, n, n));
    return TIDE_OK;
  default: { /* matrix_solve */
    if (!pivots_nonzero(dt, n, a))
      return lk_fail(bt, i, TIDE_ERR_VALUE, "Input matrix is not invertible: %s is singular (a zero pivot in its LU "
                     "factorization)", lk_where(where, sizeof where, j->x, i));
    lapack_int k = (lapack_int)j->k;
    if (n == 0 || k == 0) return TIDE_OK;
    lk_load(&j->b, i, false, rest, n);
    if ((info = lk_getrs(dt, 'N', n, k, a, n, ipiv, rest, n)) != 0)
      return lk_fail(bt, i, TIDE_ERR_VALUE, "LAPACK's getrs failed (info %d)", (int)info);
    lk_store(es, n, k, rest, n, false, lk_out_at(j->out[0], i, n, k));
    return TIDE_OK;
  }
  }
}

tide_status tide_cpu_lu_family(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  lu_job j;
  memset(&j, 0, sizeof j);
  j.op = def->id;
  j.x = x;
  j.out = out;
  j.n = x->dims[x->ndim - 1];
  j.adjoint = (attrs->flags & TIDE_ATTR_ADJOINT) != 0;
  lk_mat_of(&j.a, x, 0, NULL);
  int64_t count = tide_dims_product(x->ndim - 2, x->dims);
  int64_t check[4] = {j.n, j.n, j.n, 1};
  if (def->id == TIDE_OP_MATRIX_SOLVE) {
    lk_mat_of(&j.b, in[1], 0, NULL);
    j.k = in[1]->dims[in[1]->ndim - 1];
    check[3] = j.k;
  }
  tide_status st = lk_check_dims(def, 2, check);
  if (st) return st;
  size_t es = tide_dtype_size_unchecked(x->dt);
  size_t rest = def->id == TIDE_OP_MATRIX_SOLVE ? (size_t)(j.n * j.k) * es
                : def->id == TIDE_OP_LU ? (size_t)j.n * sizeof(int64_t) : 0;
  if (def->id == TIDE_OP_MATRIX_INVERSE && j.n > 0) { /* getri's workspace, asked once for the batch */
    double w[2] = {0, 0}, one[1] = {0};
    lapack_int ipiv = 0;
    double q = lk_getri(x->dt, (lapack_int)j.n, one, (lapack_int)j.n, &ipiv, w, -1) == 0 ? lk_queried(x->dt, w)
                                                                                                 : (double)j.n;
    if ((st = lk_work_size(def, q, &j.lwork)) != TIDE_OK) return st;
    rest = (size_t)j.lwork * es;
  }
  size_t scratch = a_bytes(j.n, es) + ((size_t)(j.n > 0 ? j.n : 1) * sizeof(lapack_int) + 7) / 8 * 8 + rest;
  lk_batch b;
  double n3 = (double)j.n * (double)j.n * (double)j.n;
  lk_batch_init(&b, def, x->dt, count, scratch, n3 + (double)j.n * (double)j.n * (double)j.k, lu_one, &j);
  return lk_batch_run(&b);
}
