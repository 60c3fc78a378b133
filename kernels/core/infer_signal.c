/* core/infer_signal.c — dtype and shape inference for tf.signal's transforms (fft, ifft, rfft,
 * irfft over the innermost k = attrs->nints axes; attrs->ints their lengths, cpu/fft.c). */
#include "infer_rank.h"
#include "internal.h"
#include "unknown_dims.h"

#include <string.h>

tide_status tide_infer_fft(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  char s0[128], s1[128];
  const tide_tensor *x = in[0];
  bool real_in = def->id == TIDE_OP_RFFT, real_out = def->id == TIDE_OP_IRFFT;
  const char *what = real_in ? "input" : "real part";
  tide_status st = tide_check_dtype(def, x, what);
  if (!st && n_in > 1) st = tide_check_same_dtype(def, in[1], x, "imaginary part", "real part");
  if (st) return st;
  int k = attrs->nints;
  if (k < 1 || k > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the transform needs 1 to %d axes, got %d", def->name, TIDE_MAX_DIMS, k);
  if (x->ndim < k)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must have rank >= %d (the transformed axes), got shape %s", def->name,
                     what, k, TIDE_SHAPE_STR(s0, x));
  if (n_in > 1) {
    bool same = in[1]->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++) same = tide_dims_agree(x->dims[d], in[1]->dims[d]);
    if (!same)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the real and imaginary parts must have one shape, got %s and %s",
                       def->name, TIDE_SHAPE_STR(s0, x), TIDE_SHAPE_STR(s1, in[1]));
  }
  int nb = x->ndim - k;
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) dims[d] = n_in > 1 ? tide_dim_merge(x->dims[d], in[1]->dims[d]) : x->dims[d];
  for (int a = 0; a < k; a++) {
    int64_t len = attrs->ints[a], in_dim = dims[nb + a];
    bool inner = a == k - 1;
    if (len < -1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: fft_length must hold lengths >= 0, got %lld for axis %d of input shape %s",
                       def->name, (long long)len, nb + a, TIDE_SHAPE_STR(s0, x));
    if (len == 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: fft_length must not hold 0 (TF 2.21 aborts the process on it), got 0 for "
                       "axis %d of input shape %s", def->name, nb + a, TIDE_SHAPE_STR(s0, x));
    if (len < 0) { /* TF's default: the input's dim, or irfft's 2 (m - 1) */
      if (in_dim < 0) continue;
      len = real_out && inner ? (in_dim > 1 ? 2 * (in_dim - 1) : 0) : in_dim;
    }
    dims[nb + a] = real_in && inner ? len / 2 + 1 : len;
  }
  for (int o = 0; o < (real_out ? 1 : 2); o++) tide_tensor_set_contiguous_layout(out[o], x->dt, x->ndim, dims);
  return TIDE_OK;
}

/* An input of unknown rank stands in with the transformed axes only; the results' ranks stay unknown. */
static int fft_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return a->nints < 1 ? 1 : tide_rank_capped(a->nints);
}
const tide_rank_rule tide_infer_fft_rank = {fft_rank, NULL, NULL};
