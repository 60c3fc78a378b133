/* cpu/scan.c — cumsum and cumprod along one axis with TF's exclusive and
 * reverse flags (tf.math.cumsum([a, b, c], exclusive=True, reverse=True) = [b + c, c, 0]).
 *
 * The input is viewed as contiguous [outer, len, inner] (strided inputs are
 * copied first). Sums accumulate in the element type as TF does (integers
 * wrap); halves accumulate in float32 and round each output. inner == 1: one
 * running value per row. inner > 1: strips of KC columns run side by side,
 * vectorized over the columns. Rows and strips run in parallel. */
#include "reduce.h"
#include "iter.h"
#include "../core/parallel.h"

#include <stdlib.h>

enum { KC = 512 };

/* Scan n columns (rows `inner` apart) of x into y, along len rows. */
#define SCAN_KERNEL(NAME, T, AT, OP, ID)                                                           \
  static void NAME(const T *x, T *y, int64_t len, int64_t inner, int64_t n, bool excl, bool rev) { \
    int64_t a0 = rev ? len - 1 : 0, step = rev ? -1 : 1;                                           \
    if (n == 1) {                                                                                  \
      AT acc = (AT)(ID);                                                                           \
      for (int64_t i = 0, a = a0; i < len; i++, a += step) {                                       \
        AT v = (AT)x[a * inner];                                                                   \
        if (excl) y[a * inner] = (T)acc;                                                           \
        acc = (AT)(acc OP v);                                                                      \
        if (!excl) y[a * inner] = (T)acc;                                                          \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    AT acc[KC];                                                                                    \
    for (int64_t j = 0; j < n; j++) acc[j] = (AT)(ID);                                             \
    for (int64_t i = 0, a = a0; i < len; i++, a += step) {                                         \
      const T *restrict xr = x + a * inner;                                                        \
      T *restrict yr = y + a * inner;                                                              \
      if (excl) {                                                                                  \
        for (int64_t j = 0; j < n; j++) {                                                          \
          yr[j] = (T)acc[j];                                                                       \
          acc[j] = (AT)(acc[j] OP (AT)xr[j]);                                                      \
        }                                                                                          \
      } else {                                                                                     \
        for (int64_t j = 0; j < n; j++) {                                                          \
          acc[j] = (AT)(acc[j] OP (AT)xr[j]);                                                      \
          yr[j] = (T)acc[j];                                                                       \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

#define SCAN_TYPES(SUF, T)                       \
  SCAN_KERNEL(sum_##SUF, T, T, +, 0)             \
  SCAN_KERNEL(prod_##SUF, T, T, *, 1)

SCAN_TYPES(f32, float)
SCAN_TYPES(f64, double)
SCAN_TYPES(i8, int8_t)
SCAN_TYPES(u8, uint8_t)
SCAN_TYPES(i32, int32_t)
SCAN_TYPES(i64, int64_t)

typedef struct scan_ctx {
  const char *x;
  char *y;
  int dt;           /* compute dtype (halves run as float32) */
  bool prod, excl, rev;
  int64_t len, inner, nstrips;
} scan_ctx;

/* Units [u0, u1): (outer position, column strip) pairs, each scanned along len. */
static void scan_range(void *ctx, int64_t u0, int64_t u1) {
  const scan_ctx *c = ctx;
  size_t es = tide_dtype_size_unchecked(c->dt);
  for (int64_t u = u0; u < u1; u++) {
    int64_t o = u / c->nstrips, j0 = (u % c->nstrips) * KC;
    int64_t n = c->inner - j0 < KC ? c->inner - j0 : KC;
    size_t off = (size_t)(o * c->len * c->inner + j0) * es;
    const char *x = c->x + off;
    char *y = c->y + off;
#define SCAN_CASE(DT, SUF, T)                                                                   \
  case DT:                                                                                      \
    if (c->prod) prod_##SUF((const T *)x, (T *)y, c->len, c->inner, n, c->excl, c->rev);        \
    else sum_##SUF((const T *)x, (T *)y, c->len, c->inner, n, c->excl, c->rev);                 \
    break;
    switch (c->dt) {
      SCAN_CASE(TIDE_FLOAT32, f32, float)
      SCAN_CASE(TIDE_FLOAT64, f64, double)
      SCAN_CASE(TIDE_INT8, i8, int8_t)
      SCAN_CASE(TIDE_UINT8, u8, uint8_t)
      SCAN_CASE(TIDE_INT32, i32, int32_t)
      SCAN_CASE(TIDE_INT64, i64, int64_t)
    default: break;
    }
#undef SCAN_CASE
  }
}

/* The kernel of cumsum/cumprod: contiguous [outer, len, inner], strips in parallel. */
tide_status tide_cpu_scan(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *y = out[0];
  int ax = tide_normalize_axis(def->name, attrs->axis, x->ndim);
  if (ax < 0) return tide_last_status();
  if (y->nelem == 0) return TIDE_OK;
  tide_axis_view v;
  tide_status st = tide_axis_open(def->name, x, ax, y, &v); /* halves: float32 in and out, rounded at the end */
  if (st) return st;
  scan_ctx c = {v.x, v.y, v.dt, def->id == TIDE_OP_CUMPROD, (attrs->flags & TIDE_ATTR_EXCLUSIVE) != 0,
                (attrs->flags & TIDE_ATTR_REVERSE) != 0, v.len, v.inner, 0};
  int64_t outer = v.outer;
  c.nstrips = (c.inner + KC - 1) / KC;
  int64_t per = c.len * (c.inner < KC ? c.inner : KC);
  int64_t grain = TIDE_GRAIN_CHEAP / (per > 0 ? per : 1);
  tide_parallel_for(outer * c.nstrips, grain > 0 ? grain : 1, scan_range, &c);
  tide_axis_close(&v, true);
  return TIDE_OK;
}
