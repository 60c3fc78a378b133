/* cpu/argreduce.c — argmax and argmin along one axis: the first index of the
 * largest (smallest) value, NaN counting as the extreme (the first NaN wins, as numpy).
 *
 * The input is viewed as contiguous [outer, len, inner] (strided inputs are
 * copied first; halves converted to float32). inner == 1: a row is scanned in
 * blocks whose extreme is found with vector lanes; a block that beats the best
 * so far is searched again for its first tying element. inner > 1: strips of
 * KC columns keep a best value and index per column, updated row by row with
 * vectorizable selects. */
#include "reduce.h"
#include "../core/parallel.h"

enum { LANES = 32, KC = 512, BLK = 2048 };

/* v beats b: strictly further in the op's direction, or the first NaN. */
#define BEAT_MAX(v, b) (((v) > (b)) | (((v) != (v)) & ((b) == (b))))
#define BEAT_MIN(v, b) (((v) < (b)) | (((v) != (v)) & ((b) == (b))))
/* v ties b: equal, or both NaN. */
#define TIE(v, b) (((v) == (b)) | (((v) != (v)) & ((b) != (b))))
/* NaN-propagating extremes, as in reduce.c. */
#define EXT_MAX(a, v) ((((v) > (a)) | ((v) != (v))) ? (v) : (a))
#define EXT_MIN(a, v) ((((v) < (a)) | ((v) != (v))) ? (v) : (a))

/* ROW: the winner's index in x[0..len). Blocks of BLK elements find their
 * extreme with LANES vector lanes; only a block whose extreme beats the best
 * so far is scanned again (in cache) for the first element tying it.
 * COLS: res[j] = the winner's index in column j (rows `inner` apart), j < n,
 * with a best value and an int32 index per column (int64 past 2^31 rows). */
#define ARG_KERNELS(SUF, T, BEAT, EXT)                                                          \
  static T ext_##SUF(const T *x, int64_t n) {                                                   \
    T lane[LANES];                                                                              \
    for (int l = 0; l < LANES; l++) lane[l] = x[0];                                             \
    int64_t j = 0;                                                                              \
    for (; j + LANES <= n; j += LANES)                                                          \
      for (int l = 0; l < LANES; l++) lane[l] = EXT(lane[l], x[j + l]);                         \
    for (; j < n; j++) lane[0] = EXT(lane[0], x[j]);                                            \
    T m = lane[0];                                                                              \
    for (int l = 1; l < LANES; l++) m = EXT(m, lane[l]);                                        \
    return m;                                                                                   \
  }                                                                                             \
  static int64_t row_##SUF(const T *x, int64_t len) {                                           \
    T best = x[0];                                                                              \
    int64_t bi = 0;                                                                             \
    for (int64_t b0 = 0; b0 < len && best == best; b0 += BLK) { /* a NaN cannot be beaten */   \
      int64_t n = len - b0 < BLK ? len - b0 : BLK;                                              \
      T m = ext_##SUF(x + b0, n);                                                               \
      if (!BEAT(m, best)) continue;                                                             \
      const T *b = x + b0;                                                                      \
      int64_t j = 0;                                                                            \
      for (; j + LANES <= n; j += LANES) { /* which LANES-chunk holds the first tie */          \
        int hit = 0;                                                                            \
        for (int l = 0; l < LANES; l++) hit |= TIE(b[j + l], m);                                \
        if (hit) break;                                                                         \
      }                                                                                         \
      while (j < n - 1 && !TIE(b[j], m)) j++;                                                   \
      best = m, bi = b0 + j;                                                                    \
    }                                                                                           \
    return bi;                                                                                  \
  }                                                                                             \
  ARG_COLS(cols32_##SUF, T, BEAT, int32_t)                                                      \
  ARG_COLS(cols64_##SUF, T, BEAT, int64_t)

#define ARG_COLS(NAME, T, BEAT, IT)                                                             \
  static void NAME(const T *x, int64_t len, int64_t inner, int64_t n, int64_t *res) {           \
    T best[KC];                                                                                 \
    IT bi[KC];                                                                                  \
    for (int64_t j = 0; j < n; j++) best[j] = x[j], bi[j] = 0;                                  \
    for (int64_t a = 1; a < len; a++) {                                                                      \
      const T *row = x + a * inner;                                                             \
      for (int64_t j = 0; j < n; j++) {                                                         \
        T v = row[j];                                                                           \
        int w = BEAT(v, best[j]);                                                               \
        best[j] = w ? v : best[j];                                                              \
        bi[j] = w ? (IT)a : bi[j];                                                              \
      }                                                                                         \
    }                                                                                           \
    for (int64_t j = 0; j < n; j++) res[j] = bi[j];                                             \
  }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare" /* v != v on integers */
ARG_KERNELS(max_f32, float, BEAT_MAX, EXT_MAX)
ARG_KERNELS(max_f64, double, BEAT_MAX, EXT_MAX)
ARG_KERNELS(max_i8, int8_t, BEAT_MAX, EXT_MAX)
ARG_KERNELS(max_u8, uint8_t, BEAT_MAX, EXT_MAX)
ARG_KERNELS(max_i32, int32_t, BEAT_MAX, EXT_MAX)
ARG_KERNELS(max_i64, int64_t, BEAT_MAX, EXT_MAX)
ARG_KERNELS(min_f32, float, BEAT_MIN, EXT_MIN)
ARG_KERNELS(min_f64, double, BEAT_MIN, EXT_MIN)
ARG_KERNELS(min_i8, int8_t, BEAT_MIN, EXT_MIN)
ARG_KERNELS(min_u8, uint8_t, BEAT_MIN, EXT_MIN)
ARG_KERNELS(min_i32, int32_t, BEAT_MIN, EXT_MIN)
ARG_KERNELS(min_i64, int64_t, BEAT_MIN, EXT_MIN)
#pragma GCC diagnostic pop

typedef struct arg_ctx {
  char *y;          /* the indices: contiguous [outer, inner] */
  int out_dt;       /* their dtype */
  bool is_max;
} arg_ctx;

/* res[0..n) = winners of n columns starting at x (a strip, or one row when inner == 1). */
static void arg_winners(const arg_ctx *c, const tide_axis_view *v, const char *x, int64_t n, int64_t *res) {
  int64_t len = v->len, in = v->inner;
#define ARG_CASE(DT, SUF, T)                                                                  \
  case DT:                                                                                    \
    if (in == 1) res[0] = c->is_max ? row_max_##SUF((const T *)x, len) : row_min_##SUF((const T *)x, len); \
    else if (len <= INT32_MAX && c->is_max) cols32_max_##SUF((const T *)x, len, in, n, res);  \
    else if (len <= INT32_MAX) cols32_min_##SUF((const T *)x, len, in, n, res);               \
    else if (c->is_max) cols64_max_##SUF((const T *)x, len, in, n, res);                      \
    else cols64_min_##SUF((const T *)x, len, in, n, res);                                     \
    break;
  switch (v->dt) {
    ARG_CASE(TIDE_FLOAT32, f32, float)
    ARG_CASE(TIDE_FLOAT64, f64, double)
    ARG_CASE(TIDE_INT8, i8, int8_t)
    ARG_CASE(TIDE_UINT8, u8, uint8_t)
    ARG_CASE(TIDE_INT32, i32, int32_t)
    ARG_CASE(TIDE_INT64, i64, int64_t)
  default: break;
  }
#undef ARG_CASE
}

/* The winners of n columns from j0 of outer position o, written as indices (a tide_axis_strip_fn). */
static void arg_strip(void *ctx, const tide_axis_view *v, int64_t o, int64_t j0, int64_t n) {
  const arg_ctx *c = ctx;
  int64_t res[KC];
  arg_winners(c, v, v->x + tide_axis_offset(v, o, j0), n, res);
  int64_t at = o * v->inner + j0;
  if (c->out_dt == TIDE_INT32)
    for (int64_t j = 0; j < n; j++) ((int32_t *)c->y)[at + j] = (int32_t)res[j];
  else
    for (int64_t j = 0; j < n; j++) ((int64_t *)c->y)[at + j] = res[j];
}

/* The kernel of argmax/argmin: contiguous [outer, len, inner], strips in
 * parallel; halves compare exactly as float32. */
tide_status tide_cpu_argreduce(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  arg_ctx c = {out[0]->data, out[0]->dt, def->id == TIDE_OP_ARGMAX};
  return tide_axis_for_strips(def, attrs->axis, in[0], NULL, KC, TIDE_GRAIN_CHEAP, arg_strip, &c);
}
