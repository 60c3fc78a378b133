/* cpu/scan.c — cumsum and cumprod along one axis with TF's exclusive and
 * reverse flags (tf.math.cumsum([a, b, c], exclusive=True, reverse=True) = [b + c, c, 0]).
 *
 * The input is viewed as contiguous [outer, len, inner] (strided inputs are
 * copied first). Sums accumulate in the element type as TF does (integers
 * wrap); halves accumulate in float32 and round each output. inner == 1: one
 * running value per row. inner > 1: strips of KC columns run side by side,
 * vectorized over the columns. Rows and strips run in parallel. */
#include "reduce.h"
#include "../core/parallel.h"

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
  bool prod, excl, rev;
} scan_ctx;

/* Scan n columns from j0 of outer position o along len (a tide_axis_strip_fn). */
static void scan_strip(void *ctx, const tide_axis_view *v, int64_t o, int64_t j0, int64_t n) {
  const scan_ctx *c = ctx;
  size_t off = tide_axis_offset(v, o, j0);
  const char *x = v->x + off;
  char *y = v->y + off;
#define SCAN_CASE(DT, SUF, T)                                                                 \
  case DT:                                                                                    \
    if (c->prod) prod_##SUF((const T *)x, (T *)y, v->len, v->inner, n, c->excl, c->rev);      \
    else sum_##SUF((const T *)x, (T *)y, v->len, v->inner, n, c->excl, c->rev);               \
    break;
  switch (v->dt) {
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

/* The kernel of cumsum/cumprod: contiguous [outer, len, inner], strips in
 * parallel; halves run as float32 and are rounded at the end. */
tide_status tide_cpu_scan(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  scan_ctx c = {def->id == TIDE_OP_CUMPROD, (attrs->flags & TIDE_ATTR_EXCLUSIVE) != 0,
                (attrs->flags & TIDE_ATTR_REVERSE) != 0};
  return tide_axis_for_strips(def, attrs->axis, in[0], out[0], KC, TIDE_GRAIN_CHEAP, scan_strip, &c);
}
