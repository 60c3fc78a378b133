/* cpu/sort.c — sort and argsort along one axis, and top_k along the last axis.
 * Orders are total: NaN ranks above every number (last ascending, first descending).
 *
 * The input is viewed as contiguous [outer, len, inner] (strided inputs are
 * copied first; halves run as float32 keys, which round-trip exactly). Each
 * line (outer, j) is gathered into (key, index) arrays, sorted by a stable
 * merge sort (insertion-sorted runs of RUN, then bottom-up merges), and
 * scattered to the outputs; lines run in parallel. Descending is the same
 * stable sort with the comparison flipped, so equal keys keep index order in
 * both directions, as TF's stable argsort.
 * top_k: k <= len / 8 keeps a k-entry heap whose root is the worst kept entry
 * (O(len log k)); larger k sorts the whole row descending. Either way ties
 * go to the lower index, as TF's TopKV2. */
#include "reduce.h"
#include "iter.h"
#include "../core/parallel.h"
#include "../core/scratch.h"

#include <stdlib.h>
#include <string.h>

enum { RUN = 24 };

/* a before b ascending: a < b, or b is NaN and a is not. */
#define LESS_ASC(a, b) (((a) < (b)) | (((b) != (b)) & ((a) == (a))))
#define LESS_DESC(a, b) LESS_ASC(b, a)
/* a ranks above b for top_k: larger, or an equal value at a lower index. */
#define TIE(a, b) (((a) == (b)) | (((a) != (a)) & ((b) != (b))))

/* Stable sort of k[0..n) carrying ix along, using scratch tk/tix of n entries. */
#define MSORT(NAME, T, LESS)                                                                 \
  static void NAME(T *k, int64_t *ix, T *tk, int64_t *tix, int64_t n) {                      \
    for (int64_t s = 0; s < n; s += RUN) {                                                   \
      int64_t e = s + RUN < n ? s + RUN : n;                                                 \
      for (int64_t i = s + 1; i < e; i++) {                                                  \
        T v = k[i];                                                                          \
        int64_t vi = ix[i], j = i;                                                           \
        for (; j > s && LESS(v, k[j - 1]); j--) k[j] = k[j - 1], ix[j] = ix[j - 1];          \
        k[j] = v, ix[j] = vi;                                                                \
      }                                                                                      \
    }                                                                                        \
    T *a = k, *b = tk;                                                                       \
    int64_t *ai = ix, *bi = tix;                                                             \
    for (int64_t w = RUN; w < n; w *= 2) {                                                   \
      for (int64_t s = 0; s < n; s += 2 * w) {                                               \
        int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;                \
        int64_t i = s, j = m, o = s;                                                         \
        if (m < e && !LESS(a[m], a[m - 1])) { /* already in order */                         \
          memcpy(b + s, a + s, (size_t)(e - s) * sizeof(T));                                 \
          memcpy(bi + s, ai + s, (size_t)(e - s) * sizeof(int64_t));                         \
          continue;                                                                          \
        }                                                                                    \
        while (i < m && j < e) {                                                             \
          if (LESS(a[j], a[i])) b[o] = a[j], bi[o++] = ai[j++];                              \
          else b[o] = a[i], bi[o++] = ai[i++];                                               \
        }                                                                                    \
        while (i < m) b[o] = a[i], bi[o++] = ai[i++];                                        \
        while (j < e) b[o] = a[j], bi[o++] = ai[j++];                                        \
      }                                                                                      \
      T *t = a; a = b, b = t;                                                                \
      int64_t *ti = ai; ai = bi, bi = ti;                                                    \
    }                                                                                        \
    if (a != k) {                                                                            \
      memcpy(k, a, (size_t)n * sizeof(T));                                                   \
      memcpy(ix, ai, (size_t)n * sizeof(int64_t));                                           \
    }                                                                                        \
  }

/* top_k by a heap: the k best of x[0..n) into vals/idx, best first. */
#define TOPK_HEAP(NAME, T)                                                                   \
  static inline int NAME##_better(T a, int64_t ia, T b, int64_t ib) {                       \
    return LESS_DESC(a, b) || (TIE(a, b) && ia < ib);                                        \
  }                                                                                          \
  static void NAME##_sift(T *hv, int64_t *hi, int64_t n, int64_t i) {                        \
    for (;;) { /* the root is the worst: children must not be worse than parents */         \
      int64_t l = 2 * i + 1, r = l + 1, w = i;                                               \
      if (l < n && NAME##_better(hv[w], hi[w], hv[l], hi[l])) w = l;                         \
      if (r < n && NAME##_better(hv[w], hi[w], hv[r], hi[r])) w = r;                         \
      if (w == i) return;                                                                    \
      T tv = hv[i]; hv[i] = hv[w], hv[w] = tv;                                               \
      int64_t ti = hi[i]; hi[i] = hi[w], hi[w] = ti;                                         \
      i = w;                                                                                 \
    }                                                                                        \
  }                                                                                          \
  static void NAME(const T *x, int64_t n, int64_t k, T *hv, int64_t *hi) {                   \
    for (int64_t i = 0; i < k; i++) hv[i] = x[i], hi[i] = i;                                 \
    for (int64_t i = k / 2 - 1; i >= 0; i--) NAME##_sift(hv, hi, k, i);                      \
    for (int64_t i = k; i < n; i++)                                                          \
      if (NAME##_better(x[i], i, hv[0], hi[0])) {                                            \
        hv[0] = x[i], hi[0] = i;                                                             \
        NAME##_sift(hv, hi, k, 0);                                                           \
      }                                                                                      \
    for (int64_t e = k - 1; e > 0; e--) { /* heapsort: worst to the back */                  \
      T tv = hv[0]; hv[0] = hv[e], hv[e] = tv;                                               \
      int64_t ti = hi[0]; hi[0] = hi[e], hi[e] = ti;                                         \
      NAME##_sift(hv, hi, e, 0);                                                             \
    }                                                                                        \
  }

#define SORT_TYPE(SUF, T)                  \
  MSORT(asc_##SUF, T, LESS_ASC)            \
  MSORT(desc_##SUF, T, LESS_DESC)          \
  TOPK_HEAP(heap_##SUF, T)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare" /* x != x on integers */
SORT_TYPE(f32, float)
SORT_TYPE(f64, double)
SORT_TYPE(i8, int8_t)
SORT_TYPE(u8, uint8_t)
SORT_TYPE(i32, int32_t)
SORT_TYPE(i64, int64_t)
#pragma GCC diagnostic pop

/* ---- shared driver ------------------------------------------------------------ */

typedef struct sort_ctx {
  const char *x;      /* contiguous [outer, len, inner], compute dtype */
  char *vals;         /* values out (same layout and compute dtype) or NULL */
  char *idx;          /* indices out or NULL */
  int dt, idx_dt;
  bool desc, topk;
  int64_t len, inner, k;   /* k: top_k only (inner is 1 then) */
  int failed;              /* a worker could not allocate scratch */
  char why[256];           /* the first failure's message (set on the worker's thread) */
} sort_ctx;

/* Sort (or select the top k of) one line into the outputs, using the scratch given. */
static void sort_line(const sort_ctx *c, void *keys, int64_t *ix, void *tk, int64_t *tix, int64_t line) {
  int64_t o = line / c->inner, j = line % c->inner, len = c->len, in = c->inner;
  int64_t base = o * len * in + j;
  int64_t nout = c->topk ? c->k : len;
  int64_t obase = c->topk ? o * c->k : base, ostride = c->topk ? 1 : in;
#define SORT_CASE(DT, SUF, T)                                                                  \
  case DT: {                                                                                   \
    const T *x = (const T *)c->x + base;                                                       \
    T *kv = keys;                                                                              \
    if (c->topk && c->k * 8 <= len) {                                                          \
      heap_##SUF(x, len, c->k, kv, ix);                                                        \
    } else {                                                                                   \
      for (int64_t i = 0; i < len; i++) kv[i] = x[i * in], ix[i] = i;                          \
      if (c->desc) desc_##SUF(kv, ix, tk, tix, len);                                           \
      else asc_##SUF(kv, ix, tk, tix, len);                                                    \
    }                                                                                          \
    if (c->vals)                                                                               \
      for (int64_t i = 0; i < nout; i++) ((T *)c->vals)[obase + i * ostride] = kv[i];          \
    break;                                                                                     \
  }
  switch (c->dt) {
    SORT_CASE(TIDE_FLOAT32, f32, float)
    SORT_CASE(TIDE_FLOAT64, f64, double)
    SORT_CASE(TIDE_INT8, i8, int8_t)
    SORT_CASE(TIDE_UINT8, u8, uint8_t)
    SORT_CASE(TIDE_INT32, i32, int32_t)
    SORT_CASE(TIDE_INT64, i64, int64_t)
  default: break;
  }
#undef SORT_CASE
  if (c->idx) {
    if (c->idx_dt == TIDE_INT32)
      for (int64_t i = 0; i < nout; i++) ((int32_t *)c->idx)[obase + i * ostride] = (int32_t)ix[i];
    else
      for (int64_t i = 0; i < nout; i++) ((int64_t *)c->idx)[obase + i * ostride] = ix[i];
  }
}

/* Lines [l0, l1) with one scratch allocation; a failed allocation marks c->failed. */
static void sort_range(void *ctx, int64_t l0, int64_t l1) {
  sort_ctx *c = ctx;
  size_t es = tide_dtype_size_unchecked(c->dt), n = (size_t)c->len;
  size_t bytes = n * 2 * (es + sizeof(int64_t));
  char *buf = tide_scratch_alloc(bytes, "sort", "the keys of a line"); /* charged to the caller's VM's cap */
  if (!buf) {
    if (!__atomic_exchange_n(&c->failed, 1, __ATOMIC_ACQ_REL)) snprintf(c->why, sizeof c->why, "%s", tide_last_error());
    return;
  }
  int64_t *ix = (int64_t *)buf, *tix = ix + n;
  char *keys = (char *)(tix + n), *tk = keys + n * es;
  for (int64_t l = l0; l < l1; l++) sort_line(c, keys, ix, tk, tix, l);
  tide_scratch_free(buf, bytes);
}

/* Run the lines of x (axis ax) into the outputs; halves go through float32. */
static tide_status run_sort(const tide_op_def *def, const tide_tensor *x, int ax, sort_ctx *c, tide_tensor *vals) {
  if (x->nelem == 0 || c->len == 0) return TIDE_OK;
  tide_axis_view v;
  tide_status st = tide_axis_open(def->name, x, ax, vals, &v);
  if (st) return st;
  int64_t outer = v.outer;
  c->len = v.len, c->inner = v.inner;
  c->x = v.x;
  c->dt = v.dt;
  if (vals) c->vals = v.y;
  int64_t lines = outer * c->inner;
  int64_t grain = TIDE_GRAIN_COSTLY / (c->len > 0 ? c->len : 1);
  tide_parallel_for(lines, grain > 0 ? grain : 1, sort_range, c);
  tide_axis_close(&v, !c->failed);
  if (c->failed) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: axis of length %lld: %s", def->name, (long long)c->len, c->why);
  return TIDE_OK;
}

/* The kernel of sort (values) and argsort (indices) along attrs.axis. */
tide_status tide_cpu_sort(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int ax = tide_normalize_axis(def->name, attrs->axis, x->ndim);
  if (ax < 0) return tide_last_status();
  bool arg = def->id == TIDE_OP_ARGSORT;
  sort_ctx c;
  memset(&c, 0, sizeof c);
  c.desc = (attrs->flags & TIDE_ATTR_DESCENDING) != 0;
  c.len = x->dims[ax];
  c.vals = arg ? NULL : out[0]->data;
  c.idx = arg ? out[0]->data : NULL;
  c.idx_dt = out[0]->dt;
  return run_sort(def, x, ax, &c, arg ? NULL : out[0]);
}

/* The kernel of top_k: values and int32 indices of the k best along the last axis. */
tide_status tide_cpu_top_k(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  if (attrs->n == 0) return TIDE_OK;
  sort_ctx c;
  memset(&c, 0, sizeof c);
  c.desc = true;
  c.topk = true;
  c.k = attrs->n;
  c.len = x->dims[x->ndim - 1];
  c.vals = out[0]->data;
  c.idx = out[1]->data;
  c.idx_dt = TIDE_INT32;
  return run_sort(def, x, x->ndim - 1, &c, out[0]);
}
