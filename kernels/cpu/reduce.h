/* cpu/reduce.h — what the reduce family's kernels (reductions, arg-reductions,
 * scans, sort, top_k, softmax) share: the [outer, len, inner] view of an axis. */
#ifndef TIDE_CPU_REDUCE_H
#define TIDE_CPU_REDUCE_H

#include "../core/registry.h"

/* What the axis kernels (argreduce, scan, sort, top_k, softmax) read and write: x as
 * contiguous [outer, len, inner] around one axis, halves as float32 (they
 * compare and add exactly there), and an output shaped like x to write. */
typedef struct tide_axis_view {
  const char *x;        /* contiguous input elements, in dtype dt */
  char *y;              /* the output to write (out's data, or float32 scratch for halves); NULL without out */
  int dt;               /* x's dtype, float32 for halves */
  int64_t outer, len, inner;
  tide_tensor *out;     /* the output given to tide_axis_open, or NULL */
  tide_tensor tmp;      /* a contiguous copy of a strided x */
  float *conv;          /* halves: float32 input, then the output scratch */
} tide_axis_view;

/* Fill v for x around `axis`; `out` (may be NULL) is a contiguous output of
 * x's dtype (any element count) that the kernel writes through v->y. */
tide_status tide_axis_open(const char *op, const tide_tensor *x, int axis, tide_tensor *out, tide_axis_view *v);
/* Round the float32 scratch output back into a half `out` (when write_back)
 * and free what tide_axis_open made. */
void tide_axis_close(tide_axis_view *v, bool write_back);

#endif
