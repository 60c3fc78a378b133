/* cpu/bitcast.c — tf.bitcast: each input element's bytes copied in order into a contiguous result read as another
 * dtype (the shapes are core/infer_shape.c's). Host byte order, as TF's. */
#include "../core/registry.h"

#include <string.h>

/* Element offset (in elements) of row-major element k of a strided tensor. */
static int64_t strided_offset(const tide_tensor *t, int64_t k) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (k % t->dims[d]) * t->strides[d];
    k /= t->dims[d];
  }
  return off;
}

tide_status tide_cpu_bitcast(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  char *o = out[0]->data;
  size_t esz = tide_dtype_size(x->dt);
  if (tide_tensor_is_contiguous(x)) {
    memcpy(o, x->data, (size_t)x->nelem * esz);
    return TIDE_OK;
  }
  for (int64_t k = 0; k < x->nelem; k++)
    memcpy(o + (size_t)k * esz, (const char *)x->data + strided_offset(x, k) * (int64_t)esz, esz);
  return TIDE_OK;
}
