/* cpu/linalg_tridiag.c — tridiagonal systems in TF's compact form (the
 * super-, main and subdiagonal as rows of [..., 3, M]): LAPACK's gtsv with
 * partial pivoting, else the Thomas algorithm; a singular system gives NaN (TF). */
#include "linalg_lapack.h"

#include <string.h>

typedef struct tri_job {
  lk_mat d, b;
  tide_tensor *out;
  int64_t m, k;
  bool pivot;
} tri_job;

/* Element e of row `row` (0 super, 1 main, 2 sub) of problem i's diagonals, as a double. */
static double diag_at(const lk_mat *d, int64_t i, int row, int64_t e) {
  const char *p = lk_mat_at(d, i) + (row * d->rs + e * d->cs) * (int64_t)d->es;
  return d->es == 8 ? *(const double *)p : *(const float *)p;
}

/* The Thomas algorithm without pivoting on column-major x (m x k, solved in place), in double; false on a zero pivot. */
static bool thomas(int64_t m, int64_t k, const double *sup, const double *dia, const double *sub, double *c2,
                   double *x) {
  for (int64_t col = 0; col < k; col++) {
    double *xc = x + col * m;
    double denom = dia[0];
    if (denom == 0) return false;
    c2[0] = m > 1 ? sup[0] / denom : 0;
    xc[0] /= denom;
    for (int64_t r = 1; r < m; r++) {
      denom = dia[r] - sub[r] * c2[r - 1];
      if (denom == 0) return false;
      c2[r] = r < m - 1 ? sup[r] / denom : 0;
      xc[r] = (xc[r] - sub[r] * xc[r - 1]) / denom;
    }
    for (int64_t r = m - 2; r >= 0; r--) xc[r] -= c2[r] * xc[r + 1];
  }
  return true;
}

static tide_status tri_one(lk_batch *bt, int64_t i, char *scratch) {
  const tri_job *j = bt->ctx;
  int dt = bt->dt;
  size_t es = bt->es;
  int64_t m = j->m, k = j->k;
  char *out = lk_out_at(j->out, i, m, k);
  if (j->pivot) { /* gtsv in the dtype: dl (m - 1), d (m), du (m - 1), b (m x k) */
    char *dl = scratch, *d = dl + (size_t)m * es, *du = d + (size_t)m * es, *b = du + (size_t)m * es;
    for (int64_t e = 0; e < m; e++) {
      double lo = e + 1 < m ? diag_at(&j->d, i, 2, e + 1) : 0, mid = diag_at(&j->d, i, 1, e);
      double up = e + 1 < m ? diag_at(&j->d, i, 0, e) : 0;
      if (dt == TIDE_FLOAT64) ((double *)dl)[e] = lo, ((double *)d)[e] = mid, ((double *)du)[e] = up;
      else ((float *)dl)[e] = (float)lo, ((float *)d)[e] = (float)mid, ((float *)du)[e] = (float)up;
    }
    lk_load(&j->b, i, false, b, m);
    lapack_int info = lk_gtsv(dt, (lapack_int)m, (lapack_int)k, dl, d, du, b, (lapack_int)m);
    if (info > 0) lk_fill_nan(dt, m * k, out);
    else lk_store(es, m, k, b, m, false, out);
    return TIDE_OK;
  }
  double *sup = (double *)scratch, *dia = sup + m, *sub = dia + m, *c2 = sub + m, *x = c2 + m;
  for (int64_t e = 0; e < m; e++) {
    sup[e] = diag_at(&j->d, i, 0, e), dia[e] = diag_at(&j->d, i, 1, e), sub[e] = diag_at(&j->d, i, 2, e);
    for (int64_t col = 0; col < k; col++) {
      const char *p = lk_mat_at(&j->b, i) + (e * j->b.rs + col * j->b.cs) * (int64_t)es;
      x[col * m + e] = es == 8 ? *(const double *)p : *(const float *)p;
    }
  }
  if (!thomas(m, k, sup, dia, sub, c2, x)) {
    lk_fill_nan(dt, m * k, out);
    return TIDE_OK;
  }
  for (int64_t e = 0; e < m; e++)
    for (int64_t col = 0; col < k; col++) {
      if (dt == TIDE_FLOAT64) ((double *)out)[e * k + col] = x[col * m + e];
      else ((float *)out)[e * k + col] = (float)x[col * m + e];
    }
  return TIDE_OK;
}

tide_status tide_cpu_tridiagonal_solve(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                       const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tri_job j;
  lk_mat_of(&j.d, in[0], 0, NULL);
  lk_mat_of(&j.b, in[1], 0, NULL);
  j.out = out[0];
  j.m = in[1]->dims[in[1]->ndim - 2], j.k = in[1]->dims[in[1]->ndim - 1];
  j.pivot = attrs->n != 0;
  int64_t dims[2] = {j.m, j.k};
  tide_status st = lk_check_dims(def, 1, dims);
  if (st || out[0]->nelem == 0) return st;
  size_t scratch = (size_t)(4 * j.m + j.m * j.k) * sizeof(double);
  lk_batch b;
  lk_batch_init(&b, def, in[1]->dt, tide_dims_product(in[1]->ndim - 2, in[1]->dims), scratch,
                8.0 * (double)j.m * (double)j.k, tri_one, &j);
  return lk_batch_run(&b);
}
