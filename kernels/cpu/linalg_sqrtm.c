/* cpu/linalg_sqrtm.c — the principal matrix square root, as TF's tf.linalg.sqrtm
 * (Eigen's MatrixSquareRoot): real Schur form by LAPACK's gees, then Higham's real Schur method. */
#include "linalg_lapack.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

typedef struct sqrtm_job {
  lk_mat a;
  tide_tensor *out;
  int64_t n;
  lapack_int lwork;
} sqrtm_job;

/* Column-major n x n access. */
#define AT(m, r, c) (m)[(size_t)(c) * (size_t)n + (size_t)(r)]

/* Solve the k x k system m x = b (k <= 4) by elimination with partial pivoting; a zero pivot divides anyway,
 * giving Inf or NaN as Eigen's does for a singular block. */
static void small_solve(int k, double m[4][4], double *b) {
  for (int c = 0; c < k; c++) {
    int p = c;
    for (int r = c + 1; r < k; r++)
      if (fabs(m[r][c]) > fabs(m[p][c])) p = r;
    if (p != c) {
      for (int q = 0; q < k; q++) {
        double t = m[c][q];
        m[c][q] = m[p][q], m[p][q] = t;
      }
      double t = b[c];
      b[c] = b[p], b[p] = t;
    }
    for (int r = c + 1; r < k; r++) {
      double f = m[r][c] / m[c][c];
      if (f == 0) continue;
      for (int q = c; q < k; q++) m[r][q] -= f * m[c][q];
      b[r] -= f * b[c];
    }
  }
  for (int c = k - 1; c >= 0; c--) {
    double s = b[c];
    for (int q = c + 1; q < k; q++) s -= m[c][q] * b[q];
    b[c] = s / m[c][c];
  }
}

/* u = the square root of the quasi upper triangular t (n x n, column-major): the diagonal blocks first (a 1x1
 * block's root; a 2x2 block with complex eigenvalues theta +- i mu: alpha I + (B - theta I) / (2 alpha),
 * alpha = sqrt((theta + |lambda|) / 2)), then each off-diagonal block (i, j) from U_ii X + X U_jj = T_ij -
 * U_i,mid U_mid,j, column of blocks by column, bottom up. False when a real eigenvalue is negative (no real
 * root: TF gives NaN throughout). */
static bool sqrt_quasi_triangular(int64_t n, const double *t, double *u) {
  memset(u, 0, (size_t)(n * n) * sizeof *u);
  for (int64_t i = 0; i < n; i++) {
    if (i == n - 1 || AT(t, i + 1, i) == 0) {
      if (!(AT(t, i, i) >= 0)) return false;
      AT(u, i, i) = sqrt(AT(t, i, i));
      continue;
    }
    double a = AT(t, i, i), b = AT(t, i, i + 1), c = AT(t, i + 1, i), d = AT(t, i + 1, i + 1);
    double theta = 0.5 * (a + d), mu2 = -(0.25 * (a - d) * (a - d) + b * c);
    double alpha = sqrt(0.5 * (theta + sqrt(theta * theta + (mu2 > 0 ? mu2 : 0))));
    AT(u, i, i) = alpha + (a - theta) / (2 * alpha);
    AT(u, i, i + 1) = b / (2 * alpha);
    AT(u, i + 1, i) = c / (2 * alpha);
    AT(u, i + 1, i + 1) = alpha + (d - theta) / (2 * alpha);
    i++;
  }
  for (int64_t j = 1; j < n; j++) {
    if (AT(t, j, j - 1) != 0) continue; /* the second column of a 2x2 block */
    int q = (j < n - 1 && AT(t, j + 1, j) != 0) ? 2 : 1;
    for (int64_t i = j - 1; i >= 0; i--) {
      if (i > 0 && AT(t, i, i - 1) != 0) continue;
      int p = (i < n - 1 && AT(t, i + 1, i) != 0) ? 2 : 1;
      double m[4][4] = {{0}}, rhs[4];
      for (int r = 0; r < p; r++)
        for (int c = 0; c < q; c++) {
          double s = AT(t, i + r, j + c);
          for (int64_t k = i + p; k < j; k++) s -= AT(u, i + r, k) * AT(u, k, j + c);
          rhs[r * q + c] = s;
          for (int k = 0; k < p; k++) m[r * q + c][k * q + c] += AT(u, i + r, i + k);
          for (int l = 0; l < q; l++) m[r * q + c][r * q + l] += AT(u, j + l, j + c);
        }
      small_solve(p * q, m, rhs);
      for (int r = 0; r < p; r++)
        for (int c = 0; c < q; c++) AT(u, i + r, j + c) = rhs[r * q + c];
    }
  }
  return true;
}

static tide_status sqrtm_one(lk_batch *bt, int64_t i, char *scratch) {
  const sqrtm_job *j = bt->ctx;
  int dt = bt->dt;
  size_t es = bt->es;
  lapack_int n = (lapack_int)j->n, sdim = 0;
  size_t nn = (size_t)n * (size_t)n;
  double *t = (double *)scratch, *z = t + nn, *u = z + nn, *zu = u + nn;
  char *a = (char *)(zu + nn), *vs = a + nn * es, *wr = vs + nn * es, *wi = wr + (size_t)n * es;
  char *work = wi + (size_t)n * es;
  char *out = lk_out_at(j->out, i, n, n);
  lk_load(&j->a, i, false, a, n);
  /* LAPACK may not return on NaN; a failed iteration leaves no Schur form: NaN throughout, as TF gives */
  if (!lk_all_finite(dt, n, n, a, n) || lk_gees(dt, n, a, n, &sdim, wr, wi, vs, n, work, j->lwork) != 0) {
    lk_fill_nan(dt, (int64_t)nn, out);
    return TIDE_OK;
  }
  for (size_t e = 0; e < nn; e++) { /* the rest in float64, float32's too */
    t[e] = dt == TIDE_FLOAT64 ? ((double *)a)[e] : ((float *)a)[e];
    z[e] = dt == TIDE_FLOAT64 ? ((double *)vs)[e] : ((float *)vs)[e];
  }
  if (!sqrt_quasi_triangular(n, t, u)) {
    lk_fill_nan(dt, (int64_t)nn, out);
    return TIDE_OK;
  }
  /* r = z u z^T, into t */
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, z, n, u, n, 0.0, zu, n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, zu, n, z, n, 0.0, t, n);
  for (lapack_int r = 0; r < n; r++) /* row-major out */
    for (lapack_int c = 0; c < n; c++) {
      double v = t[(size_t)c * (size_t)n + (size_t)r];
      if (dt == TIDE_FLOAT64) ((double *)out)[(size_t)r * (size_t)n + (size_t)c] = v;
      else ((float *)out)[(size_t)r * (size_t)n + (size_t)c] = (float)v;
    }
  return TIDE_OK;
}

tide_status tide_cpu_matrix_square_root(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  sqrtm_job j;
  memset(&j, 0, sizeof j);
  lk_mat_of(&j.a, x, 0, NULL);
  j.out = out[0];
  j.n = x->dims[x->ndim - 1];
  int64_t dims[2] = {j.n, j.n};
  tide_status st = lk_check_dims(def, 1, dims);
  if (st || j.n == 0) return st;
  int dt = x->dt;
  lapack_int n = (lapack_int)j.n, sdim = 0;
  double w[2] = {0, 0}, dummy[1] = {0};
  double q = lk_gees(dt, n, dummy, n, &sdim, dummy, dummy, dummy, n, w, -1) == 0 ? lk_queried(dt, w) : 3.0 * (double)n;
  if ((st = lk_work_size(def, q, &j.lwork)) != TIDE_OK) return st;
  if (j.lwork < 3 * n) j.lwork = 3 * n;
  size_t es = tide_dtype_size_unchecked(dt), nn = (size_t)(j.n * j.n);
  size_t scratch = nn * 4 * sizeof(double) + (nn * 2 + (size_t)(2 * j.n) + (size_t)j.lwork) * es;
  lk_batch b;
  lk_batch_init(&b, def, dt, tide_dims_product(x->ndim - 2, x->dims), scratch,
                30.0 * (double)j.n * (double)j.n * (double)j.n, sqrtm_one, &j);
  return lk_batch_run(&b);
}
