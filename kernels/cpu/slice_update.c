/* cpu/slice_update.c — the slice_update kernel: a copy of x with the slice
 * that SLICE's attributes select overwritten by update (the slice gradient's scatter). */
#include "iter.h"
#include "../core/views.h"

#include <string.h>

/* Copy x into the fresh output, then update into the output's slice view;
 * update's shape was checked by tide_infer_slice_update. The output is new
 * memory, so neither copy can overlap the other's source. */
tide_status tide_cpu_slice_update(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *u = in[1];
  tide_tensor *o = out[0];
  tide_status st = tide_copy_strided(def->name, o, x);
  if (st || u->nelem == 0) return st;
  tide_slice_plan p;
  st = tide_plan_slice(def->name, a, o, &p);
  if (st) return st;
  tide_tensor dst; /* borrowed header over o's memory: the slice's view of it */
  memset(&dst, 0, sizeof dst);
  tide_tensor_set_contiguous_layout(&dst, o->dt, p.ndim, p.dims);
  for (int i = 0; i < p.ndim; i++) dst.strides[i] = p.strides[i];
  dst.data = (char *)o->data + p.offset * (int64_t)tide_dtype_size_unchecked(o->dt);
  dst.dev = o->dev;
  return tide_copy_strided(def->name, &dst, u);
}
