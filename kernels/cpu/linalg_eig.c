/* cpu/linalg_eig.c — eigendecompositions: of symmetric matrices (LAPACK's
 * syevd, the lower triangle read, values ascending) and of general real ones
 * (geev: complex values and vectors given as real and imaginary parts). */
#include "linalg_lapack.h"

#include <string.h>

typedef struct eig_job {
  lk_mat a;
  const tide_tensor *x;
  tide_tensor *const *out;
  int64_t n;
  bool vectors;
  lapack_int lwork, liwork;
} eig_job;

/* ---- symmetric ------------------------------------------------------------------------ */

static tide_status eigh_one(lk_batch *b, int64_t i, char *scratch) {
  const eig_job *j = b->ctx;
  size_t es = b->es;
  lapack_int n = (lapack_int)j->n;
  char *a = scratch, *w = a + (size_t)(n * n) * es, *work = w + (size_t)n * es;
  lapack_int *iwork = (lapack_int *)(work + (size_t)j->lwork * es);
  char where[200];
  lk_load(&j->a, i, false, a, n);
  /* TF's error for what LAPACK cannot decompose (it may not return on NaN): only the lower triangle is read */
  bool finite = true;
  for (lapack_int c = 0; c < n && finite; c++) finite = lk_all_finite(b->dt, n - c, 1, a + (size_t)(c * n + c) * es, n);
  lapack_int info = finite ? lk_syevd(b->dt, j->vectors ? 'V' : 'N', 'L', n, a, n, w, work, j->lwork, iwork,
                                     j->liwork)
                           : 1;
  if (info != 0)
    return lk_fail(b, i, TIDE_ERR_VALUE, "Self-adjoint eigen decomposition was not successful. The input might not "
                   "be valid: %s%s", lk_where(where, sizeof where, j->x, i),
                   finite ? " (LAPACK's syevd did not converge)" : " holds NaN or Inf");
  memcpy(lk_out_at(j->out[0], i, 1, n), w, (size_t)n * es);
  if (j->vectors) lk_store(es, n, n, a, n, false, lk_out_at(j->out[1], i, n, n)); /* columns: the vectors */
  return TIDE_OK;
}

tide_status tide_cpu_self_adjoint_eig(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  eig_job j;
  memset(&j, 0, sizeof j);
  lk_mat_of(&j.a, x, 0, NULL);
  j.x = x;
  j.out = out;
  j.n = x->dims[x->ndim - 1];
  j.vectors = !(attrs->flags & TIDE_ATTR_VALUES_ONLY);
  int64_t dims[2] = {j.n, j.n};
  tide_status st = lk_check_dims(def, 1, dims);
  if (st || j.n == 0) return st;
  int dt = x->dt;
  lapack_int n = (lapack_int)j.n, iw[1] = {0};
  double w[2] = {0, 0}, dummy[1] = {0};
  double q = lk_syevd(dt, j.vectors ? 'V' : 'N', 'L', n, dummy, n, dummy, w, -1, iw, -1) == 0
                 ? lk_queried(dt, w) : 1;
  if ((st = lk_work_size(def, q, &j.lwork)) != TIDE_OK) return st;
  j.liwork = iw[0] > 0 ? iw[0] : 1;
  size_t es = tide_dtype_size_unchecked(dt);
  size_t scratch = ((size_t)(j.n * j.n + j.n) + (size_t)j.lwork) * es + (size_t)j.liwork * sizeof(lapack_int);
  lk_batch b;
  lk_batch_init(&b, def, dt, tide_dims_product(x->ndim - 2, x->dims), scratch,
                (j.vectors ? 9.0 : 4.0) * (double)j.n * (double)j.n * (double)j.n, eigh_one, &j);
  return lk_batch_run(&b);
}

/* ---- general -------------------------------------------------------------------------- */

static tide_status eig_one(lk_batch *b, int64_t i, char *scratch) {
  const eig_job *j = b->ctx;
  int dt = b->dt;
  size_t es = b->es;
  lapack_int n = (lapack_int)j->n;
  char *a = scratch, *wr = a + (size_t)(n * n) * es, *wi = wr + (size_t)n * es, *vr = wi + (size_t)n * es;
  char *work = vr + (size_t)(j->vectors ? n * n : 1) * es;
  char *ore = lk_out_at(j->out[0], i, 1, n), *oim = lk_out_at(j->out[1], i, 1, n);
  char *vre = j->vectors ? lk_out_at(j->out[2], i, n, n) : NULL, *vim = j->vectors ? lk_out_at(j->out[3], i, n, n) : NULL;
  lk_load(&j->a, i, false, a, n);
  if (!lk_all_finite(dt, n, n, a, n)) { /* LAPACK may not return on NaN: NaN throughout */
    lk_fill_nan(dt, n, ore), lk_fill_nan(dt, n, oim);
    if (j->vectors) lk_fill_nan(dt, (int64_t)n * n, vre), lk_fill_nan(dt, (int64_t)n * n, vim);
    return TIDE_OK;
  }
  double one[1] = {0};
  lapack_int info = lk_geev(dt, 'N', j->vectors ? 'V' : 'N', n, a, n, wr, wi, one, 1, j->vectors ? (void *)vr : (void *)one,
                            j->vectors ? n : 1, work, j->lwork);
  if (info != 0) {
    char where[200];
    return lk_fail(b, i, TIDE_ERR_VALUE, "the eigenvalue iteration did not converge (LAPACK's geev gave %d) on %s",
                   (int)info, lk_where(where, sizeof where, j->x, i));
  }
  memcpy(ore, wr, (size_t)n * es);
  memcpy(oim, wi, (size_t)n * es);
  if (!j->vectors) return TIDE_OK;
  /* geev packs a complex pair's vectors as columns c (real part) and c + 1 (imaginary part) of the first */
  for (lapack_int c = 0; c < n; c++) {
    double im = dt == TIDE_FLOAT64 ? ((double *)wi)[c] : ((float *)wi)[c];
    for (lapack_int r = 0; r < n; r++) {
      double re_v, im_v;
#define VR(row, col) (dt == TIDE_FLOAT64 ? ((double *)vr)[(col) * n + (row)] : ((float *)vr)[(col) * n + (row)])
      if (im == 0) re_v = VR(r, c), im_v = 0;
      else if (im > 0) re_v = VR(r, c), im_v = VR(r, c + 1);
      else re_v = VR(r, c - 1), im_v = -VR(r, c);
#undef VR
      if (dt == TIDE_FLOAT64) ((double *)vre)[r * n + c] = re_v, ((double *)vim)[r * n + c] = im_v;
      else ((float *)vre)[r * n + c] = (float)re_v, ((float *)vim)[r * n + c] = (float)im_v;
    }
  }
  return TIDE_OK;
}

tide_status tide_cpu_eig(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                         const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  eig_job j;
  memset(&j, 0, sizeof j);
  lk_mat_of(&j.a, x, 0, NULL);
  j.x = x;
  j.out = out;
  j.n = x->dims[x->ndim - 1];
  j.vectors = !(attrs->flags & TIDE_ATTR_VALUES_ONLY);
  int64_t dims[2] = {j.n, j.n};
  tide_status st = lk_check_dims(def, 1, dims);
  if (st || j.n == 0) return st;
  int dt = x->dt;
  lapack_int n = (lapack_int)j.n;
  double w[2] = {0, 0}, dummy[1] = {0};
  double q = lk_geev(dt, 'N', j.vectors ? 'V' : 'N', n, dummy, n, dummy, dummy, dummy, 1, dummy,
                     j.vectors ? n : 1, w, -1) == 0 ? lk_queried(dt, w) : 4.0 * (double)n;
  if ((st = lk_work_size(def, q, &j.lwork)) != TIDE_OK) return st;
  size_t es = tide_dtype_size_unchecked(dt);
  size_t scratch = ((size_t)(j.n * j.n) * 2 + (size_t)(2 * j.n) + (size_t)j.lwork) * es;
  lk_batch b;
  lk_batch_init(&b, def, dt, tide_dims_product(x->ndim - 2, x->dims), scratch,
                25.0 * (double)j.n * (double)j.n * (double)j.n, eig_one, &j);
  return lk_batch_run(&b);
}
