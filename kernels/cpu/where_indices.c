/* cpu/where_indices.c — tf.where(cond): the coordinates of cond's nonzero
 * elements, row-major, as int64 [N, rank]; N is counted here (TIDE_OPF_DATA_SHAPE). */
#include "iter.h"
#include "../core/registry.h"

#include <string.h>

/* True when element k of the contiguous tensor x is nonzero: true bools, any
 * nonzero number, NaN too (NaN != 0, as TF); -0.0 is zero. */
static inline bool nonzero_at(const tide_tensor *x, int64_t k) {
  switch (x->dt) {
  case TIDE_FLOAT32: return ((const float *)x->data)[k] != 0;
  case TIDE_FLOAT64: return ((const double *)x->data)[k] != 0;
  case TIDE_FLOAT16:
  case TIDE_BFLOAT16: return (((const uint16_t *)x->data)[k] & 0x7fff) != 0; /* all but the sign bit */
  case TIDE_INT32: return ((const int32_t *)x->data)[k] != 0;
  case TIDE_INT64: return ((const int64_t *)x->data)[k] != 0;
  default: return ((const uint8_t *)x->data)[k] != 0; /* bool, int8, uint8 */
  }
}

tide_status tide_cpu_where_indices(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tmp;
  const tide_tensor *x;
  tide_status st = tide_contiguous_or_copy(def->name, in[0], &tmp, &x);
  if (st) return st;
  int nd = x->ndim;
  int64_t count = 0;
  for (int64_t k = 0; k < x->nelem; k++) count += nonzero_at(x, k);
  int64_t dims[2] = {count, nd};
  if ((st = tide_tensor_init(out[0], TIDE_INT64, 2, dims)) != TIDE_OK) goto done;
  int64_t *o = out[0]->data, c[TIDE_MAX_DIMS] = {0};
  for (int64_t k = 0; k < x->nelem; k++) {
    if (nonzero_at(x, k)) {
      memcpy(o, c, (size_t)nd * sizeof *o);
      o += nd;
    }
    for (int d = nd - 1; d >= 0; d--) { /* the next coordinates, row-major */
      if (++c[d] < x->dims[d]) break;
      c[d] = 0;
    }
  }
done:
  tide_tensor_release(&tmp);
  return st;
}
