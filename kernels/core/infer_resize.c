/* core/infer_resize.c — shape and dtype inference of the image resize ops
 * and their gradients ([H, W, C] or [N, H, W, C] images, channels last). */
#include "infer_rank.h"

/* Check x is an image: rank 3 or 4 (unknown rank goes to infer_rank.c). */
static tide_status check_image(const tide_op_def *def, const tide_tensor *x, const char *what) {
  char s[128];
  if (x->ndim != 3 && x->ndim != 4)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must be [height, width, channels] or [batch, height, width, channels], "
                     "got shape %s", def->name, what, TIDE_SHAPE_STR(s, x));
  return TIDE_OK;
}

/* The float dtype attrs.dtype names, for the ops whose result is float. */
static tide_status check_float_attr(const tide_op_def *def, const tide_attrs *a) {
  if (a->dtype == TIDE_FLOAT32 || a->dtype == TIDE_FLOAT64 || a->dtype == TIDE_FLOAT16 || a->dtype == TIDE_BFLOAT16)
    return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the result dtype must be a float dtype", def->name);
}

/* resize_bilinear / resize_nearest(images) -> images of size ints[0] x ints[1]:
 * dtype attrs.dtype for bilinear (float32, float64 for float64 images),
 * the input's for nearest. */
tide_status tide_infer_resize(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "images");
  if (!st) st = check_image(def, x, "images");
  if (st) return st;
  if (a->nints != 2 || a->ints[0] < 1 || a->ints[1] < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: size must be two positive numbers (height, width)%s", def->name,
                     a->nints == 2 ? ", got a size below 1" : "");
  int dt = tide_out_dtype(def, a, x->dt);
  if (def->out_rule == TIDE_OUT_ATTR && (st = check_float_attr(def, a)) != TIDE_OK) return st;
  int64_t dims[4];
  int r = x->ndim;
  for (int d = 0; d < r; d++) dims[d] = x->dims[d];
  dims[r - 3] = a->ints[0];
  dims[r - 2] = a->ints[1];
  tide_tensor_set_contiguous_layout(out[0], dt, r, dims);
  return TIDE_OK;
}

/* resize_*_grad(dy, x) -> the gradient at x: x's shape, dtype attrs.dtype
 * (x's float dtype); dy has the resized shape. */
tide_status tide_infer_resize_grad(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *dy = in[0], *x = in[1];
  tide_status st = tide_check_dtype(def, dy, "dy");
  if (!st) st = check_image(def, dy, "dy");
  if (!st) st = check_image(def, x, "x");
  if (!st) st = check_float_attr(def, a);
  if (st) return st;
  char sd[128], sx[128];
  bool fits = dy->ndim == x->ndim;
  for (int d = 0; fits && d < x->ndim; d++)
    if (d != x->ndim - 3 && d != x->ndim - 2 && dy->dims[d] >= 0 && x->dims[d] >= 0 && dy->dims[d] != x->dims[d])
      fits = false;
  if (!fits)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: dy %s and x %s must agree in rank, batch and channels", def->name,
                     TIDE_SHAPE_STR(sd, dy), TIDE_SHAPE_STR(sx, x));
  tide_tensor_set_contiguous_layout(out[0], a->dtype, x->ndim, x->dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* The generic rule: the dtype rule on the image, outputs of unknown rank. */
const tide_rank_rule tide_infer_resize_rank = {NULL, NULL, NULL};
const tide_rank_rule tide_infer_resize_grad_rank = {NULL, NULL, NULL};
