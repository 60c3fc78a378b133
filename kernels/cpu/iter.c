/* cpu/iter.c — the strided elementwise engine (see iter.h): broadcasting,
 * dim merging, row splitting across the pool, and half <-> float32 blocks. */
#include "iter.h"
#include "../core/parallel.h"
#include "../core/half.h"

#include <string.h>

void tide_iter_init_raw(tide_iter *it, int ndim, const int64_t *dims) {
  it->ndim = ndim;
  it->nops = 0;
  for (int d = 0; d < ndim; d++) it->dims[d] = dims[d];
  it->convert_halves = true;
  it->grain = TIDE_GRAIN_CHEAP;
}

void tide_iter_add_raw(tide_iter *it, void *data, int dtype, const int64_t *elem_strides) {
  int k = it->nops++;
  int64_t es = (int64_t)tide_dtype_size_unchecked(dtype);
  it->data[k] = data;
  it->dtypes[k] = dtype;
  for (int d = 0; d < it->ndim; d++) it->strides[k][d] = it->dims[d] == 1 ? 0 : elem_strides[d] * es;
}

tide_status tide_iter_build(tide_iter *it, const char *op, tide_tensor *out, int n_in, const tide_tensor *const *in) {
  tide_iter_init_raw(it, out->ndim, out->dims);
  tide_iter_add_raw(it, out->data, out->dt, out->strides);
  for (int i = 0; i < n_in; i++) {
    const tide_tensor *t = in[i];
    int64_t st[TIDE_MAX_DIMS];
    int off = out->ndim - t->ndim;
    if (off < 0) goto mismatch;
    for (int d = 0; d < out->ndim; d++) {
      int id = d - off;
      if (id < 0) st[d] = 0;
      else if (t->dims[id] == out->dims[d]) st[d] = t->strides[id];
      else if (t->dims[id] == 1) st[d] = 0;
      else goto mismatch;
    }
    tide_iter_add_raw(it, t->data, t->dt, st);
    continue;
  mismatch:;
    char so[128], si[128];
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot broadcast shape %s to %s", op, TIDE_SHAPE_STR(si, t),
                     TIDE_SHAPE_STR(so, out));
  }
  return TIDE_OK;
}

/* Drop size-1 dims and merge neighbours that every operand walks contiguously. */
static void coalesce(tide_iter *it) {
  int n = 0;
  for (int d = 0; d < it->ndim; d++) {
    if (it->dims[d] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < it->nops; k++)
        if (it->strides[k][n - 1] != it->strides[k][d] * it->dims[d]) merge = false;
      if (merge) {
        it->dims[n - 1] *= it->dims[d];
        for (int k = 0; k < it->nops; k++) it->strides[k][n - 1] = it->strides[k][d];
        continue;
      }
    }
    it->dims[n] = it->dims[d];
    for (int k = 0; k < it->nops; k++) it->strides[k][n] = it->strides[k][d];
    n++;
  }
  if (n == 0) { /* a single element */
    it->dims[0] = 1;
    for (int k = 0; k < it->nops; k++) it->strides[k][0] = 0;
    n = 1;
  }
  it->ndim = n;
}

/* (The conversions are inlined from core/half.h: through the exported
 * functions each element paid a PLT call, a third of a float16 MLP step.) */
void tide_halves_to_float(int dtype, int64_t n, const char *src, int64_t stride, float *dst) {
  if (dtype == TIDE_FLOAT16)
    for (int64_t i = 0; i < n; i++) dst[i] = half_to_float(*(const uint16_t *)(src + i * stride));
  else
    for (int64_t i = 0; i < n; i++) dst[i] = bfloat16_to_float(*(const uint16_t *)(src + i * stride));
}

void tide_float_to_halves(int dtype, int64_t n, const float *src, char *dst, int64_t stride) {
  if (dtype == TIDE_FLOAT16)
    for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = half_from_float(src[i]);
  else
    for (int64_t i = 0; i < n; i++) *(uint16_t *)(dst + i * stride) = bfloat16_from_float(src[i]);
}

typedef struct run_ctx {
  const tide_iter *it;
  tide_loop_fn loop;
  void *ctx;
  unsigned half_mask; /* operands converted through float32 */
} run_ctx;

enum { HALF_BLOCK = 256 };

/* One row segment, converting half operands through float32 blocks. */
static void run_row(const run_ctx *rc, int64_t n, char **p, const int64_t *s) {
  if (!rc->half_mask) {
    rc->loop(n, p, s, rc->ctx);
    return;
  }
  int nops = rc->it->nops;
  float buf[TIDE_ITER_MAX_OPS][HALF_BLOCK];
  char *q[TIDE_ITER_MAX_OPS];
  int64_t qs[TIDE_ITER_MAX_OPS];
  for (int64_t done = 0; done < n; done += HALF_BLOCK) {
    int64_t m = n - done < HALF_BLOCK ? n - done : HALF_BLOCK;
    for (int k = 0; k < nops; k++) {
      char *at = p[k] + done * s[k];
      if (rc->half_mask & (1u << k)) {
        if (k > 0) tide_halves_to_float(rc->it->dtypes[k], m, at, s[k], buf[k]);
        q[k] = (char *)buf[k];
        qs[k] = sizeof(float);
      } else {
        q[k] = at;
        qs[k] = s[k];
      }
    }
    rc->loop(m, q, qs, rc->ctx);
    if (rc->half_mask & 1u) tide_float_to_halves(rc->it->dtypes[0], m, buf[0], p[0] + done * s[0], s[0]);
  }
}

/* Elements [begin, end) of the iteration space (row-major), row segment by row segment. */
static void run_range(void *arg, int64_t begin, int64_t end) {
  const run_ctx *rc = arg;
  const tide_iter *it = rc->it;
  int nd = it->ndim, nops = it->nops;
  int64_t inner = it->dims[nd - 1];
  int64_t coord[TIDE_ITER_MAX_DIMS];
  char *p[TIDE_ITER_MAX_OPS];
  int64_t s[TIDE_ITER_MAX_OPS];
  /* Coordinates of `begin` (row-major), and the pointers there. */
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; d--) {
    coord[d] = rem % it->dims[d];
    rem /= it->dims[d];
  }
  for (int k = 0; k < nops; k++) {
    p[k] = it->data[k];
    for (int d = 0; d < nd; d++) p[k] += coord[d] * it->strides[k][d];
    s[k] = it->strides[k][nd - 1];
  }
  int64_t idx = begin;
  while (idx < end) {
    int64_t n = inner - coord[nd - 1];
    if (n > end - idx) n = end - idx;
    run_row(rc, n, p, s);
    idx += n;
    if (idx >= end) break;
    /* Back to this row's start, then carry into the outer coordinates. */
    for (int k = 0; k < nops; k++) p[k] -= coord[nd - 1] * s[k];
    coord[nd - 1] = 0;
    for (int d = nd - 2; d >= 0; d--) {
      coord[d]++;
      for (int k = 0; k < nops; k++) p[k] += it->strides[k][d];
      if (coord[d] < it->dims[d]) break;
      for (int k = 0; k < nops; k++) p[k] -= coord[d] * it->strides[k][d];
      coord[d] = 0;
    }
  }
}

tide_status tide_iter_run(tide_iter *it, tide_loop_fn loop, void *ctx) {
  int64_t total = 1;
  for (int d = 0; d < it->ndim; d++) total *= it->dims[d];
  if (total == 0) return TIDE_OK;
  coalesce(it);
  run_ctx rc = {it, loop, ctx, 0};
  if (it->convert_halves)
    for (int k = 0; k < it->nops; k++)
      if (tide_is_half(it->dtypes[k])) rc.half_mask |= 1u << k;
  tide_parallel_for(total, it->grain, run_range, &rc);
  if (tide_interrupt_pending()) {
    tide_interrupt_clear();
    return TIDE_FAIL(TIDE_ERR_INTERRUPTED, "interrupted");
  }
  return TIDE_OK;
}

typedef struct flat_ctx {
  tide_loop_fn loop;
  int nops;
  char *p[TIDE_ITER_MAX_OPS];
  int64_t s[TIDE_ITER_MAX_OPS];
  void *ctx;
} flat_ctx;

/* Parallel pieces of a flat row are whole blocks of this many elements, so
 * threads never write into one cache line together. */
enum { FLAT_BLOCK = 64 };

static void flat_blocks(void *arg, int64_t b0, int64_t b1) {
  const flat_ctx *f = arg;
  int64_t begin = b0 * FLAT_BLOCK, end = b1 * FLAT_BLOCK;
  char *p[TIDE_ITER_MAX_OPS];
  for (int k = 0; k < f->nops; k++) p[k] = f->p[k] + begin * f->s[k];
  f->loop(end - begin, p, f->s, f->ctx);
}

tide_status tide_run_flat(tide_loop_fn loop, int nops, char **p, const int64_t *s, int64_t n, int64_t grain,
                          void *ctx) {
  if (n < 2 * grain || tide_parallel_threads() < 2) {
    loop(n, p, s, ctx);
    return TIDE_OK;
  }
  flat_ctx f = {loop, nops, {0}, {0}, ctx};
  for (int k = 0; k < nops; k++) f.p[k] = p[k], f.s[k] = s[k];
  int64_t whole = n / FLAT_BLOCK, rest = n - whole * FLAT_BLOCK;
  tide_parallel_for(whole, (grain + FLAT_BLOCK - 1) / FLAT_BLOCK, flat_blocks, &f);
  if (rest) { /* the tail that does not fill a block */
    char *q[TIDE_ITER_MAX_OPS];
    for (int k = 0; k < nops; k++) q[k] = p[k] + whole * FLAT_BLOCK * s[k];
    loop(rest, q, s, ctx);
  }
  if (tide_interrupt_pending()) {
    tide_interrupt_clear();
    return TIDE_FAIL(TIDE_ERR_INTERRUPTED, "interrupted");
  }
  return TIDE_OK;
}

/* ---- strided copy, by element size ------------------------------------------ */

#define COPY_LOOP(NAME, T)                                                        \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {            \
    (void)ctx;                                                                    \
    char *o = p[0];                                                               \
    const char *a = p[1];                                                         \
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                 \
      memcpy(o, a, (size_t)n * sizeof(T));                                        \
    } else if (s[1] == 0) {                                                       \
      T v = *(const T *)a;                                                        \
      for (int64_t i = 0; i < n; i++) *(T *)(o + i * s[0]) = v;                   \
    } else {                                                                      \
      for (int64_t i = 0; i < n; i++) *(T *)(o + i * s[0]) = *(const T *)(a + i * s[1]); \
    }                                                                             \
  }
COPY_LOOP(copy1, uint8_t)
COPY_LOOP(copy2, uint16_t)
COPY_LOOP(copy4, uint32_t)
COPY_LOOP(copy8, uint64_t)

tide_loop_fn tide_copy_loop(size_t size) {
  switch (size) {
  case 1: return copy1;
  case 2: return copy2;
  case 4: return copy4;
  default: return copy8;
  }
}

tide_status tide_copy_strided(const char *op, tide_tensor *dst, const tide_tensor *src) {
  tide_iter it;
  tide_status st = tide_iter_build(&it, op, dst, 1, &src);
  if (st) return st;
  it.convert_halves = false;
  return tide_iter_run(&it, tide_copy_loop(tide_dtype_size_unchecked(dst->dt)), NULL);
}
