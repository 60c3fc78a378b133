/* io/onnx_write_nn.c — the NN registry ops as ONNX nodes: matmul (its transposes made
 * explicit), and tide's NHWC convolutions and pools as ONNX's NCHW ones between Transposes. */
#include "onnx_write.h"

#include <math.h>
#include <string.h>

static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1}, HWIO_TO_OIHW[4] = {3, 2, 0, 1};

static const char *transpose(onnx_export *x, const char *v, int n, const int64_t *perm, const char *out) {
  if (!out) out = ox_fresh(x, "Transpose");
  ox_attr_ints(x, ox_node(x, "Transpose", 1, &v, 1, &out), "perm", n, perm);
  return out;
}

/* The last two dims of a rank-r value swapped. */
static const char *swap_last(onnx_export *x, const char *v, int r) {
  int64_t perm[TIDE_MAX_DIMS];
  for (int i = 0; i < r; i++) perm[i] = i;
  perm[r - 2] = r - 1, perm[r - 1] = r - 2;
  return transpose(x, v, r, perm, NULL);
}

static tide_status map_matmul(onnx_export *x, const ox_call *c) {
  const char *a = c->in[0], *b = c->in[1];
  if (c->a->flags & TIDE_ATTR_TRANSPOSE_A) {
    if (c->din[0]->ndim < 2) return ox_fail(x, "transpose_a needs a's rank known (at least 2)");
    a = swap_last(x, a, c->din[0]->ndim);
  }
  if (c->a->flags & TIDE_ATTR_TRANSPOSE_B) {
    if (c->din[1]->ndim < 2) return ox_fail(x, "transpose_b needs b's rank known (at least 2)");
    b = swap_last(x, b, c->din[1]->ndim);
  }
  ox_op2(x, "MatMul", a, b, c->out[0]);
  return TIDE_OK;
}

enum { PAD_VALID = 0, PAD_SAME = 1, PAD_EXPLICIT = 2 };

/* The padding attributes of an NCHW window op: SAME as explicit pads (TF's rule: the
 * odd cell after) where the image's size is known, else auto_pad SAME_UPPER (the same
 * rule); EXPLICIT's (top, bottom, left, right) as ONNX's (top, left, bottom, right). */
static void window_pads(onnx_export *x, Onnx__NodeProto *n, int mode, const int64_t *explicit_pads,
                        const tide_tensor *img, const int64_t *k, const int64_t *s, const int64_t *d) {
  int64_t pads[4] = {0, 0, 0, 0};
  if (mode == PAD_EXPLICIT) {
    pads[0] = explicit_pads[0], pads[2] = explicit_pads[1], pads[1] = explicit_pads[2], pads[3] = explicit_pads[3];
  } else if (mode == PAD_SAME) {
    for (int i = 0; i < 2; i++) {
      int64_t in = img->ndim == 4 ? img->dims[1 + i] : -1;
      if (in < 0) {
        ox_attr_s(x, n, "auto_pad", "SAME_UPPER");
        return;
      }
      int64_t eff = (k[i] - 1) * d[i] + 1, out = (in + s[i] - 1) / s[i];
      int64_t total = (out - 1) * s[i] + eff - in;
      if (total < 0) total = 0;
      pads[i] = total / 2, pads[2 + i] = total - total / 2;
    }
  }
  ox_attr_ints(x, n, "pads", 4, pads);
}

/* conv2d and depthwise_conv2d: attrs ints[0..1] strides, [2..3] dilations, [4..7]
 * explicit pads; m = the padding mode. Filters HWIO (depthwise: [H, W, C, M], as
 * ONNX's grouped [C*M, 1, H, W]). */
static tide_status map_conv(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  const tide_tensor *w = c->din[1];
  if (w->ndim != 4 || w->dims[0] < 0 || w->dims[1] < 0 || w->dims[2] < 0 || w->dims[3] < 0)
    return ox_fail(x, "needs the filters' shape known");
  if (c->din[0]->ndim != 4) return ox_fail(x, "needs a rank-4 NHWC input");
  int64_t s[2] = {a->ints[0] > 0 ? a->ints[0] : 1, a->ints[1] > 0 ? a->ints[1] : 1};
  int64_t d[2] = {a->ints[2] > 0 ? a->ints[2] : 1, a->ints[3] > 0 ? a->ints[3] : 1};
  int64_t k[2] = {w->dims[0], w->dims[1]};
  const char *filters = c->in[1];
  int64_t group = 1;
  if (c->op == TIDE_OP_DEPTHWISE_CONV2D) {
    int64_t shape[4] = {w->dims[0], w->dims[1], 1, w->dims[2] * w->dims[3]};
    filters = ox_op2(x, "Reshape", filters, ox_init_ints(x, 4, shape), NULL);
    group = w->dims[2];
  }
  const char *in[2] = {transpose(x, c->in[0], 4, TO_NCHW, NULL), transpose(x, filters, 4, HWIO_TO_OIHW, NULL)};
  const char *y = ox_fresh(x, "Conv");
  Onnx__NodeProto *n = ox_node(x, "Conv", 2, in, 1, &y);
  ox_attr_ints(x, n, "kernel_shape", 2, k);
  ox_attr_ints(x, n, "strides", 2, s);
  ox_attr_ints(x, n, "dilations", 2, d);
  if (group != 1) ox_attr_i(x, n, "group", group);
  window_pads(x, n, (int)a->m, a->ints + 4, c->din[0], k, s, d);
  transpose(x, y, 4, TO_NHWC, c->out[0]);
  return TIDE_OK;
}

/* max_pool2d and avg_pool2d: ints[0..1] window, [2..3] strides; m = VALID or SAME.
 * AveragePool leaves padding out of its count, as TF does. */
static tide_status map_pool(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  if (c->din[0]->ndim != 4) return ox_fail(x, "needs a rank-4 NHWC input");
  if (a->m != PAD_VALID && a->m != PAD_SAME) return ox_fail(x, "padding mode %lld is not VALID or SAME", (long long)a->m);
  int64_t k[2] = {a->ints[0], a->ints[1]}, s[2] = {a->ints[2], a->ints[3]}, d[2] = {1, 1};
  const char *xt = transpose(x, c->in[0], 4, TO_NCHW, NULL);
  bool avg = c->op == TIDE_OP_AVG_POOL2D;
  const char *y = ox_fresh(x, avg ? "AveragePool" : "MaxPool");
  Onnx__NodeProto *n = ox_node(x, avg ? "AveragePool" : "MaxPool", 1, &xt, 1, &y);
  ox_attr_ints(x, n, "kernel_shape", 2, k);
  ox_attr_ints(x, n, "strides", 2, s);
  if (avg) ox_attr_i(x, n, "count_include_pad", 0);
  window_pads(x, n, (int)a->m, NULL, c->din[0], k, s, d);
  transpose(x, y, 4, TO_NHWC, c->out[0]);
  return TIDE_OK;
}

/* conv2d_backprop_input (Conv2DTranspose): (dy, filters[, the result's shape]) as ConvTranspose
 * from dy, with the pads the forward conv had and the output_padding that gives the result's
 * height and width (they must be known, as dy's are). The forward filters HWIO are ONNX's
 * (C of dy, C of the result, kH, kW) after the same Transpose as Conv's. */
static tide_status map_conv_transpose(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  const tide_tensor *dy = c->din[0], *w = c->din[1], *o = c->dout[0];
  if (w->ndim != 4 || w->dims[0] < 0 || w->dims[1] < 0) return ox_fail(x, "needs the filters' shape known");
  if (dy->ndim != 4 || o->ndim != 4 || dy->dims[1] < 0 || dy->dims[2] < 0 || o->dims[1] < 0 || o->dims[2] < 0)
    return ox_fail(x, "needs the input's and the result's height and width known");
  int64_t s[2] = {a->ints[0] > 0 ? a->ints[0] : 1, a->ints[1] > 0 ? a->ints[1] : 1};
  int64_t d[2] = {a->ints[2] > 0 ? a->ints[2] : 1, a->ints[3] > 0 ? a->ints[3] : 1};
  int64_t k[2] = {w->dims[0], w->dims[1]}, pads[4], extra[2];
  for (int i = 0; i < 2; i++) {
    int64_t in = dy->dims[1 + i], out = o->dims[1 + i], eff = (k[i] - 1) * d[i] + 1, before = 0, after = 0;
    if (a->m == PAD_EXPLICIT) before = a->ints[4 + 2 * i], after = a->ints[5 + 2 * i];
    else if (a->m == PAD_SAME) { /* the forward conv's SAME pads, from the result's size */
      int64_t total = ((out + s[i] - 1) / s[i] - 1) * s[i] + eff - out;
      if (total < 0) total = 0;
      before = total / 2, after = total - total / 2;
    }
    extra[i] = out - ((in - 1) * s[i] + eff - before - after);
    if (extra[i] < 0 || extra[i] >= (s[i] > d[i] ? s[i] : d[i]))
      return ox_fail(x, "no ConvTranspose gives size %lld from %lld (stride %lld)", (long long)out, (long long)in,
                     (long long)s[i]);
    pads[i] = before, pads[2 + i] = after;
  }
  const char *in[2] = {transpose(x, c->in[0], 4, TO_NCHW, NULL), transpose(x, c->in[1], 4, HWIO_TO_OIHW, NULL)};
  const char *y = ox_fresh(x, "ConvTranspose");
  Onnx__NodeProto *n = ox_node(x, "ConvTranspose", 2, in, 1, &y);
  ox_attr_ints(x, n, "kernel_shape", 2, k);
  ox_attr_ints(x, n, "strides", 2, s);
  ox_attr_ints(x, n, "dilations", 2, d);
  ox_attr_ints(x, n, "pads", 4, pads);
  if (extra[0] || extra[1]) ox_attr_ints(x, n, "output_padding", 2, extra);
  transpose(x, y, 4, TO_NHWC, c->out[0]);
  return TIDE_OK;
}

/* resize_bilinear, resize_nearest ([N, H, W, C] or [H, W, C] to ints = (height, width)): Resize
 * by scales (N and C kept, so the batch may be free), each the least float32 whose product
 * with the input's size floors to the size asked for (ONNX's rule for the result's size).
 * Bilinear is TF2's half-pixel rule; nearest is written for whole-number upscales only,
 * where TF2's floor((x + 0.5) / k) is ONNX's asymmetric floor(x / k). */
static tide_status map_resize(onnx_export *x, const ox_call *c) {
  const tide_tensor *d = c->din[0];
  int r = d->ndim;
  if (r != 3 && r != 4) return ox_fail(x, "needs a rank-3 or rank-4 NHWC input");
  int64_t hw[2] = {d->dims[r - 3], d->dims[r - 2]}, want[2] = {c->a->ints[0], c->a->ints[1]};
  if (hw[0] <= 0 || hw[1] <= 0) return ox_fail(x, "needs the input's height and width known");
  bool nearest = c->op == TIDE_OP_RESIZE_NEAREST;
  float sc[4] = {1, 1, 1, 1};
  for (int i = 0; i < 2; i++) {
    if (nearest && want[i] % hw[i] != 0)
      return ox_fail(x, "nearest from %lld to %lld is not a whole-number upscale (the only one written)",
                     (long long)hw[i], (long long)want[i]);
    float s = (float)want[i] / (float)hw[i];
    /* in double: then float32 arithmetic (which rounds the product to nearest) floors to it too */
    while (floor((double)hw[i] * (double)s) < (double)want[i]) s = nextafterf(s, INFINITY);
    sc[2 + i] = s;
  }
  const char *v = c->in[0];
  if (r == 3) v = ox_op2(x, "Unsqueeze", v, ox_init_ints(x, 1, (const int64_t[]){0}), NULL);
  int dt = c->dout[0]->dt;
  if (d->dt != dt) { /* bilinear of integers gives floats (attrs.dtype) */
    const char *cv = ox_fresh(x, "Cast");
    ox_attr_i(x, ox_node(x, "Cast", 1, &v, 1, &cv), "to", ox_dtype(dt));
    v = cv;
  }
  const char *scales = ox_init_floats(x, 4, sc);
  const char *in[3] = {transpose(x, v, 4, TO_NCHW, NULL), "", scales};
  const char *y = ox_fresh(x, "Resize");
  Onnx__NodeProto *n = ox_node(x, "Resize", 3, in, 1, &y);
  ox_attr_s(x, n, "mode", nearest ? "nearest" : "linear");
  ox_attr_s(x, n, "coordinate_transformation_mode", nearest ? "asymmetric" : "half_pixel");
  if (nearest) ox_attr_s(x, n, "nearest_mode", "floor");
  if (r == 4) transpose(x, y, 4, TO_NHWC, c->out[0]);
  else ox_op2(x, "Squeeze", transpose(x, y, 4, TO_NHWC, NULL), ox_init_ints(x, 1, (const int64_t[]){0}), c->out[0]);
  return TIDE_OK;
}

ox_map_fn ox_nn_mapping(const onnx_export *x, int op) {
  (void)x;
  switch (op) {
  case TIDE_OP_MATMUL: return map_matmul;
  case TIDE_OP_CONV2D: case TIDE_OP_DEPTHWISE_CONV2D: return map_conv;
  case TIDE_OP_MAX_POOL2D: case TIDE_OP_AVG_POOL2D: return map_pool;
  case TIDE_OP_CONV2D_BACKPROP_INPUT: return map_conv_transpose;
  case TIDE_OP_RESIZE_BILINEAR: case TIDE_OP_RESIZE_NEAREST: return map_resize;
  default: return NULL;
  }
}
