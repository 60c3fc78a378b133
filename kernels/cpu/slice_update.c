/* cpu/slice_update.c — the slice_update kernel: a copy of x with the slice
 * that SLICE's attributes select overwritten by update (the slice gradient's scatter). */
#include "iter.h"
#include "../core/views.h"

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
  tide_view_plan p;
  st = tide_plan_slice(def, a, o, &p);
  if (st) return st;
  tide_tensor dst; /* the slice's view of o's memory */
  tide_view_borrow(&dst, o, &p);
  return tide_copy_strided(def->name, &dst, u);
}
