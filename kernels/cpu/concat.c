/* cpu/concat.c — the concat kernel: each input is copied into its slab of the
 * output (a strided view along the axis) by the strided copy engine. */
#include "iter.h"
#include "../core/registry.h"

#include <string.h>

/* Copy input i into the output at its running offset along the axis
 * (shapes were checked by tide_infer_concat). */
tide_status tide_cpu_concat(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  int ax = a->axis < 0 ? a->axis + o->ndim : a->axis;
  size_t es = tide_dtype_size_unchecked(o->dt);
  int64_t at = 0;
  for (int i = 0; i < n_in; i++) {
    const tide_tensor *x = in[i];
    if (x->nelem > 0) {
      tide_tensor slab; /* borrowed header over o's memory: x's shape, o's strides */
      memset(&slab, 0, sizeof slab);
      tide_tensor_set_contiguous_layout(&slab, o->dt, o->ndim, x->dims);
      for (int d = 0; d < o->ndim; d++) slab.strides[d] = o->strides[d];
      slab.data = (char *)o->data + (size_t)(at * o->strides[ax]) * es;
      slab.dev = o->dev;
      tide_status st = tide_copy_strided(def->name, &slab, x);
      if (st) return st;
    }
    at += x->dims[ax];
  }
  return TIDE_OK;
}
