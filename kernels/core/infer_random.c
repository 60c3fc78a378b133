/* core/infer_random.c — inference of stateless_random_uniform: TF's stateless
 * draws, whose seed is an input tensor and whose shape is attrs.ints (or a shape input). */
#include "infer_rank.h"

#include <math.h>

/* stateless_random_uniform(seed [2][, shape]) -> attrs.dtype of the shape:
 * a float dtype, or int32/int64 with integer bounds min < max (n = 1: the full range). */
tide_status tide_infer_stateless_random(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *seed = in[0];
  char s[128];
  if (seed->dt != TIDE_INT32 && seed->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: seed must be int32 or int64, got %s", def->name, tide_dtype_name(seed->dt));
  if (seed->ndim != 1 || (seed->dims[0] >= 0 && seed->dims[0] != 2))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: seed must have shape [2], got %s", def->name, TIDE_SHAPE_STR(s, seed));
  int dt = attrs->dtype;
  bool is_int = dt == TIDE_INT32 || dt == TIDE_INT64;
  if (!(is_int || dt == TIDE_FLOAT32 || dt == TIDE_FLOAT64 || dt == TIDE_FLOAT16 || dt == TIDE_BFLOAT16))
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: dtype must be a float dtype, int32 or int64, got %s", def->name,
                     dt >= 0 && dt < TIDE_NUM_DTYPES ? tide_dtype_name(dt) : "an invalid code");
  if (is_int && attrs->n != 1) {
    double lo = attrs->scalars[0], hi = attrs->scalars[1];
    if (lo != floor(lo) || hi != floor(hi) || (double)tide_sat_int(lo, dt) != lo || (double)tide_sat_int(hi, dt) != hi)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: minval %g and maxval %g must be integers of %s", def->name, lo, hi,
                       tide_dtype_name(dt));
    if (!(lo < hi))
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: needs minval < maxval, got minval %g and maxval %g", def->name, lo, hi);
  }
  tide_attrs buf;
  bool unknown;
  tide_status st = tide_shape_input(def, attrs, n_in, in, &buf, &attrs, &unknown);
  if (st) return st;
  if (unknown) {
    tide_shape_input_unknown(out[0], dt, attrs);
    return TIDE_OK;
  }
  int nd = attrs->nints;
  if (nd > TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape has rank %d (at most %d)", def->name, nd, TIDE_MAX_DIMS);
  for (int i = 0; i < nd; i++)
    if (attrs->ints[i] < 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape %s has a negative dimension", def->name,
                       tide_fmt_dims(s, sizeof s, nd, attrs->ints));
  int64_t n = tide_dims_product(nd, attrs->ints);
  if (n < 0 || n > ((int64_t)1 << 40))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape %s is too large", def->name, tide_fmt_dims(s, sizeof s, nd, attrs->ints));
  tide_tensor_set_contiguous_layout(out[0], dt, nd, attrs->ints);
  return TIDE_OK;
}

/* The seed is a vector; the shape (attrs or a shape input) alone sizes the result. */
static int seed_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 1;
}
const tide_rank_rule tide_infer_stateless_random_rank = {seed_rank, tide_rank_keeps, NULL};
