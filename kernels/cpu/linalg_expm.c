/* cpu/linalg_expm.c — the matrix exponential as TF's tf.linalg.expm computes
 * it (Higham 2005): a Pade approximant of the degree the 1-norm calls for
 * (3, 5, 7 in float32; 3 to 13 in float64), scaling and squaring. */
#include "linalg_lapack.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* Pade numerator coefficients b[0..d-1] (b[d] = 1), TF's (and Eigen's). */
static const double PADE3[] = {120.0, 60.0, 12.0};
static const double PADE5[] = {30240.0, 15120.0, 3360.0, 420.0, 30.0};
static const double PADE7[] = {17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0};
static const double PADE9[] = {17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
                               2162160.0, 110880.0, 3960.0, 90.0};
static const double PADE13[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
                                33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0};

typedef struct expm_job {
  lk_mat a;
  const tide_tensor *x;
  tide_tensor *out;
  int64_t n;
} expm_job;

/* c = a b for n x n column-major matrices. */
static void mm(int dt, lapack_int n, const void *a, const void *b, void *c) {
  if (dt == TIDE_FLOAT64) cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
  else cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

/* dst = sum_t w[t] * m[t] (nm matrices of nn elements) + diag * I (n x n). */
static void combine(int dt, int64_t n, int nm, const double *w, void *const *m, double diag, void *dst) {
  int64_t nn = n * n;
  for (int64_t e = 0; e < nn; e++) {
    double v = (e % (n + 1) == 0) ? diag : 0;
    for (int t = 0; t < nm; t++) v += w[t] * (dt == TIDE_FLOAT64 ? ((double *)m[t])[e] : ((float *)m[t])[e]);
    if (dt == TIDE_FLOAT64) ((double *)dst)[e] = v;
    else ((float *)dst)[e] = (float)v;
  }
}

/* u, v of the degree-d approximant at a (n x n), with the scratch powers p2 .. p8 (each n x n). */
static void pade(int dt, lapack_int n, int d, const double *b, void *a, void *u, void *v, void *t, void **p) {
  void *a2 = p[0], *a4 = p[1], *a6 = p[2], *a8 = p[3];
  mm(dt, n, a, a, a2);
  if (d >= 5) mm(dt, n, a2, a2, a4);
  if (d >= 7) mm(dt, n, a4, a2, a6);
  if (d == 13) {
    /* u = a (a6 (a6 + b11 a4 + b9 a2) + b7 a6 + b5 a4 + b3 a2 + b1 I), v = a6 (b12 a6 + b10 a4 + b8 a2) + ... */
    void *m3[3] = {a6, a4, a2};
    double w1[3] = {1, b[11], b[9]}, w2[3] = {b[7], b[5], b[3]}, w3[3] = {b[12], b[10], b[8]}, w4[3] = {b[6], b[4], b[2]};
    combine(dt, n, 3, w1, m3, 0, t);
    mm(dt, n, a6, t, a8);
    void *m4[4] = {a8, a6, a4, a2};
    double w5[4] = {1, w2[0], w2[1], w2[2]};
    combine(dt, n, 4, w5, m4, b[1], t);
    mm(dt, n, a, t, u);
    combine(dt, n, 3, w3, m3, 0, t);
    mm(dt, n, a6, t, a8);
    double w6[4] = {1, w4[0], w4[1], w4[2]};
    combine(dt, n, 4, w6, m4, b[0], v);
    return;
  }
  if (d == 9) mm(dt, n, a6, a2, a8);
  /* the even powers a^0 .. a^(d-1): u = a (a^(d-1) + b[d-2] a^(d-3) + ... + b[1] I), v = b[d-1] a^(d-1) + ... + b[0] I */
  void *pw[4] = {a2, a4, a6, a8};
  int np = (d - 1) / 2;
  double wu[4], wv[4];
  void *ms[4];
  for (int q = 0; q < np; q++) { /* ms[q] = a^(2(np - q)) */
    ms[q] = pw[np - 1 - q];
    int deg = 2 * (np - q);
    wu[q] = q == 0 ? 1 : b[deg + 1];
    wv[q] = b[deg];
  }
  combine(dt, n, np, wu, ms, b[1], t);
  mm(dt, n, a, t, u);
  combine(dt, n, np, wv, ms, b[0], v);
}

static tide_status expm_one(lk_batch *bt, int64_t i, char *scratch) {
  const expm_job *j = bt->ctx;
  int dt = bt->dt;
  size_t es = bt->es;
  lapack_int n = (lapack_int)j->n;
  size_t nn = (size_t)(n * n) * es;
  char *a = scratch, *u = a + nn, *v = u + nn, *t = v + nn;
  void *p[4] = {t + nn, t + 2 * nn, t + 3 * nn, t + 4 * nn};
  lapack_int *ipiv = (lapack_int *)(t + 5 * nn);
  char *out = lk_out_at(j->out, i, n, n);
  lk_load(&j->a, i, false, a, n);
  double l1 = 0; /* the 1-norm: the largest column sum of |a| */
  for (lapack_int c = 0; c < n; c++) {
    double s = 0;
    for (lapack_int r = 0; r < n; r++) s += fabs(dt == TIDE_FLOAT64 ? ((double *)a)[c * n + r] : ((float *)a)[c * n + r]);
    if (s > l1 || s != s) l1 = s;
  }
  if (!isfinite(l1)) { /* TF: NaN throughout */
    lk_fill_nan(dt, (int64_t)n * n, out);
    return TIDE_OK;
  }
  int s = 0, d;
  const double *b;
  if (dt == TIDE_FLOAT64) {
    if (l1 < 1.495585217958292e-002) d = 3, b = PADE3;
    else if (l1 < 2.539398330063230e-001) d = 5, b = PADE5;
    else if (l1 < 9.504178996162932e-001) d = 7, b = PADE7;
    else if (l1 < 2.097847961257068e+000) d = 9, b = PADE9;
    else d = 13, b = PADE13;
    if (d == 13) s = (int)fmax(floor(log(l1 / 5.371920351148152) / log(2.0)), 0);
  } else {
    if (l1 < 4.258730016922831e-001) d = 3, b = PADE3;
    else if (l1 < 1.880152677804762e+000) d = 5, b = PADE5;
    else d = 7, b = PADE7;
    if (d == 7) s = (int)fmax(floor(log(l1 / 3.925724783138660) / log(2.0)), 0);
  }
  if (s > 0) { /* a / 2^s, for the top degree only (TF's) */
    double scale = ldexp(1.0, -s);
    for (size_t e = 0; e < (size_t)n * (size_t)n; e++) {
      if (dt == TIDE_FLOAT64) ((double *)a)[e] *= scale;
      else ((float *)a)[e] = (float)(((float *)a)[e] * scale);
    }
  }
  pade(dt, n, d, b, a, u, v, t, p);
  /* r = (v - u)^-1 (u + v) */
  double wd[2] = {1, -1}, ws[2] = {1, 1};
  void *vu[2] = {v, u};
  combine(dt, n, 2, wd, vu, 0, t);
  combine(dt, n, 2, ws, vu, 0, a);
  lapack_int info = lk_getrf(dt, n, n, t, n, ipiv);
  if (info == 0) info = lk_getrs(dt, 'N', n, n, t, n, ipiv, a, n);
  if (info != 0) {
    char where[200];
    return lk_fail(bt, i, TIDE_ERR_VALUE, "Input matrix is not invertible: the Pade denominator of %s is singular",
                   lk_where(where, sizeof where, j->x, i));
  }
  for (int q = 0; q < s; q++) { /* square s times */
    mm(dt, n, a, a, t);
    memcpy(a, t, nn);
  }
  lk_store(es, n, n, a, n, false, out);
  return TIDE_OK;
}

tide_status tide_cpu_matrix_exponential(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  expm_job j;
  lk_mat_of(&j.a, x, 0, NULL);
  j.x = x;
  j.out = out[0];
  j.n = x->dims[x->ndim - 1];
  int64_t dims[2] = {j.n, j.n};
  tide_status st = lk_check_dims(def, 1, dims);
  if (st || j.n == 0) return st;
  size_t es = tide_dtype_size_unchecked(x->dt);
  size_t scratch = (size_t)(j.n * j.n) * es * 8 + (size_t)j.n * sizeof(lapack_int);
  lk_batch b;
  lk_batch_init(&b, def, x->dt, tide_dims_product(x->ndim - 2, x->dims), scratch,
                12.0 * (double)j.n * (double)j.n * (double)j.n, expm_one, &j);
  return lk_batch_run(&b);
}
