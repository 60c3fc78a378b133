/* cpu/segment.c — TF's segment reductions: rows of data combined (sum, mean,
 * max, min, prod) into the segment their id names, sorted ids or unsorted. */
#include "indices.h"
#include "iter.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SEG_SUM, SEG_MEAN, SEG_MAX, SEG_MIN, SEG_PROD } seg_mode;

static seg_mode mode_of(int op) {
  switch (op) {
  case TIDE_OP_SEGMENT_MEAN: return SEG_MEAN;
  case TIDE_OP_SEGMENT_MAX:
  case TIDE_OP_UNSORTED_SEGMENT_MAX: return SEG_MAX;
  case TIDE_OP_SEGMENT_MIN:
  case TIDE_OP_UNSORTED_SEGMENT_MIN: return SEG_MIN;
  case TIDE_OP_SEGMENT_PROD:
  case TIDE_OP_UNSORTED_SEGMENT_PROD: return SEG_PROD;
  default: return SEG_SUM;
  }
}

/* ---- typed rows: combine a data row into a segment row, and finish ------------ */

/* combine: dst[j] = dst[j] (op) src[r * n + j] for each of `rows` rows in
 * turn (one call per run of equal ids: a segment's rows when sorted). max and
 * min keep TF's CPU rule, which takes the new value unless it is strictly
 * worse: a NaN replaces what came before and a later number replaces a NaN. */
typedef void (*combine_fn)(char *dst, const char *src, int64_t rows, int64_t n);
/* fill: dst[0..n) = v; mean: dst[j] /= count (integers truncate, as TF). */
typedef void (*fill_fn)(char *dst, double v, int64_t n);
typedef void (*mean_fn)(char *dst, int64_t count, int64_t n);

#define COMBINE(NAME, SUF, T, EXPR)                                                             \
  static void NAME##_##SUF(char *dst, const char *src, int64_t rows, int64_t n) {               \
    T *restrict d = (T *)dst;                                                                   \
    for (int64_t r = 0; r < rows; r++) {                                                        \
      const T *restrict s = (const T *)src + r * n;                                             \
      for (int64_t j = 0; j < n; j++) d[j] = (T)(EXPR);                                         \
    }                                                                                           \
  }
#define SEG_ROWS(SUF, T, QUOTIENT)                                                              \
  COMBINE(add, SUF, T, d[j] + s[j])                                                             \
  COMBINE(mul, SUF, T, d[j] * s[j])                                                             \
  COMBINE(max, SUF, T, s[j] < d[j] ? d[j] : s[j])                                               \
  COMBINE(min, SUF, T, d[j] < s[j] ? d[j] : s[j])                                               \
  static void fill_##SUF(char *dst, double v, int64_t n) {                                      \
    T *restrict d = (T *)dst;                                                                   \
    for (int64_t j = 0; j < n; j++) d[j] = (T)v;                                                \
  }                                                                                             \
  static void mean_##SUF(char *dst, int64_t count, int64_t n) {                                 \
    T *restrict d = (T *)dst;                                                                   \
    for (int64_t j = 0; j < n; j++) d[j] = (T)(QUOTIENT);                                        \
  }
/* the quotient of a mean: floats divide, integers truncate toward zero */
#define FLOAT_Q(T) d[j] / (T)count
#define INT_Q (int64_t)d[j] / count
SEG_ROWS(f32, float, FLOAT_Q(float))
SEG_ROWS(f64, double, FLOAT_Q(double))
SEG_ROWS(i8, int8_t, INT_Q)
SEG_ROWS(u8, uint8_t, INT_Q)
SEG_ROWS(i32, int32_t, INT_Q)
SEG_ROWS(i64, int64_t, INT_Q)
#undef SEG_ROWS
#undef COMBINE
#undef FLOAT_Q
#undef INT_Q

typedef struct seg_fns {
  combine_fn combine;
  fill_fn fill;
  mean_fn mean;
} seg_fns;

/* The row functions for work dtype dt (float32 for halves). */
static seg_fns fns_for(int dt, seg_mode mode) {
#define PICK(SUF)                                                                                            \
  return (seg_fns){mode == SEG_PROD ? mul_##SUF : mode == SEG_MAX ? max_##SUF : mode == SEG_MIN ? min_##SUF \
                                                                                   : add_##SUF,              \
                   fill_##SUF, mean_##SUF}
  switch (dt) {
  case TIDE_FLOAT64: PICK(f64);
  case TIDE_INT8: PICK(i8);
  case TIDE_UINT8: PICK(u8);
  case TIDE_INT32: PICK(i32);
  case TIDE_INT64: PICK(i64);
  default: PICK(f32);
  }
#undef PICK
}

/* The value a segment starts from: 0 for sums and means, 1 for products; for
 * max and min TF's sorted ops start from -inf/+inf (an empty segment then
 * becomes 0), its unsorted ops from the dtype's lowest/highest finite value,
 * which an empty segment keeps (dt: the data's dtype, not the work dtype). */
static double start_value(seg_mode mode, bool sorted, int dt) {
  if (mode == SEG_SUM || mode == SEG_MEAN) return 0;
  if (mode == SEG_PROD) return 1;
  double hi;
  switch (dt) {
  case TIDE_FLOAT32: hi = sorted ? INFINITY : FLT_MAX; break;
  case TIDE_FLOAT64: hi = sorted ? INFINITY : DBL_MAX; break;
  case TIDE_FLOAT16: hi = sorted ? INFINITY : tide_half_to_float(0x7bff); break;
  case TIDE_BFLOAT16: hi = sorted ? INFINITY : tide_bfloat16_to_float(0x7f7f); break;
  case TIDE_INT8: return mode == SEG_MAX ? INT8_MIN : INT8_MAX;
  case TIDE_UINT8: return mode == SEG_MAX ? 0 : UINT8_MAX;
  case TIDE_INT32: return mode == SEG_MAX ? INT32_MIN : INT32_MAX;
  default: return 0; /* int64: seg_ctx.start_i64 holds it exactly (a double cannot) */
  }
  return mode == SEG_MAX ? -hi : hi;
}

/* ---- the reduction ------------------------------------------------------------- */

typedef struct seg_ctx {
  char *out;              /* [S, inner], work dtype */
  const char *x;          /* [M, inner], work dtype */
  const tide_tensor *ids; /* contiguous, M ids */
  int64_t M, inner, *count;
  size_t es;
  seg_fns f;
  seg_mode mode;
  bool sorted;
  double start;
  int64_t start_i64;      /* the start value of int64 rows, exactly */
  int dt;                 /* work dtype */
} seg_ctx;

/* Segments [begin, end): this range alone writes them. The rows landing in
 * the range are combined in row order (so sums and products are the same
 * whatever the split): with sorted ids just those rows, else every id is
 * scanned; negative ids (unsorted) are dropped. */
static void seg_range(void *arg, int64_t begin, int64_t end) {
  const seg_ctx *g = arg;
  int64_t row = g->inner * (int64_t)g->es;
  for (int64_t s = begin; s < end; s++) {
    if (g->dt == TIDE_INT64 && g->start_i64 != 0) {
      int64_t *d = (int64_t *)(g->out + s * row);
      for (int64_t j = 0; j < g->inner; j++) d[j] = g->start_i64;
    } else {
      g->f.fill(g->out + s * row, g->start, g->inner);
    }
    g->count[s] = 0;
  }
  int64_t i = 0, stop = g->M;
  if (g->sorted) { /* sorted ids: only the rows of this range, found by binary search */
    int64_t lo = 0, hi = g->M;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (tide_index_at(g->ids, mid) < begin) lo = mid + 1;
      else hi = mid;
    }
    i = lo;
  }
  while (i < stop) {
    int64_t s = tide_index_at(g->ids, i), run = 1;
    if (s >= end && g->sorted) break;
    while (i + run < stop && tide_index_at(g->ids, i + run) == s) run++; /* rows of one segment in a row */
    if (s >= begin && s < end) {
      g->f.combine(g->out + s * row, g->x + i * row, run, g->inner);
      g->count[s] += run;
    }
    i += run;
  }
  for (int64_t s = begin; s < end; s++) {
    if (g->mode == SEG_MEAN && g->count[s] > 0) g->f.mean(g->out + s * row, g->count[s], g->inner);
    /* TF's sorted max and min give 0 for an empty segment */
    if (g->sorted && g->count[s] == 0 && (g->mode == SEG_MAX || g->mode == SEG_MIN))
      g->f.fill(g->out + s * row, 0, g->inner);
  }
}

/* "[1, 0]": the coordinates of flat position k in t. */
static const char *position(char *buf, size_t size, const tide_tensor *t, int64_t k) {
  int64_t c[TIDE_MAX_DIMS];
  for (int d = t->ndim - 1; d >= 0; d--) {
    c[d] = t->dims[d] ? k % t->dims[d] : 0;
    k = t->dims[d] ? k / t->dims[d] : 0;
  }
  return tide_fmt_dims(buf, size, t->ndim, c);
}

/* Check the ids: sorted ones non-negative and non-decreasing; unsorted ones
 * below num_segments (negative ones are dropped, as TF). Sets *segments for sorted ids. */
static tide_status check_ids(const char *op, const tide_tensor *ids, bool sorted, int64_t *segments) {
  int64_t m = ids->nelem, prev = 0;
  for (int64_t i = 0; i < m; i++) {
    int64_t s = tide_index_at(ids, i);
    if (sorted && s < 0)
      return TIDE_FAIL(TIDE_ERR_INDEX, "%s: segment_ids[%lld] = %lld is negative (sorted segment ids start at 0)", op,
                       (long long)i, (long long)s);
    if (sorted && s < prev)
      return TIDE_FAIL(TIDE_ERR_INDEX, "%s: segment_ids must be sorted, but segment_ids[%lld] = %lld follows %lld "
                       "(use unsorted_segment_%s)", op, (long long)i, (long long)s, (long long)prev,
                       op + strlen("segment_"));
    if (!sorted && s >= *segments) {
      char sp[128];
      return TIDE_FAIL(TIDE_ERR_INDEX, "%s: segment_ids%s = %lld is not in [0, %lld) (num_segments; negative ids are "
                       "dropped)", op, position(sp, sizeof sp, ids, i), (long long)s, (long long)*segments);
    }
    prev = s;
  }
  if (sorted) *segments = m ? prev + 1 : 0;
  return TIDE_OK;
}

tide_status tide_cpu_segment(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  bool sorted = def->n_in == 2;
  seg_mode mode = mode_of(def->id);
  tide_tensor *o = out[0];
  tide_tensor itmp, xtmp, xf, of;
  memset(&xtmp, 0, sizeof xtmp);
  memset(&xf, 0, sizeof xf);
  memset(&of, 0, sizeof of);
  const tide_tensor *ids, *x;
  int64_t *count = NULL;
  tide_status st = tide_contiguous_or_copy(def->name, in[1], &itmp, &ids);
  if (st) goto done;
  int64_t segments = sorted ? 0 : o->dims[0];
  if ((st = check_ids(def->name, ids, sorted, &segments)) != TIDE_OK) goto done;
  if (sorted) { /* TIDE_OPF_DATA_SHAPE: the result's size is known now */
    int64_t dims[TIDE_MAX_DIMS];
    dims[0] = segments;
    for (int d = 1; d < in[0]->ndim; d++) dims[d] = in[0]->dims[d];
    if ((st = tide_tensor_init(o, in[0]->dt, in[0]->ndim, dims)) != TIDE_OK) {
      char sd[128];
      st = TIDE_FAIL(st, "%s: cannot make the result of shape %s (%lld segments: the last id + 1)", def->name,
                     tide_fmt_dims(sd, sizeof sd, in[0]->ndim, dims), (long long)segments);
      goto done;
    }
  }
  if (o->nelem == 0) goto done;
  if ((st = tide_contiguous_or_copy(def->name, in[0], &xtmp, &x)) != TIDE_OK) goto done;
  int64_t m = ids->nelem, inner = segments ? o->nelem / segments : 0;
  if (!(count = malloc((size_t)(segments + 1) * sizeof *count))) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld segment counts", def->name, (long long)segments);
    goto done;
  }
  int dt = o->dt;
  char *work_out = o->data;
  const char *work_x = x->data;
  if (tide_is_half(dt)) { /* combine in float32, round once at the end */
    int64_t od[2] = {segments, inner};
    if ((st = tide_halves_to_f32_tensor(x, &xf)) != TIDE_OK || (st = tide_tensor_init(&of, TIDE_FLOAT32, 2, od)))
      goto done;
    work_out = of.data, work_x = xf.data, dt = TIDE_FLOAT32;
  }
  double start = start_value(mode, sorted, o->dt);
  int64_t start_i64 = o->dt == TIDE_INT64 && (mode == SEG_MAX || mode == SEG_MIN) ? (mode == SEG_MAX ? INT64_MIN : INT64_MAX) : 0;
  seg_ctx g = {work_out, work_x, ids, m, inner, count, tide_dtype_size_unchecked(dt), fns_for(dt, mode), mode, sorted, start,
               start_i64, dt};
  double work = (double)m * (double)inner + (double)segments * (double)inner;
  if (work < TIDE_GRAIN_CHEAP) seg_range(&g, 0, segments);
  else {
    double grain = (double)segments * TIDE_GRAIN_CHEAP / work;
    tide_parallel_for(segments, grain < 1 ? 1 : (int64_t)grain, seg_range, &g);
  }
  if (work_out != o->data) tide_float_to_halves(o->dt, o->nelem, (const float *)work_out, o->data, 2);
done:
  free(count);
  tide_tensor_release(&of);
  tide_tensor_release(&xf);
  tide_tensor_release(&xtmp);
  tide_tensor_release(&itmp);
  return st;
}
