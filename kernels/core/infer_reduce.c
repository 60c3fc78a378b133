/* core/infer_reduce.c — dtype and shape inference for the reduce family:
 * reductions over axes, argmax/argmin, cumulative scans, sort/argsort, top_k. */
#include "infer_rank.h"

/* Contract in registry.h: the axis mask of a reduction (none = all), with TF's errors. */
tide_status tide_reduce_axes(const tide_op_def *def, const tide_attrs *attrs, int ndim, bool *mask) {
  if (attrs->nints == 0) {
    for (int d = 0; d < ndim; d++) mask[d] = true;
    return TIDE_OK;
  }
  return tide_axis_mask(def->name, attrs->nints, attrs->ints, ndim, mask);
}

/* Reductions: the input's dtype (bool for any/all), reduced dims dropped or kept as 1. */
tide_status tide_infer_reduce(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  bool mask[TIDE_MAX_DIMS];
  st = tide_reduce_axes(def, attrs, x->ndim, mask);
  if (st) return st;
  bool keep = (attrs->flags & TIDE_ATTR_KEEPDIMS) != 0;
  int64_t dims[TIDE_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < x->ndim; d++) {
    if (!mask[d]) dims[nd++] = x->dims[d];
    else if (keep) dims[nd++] = 1;
  }
  tide_tensor_set_contiguous_layout(out[0], tide_out_dtype(def, attrs, x->dt), nd, dims);
  return TIDE_OK;
}

/* The index dtype an op reads from attrs.dtype: int32 or int64 only. */
static tide_status index_dtype(const tide_op_def *def, const tide_attrs *attrs, int64_t len) {
  if (attrs->dtype != TIDE_INT32 && attrs->dtype != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: index dtype must be int32 or int64, got %s", def->name,
                     tide_dtype_name(attrs->dtype));
  if (attrs->dtype == TIDE_INT32 && len > INT32_MAX)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: axis of length %lld does not fit int32 indices (use int64)", def->name,
                     (long long)len);
  return TIDE_OK;
}

/* argmax/argmin: attrs.dtype indices, the axis dropped; an empty axis fails
 * (an unknown one is checked when the graph runs). */
tide_status tide_infer_argreduce(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                 const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  int ax = tide_normalize_axis(def->name, attrs->axis, x->ndim);
  if (ax < 0) return tide_last_status();
  st = index_dtype(def, attrs, x->dims[ax]);
  if (st) return st;
  char sx[128];
  /* TF: "Reduction axis 0 is empty in shape [0]". */
  if (x->dims[ax] == 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: axis %d is empty in shape %s", def->name, ax, TIDE_SHAPE_STR(sx, x));
  int64_t dims[TIDE_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != ax) dims[nd++] = x->dims[d];
  tide_tensor_set_contiguous_layout(out[0], attrs->dtype, nd, dims);
  return TIDE_OK;
}

/* cumsum/cumprod: the input's dtype and shape; the axis must exist. */
tide_status tide_infer_scan(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  if (tide_normalize_axis(def->name, attrs->axis, x->ndim) < 0) return tide_last_status();
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, x->dims);
  return TIDE_OK;
}

/* sort: the input's dtype and shape; argsort: attrs.dtype indices of that shape. */
tide_status tide_infer_sort(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  int ax = tide_normalize_axis(def->name, attrs->axis, x->ndim);
  if (ax < 0) return tide_last_status();
  int dt = x->dt;
  if (def->out_rule == TIDE_OUT_ATTR) { /* argsort */
    st = index_dtype(def, attrs, x->dims[ax]);
    if (st) return st;
    dt = attrs->dtype;
  }
  tide_tensor_set_contiguous_layout(out[0], dt, x->ndim, x->dims);
  return TIDE_OK;
}

/* top_k: values and int32 indices with the last dim k (0 <= k <= that dim;
 * any k >= 0 while that dim is unknown, as TF: the graph's run checks it). */
tide_status tide_infer_top_k(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  char sx[128];
  if (x->ndim < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input must have rank 1 or more, got shape %s", def->name,
                     TIDE_SHAPE_STR(sx, x));
  int64_t n = x->dims[x->ndim - 1], k = attrs->n;
  if (k < 0 || (n >= 0 && k > n))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: k = %lld must be between 0 and the last dimension %lld (shape %s)",
                     def->name, (long long)k, (long long)n, TIDE_SHAPE_STR(sx, x));
  if (n > INT32_MAX)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: last dimension %lld does not fit int32 indices", def->name, (long long)n);
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) dims[d] = x->dims[d];
  dims[x->ndim - 1] = k;
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, dims);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT32, x->ndim, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* Several axes, checked when the graph runs; a full reduction without
 * keepdims is a scalar whatever the rank (TF's rule). */
static tide_status reduce_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                       const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "input");
  if (st) return st;
  int dt = tide_out_dtype(def, a, in[0]->dt);
  if (a->nints == 0 && !(a->flags & TIDE_ATTR_KEEPDIMS)) tide_tensor_set_contiguous_layout(out[0], dt, 0, NULL);
  else tide_rank_set_unknown(out[0], dt);
  return TIDE_OK;
}
const tide_rank_rule tide_infer_reduce_rank = {NULL, NULL, reduce_unknown_rank};

/* One axis: any valid one is valid at the top rank. */
const tide_rank_rule tide_infer_argreduce_rank = {tide_rank_top, NULL, NULL};
const tide_rank_rule tide_infer_scan_rank = {tide_rank_top, NULL, NULL};
const tide_rank_rule tide_infer_sort_rank = {tide_rank_top, NULL, NULL};
const tide_rank_rule tide_infer_top_k_rank = {tide_rank_top, NULL, NULL};
