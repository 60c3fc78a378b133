/* core/sum_to.c — SUM_TO: a tensor summed back to the shape it was broadcast
 * from (the gradient of broadcasting), with the shapes read when it runs. */
#include "registry.h"
#include "unknown_dims.h"

#include <string.h>

/* Why an op: the gradient of a broadcast sums over the dims broadcasting
 * added or stretched, and which those are depends on both shapes. When a
 * traced tensor's dims or rank are unknown until the graph runs, the axes of
 * a reduce_sum (attributes, fixed at trace time) cannot say it; this op
 * decides when it runs (TF does it with BroadcastGradientArgs and a reduce_sum
 * whose axes are a tensor). Device independent: the sum is the SUM row's
 * kernel, reached through the op table as views.c reaches COPY's. */

/* like's shape must broadcast to x's (like is the smaller). */
static tide_status check_fits(const tide_op_def *def, const tide_tensor *x, const tide_tensor *like) {
  bool ok = like->ndim <= x->ndim;
  int off = x->ndim - like->ndim;
  for (int i = 0; ok && i < like->ndim; i++) {
    int64_t l = like->dims[i], d = x->dims[i + off];
    ok = l == d || l == 1 || l < 0 || d < 0;
  }
  if (ok) return TIDE_OK;
  char sx[128], sl[128];
  return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot sum shape %s back to %s (%s does not broadcast to %s)", def->name,
                   TIDE_SHAPE_STR(sx, x), TIDE_SHAPE_STR(sl, like), sl, sx);
}

/* (x, like) -> like's shape in x's dtype. It reads unknown ranks itself: like
 * of unknown rank gives an unknown rank, x of unknown rank like's shape. */
tide_status tide_infer_sum_to(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *like = in[1];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  if (like->ndim < 0) {
    tide_tensor_set_contiguous_layout(out[0], x->dt, TIDE_UNKNOWN_RANK, NULL);
    return TIDE_OK;
  }
  if (x->ndim >= 0 && (st = check_fits(def, x, like)) != TIDE_OK) return st;
  tide_tensor_set_contiguous_layout(out[0], x->dt, like->ndim, like->dims);
  return TIDE_OK;
}

tide_status tide_cpu_sum_to(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *like = in[1];
  tide_tensor *o = out[0];
  tide_status st = check_fits(def, x, like);
  if (st) return st;
  int off = x->ndim - like->ndim, nred = 0;
  tide_attrs sum = {0};
  int64_t kept[TIDE_MAX_DIMS]; /* x's dims with the summed ones 1: the sum's layout over o's memory */
  for (int i = 0; i < x->ndim; i++) {
    int64_t l = i < off ? 1 : like->dims[i - off];
    kept[i] = x->dims[i];
    if (l == 1 && x->dims[i] != 1) {
      sum.ints[sum.nints++] = i;
      kept[i] = 1;
      nred++;
    }
  }
  if (nred == 0) { /* the same elements: a view with like's dims (leading size-1 dims dropped) */
    int64_t strides[TIDE_MAX_DIMS];
    for (int i = 0; i < like->ndim; i++) strides[i] = x->strides[i + off];
    if (!(x->flags & TIDE_TENSOR_INLINE)) return tide_tensor_view(o, x, like->ndim, like->dims, strides, 0);
    st = tide_tensor_init(o, x->dt, like->ndim, like->dims); /* inline data has no storage to share */
    if (!st) memcpy(o->data, x->data, (size_t)x->nelem * tide_dtype_size_unchecked(x->dt));
    return st;
  }
  st = tide_tensor_init(o, x->dt, like->ndim, like->dims);
  if (st) return st;
  sum.flags = TIDE_ATTR_KEEPDIMS;
  tide_tensor kept_view;
  memset(&kept_view, 0, sizeof kept_view);
  tide_tensor_set_contiguous_layout(&kept_view, x->dt, x->ndim, kept);
  kept_view.data = o->data;
  kept_view.dev = o->dev;
  const tide_op_def *sum_def = &tide_op_defs[TIDE_OP_SUM];
  tide_tensor *kv = &kept_view;
  st = sum_def->cpu(sum_def, &sum, 1, &x, 1, &kv);
  if (st) tide_tensor_release(o);
  return st;
}
