/* core/infer_elementwise.c — dtype and shape inference for the elementwise
 * families: one input, two inputs with broadcasting, where and clip. */
#include "infer_rank.h"

tide_status tide_infer_unary(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "input");
  if (st) return st;
  int dt = tide_out_dtype(def, attrs, in[0]->dt);
  if (dt < 0 || dt >= TIDE_NUM_DTYPES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: invalid target dtype code %d", def->name, dt);
  tide_tensor_set_contiguous_layout(out[0], dt, in[0]->ndim, in[0]->dims);
  return TIDE_OK;
}

tide_status tide_infer_binary(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *a = in[0], *b = in[1];
  tide_status st = tide_check_same_dtype(def, a, b, "x", "y");
  if (!st) st = tide_check_dtype(def, a, "x");
  if (st) return st;
  int ndim;
  int64_t dims[TIDE_MAX_DIMS];
  st = tide_broadcast_dims(def->name, a->ndim, a->dims, b->ndim, b->dims, &ndim, dims);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], tide_out_dtype(def, attrs, a->dt), ndim, dims);
  return TIDE_OK;
}

/* The broadcast shape of three inputs into out, with dtype dt. */
static tide_status broadcast3(const tide_op_def *def, const tide_tensor *const *in, int dt, tide_tensor *out) {
  int ndim;
  int64_t dims[TIDE_MAX_DIMS];
  tide_status st = tide_broadcast_dims(def->name, in[0]->ndim, in[0]->dims, in[1]->ndim, in[1]->dims, &ndim, dims);
  if (!st) st = tide_broadcast_dims(def->name, ndim, dims, in[2]->ndim, in[2]->dims, &ndim, dims);
  if (!st) tide_tensor_set_contiguous_layout(out, dt, ndim, dims);
  return st;
}

tide_status tide_infer_where(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_BOOL)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: condition must be bool, got %s (compare, e.g. x:gt(0))", def->name,
                     tide_dtype_name(in[0]->dt));
  tide_status st = tide_check_same_dtype(def, in[1], in[2], "x", "y");
  return st ? st : broadcast3(def, in, in[1]->dt, out[0]);
}

tide_status tide_infer_clip(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_same_dtype(def, in[0], in[1], "t", "clip_value_min");
  if (!st) st = tide_check_same_dtype(def, in[0], in[2], "t", "clip_value_max");
  if (!st) st = tide_check_dtype(def, in[0], "t");
  return st ? st : broadcast3(def, in, in[0]->dt, out[0]);
}

/* betainc (a, b, x): three float32/float64 inputs of one dtype, broadcast. */
tide_status tide_infer_betainc(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "a");
  if (!st) st = tide_check_same_dtype(def, in[0], in[1], "a", "b");
  if (!st) st = tide_check_same_dtype(def, in[0], in[2], "a", "x");
  return st ? st : broadcast3(def, in, in[0]->dt, out[0]);
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* A scalar broadcasts with anything; the result's rank is the inputs' largest. */
const tide_rank_rule tide_infer_unary_rank = {tide_rank_scalar, NULL, NULL};
const tide_rank_rule tide_infer_binary_rank = {tide_rank_scalar, NULL, NULL};
const tide_rank_rule tide_infer_where_rank = {tide_rank_scalar, NULL, NULL};
const tide_rank_rule tide_infer_clip_rank = {tide_rank_scalar, NULL, NULL};
const tide_rank_rule tide_infer_betainc_rank = {tide_rank_scalar, NULL, NULL};
