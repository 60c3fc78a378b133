/* cpu/indices.h — what the index-driven kernels (gather, scatter_add, the nd
 * ops, segments) share: reading int32/int64 index tensors, TF's CPU check of
 * each index's range, and adding rows of elements (halves go through float32). */
#ifndef TIDE_CPU_INDICES_H
#define TIDE_CPU_INDICES_H

#include "iter.h"
#include "../core/registry.h"

/* Element k of a contiguous int32 or int64 tensor. */
static inline int64_t tide_index_at(const tide_tensor *t, int64_t k) {
  return t->dt == TIDE_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
}

/* Check the first n elements of the contiguous index tensor idx lie in
 * [0, size) (TF on CPU fails on one outside). The error names op, the bad
 * index's coordinates, and the tensor t indexed along `axis` (`what`: "params"). */
tide_status tide_check_indices(const char *op, const tide_tensor *idx, int64_t n, int64_t size, int axis,
                               const char *what, const tide_tensor *t);

/* dst[0..n) += src[0..n), for one element type. */
typedef void (*tide_add_row_fn)(char *dst, const char *src, int64_t n);

#define TIDE_ADD_ROW(SUF, T)                                                         \
  static inline void tide_add_row_##SUF(char *dst, const char *src, int64_t n) {     \
    T *restrict d = (T *)dst;                                                        \
    const T *restrict s = (const T *)src;                                            \
    for (int64_t j = 0; j < n; j++) d[j] = (T)(d[j] + s[j]);                         \
  }
TIDE_ADD_ROW(f32, float)
TIDE_ADD_ROW(f64, double)
TIDE_ADD_ROW(i8, int8_t)
TIDE_ADD_ROW(u8, uint8_t)
TIDE_ADD_ROW(i32, int32_t)
TIDE_ADD_ROW(i64, int64_t)
#undef TIDE_ADD_ROW

/* The row adder for dtype dt (halves: the float32 one, on float32 copies). */
static inline tide_add_row_fn tide_add_row_for(int dt) {
  switch (dt) {
  case TIDE_FLOAT64: return tide_add_row_f64;
  case TIDE_INT8: return tide_add_row_i8;
  case TIDE_UINT8: return tide_add_row_u8;
  case TIDE_INT32: return tide_add_row_i32;
  case TIDE_INT64: return tide_add_row_i64;
  default: return tide_add_row_f32;
  }
}

/* A float32 copy of the contiguous half tensor `t` in the blank header `f`
 * (released by the caller), so sums of halves round once, at the end. */
static inline tide_status tide_halves_to_f32_tensor(const tide_tensor *t, tide_tensor *f) {
  tide_status st = tide_tensor_init(f, TIDE_FLOAT32, t->ndim, t->dims);
  if (!st) tide_halves_to_float(t->dt, t->nelem, t->data, 2, f->data);
  return st;
}

#endif
