/* cpu/linalg_svd.c — singular value decompositions (LAPACK's gesdd) of
 * batches of M x N matrices: s descending, u, and v (not v's transpose), as TF. */
#include "linalg_lapack.h"

#include <string.h>

typedef struct svd_job {
  lk_mat a;
  const tide_tensor *x;
  tide_tensor *const *out;
  int64_t m, n, k, uc, vr;        /* k = min(m, n); u is m x uc, v^T vr x n: uc = vr = k (thin) or m, n (full) */
  bool uv;                        /* vectors wanted */
  char jobz;
  lapack_int lwork;
} svd_job;

/* The identity's first `cols` columns, rows x cols, row-major. */
static void eye_into(size_t es, int64_t rows, int64_t cols, char *dst) {
  memset(dst, 0, (size_t)(rows * cols) * es);
  for (int64_t t = 0; t < rows && t < cols; t++) {
    if (es == 8) ((double *)dst)[t * cols + t] = 1;
    else ((float *)dst)[t * cols + t] = 1;
  }
}

static tide_status svd_one(lk_batch *b, int64_t i, char *scratch) {
  const svd_job *j = b->ctx;
  size_t es = b->es;
  lapack_int m = (lapack_int)j->m, n = (lapack_int)j->n, k = (lapack_int)j->k;
  lapack_int uc = (lapack_int)j->uc, vr = (lapack_int)j->vr, ld = m > 0 ? m : 1;
  lapack_int ldvt = vr > 0 ? vr : 1;
  char *a = scratch, *s = a + (size_t)ld * (size_t)(n > 0 ? n : 1) * es;
  char *u = s + (size_t)(k > 0 ? k : 1) * es, *vt = u + (size_t)ld * (size_t)(uc > 0 ? uc : 1) * es;
  char *work = vt + (size_t)ldvt * (size_t)(n > 0 ? n : 1) * es;
  lapack_int *iwork = (lapack_int *)(work + (size_t)j->lwork * es);
  char *so = lk_out_at(j->out[0], i, 1, k);
  char *uo = j->uv ? lk_out_at(j->out[1], i, m, uc) : NULL, *vo = j->uv ? lk_out_at(j->out[2], i, n, vr) : NULL;
  if (k == 0) { /* an empty matrix: no values; the full factors are identities */
    if (j->uv) {
      eye_into(es, m, uc, uo);
      eye_into(es, n, vr, vo);
    }
    return TIDE_OK;
  }
  lk_load(&j->a, i, false, a, ld);
  if (!lk_all_finite(b->dt, m, n, a, ld)) { /* LAPACK may not return on NaN; TF gives NaN throughout */
    lk_fill_nan(b->dt, k, so);
    if (j->uv) {
      lk_fill_nan(b->dt, (int64_t)m * uc, uo);
      lk_fill_nan(b->dt, (int64_t)n * vr, vo);
    }
    return TIDE_OK;
  }
  lapack_int info = lk_gesdd(b->dt, j->jobz, m, n, a, ld, s, u, ld, vt, ldvt, work, j->lwork, iwork);
  if (info != 0) {
    char where[200];
    return lk_fail(b, i, TIDE_ERR_VALUE, "the SVD did not converge (LAPACK's gesdd gave %d) on %s", (int)info,
                   lk_where(where, sizeof where, j->x, i));
  }
  memcpy(so, s, (size_t)k * es);
  if (j->uv) {
    lk_store(es, m, uc, u, ld, false, uo);
    lk_store(es, vr, n, vt, ldvt, true, vo); /* v = (v^T)^T */
  }
  return TIDE_OK;
}

tide_status tide_cpu_svd(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                         const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  svd_job j;
  memset(&j, 0, sizeof j);
  lk_mat_of(&j.a, x, 0, NULL);
  j.x = x;
  j.out = out;
  j.m = x->dims[x->ndim - 2], j.n = x->dims[x->ndim - 1];
  j.k = j.m < j.n ? j.m : j.n;
  j.uv = !(attrs->flags & TIDE_ATTR_VALUES_ONLY);
  bool full = (attrs->flags & TIDE_ATTR_FULL_MATRICES) != 0;
  j.jobz = !j.uv ? 'N' : full ? 'A' : 'S';
  j.uc = !j.uv ? 0 : full ? j.m : j.k;
  j.vr = !j.uv ? 0 : full ? j.n : j.k;
  int64_t dims[6] = {j.m, j.n, j.m, j.uc, j.vr, j.n}; /* a, u, v^T */
  tide_status st = lk_check_dims(def, 3, dims);
  if (st) return st;
  int dt = x->dt;
  lapack_int m = (lapack_int)j.m, n = (lapack_int)j.n, ld = m > 0 ? m : 1, ldvt = j.vr > 0 ? (lapack_int)j.vr : 1;
  double w[2] = {0, 0}, dummy[1] = {0};
  lapack_int iw[1] = {0};
  double q = j.k > 0 && lk_gesdd(dt, j.jobz, m, n, dummy, ld, dummy, dummy, ld, dummy, ldvt, w, -1, iw) == 0
                 ? lk_queried(dt, w) : 1;
  if ((st = lk_work_size(def, q, &j.lwork)) != TIDE_OK) return st;
  size_t es = tide_dtype_size_unchecked(dt);
  int64_t k1 = j.k > 0 ? j.k : 1, n1 = j.n > 0 ? j.n : 1, uc1 = j.uc > 0 ? j.uc : 1;
  size_t scratch = ((size_t)ld * (size_t)n1 + (size_t)k1 + (size_t)ld * (size_t)uc1 + (size_t)ldvt * (size_t)n1 +
                    (size_t)j.lwork) * es + (size_t)(8 * k1) * sizeof(lapack_int);
  lk_batch b;
  lk_batch_init(&b, def, dt, tide_dims_product(x->ndim - 2, x->dims), scratch,
                (j.uv ? 12.0 : 4.0) * (double)j.m * (double)j.n * (double)k1, svd_one, &j);
  return lk_batch_run(&b);
}
