/* core/unknown_dims.h — arithmetic on dims that may be unknown (-1: a traced
 * graph's None, known only when the graph runs), following TensorFlow's shape
 * functions. A whole rank may be unknown too (ndim TIDE_UNKNOWN_RANK). */
#ifndef TIDE_CORE_UNKNOWN_DIMS_H
#define TIDE_CORE_UNKNOWN_DIMS_H

#include <stdbool.h>
#include <stdint.h>

/* True when a and b can name the same dim: equal, or either unknown (TF's Merge). */
static inline bool tide_dims_agree(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }

/* The dim two agreeing dims name: the known one when either is (TF's Merge). */
static inline int64_t tide_dim_merge(int64_t a, int64_t b) { return a < 0 ? b : a; }

/* True when any of dims[0..n) is unknown, or the rank is (n < 0: TIDE_UNKNOWN_RANK). */
static inline bool tide_dims_any_unknown(int n, const int64_t *dims) {
  if (n < 0) return true;
  for (int i = 0; i < n; i++)
    if (dims[i] < 0) return true;
  return false;
}

/* *out = a + b, unknown when either is; false when it overflows. */
static inline bool tide_dim_add(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) {
    *out = -1;
    return true;
  }
  return !__builtin_add_overflow(a, b, out);
}

/* *out = a * b as TF's InferenceContext::Multiply: a known 0 wins over an
 * unknown dim (the product is 0 whatever it is), else unknown when either is;
 * false when it overflows. */
static inline bool tide_dim_mul(int64_t a, int64_t b, int64_t *out) {
  if (a == 0 || b == 0) {
    *out = 0;
    return true;
  }
  if (a < 0 || b < 0) {
    *out = -1;
    return true;
  }
  return !__builtin_mul_overflow(a, b, out);
}

#endif
