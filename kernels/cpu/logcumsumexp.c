/* cpu/logcumsumexp.c — cumulative_logsumexp along one axis with TF's
 * exclusive and reverse flags: y[i] = log(sum over j <= i of exp(x[j])).
 *
 * Each column keeps the running maximum m and s = sum of exp(x[j] - m), so
 * no exp overflows and nothing small is lost to an early shift; y = m + log(s).
 * Only an add (or a multiply-add when m grows) links one step to the next:
 * TF's fold, lse(acc, x) = max + log1p(exp(min - max)), puts an exp and a
 * log1p on that chain, about three times slower on one long row. Unlike
 * TF's, NaN propagates (TF's max/min drop it) and +inf with +inf stays +inf
 * (TF's gives NaN). The exclusive first element is -inf (log of an empty
 * sum). Floats accumulate in their own type; halves in float32, rounded at
 * the end. The input is viewed as contiguous [outer, len, inner]; column
 * strips run in parallel. */
#include "reduce.h"
#include "iter.h"
#include "../core/parallel.h"

#include <math.h>

enum { KC = 256 };

/* Fold v into the running (m, s) of a column. -inf adds nothing; once m is
 * +inf the sum is +inf (until a NaN); NaN makes s NaN for good. */
#define LCSE_STEP(T, EXP, m, s, v)                                                               \
  do {                                                                                           \
    if (v <= m) {                                                                                \
      if (v != -(T)INFINITY && m != (T)INFINITY) s += EXP(v - m);                                \
    } else if (v == v) {                                                                         \
      s = s * EXP(m - v) + 1; /* m = -inf: 0 * 0 + 1 */                                          \
      m = v;                                                                                     \
    } else {                                                                                     \
      s = v;                                                                                     \
    }                                                                                            \
  } while (0)

/* Scan n columns (rows `inner` apart) of x into y along len rows. */
#define LCSE_KERNEL(NAME, T, EXP, LOG)                                                           \
  static void NAME(const T *x, T *y, int64_t len, int64_t inner, int64_t n, bool excl, bool rev) { \
    int64_t a0 = rev ? len - 1 : 0, step = rev ? -1 : 1;                                         \
    T m[KC], s[KC];                                                                              \
    for (int64_t j = 0; j < n; j++) m[j] = -(T)INFINITY, s[j] = 0;                               \
    for (int64_t i = 0, a = a0; i < len; i++, a += step) {                                       \
      const T *xr = x + a * inner;                                                               \
      T *yr = y + a * inner;                                                                     \
      for (int64_t j = 0; j < n; j++) {                                                          \
        if (excl) yr[j] = m[j] + LOG(s[j]);                                                      \
        LCSE_STEP(T, EXP, m[j], s[j], xr[j]);                                                    \
        if (!excl) yr[j] = m[j] + LOG(s[j]);                                                     \
      }                                                                                          \
    }                                                                                            \
  }
LCSE_KERNEL(lcse_f32, float, expf, logf)
LCSE_KERNEL(lcse_f64, double, exp, log)

typedef struct lcse_ctx {
  const char *x;
  char *y;
  bool f64, excl, rev;
  int64_t len, inner, nstrips;
} lcse_ctx;

/* Units [u0, u1): (outer position, column strip) pairs, each scanned along len. */
static void lcse_range(void *ctx, int64_t u0, int64_t u1) {
  const lcse_ctx *c = ctx;
  size_t es = c->f64 ? sizeof(double) : sizeof(float);
  for (int64_t u = u0; u < u1; u++) {
    int64_t o = u / c->nstrips, j0 = (u % c->nstrips) * KC;
    int64_t n = c->inner - j0 < KC ? c->inner - j0 : KC;
    size_t off = (size_t)(o * c->len * c->inner + j0) * es;
    if (c->f64) lcse_f64((const double *)(c->x + off), (double *)(c->y + off), c->len, c->inner, n, c->excl, c->rev);
    else lcse_f32((const float *)(c->x + off), (float *)(c->y + off), c->len, c->inner, n, c->excl, c->rev);
  }
}

/* The kernel of cumulative_logsumexp (float dtypes; attrs axis, EXCLUSIVE, REVERSE). */
tide_status tide_cpu_cumulative_logsumexp(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                          const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *y = out[0];
  int ax = tide_normalize_axis(def->name, attrs->axis, x->ndim);
  if (ax < 0) return tide_last_status();
  if (y->nelem == 0) return TIDE_OK;
  tide_axis_view v;
  tide_status st = tide_axis_open(def->name, x, ax, y, &v); /* halves: float32 in and out */
  if (st) return st;
  lcse_ctx c = {v.x, v.y, v.dt == TIDE_FLOAT64, (attrs->flags & TIDE_ATTR_EXCLUSIVE) != 0,
                (attrs->flags & TIDE_ATTR_REVERSE) != 0, v.len, v.inner, 0};
  c.nstrips = (c.inner + KC - 1) / KC;
  int64_t per = c.len * (c.inner < KC ? c.inner : KC);
  int64_t grain = TIDE_GRAIN_COSTLY / (per > 0 ? per : 1);
  tide_parallel_for(v.outer * c.nstrips, grain > 0 ? grain : 1, lcse_range, &c);
  tide_axis_close(&v, true);
  return TIDE_OK;
}
