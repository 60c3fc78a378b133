/* cpu/shape_of.c — the shape and size kernels: an input's dims, or their
 * product, as an int32 or int64 tensor (an int32 result must hold them). */
#include "../core/registry.h"

tide_status tide_cpu_shape_of(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  int64_t vals[TIDE_MAX_DIMS];
  int n = 1;
  if (def->id == TIDE_OP_SHAPE) {
    n = x->ndim;
    for (int i = 0; i < n; i++) vals[i] = x->dims[i];
  } else {
    vals[0] = x->nelem;
  }
  for (int i = 0; i < n; i++) {
    if (o->dt == TIDE_INT64) ((int64_t *)o->data)[i] = vals[i];
    else if (vals[i] > INT32_MAX) {
      char sx[128];
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %lld does not fit int32 (input shape %s); use out_type = \"int64\"",
                       def->name, (long long)vals[i], TIDE_SHAPE_STR(sx, x));
    } else ((int32_t *)o->data)[i] = (int32_t)vals[i];
  }
  return TIDE_OK;
}
