/* cpu/betainc.c — tf.math.betainc: the regularized incomplete beta function I_x(a, b) of three broadcast inputs,
 * float32 or float64 (computed in double). The continued fraction of I_x(a, b) (modified Lentz), on whichever
 * side of the mean a/(a + b) converges fast: I_x(a, b) = 1 - I_{1-x}(b, a). NaN outside a, b > 0 and x in [0, 1],
 * as Eigen's (TF's) betainc; exactly 0 and 1 at the ends of x. */
#include "iter.h"
#include "../core/registry.h"

#include <float.h>
#include <math.h>

/* The continued fraction of I_x(a, b) * a B(a, b) / (x^a (1 - x)^b) (Numerical Recipes' betacf, to double's epsilon). */
static double betacf(double a, double b, double x) {
  const double tiny = 1e-300;
  double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; m++) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < DBL_EPSILON) break;
  }
  return h;
}

static double betainc_d(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1)) return NAN; /* (NaN inputs too) */
  if (x == 0) return 0;
  if (x == 1) return 1;
  double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return exp(lbt) * betacf(a, b, x) / a;
  return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

/* p[0] = out, p[1..3] = a, b, x; strides in bytes. */
static void betainc_f64(int64_t n, char **p, const int64_t *s, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++)
    *(double *)(p[0] + i * s[0]) = betainc_d(*(const double *)(p[1] + i * s[1]), *(const double *)(p[2] + i * s[2]),
                                             *(const double *)(p[3] + i * s[3]));
}
static void betainc_f32(int64_t n, char **p, const int64_t *s, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++)
    *(float *)(p[0] + i * s[0]) = (float)betainc_d(*(const float *)(p[1] + i * s[1]), *(const float *)(p[2] + i * s[2]),
                                                   *(const float *)(p[3] + i * s[3]));
}

/* (a, b, x) broadcast -> I_x(a, b). */
tide_status tide_cpu_betainc(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_iter it;
  tide_status st = tide_iter_build(&it, def->name, out[0], 3, in);
  if (st) return st;
  return tide_iter_run(&it, out[0]->dt == TIDE_FLOAT64 ? betainc_f64 : betainc_f32, NULL);
}
