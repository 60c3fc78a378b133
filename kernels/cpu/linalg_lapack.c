/* cpu/linalg_lapack.c — the batch runner, matrix copies and limits that the
 * LAPACK kernels (cpu/linalg_*.c) share (cpu/linalg_lapack.h). */
#include "linalg_lapack.h"
#include "../core/linalg.h"
#include "../core/parallel.h"
#include "../core/scratch.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* ---- matrices of a batch ------------------------------------------------------------ */

void lk_mat_of(lk_mat *m, const tide_tensor *t, int nb, const int64_t *bdims) {
  int nd = t->ndim, own = nd - 2;
  m->data = t->data;
  m->es = tide_dtype_size_unchecked(t->dt);
  m->rows = t->dims[nd - 2], m->cols = t->dims[nd - 1];
  m->rs = t->strides[nd - 2], m->cs = t->strides[nd - 1];
  if (!bdims) nb = own, bdims = t->dims;
  m->nb = nb;
  for (int j = 0; j < nb; j++) {
    int id = j - (nb - own); /* t's dim under batch dim j, right-aligned */
    m->bdims[j] = bdims[j];
    m->bst[j] = id < 0 || t->dims[id] == 1 ? 0 : t->strides[id];
  }
}

const char *lk_mat_at(const lk_mat *m, int64_t i) {
  int64_t off = 0;
  for (int j = m->nb - 1; j >= 0 && i > 0; j--) {
    off += (i % m->bdims[j]) * m->bst[j];
    i /= m->bdims[j];
  }
  return m->data + off * (int64_t)m->es;
}

/* dst[c * ld + r] = src[r * rs + c * cs] over a rows x cols block, one element type each. */
#define LK_GATHER(T)                                                                                       \
  static void gather_##T(int64_t rows, int64_t cols, const T *src, int64_t rs, int64_t cs, T *dst,        \
                         int64_t ld) {                                                                     \
    for (int64_t c = 0; c < cols; c++)                                                                     \
      for (int64_t r = 0; r < rows; r++) dst[c * ld + r] = src[r * rs + c * cs];                           \
  }
LK_GATHER(float)
LK_GATHER(double)
#undef LK_GATHER

void lk_load(const lk_mat *m, int64_t i, bool trans, void *dst, int64_t ld) {
  const char *src = lk_mat_at(m, i);
  int64_t rows = trans ? m->cols : m->rows, cols = trans ? m->rows : m->cols;
  int64_t rs = trans ? m->cs : m->rs, cs = trans ? m->rs : m->cs;
  if (m->es == 8) gather_double(rows, cols, (const double *)src, rs, cs, dst, ld);
  else gather_float(rows, cols, (const float *)src, rs, cs, dst, ld);
}

void lk_store(size_t es, int64_t rows, int64_t cols, const void *src, int64_t ld, bool trans, void *dst) {
  /* element (r, c) of src is at c * ld + r; dst row-major: (r, c) at r * cols + c, or (c, r) at c * rows + r */
  int64_t rs = trans ? 1 : cols, cs = trans ? rows : 1;
  if (es == 8) {
    const double *s = src;
    double *d = dst;
    for (int64_t c = 0; c < cols; c++)
      for (int64_t r = 0; r < rows; r++) d[r * rs + c * cs] = s[c * ld + r];
  } else {
    const float *s = src;
    float *d = dst;
    for (int64_t c = 0; c < cols; c++)
      for (int64_t r = 0; r < rows; r++) d[r * rs + c * cs] = s[c * ld + r];
  }
}

bool lk_all_finite(int dt, int64_t rows, int64_t cols, const void *a, int64_t ld) {
  for (int64_t c = 0; c < cols; c++)
    for (int64_t r = 0; r < rows; r++) {
      double v = dt == TIDE_FLOAT64 ? ((const double *)a)[c * ld + r] : ((const float *)a)[c * ld + r];
      if (!isfinite(v)) return false;
    }
  return true;
}

void lk_fill_nan(int dt, int64_t n, void *dst) {
  for (int64_t k = 0; k < n; k++) {
    if (dt == TIDE_FLOAT64) ((double *)dst)[k] = NAN;
    else ((float *)dst)[k] = NAN;
  }
}

const char *lk_where(char *buf, size_t cap, const tide_tensor *x, int64_t i) {
  char s[128];
  if (x->ndim <= 2) snprintf(buf, cap, "the matrix of shape %s", TIDE_SHAPE_STR(s, x));
  else snprintf(buf, cap, "matrix %lld of the batch of shape %s", (long long)i, TIDE_SHAPE_STR(s, x));
  return buf;
}

/* ---- limits ------------------------------------------------------------------------ */

tide_status lk_check_dims(const tide_op_def *def, int n, const int64_t *dims) {
  for (int i = 0; i < n; i++) {
    int64_t r = dims[2 * i], c = dims[2 * i + 1], p;
    if (__builtin_mul_overflow(r, c, &p)) p = INT64_MAX;
    if (r > INT_MAX || c > INT_MAX || p > INT_MAX)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: a matrix of %lld x %lld is past LAPACK's limit (its 32-bit "
                       "indices: at most %d elements)", def->name, (long long)r, (long long)c, INT_MAX);
  }
  return TIDE_OK;
}

tide_status lk_work_size(const tide_op_def *def, double query, lapack_int *lwork) {
  if (!(query >= 0) || query > (double)INT_MAX)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: LAPACK asks for a workspace of %g elements, past its 32-bit limit",
                     def->name, query);
  *lwork = (lapack_int)query;
  if (*lwork < 1) *lwork = 1;
  return TIDE_OK;
}

/* ---- the batch runner ----------------------------------------------------------------- */

void lk_batch_init(lk_batch *b, const tide_op_def *def, int dt, int64_t count, size_t scratch, double cost,
                   lk_one_fn one, void *ctx) {
  b->def = def;
  b->dt = dt;
  b->es = tide_dtype_size_unchecked(dt);
  b->count = count;
  b->scratch = scratch;
  b->cost = cost;
  b->one = one;
  b->ctx = ctx;
  pthread_mutex_init(&b->lock, NULL);
  b->fail_at = -1;
  b->fail_st = TIDE_OK;
  b->fail_msg[0] = 0;
}

tide_status lk_fail(lk_batch *b, int64_t i, tide_status st, const char *fmt, ...) {
  pthread_mutex_lock(&b->lock);
  if (b->fail_at < 0 || i < b->fail_at) {
    b->fail_at = i;
    b->fail_st = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->fail_msg, sizeof b->fail_msg, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&b->lock);
  return st;
}

/* Problems [begin, end), with one scratch buffer for them all; stops at a failure. */
static void run_range(void *arg, int64_t begin, int64_t end) {
  lk_batch *b = arg;
  char *scratch = b->scratch ? tide_scratch_alloc(b->scratch, b->def->name, "a LAPACK workspace") : NULL;
  if (b->scratch && !scratch) { /* refused by a VM's cap (a pool worker runs under its caller's) or out of memory */
    lk_fail(b, begin, TIDE_ERR_MEMORY, "%s", tide_last_error());
    return;
  }
  for (int64_t i = begin; i < end; i++)
    if (b->one(b, i, scratch) != TIDE_OK) break;
  if (scratch) tide_scratch_free(scratch, b->scratch);
}

tide_status lk_batch_run(lk_batch *b) {
  if (b->count > 0) {
    tide_blas_single_thread(); /* tide's pool splits the batch; OpenBLAS's own threads would fight it */
    /* about a quarter million flops per task before splitting is worth a hand-off */
    double per = b->cost > 1 ? b->cost : 1;
    int64_t grain = per >= 262144.0 ? 1 : (int64_t)(262144.0 / per);
    tide_parallel_for(b->count, grain, run_range, b);
  }
  pthread_mutex_destroy(&b->lock);
  if (b->fail_at >= 0) return TIDE_FAIL(b->fail_st, "%s: %s", b->def->name, b->fail_msg);
  return TIDE_OK;
}
