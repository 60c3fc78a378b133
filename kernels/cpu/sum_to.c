/* cpu/sum_to.c — sum_to: x summed over the dims broadcasting added (the sum
 * kernel into the result seen with x's rank), or a view of x when there are none. */
#include "iter.h"
#include "../core/sum_to.h"

#include <string.h>

tide_status tide_cpu_sum_to(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  tide_attrs buf;
  bool unknown, axes[TIDE_MAX_DIMS];
  tide_status st = tide_shape_input(def, a, n_in, in, &buf, &a, &unknown); /* known when the op runs */
  if (!st) st = tide_sum_to_axes(def, x, a, axes);
  if (st) return st;
  int nd = a->nints, lead = x->ndim - nd;
  tide_attrs sum = {0};
  int64_t kept[TIDE_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) {
    kept[d] = axes[d] ? 1 : x->dims[d];
    if (axes[d]) sum.ints[sum.nints++] = d;
  }
  if (sum.nints == 0) { /* the dims the target lacks are all 1: x itself, seen with the target's rank */
    if (!(x->flags & TIDE_TENSOR_INLINE)) return tide_tensor_view(o, x, nd, x->dims + lead, x->strides + lead, 0);
    tide_tensor shaped = *x; /* a borrowed header over x's inline bytes, with the target's dims */
    tide_tensor_set_contiguous_layout(&shaped, x->dt, nd, x->dims + lead);
    shaped.data = x->data;
    st = tide_tensor_init(o, x->dt, nd, shaped.dims);
    return st ? st : tide_copy_strided(def->name, o, &shaped);
  }
  st = tide_tensor_init(o, x->dt, nd, kept + lead);
  if (st) return st;
  /* The sum kernel keeping the summed dims: o's contiguous memory seen with x's rank. */
  tide_tensor keep = *o;
  tide_tensor_set_contiguous_layout(&keep, o->dt, x->ndim, kept);
  tide_tensor *keep_out[1] = {&keep};
  sum.flags = TIDE_ATTR_KEEPDIMS;
  return tide_cpu_reduce(&tide_op_defs[TIDE_OP_SUM], &sum, 1, in, 1, keep_out);
}
