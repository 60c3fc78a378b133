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

/* One strip of an axis kernel: columns [j0, j0 + n) of outer position o (n is
 * at most the kernel's strip width, and 1 when inner is 1), each v->len long. */
typedef void (*tide_axis_strip_fn)(void *ctx, const tide_axis_view *v, int64_t o, int64_t j0, int64_t n);

/* Byte offset of column j0 of outer position o in v's x (and in y, shaped like x). */
static inline size_t tide_axis_offset(const tide_axis_view *v, int64_t o, int64_t j0) {
  return (size_t)(o * v->len * v->inner + j0) * tide_dtype_size_unchecked(v->dt);
}

/* The body of the axis kernels (argreduce, scan, softmax): view x around
 * `axis` (negative counts from the end) with tide_axis_open (`out` may be
 * NULL), run `strip` on every (outer position, strip of up to `width`
 * columns) in parallel, at least `grain` elements (TIDE_GRAIN_*) a thread,
 * then close the view, writing halves back into out. Nothing runs when the
 * result is empty. */
tide_status tide_axis_for_strips(const tide_op_def *def, int axis, const tide_tensor *x, tide_tensor *out,
                                 int64_t width, int64_t grain, tide_axis_strip_fn strip, void *ctx);

#endif
