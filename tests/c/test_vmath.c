/* tests/c/test_vmath.c — float32 exp, sigmoid and tanh (kernels/cpu/vmath.h,
 * run through the ops at every instruction set this CPU has) against
 * double-precision libm over a dense sweep of float32 values: errors in ulps
 * of the float32 result, and the special values. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

/* Units in the last place of float32 at |r| (denormal spacing below FLT_MIN). */
static double ulp_of(double r) {
  r = fabs(r);
  if (r < FLT_MIN) return ldexp(1.0, -149);
  int e;
  frexp(r, &e); /* r = m * 2^e, m in [0.5, 1) */
  return ldexp(1.0, e - 24);
}

static double ref_sigmoid(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }

typedef struct fn_case {
  int op;
  const char *name;
  double (*ref)(double);
  double max_ulp;
} fn_case;

/* Evenly spaced float32 bit patterns from 0 to `limit` in magnitude (an odd
 * stride, so every mantissa pattern class comes up), both signs, and the
 * floats next to the edges where results overflow or underflow. */
static int64_t sweep(float *v, int64_t cap, float limit) {
  int64_t n = 0;
  uint32_t top = float_to_bits(limit);
  uint32_t stride = (uint32_t)(top / ((cap - 64) / 2)) | 1;
  for (uint32_t b = 0; b <= top && n + 2 <= cap - 64; b += stride) {
    v[n++] = bits_to_float(b);
    v[n++] = -bits_to_float(b);
  }
  static const float edges[] = {88.72283f, 88.72284f, 88.7f, 89.0f, -87.33654f, -87.3f, -103.9f, -103.97208f,
                                -103.97209f, -104.0f, -104.1f, 0.625f, 0.62499994f, -0.625f, 9.0f, 9.1f, 44.0f};
  for (size_t i = 0; i < sizeof edges / sizeof *edges && n < cap; i++) v[n++] = edges[i];
  return n;
}

static void check_accuracy(const fn_case *c, const tide_tensor *x, const char *level) {
  tide_tensor y = blank();
  tide_tensor *out = &y;
  CHECK(tide_op_run(c->op, NULL, 1, &x, 1, &out) == TIDE_OK);
  const float *xs = x->data, *ys = y.data;
  double worst = 0;
  float worst_x = 0;
  for (int64_t i = 0; i < x->nelem; i++) {
    double r = c->ref((double)xs[i]);
    double err;
    if (isinf(r) || (float)r == 0 || isinf((float)r)) /* exact results: inf, 0 after rounding */
      err = (float)r == ys[i] ? 0 : 1e9;
    else
      err = fabs((double)ys[i] - r) / ulp_of(r);
    if (err > worst) worst = err, worst_x = xs[i];
  }
  fprintf(stderr, "  %s (%s): at most %.2f ulp, at x = %.9g (bound %.1f)\n", c->name, level, worst, worst_x,
          c->max_ulp);
  CHECK(worst <= c->max_ulp);
  tide_tensor_release(&y);
}

/* NaN stays NaN; infinities, zeros and the saturating ends are exact. */
static void check_specials(void) {
  float in[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1000.0f, -1000.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 1e-30f};
  int64_t n = sizeof in / sizeof *in;
  tide_tensor x = blank();
  CHECK(tide_tensor_init(&x, TIDE_FLOAT32, 1, &n) == TIDE_OK);
  memcpy(x.data, in, sizeof in);
  const tide_tensor *xp = &x;
  tide_tensor e = blank(), t = blank(), s = blank();
  tide_tensor *pe = &e, *pt = &t, *ps = &s;
  CHECK(tide_op_run(TIDE_OP_EXP, NULL, 1, &xp, 1, &pe) == TIDE_OK);
  CHECK(tide_op_run(TIDE_OP_TANH, NULL, 1, &xp, 1, &pt) == TIDE_OK);
  CHECK(tide_op_run(TIDE_OP_SIGMOID, NULL, 1, &xp, 1, &ps) == TIDE_OK);
  const float *E = e.data, *T = t.data, *S = s.data;
  CHECK(isnan(E[0]) && isnan(E[1]) && isnan(T[0]) && isnan(T[1]) && isnan(S[0]) && isnan(S[1]));
  CHECK(E[2] == INFINITY && E[3] == 0 && T[2] == 1 && T[3] == -1 && S[2] == 1 && S[3] == 0);
  CHECK(E[4] == 1 && E[5] == 1 && S[4] == 0.5f && S[5] == 0.5f);
  CHECK(T[4] == 0 && !signbit(T[4]) && T[5] == 0 && signbit(T[5])); /* tanh keeps the sign of zero */
  CHECK(E[6] == INFINITY && E[7] == 0 && T[6] == 1 && T[7] == -1 && S[6] == 1 && S[7] == 0);
  CHECK(E[8] == INFINITY && E[9] == 0 && T[8] == 1 && T[9] == -1);
  CHECK(E[10] == 1 && T[10] == FLT_MIN && T[11] == 1e-30f && S[11] == 0.5f);
  tide_tensor_release(&e), tide_tensor_release(&t), tide_tensor_release(&s), tide_tensor_release(&x);
}

int main(void) {
  static const fn_case cases[] = {
    {TIDE_OP_EXP, "exp", exp, 1.5},
    {TIDE_OP_SIGMOID, "sigmoid", ref_sigmoid, 2.5},
    {TIDE_OP_TANH, "tanh", tanh, 1.5},
  };
  int64_t cap = 4 << 20;
  float *values = malloc((size_t)cap * sizeof(float));
  CHECK(values != NULL);
  if (!values) return CHECK_SUMMARY("vmath");
  int64_t n = sweep(values, cap, 110.0f);
  CHECK(n > 2000000);
  tide_tensor x = blank();
  CHECK(tide_tensor_init(&x, TIDE_FLOAT32, 1, &n) == TIDE_OK);
  memcpy(x.data, values, (size_t)n * sizeof(float));
  free(values);
  static const char *const levels[] = {"baseline", "avx2", "avx512"};
  for (int l = 0; l < 3; l++) {
    CHECK(tide_set_max_cpu_isa(levels[l]) == TIDE_OK);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) check_accuracy(&cases[c], &x, tide_cpu_isa());
    check_specials();
  }
  CHECK(tide_set_max_cpu_isa("avx512") == TIDE_OK);
  tide_tensor_release(&x);
  return CHECK_SUMMARY("vmath");
}
