/* core/infer_nn.c — dtype and shape inference for the neural-network family:
 * softmax / log_softmax along one axis and the fused sparse softmax cross-entropy. */
#include "infer_rank.h"
#include "unknown_dims.h"

/* softmax, log_softmax: a float tensor of rank >= 1, the same dtype and shape out. */
tide_status tide_infer_softmax(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "logits");
  if (st) return st;
  /* TF: "logits must have >= 1 dimension, got []". */
  if (x->ndim < 1) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: logits must have at least 1 dimension, got shape []", def->name);
  if (tide_normalize_axis(def->name, attrs->axis, x->ndim) < 0) return tide_last_status();
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, x->dims);
  return TIDE_OK;
}

/* sparse_softmax_cross_entropy: labels int32/int64 [B], float logits [B, K] with
 * K >= 1 -> loss [B] and backprop [B, K] in the logits' dtype; TF's messages.
 * An unknown (-1) B takes the other input's (TF merges them). */
tide_status tide_infer_sparse_xent(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *labels = in[0], *logits = in[1];
  tide_status st = tide_check_dtype(def, logits, "logits");
  if (st) return st;
  if (labels->dt != TIDE_INT32 && labels->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: labels must be int32 or int64, got %s (use :cast(\"int32\"))", def->name,
                     tide_dtype_name(labels->dt));
  char sl[128], sx[128];
  if (logits->ndim != 2)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: logits must be 2-D [batch, classes], but got shape %s", def->name,
                     TIDE_SHAPE_STR(sx, logits));
  if (labels->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: labels must be 1-D [batch], but got shape %s", def->name,
                     TIDE_SHAPE_STR(sl, labels));
  if (!tide_dims_agree(labels->dims[0], logits->dims[0]))
    return TIDE_FAIL(TIDE_ERR_SHAPE,
                     "%s: logits and labels must have the same first dimension, got logits shape %s and labels shape %s",
                     def->name, TIDE_SHAPE_STR(sx, logits), TIDE_SHAPE_STR(sl, labels));
  if (logits->dims[1] == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: must have at least one class, but got logits shape %s", def->name,
                     TIDE_SHAPE_STR(sx, logits));
  int64_t dims[2] = {tide_dim_merge(logits->dims[0], labels->dims[0]), logits->dims[1]};
  tide_tensor_set_contiguous_layout(out[0], logits->dt, 1, dims);
  tide_tensor_set_contiguous_layout(out[1], logits->dt, 2, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* One axis: any valid one is valid at the top rank. */
const tide_rank_rule tide_infer_softmax_rank = {tide_rank_top, NULL, NULL};

/* labels [B], logits [B, K]: their only ranks. */
static int sparse_xent_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 1 : 2;
}
const tide_rank_rule tide_infer_sparse_xent_rank = {sparse_xent_rank, tide_rank_keeps, NULL};
