/* cpu/softmax.c — softmax and log_softmax along any axis, and TF's fused
 * sparse softmax cross-entropy (loss and backprop in one pass over the logits).
 *
 * Every row is done in three sweeps: its max, exp(x - max) into the output and
 * its sum, then the scale by 1 / sum (softmax) or (x - max) - log(sum)
 * (log_softmax), so large logits never overflow. The input is
 * viewed as contiguous [outer, len, inner] (strided inputs are copied first):
 *   inner == 1  rows are contiguous: the max and the sum run in LANES
 *               independent accumulators so they vectorize;
 *   inner > 1   the axis is an outer one: strips of up to KC columns run side
 *               by side, vectorized over the columns.
 * Rows and strips run in parallel. float32 uses an inlined polynomial exp that
 * the compiler vectorizes; float64 uses libm's exp; halves go through float32.
 * The loops are built once per instruction set, the kernels once (simd.h). */
#include "iter.h"
#include "reduce.h"
#include "simd.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LANES = 16, KC = 256 };

/* exp(x) for x <= 88 (the softmax feeds x - max <= 0): Cephes' expf, a degree-6
 * polynomial on x - n ln2 times 2^n built from bits, so it has no calls or
 * branches and vectorizes. Within about 2 ulp; x < -87.33 gives 0 (exp there
 * is below the smallest normal float); NaN stays NaN. */
static inline float exp_f32(float x) {
  const float lo = -87.3365447504f, hi = 88.0f, magic = 12582912.0f; /* 1.5 * 2^23 */
  float xc = x > hi ? hi : x;
  float t = xc * 1.44269504088896341f + magic; /* round(x / ln2) lands in t's low mantissa bits */
  float n = t - magic;
  float r = xc - n * 0.693359375f + n * 2.12194440e-4f; /* ln2 split in two: r is exact enough */
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float e = p * r * r + r + 1.0f;
  uint32_t tb, sb;
  memcpy(&tb, &t, sizeof tb);
  sb = (tb - 0x4B400000u + 127u) << 23; /* 2^n: n + bias in the exponent field */
  float scale;
  memcpy(&scale, &sb, sizeof scale);
  return x < lo ? 0.0f : e * scale;
}

/* A plain max (it vectorizes): a NaN it skips still poisons the row, since
 * exp(NaN - max) makes the sum NaN, so a row holding NaN comes out all NaN (as TF). */
#define VMAX(a, v) ((v) > (a) ? (v) : (a))

/* One contiguous row x[0..n) into y (distinct buffers). log_sm picks log_softmax.
 * Returns log(sum(exp(x - max))) and stores the max in *mx (the loss uses both).
 * The exps go to y first in a plain loop (it vectorizes), then are summed in
 * LANES accumulators; rows shorter than two lane blocks skip the lanes. */
#define SOFTMAX_ROW(NAME, T, EXP, LOG)                                                       \
  static T NAME(const T *restrict x, T *restrict y, int64_t n, bool log_sm, T *mx) {        \
    T m = x[0], s = 0;                                                                       \
    int64_t j = 0;                                                                           \
    if (n < 2 * LANES) {                                                                     \
      for (j = 1; j < n; j++) m = VMAX(m, x[j]);                                          \
      for (j = 0; j < n; j++) y[j] = EXP(x[j] - m);                                          \
      for (j = 0; j < n; j++) s += y[j];                                                     \
    } else {                                                                                 \
      T lane[LANES];                                                                         \
      for (int l = 0; l < LANES; l++) lane[l] = x[l];                                        \
      for (j = LANES; j + LANES <= n; j += LANES)                                            \
        for (int l = 0; l < LANES; l++) lane[l] = VMAX(lane[l], x[j + l]);                \
      for (; j < n; j++) lane[0] = VMAX(lane[0], x[j]);                                   \
      m = lane[0];                                                                           \
      for (int l = 1; l < LANES; l++) m = VMAX(m, lane[l]);                               \
      for (j = 0; j < n; j++) y[j] = EXP(x[j] - m);                                          \
      for (int l = 0; l < LANES; l++) lane[l] = 0;                                           \
      for (j = 0; j + LANES <= n; j += LANES)                                                \
        for (int l = 0; l < LANES; l++) lane[l] += y[j + l];                                 \
      for (; j < n; j++) lane[0] += y[j];                                                    \
      for (int l = 0; l < LANES; l++) s += lane[l];                                          \
    }                                                                                        \
    T ls = LOG(s);                                                                           \
    if (log_sm) { /* (x - m) - log s: x - m is exact for nearby values, x - (m + log s) is not */ \
      for (j = 0; j < n; j++) y[j] = (x[j] - m) - ls;                                        \
    } else {                                                                                 \
      T inv = (T)1 / s;                                                                      \
      for (j = 0; j < n; j++) y[j] *= inv;                                                   \
    }                                                                                        \
    *mx = m;                                                                                 \
    return ls;                                                                               \
  }

/* w columns (rows `inner` apart) of a [len, inner] block, reduced along len. */
#define SOFTMAX_COLS(NAME, T, EXP, LOG)                                                            \
  static void NAME(const T *restrict x, T *restrict y, int64_t len, int64_t inner, int64_t w,      \
                   bool log_sm) {                                                                  \
    T m[KC], s[KC];                                                                                \
    for (int64_t j = 0; j < w; j++) m[j] = (T)-INFINITY, s[j] = 0;                                 \
    for (int64_t r = 0; r < len; r++) {                                                            \
      const T *xr = x + r * inner;                                                                 \
      for (int64_t j = 0; j < w; j++) m[j] = VMAX(m[j], xr[j]);                                 \
    }                                                                                              \
    for (int64_t r = 0; r < len; r++) {                                                            \
      const T *xr = x + r * inner;                                                                 \
      T *yr = y + r * inner;                                                                       \
      if (log_sm) {                                                                                \
        for (int64_t j = 0; j < w; j++) s[j] += EXP(xr[j] - m[j]);                                 \
      } else {                                                                                     \
        for (int64_t j = 0; j < w; j++) {                                                          \
          T e = EXP(xr[j] - m[j]);                                                                 \
          yr[j] = e;                                                                               \
          s[j] += e;                                                                               \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    for (int64_t j = 0; j < w; j++) s[j] = log_sm ? LOG(s[j]) : (T)1 / s[j];                       \
    for (int64_t r = 0; r < len; r++) {                                                            \
      const T *xr = x + r * inner;                                                                 \
      T *yr = y + r * inner;                                                                       \
      if (log_sm) {                                                                                \
        for (int64_t j = 0; j < w; j++) yr[j] = (xr[j] - m[j]) - s[j];                             \
      } else {                                                                                     \
        for (int64_t j = 0; j < w; j++) yr[j] *= s[j];                                             \
      }                                                                                            \
    }                                                                                              \
  }

SOFTMAX_ROW(row_f32, float, exp_f32, logf)
SOFTMAX_ROW(row_f64, double, exp, log)
SOFTMAX_COLS(cols_f32, float, exp_f32, logf)
SOFTMAX_COLS(cols_f64, double, exp, log)

/* ---- softmax / log_softmax ------------------------------------------------ */

/* A row (inner == 1) or w columns from j0 of outer position o (a tide_axis_strip_fn). */
static void sm_strip(void *ctx, const tide_axis_view *v, int64_t o, int64_t j0, int64_t w) {
  bool log_sm = *(const bool *)ctx;
  size_t off = tide_axis_offset(v, o, j0);
  const char *x = v->x + off;
  char *y = v->y + off;
  if (v->inner == 1 && v->dt == TIDE_FLOAT64) {
    double m;
    row_f64((const double *)x, (double *)y, v->len, log_sm, &m);
  } else if (v->inner == 1) {
    float m;
    row_f32((const float *)x, (float *)y, v->len, log_sm, &m);
  } else if (v->dt == TIDE_FLOAT64) {
    cols_f64((const double *)x, (double *)y, v->len, v->inner, w, log_sm);
  } else {
    cols_f32((const float *)x, (float *)y, v->len, v->inner, w, log_sm);
  }
}

/* ---- sparse softmax cross-entropy ------------------------------------------ */

typedef struct xent_ctx {
  const char *x;      /* logits [B, K] contiguous (float32 or float64) */
  char *loss, *bp;    /* [B], [B, K] */
  const int64_t *lab; /* labels as int64, already checked */
  bool f64;
  int64_t k;
} xent_ctx;

/* Rows [b0, b1): backprop = softmax - onehot, loss = logsumexp - x[label] (TF's fused op). */
static void xent_range(void *ctx, int64_t b0, int64_t b1) {
  const xent_ctx *c = ctx;
  for (int64_t b = b0; b < b1; b++) {
    int64_t lab = c->lab[b];
    if (c->f64) {
      const double *x = (const double *)c->x + b * c->k;
      double *bp = (double *)c->bp + b * c->k;
      double m, ls = row_f64(x, bp, c->k, false, &m);
      bp[lab] -= 1;
      ((double *)c->loss)[b] = ls - (x[lab] - m);
    } else {
      const float *x = (const float *)c->x + b * c->k;
      float *bp = (float *)c->bp + b * c->k;
      float m, ls = row_f32(x, bp, c->k, false, &m);
      bp[lab] -= 1;
      ((float *)c->loss)[b] = ls - (x[lab] - m);
    }
  }
}

/* This level's loops (simd.def): softmax's strips and the cross-entropy's rows. */
tide_axis_strip_fn TIDE_SIMD(softmax_strip)(void) { return sm_strip; }
tide_range_fn TIDE_SIMD(xent_rows)(void) { return xent_range; }

#ifdef TIDE_SIMD_ONCE /* ---- the kernels, in the baseline build only --------------------------------- */

/* softmax / log_softmax along attrs.axis: exp(x - max) / sum, or (x - max) -
 * log(sum); halves run as float32 and are rounded at the end. */
tide_status tide_cpu_softmax(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  bool log_sm = def->id == TIDE_OP_LOG_SOFTMAX;
  return tide_axis_for_strips(def, attrs->axis, in[0], out[0], KC, TIDE_GRAIN_COSTLY, tide_simd.softmax_strip(), &log_sm);
}

/* Labels as int64, each checked against [0, K): TF raises on CPU for one outside. */
static tide_status read_labels(const tide_op_def *def, const tide_tensor *labels, int64_t k, int64_t *dst) {
  int64_t n = labels->dims[0], s = labels->strides[0];
  for (int64_t i = 0; i < n; i++) {
    int64_t v = labels->dt == TIDE_INT32 ? ((const int32_t *)labels->data)[i * s] : ((const int64_t *)labels->data)[i * s];
    if (v < 0 || v >= k)
      return TIDE_FAIL(TIDE_ERR_INDEX,
                       "%s: label %lld (at position %lld) is outside the valid range of classes [0, %lld)", def->name,
                       (long long)v, (long long)i, (long long)k);
    dst[i] = v;
  }
  return TIDE_OK;
}

/* (labels [B], logits [B, K]) -> loss [B], backprop [B, K]. */
tide_status tide_cpu_sparse_xent(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                 const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *labels = in[0], *logits = in[1];
  int64_t nb = logits->dims[0], k = logits->dims[1];
  if (nb == 0) return TIDE_OK;
  int64_t *lab = malloc((size_t)nb * sizeof *lab);
  if (!lab) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  tide_status st = read_labels(def, labels, k, lab);
  if (st) {
    free(lab);
    return st;
  }
  tide_axis_view v; /* logits [B, K] contiguous, the backprop as its output; halves in float32 */
  st = tide_axis_open(def->name, logits, 1, out[1], &v);
  if (st) {
    free(lab);
    return st;
  }
  float *loss32 = NULL;
  if (v.conv) { /* the loss in float32 too, rounded back at the end */
    loss32 = malloc((size_t)nb * sizeof(float));
    if (!loss32) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  }
  if (!st) {
    xent_ctx c = {v.x, loss32 ? (char *)loss32 : out[0]->data, v.y, lab, v.dt == TIDE_FLOAT64, k};
    int64_t grain = TIDE_GRAIN_COSTLY / k;
    tide_parallel_for(nb, grain > 0 ? grain : 1, tide_simd.xent_rows(), &c);
    if (loss32) tide_float_to_halves(logits->dt, nb, loss32, out[0]->data, 2);
  }
  tide_axis_close(&v, !st);
  free(loss32);
  free(lab);
  return st;
}

#endif /* TIDE_SIMD_ONCE */
