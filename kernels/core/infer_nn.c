/* core/infer_nn.c — dtype and shape inference for the neural-network family:
 * softmax / log_softmax along one axis, the fused sparse softmax cross-entropy and the CTC loss. */
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

/* ctc_loss: float32/float64 logits [T, B, K] (time major, K >= 1), int32/int64 labels [B, L], label_length and
 * logit_length int32/int64 [B]; n = the blank class in [0, K) -> loss [B], grad [T, B, K] in the logits' dtype.
 * Unknown (-1) dims of B take another input's. */
tide_status tide_infer_ctc_loss(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *logits = in[0];
  static const char *const names[4] = {"logits", "labels", "label_length", "logit_length"};
  static const int ranks[4] = {3, 2, 1, 1};
  static const char *const forms[4] = {"[max_time, batch, classes]", "[batch, max_label_length]", "[batch]", "[batch]"};
  tide_status st = tide_check_dtype(def, logits, "logits");
  if (st) return st;
  char sx[128], sy[128];
  int64_t nb = -1;
  for (int i = 0; i < 4; i++) {
    if (i > 0 && in[i]->dt != TIDE_INT32 && in[i]->dt != TIDE_INT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be int32 or int64, got %s (use :cast(\"int32\"))", def->name,
                       names[i], tide_dtype_name(in[i]->dt));
    if (in[i]->ndim != ranks[i])
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must be %d-D %s, got shape %s", def->name, names[i], ranks[i], forms[i],
                       TIDE_SHAPE_STR(sx, in[i]));
    int64_t d = in[i]->dims[i == 0 ? 1 : 0];
    if (!tide_dims_agree(nb, d))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s has a batch of %lld, but logits %s has %lld", def->name, names[i],
                       (long long)d, TIDE_SHAPE_STR(sy, logits), (long long)nb);
    nb = tide_dim_merge(nb, d);
  }
  int64_t k = logits->dims[2];
  if (k == 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: logits must have at least one class, got shape %s", def->name,
                               TIDE_SHAPE_STR(sx, logits));
  if (attrs->n < 0 || (k > 0 && attrs->n >= k))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: blank_index %d is not a class of logits %s", def->name, attrs->n,
                     TIDE_SHAPE_STR(sx, logits));
  int64_t dims[3] = {logits->dims[0], nb, k};
  tide_tensor_set_contiguous_layout(out[0], logits->dt, 1, &dims[1]);
  tide_tensor_set_contiguous_layout(out[1], logits->dt, 3, dims);
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

/* logits [T, B, K], labels [B, L], the lengths [B]: their only ranks. */
static int ctc_loss_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 3 : i == 1 ? 2 : 1;
}
const tide_rank_rule tide_infer_ctc_loss_rank = {ctc_loss_rank, tide_rank_keeps, NULL};
