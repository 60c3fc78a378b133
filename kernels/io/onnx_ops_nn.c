/* io/onnx_ops_nn.c — ONNX's image and normalization ops mapped onto tide's: Conv,
 * ConvTranspose, MaxPool, AveragePool, the global pools, BatchNormalization,
 * LayerNormalization (Resize is in onnx_ops_resample.c). ONNX's images are NCHW and tide's kernels NHWC:
 * each op transposes its input in and its output back (weights are transposed
 * once, when the model loads: they are known then). */
#include "onnx_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP(fn) static tide_status fn(onnx_import *im, const Onnx__NodeProto *node, int n_in, \
                                      const tide_tensor *const *in, int n_out, tide_tensor *out)
#define UNUSED (void)im, (void)node, (void)n_in, (void)in, (void)n_out, (void)out
enum { PAD_VALID = 0, PAD_SAME = 1, PAD_EXPLICIT = 2 }; /* tide's conv and pool modes (ops.def) */

static const int64_t TO_NHWC[4] = {0, 2, 3, 1}, TO_NCHW[4] = {0, 3, 1, 2}, OIHW_TO_HWIO[4] = {2, 3, 1, 0};

static void release_all(tide_tensor *t, int n) {
  for (int k = 0; k < n; k++) tide_tensor_release(&t[k]);
}

/* The 2-D window of a node: kernel (from the attribute or the weights), strides, dilations,
 * pads [top, bottom, left, right] and tide's padding mode. A 1-D window (rank-3 input) is 1 x k. */
typedef struct win {
  int64_t k[2], s[2], d[2], pads[4], mode;
} win;

static tide_status window(const Onnx__NodeProto *node, int spatial, const int64_t *kernel, win *w) {
  int64_t v[8];
  int n;
  w->k[0] = w->k[1] = w->s[0] = w->s[1] = w->d[0] = w->d[1] = 1;
  memset(w->pads, 0, sizeof w->pads);
  w->mode = PAD_EXPLICIT;
  int off = 2 - spatial; /* a 1-D window fills the width */
  tide_status st = onnx_attr_ints(node, "kernel_shape", v, 2, &n);
  if (st) return st;
  if (n >= 0 && n != spatial) return TIDE_FAIL(TIDE_ERR_VALUE, "its kernel_shape has %d values for %d spatial dims", n, spatial);
  for (int i = 0; i < spatial; i++) w->k[off + i] = n >= 0 ? v[i] : kernel ? kernel[i] : -1;
  if (w->k[0] < 1 || w->k[1] < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "its kernel_shape is missing or not positive");
  const char *names[2] = {"strides", "dilations"};
  int64_t *dst[2] = {w->s, w->d};
  for (int j = 0; j < 2; j++) {
    st = onnx_attr_ints(node, names[j], v, 2, &n);
    if (st) return st;
    if (n >= 0 && n != spatial) return TIDE_FAIL(TIDE_ERR_VALUE, "its %s has %d values for %d spatial dims", names[j], n, spatial);
    for (int i = 0; n >= 0 && i < spatial; i++) {
      if (v[i] < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "its %s must be positive", names[j]);
      dst[j][off + i] = v[i];
    }
  }
  size_t al;
  const char *ap = onnx_attr_s(node, "auto_pad", &al);
  if (al && !(al == 6 && !memcmp(ap, "NOTSET", 6))) {
    if (al == 5 && !memcmp(ap, "VALID", 5)) w->mode = PAD_VALID;
    else if (al == 10 && !memcmp(ap, "SAME_UPPER", 10)) w->mode = PAD_SAME; /* TF's SAME puts the extra at the end */
    else return TIDE_FAIL(TIDE_ERR_VALUE, "its auto_pad %.*s is not mapped (NOTSET, VALID and SAME_UPPER are)", (int)al, ap);
    return TIDE_OK;
  }
  st = onnx_attr_ints(node, "pads", v, 4, &n);
  if (st) return st;
  if (n >= 0 && n != 2 * spatial) return TIDE_FAIL(TIDE_ERR_VALUE, "its pads have %d values for %d spatial dims", n, spatial);
  for (int i = 0; n >= 0 && i < spatial; i++) {
    if (v[i] < 0 || v[spatial + i] < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "its pads are negative");
    w->pads[2 * (off + i)] = v[i];               /* begin */
    w->pads[2 * (off + i) + 1] = v[spatial + i]; /* end */
  }
  return TIDE_OK;
}

/* x (NCHW, or NCL: made N C 1 L) as NHWC. */
static tide_status to_nhwc(const tide_tensor *x, tide_tensor *out) {
  if (x->ndim == 4) return onnx_transpose(x, 4, TO_NHWC, out);
  if (x->ndim != 3) return TIDE_FAIL(TIDE_ERR_SHAPE, "its input must be NCHW (rank 4) or NCL (rank 3), got rank %d", x->ndim);
  tide_tensor e = {0};
  tide_attrs a = {0};
  a.axis = 2;
  tide_status st = onnx_run1(TIDE_OP_EXPAND_DIMS, &a, 1, &x, &e);
  if (!st) st = onnx_transpose(&e, 4, TO_NHWC, out);
  tide_tensor_release(&e);
  return st;
}

/* y (NHWC) back to the input's layout (rank 4: NCHW, rank 3: NCL). */
static tide_status from_nhwc(const tide_tensor *y, int rank, tide_tensor *out) {
  if (rank == 4) return onnx_transpose(y, 4, TO_NCHW, out);
  tide_tensor t = {0};
  tide_attrs a = {0};
  a.ints[0] = 2, a.nints = 1;
  tide_status st = onnx_transpose(y, 4, TO_NCHW, &t);
  const tide_tensor *p = &t;
  if (!st) st = onnx_run1(TIDE_OP_SQUEEZE, &a, 1, &p, out);
  tide_tensor_release(&t);
  return st;
}

/* Conv weights [M, C/g, kH(, kW)] as HWIO [kH, kW, C/g, M]. */
static tide_status weights_hwio(const tide_tensor *w, tide_tensor *out) {
  if (w->ndim == 4) return onnx_transpose(w, 4, OIHW_TO_HWIO, out);
  if (w->ndim != 3) return TIDE_FAIL(TIDE_ERR_SHAPE, "its weights must have rank 3 or 4, got %d", w->ndim);
  tide_tensor e = {0};
  tide_attrs a = {0};
  a.axis = 2;
  tide_status st = onnx_run1(TIDE_OP_EXPAND_DIMS, &a, 1, &w, &e);
  if (!st) st = onnx_transpose(&e, 4, OIHW_TO_HWIO, out);
  tide_tensor_release(&e);
  return st;
}

static tide_attrs conv_attrs(const win *w) {
  tide_attrs a = {0};
  a.ints[0] = w->s[0], a.ints[1] = w->s[1], a.ints[2] = w->d[0], a.ints[3] = w->d[1];
  for (int k = 0; k < 4; k++) a.ints[4 + k] = w->pads[k];
  a.nints = 12;
  a.m = w->mode;
  return a;
}

/* x[..., lo:hi] along the last axis of a rank-4 tensor. */
static tide_status last_axis_slice(const tide_tensor *x, int64_t lo, int64_t hi, tide_tensor *out) {
  tide_attrs a = {0};
  for (int d = 0; d < 4; d++) {
    a.ints[3 * d] = d == 3 ? lo : 0, a.ints[3 * d + 1] = d == 3 ? hi : 0, a.ints[3 * d + 2] = 1;
    if (d != 3) a.m |= (1 << d) | (1 << (d + 8));
  }
  a.nints = 12;
  return onnx_run1(TIDE_OP_SLICE, &a, 1, &x, out);
}

/* Conv: group 1 is conv2d, group = channels depthwise_conv2d, other groups one conv2d per group. */
MAP(map_conv) {
  UNUSED;
  const tide_tensor *x = NULL, *w = NULL, *b = n_in > 2 ? in[2] : NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &w);
  if (st) return st;
  if (w->ndim != x->ndim) return TIDE_FAIL(TIDE_ERR_SHAPE, "its input has rank %d and its weights rank %d", x->ndim, w->ndim);
  int spatial = x->ndim - 2;
  if (spatial != 1 && spatial != 2) return TIDE_FAIL(TIDE_ERR_SHAPE, "Conv of %d spatial dims is not mapped (1 and 2 are)", spatial);
  win wn;
  st = window(node, spatial, w->dims + 2, &wn);
  if (st) return st;
  int64_t g = onnx_attr_i(node, "group", 1), c = x->dims[1], m = w->dims[0];
  if (g < 1 || c < 0 || m < 0 || c % g || m % g || w->dims[1] * g != c)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "its group %" PRId64 " does not fit %" PRId64 " input channels and weights of %" PRId64
                     " x %" PRId64, g, c, m, w->dims[1]);
  tide_tensor t[8] = {{0}};  /* xh, wh, y, yb, wd, part results... */
  tide_attrs a = conv_attrs(&wn);
  st = to_nhwc(x, &t[0]);
  if (!st) st = weights_hwio(w, &t[1]);
  if (!st && g == 1) {
    const tide_tensor *ins[2] = {&t[0], &t[1]};
    st = onnx_run1(TIDE_OP_CONV2D, &a, 2, ins, &t[2]);
  } else if (!st && g == c) { /* depthwise: HWIO [kh, kw, 1, C*mult] as [kh, kw, C, mult] */
    int64_t dims[4] = {t[1].dims[0], t[1].dims[1], c, m / c};
    st = onnx_reshape(&t[1], 4, dims, &t[4]);
    const tide_tensor *ins[2] = {&t[0], &t[4]};
    if (!st) st = onnx_run1(TIDE_OP_DEPTHWISE_CONV2D, &a, 2, ins, &t[2]);
  } else if (!st) { /* one convolution per group, concatenated */
    if (g > 4096) return release_all(t, 8), TIDE_FAIL(TIDE_ERR_VALUE, "Conv of %" PRId64 " groups", g);
    tide_tensor *parts = calloc((size_t)g, sizeof *parts);
    const tide_tensor **pp = calloc((size_t)g, sizeof *pp);
    if (!parts || !pp) st = TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory");
    int64_t cg = c / g, mg = m / g;
    for (int64_t k = 0; !st && k < g; k++) {
      tide_tensor xs = {0}, ws = {0};
      st = last_axis_slice(&t[0], k * cg, (k + 1) * cg, &xs);
      if (!st) st = last_axis_slice(&t[1], k * mg, (k + 1) * mg, &ws);
      const tide_tensor *ins[2] = {&xs, &ws};
      if (!st) st = onnx_run1(TIDE_OP_CONV2D, &a, 2, ins, &parts[k]);
      pp[k] = &parts[k];
      tide_tensor_release(&xs);
      tide_tensor_release(&ws);
    }
    tide_attrs ca = {0};
    ca.axis = 3;
    if (!st) st = onnx_run1(TIDE_OP_CONCAT, &ca, (int)g, pp, &t[2]);
    for (int64_t k = 0; parts && k < g; k++) tide_tensor_release(&parts[k]);
    free(parts);
    free(pp);
  }
  if (!st && b) st = onnx_binary(TIDE_OP_ADD, &t[2], b, &t[3]); /* the bias on channels, last in NHWC */
  else if (!st) st = tide_tensor_share(&t[3], &t[2]);
  if (!st) st = from_nhwc(&t[3], x->ndim, &out[0]);
  release_all(t, 8);
  return st;
}

/* ConvTranspose (group 1, 2-D): conv2d_backprop_input onto the output's shape, known but for the batch. */
MAP(map_conv_transpose) {
  UNUSED;
  const tide_tensor *x = NULL, *w = NULL, *b = n_in > 2 ? in[2] : NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &w);
  if (st) return st;
  if (x->ndim != 4 || w->ndim != 4) return TIDE_FAIL(TIDE_ERR_SHAPE, "ConvTranspose is mapped for 2-D images (rank 4)");
  if (onnx_attr_i(node, "group", 1) != 1) return TIDE_FAIL(TIDE_ERR_VALUE, "ConvTranspose with groups is not mapped");
  if (onnx_attr(node, "output_shape")) return TIDE_FAIL(TIDE_ERR_VALUE, "ConvTranspose's output_shape is not mapped (pads are)");
  win wn;
  st = window(node, 2, w->dims + 2, &wn);
  if (st) return st;
  if (wn.mode != PAD_EXPLICIT) return TIDE_FAIL(TIDE_ERR_VALUE, "ConvTranspose's auto_pad is not mapped (pads are)");
  int64_t op[2] = {0, 0};
  int n;
  st = onnx_attr_ints(node, "output_padding", op, 2, &n);
  if (st) return st;
  int64_t h = x->dims[2], wd = x->dims[3];
  if (h < 0 || wd < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "ConvTranspose needs its input's height and width");
  int64_t oh = (h - 1) * wn.s[0] + (wn.k[0] - 1) * wn.d[0] + 1 - wn.pads[0] - wn.pads[1] + op[0];
  int64_t ow = (wd - 1) * wn.s[1] + (wn.k[1] - 1) * wn.d[1] + 1 - wn.pads[2] - wn.pads[3] + op[1];
  /* the forward conv's pads: output_padding adds rows the forward conv's floor leaves out */
  tide_attrs a = conv_attrs(&wn);
  a.ints[8] = x->dims[0], a.ints[9] = oh, a.ints[10] = ow, a.ints[11] = w->dims[1]; /* -1: the batch, known at run time */
  tide_tensor t[8] = {{0}};
  st = onnx_transpose(x, 4, TO_NHWC, &t[0]);
  if (!st) st = onnx_transpose(w, 4, OIHW_TO_HWIO, &t[1]); /* [C_in, M, kh, kw] -> [kh, kw, M, C_in] */
  bool batch_known = x->dims[0] >= 0;
  if (!st && !batch_known) { /* the shape as a tensor: the batch from x at run time */
    tide_attrs sa = {0};
    sa.dtype = TIDE_INT64;
    const tide_tensor *p = &t[0];
    st = onnx_run1(TIDE_OP_SHAPE, &sa, 1, &p, &t[2]);
    tide_attrs sl = {0};
    sl.ints[0] = 0, sl.ints[1] = 1, sl.ints[2] = 1, sl.nints = 3;
    p = &t[2];
    if (!st) st = onnx_run1(TIDE_OP_SLICE, &sl, 1, &p, &t[3]);
    int64_t rest[3] = {oh, ow, w->dims[1]};
    if (!st) st = onnx_ints_tensor(TIDE_INT64, 3, rest, &t[4]);
    tide_attrs ca = {0};
    const tide_tensor *ins[2] = {&t[3], &t[4]};
    if (!st) st = onnx_run1(TIDE_OP_CONCAT, &ca, 2, ins, &t[5]);
  }
  if (!st) {
    const tide_tensor *ins[3] = {&t[0], &t[1], &t[5]};
    st = onnx_run1(TIDE_OP_CONV2D_BACKPROP_INPUT, &a, batch_known ? 2 : 3, ins, &t[6]);
  }
  if (!st && b) st = onnx_binary(TIDE_OP_ADD, &t[6], b, &t[7]);
  else if (!st) st = tide_tensor_share(&t[7], &t[6]);
  if (!st) st = onnx_transpose(&t[7], 4, TO_NCHW, &out[0]);
  release_all(t, 8);
  return st;
}

/* MaxPool, AveragePool: explicit pads (and ceil_mode's extra) padded in, then VALID windows.
 * AveragePool divides by the count of cells it averages: with count_include_pad the declared
 * pads count, ceil_mode's extra never does. */
MAP(map_pool) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  bool avg = !strcmp(node->op_type, "AveragePool");
  int spatial = x->ndim - 2;
  if (spatial != 1 && spatial != 2) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s of %d spatial dims is not mapped", node->op_type, spatial);
  win wn;
  st = window(node, spatial, NULL, &wn);
  if (st) return st;
  if (wn.d[0] != 1 || wn.d[1] != 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s with dilations is not mapped", node->op_type);
  if (n_out > 1) return TIDE_FAIL(TIDE_ERR_VALUE, "MaxPool's Indices output is not mapped");
  tide_tensor t[8] = {{0}};
  st = to_nhwc(x, &t[0]);
  if (st) return st;
  int64_t hw[2] = {t[0].dims[1], t[0].dims[2]}, extra[2] = {0, 0};
  bool ceil_mode = onnx_attr_i(node, "ceil_mode", 0) != 0;
  for (int i = 0; ceil_mode && wn.mode == PAD_EXPLICIT && i < 2; i++) {
    if (hw[i] < 0) return release_all(t, 8), TIDE_FAIL(TIDE_ERR_SHAPE, "%s with ceil_mode needs the image's size", node->op_type);
    int64_t span = hw[i] + wn.pads[2 * i] + wn.pads[2 * i + 1] - wn.k[i];
    int64_t out_n = (span + wn.s[i] - 1) / wn.s[i] + 1;
    if ((out_n - 1) * wn.s[i] >= hw[i] + wn.pads[2 * i]) out_n--; /* the last window must start inside */
    int64_t need = (out_n - 1) * wn.s[i] + wn.k[i] - (hw[i] + wn.pads[2 * i] + wn.pads[2 * i + 1]);
    extra[i] = need > 0 ? need : 0;
  }
  bool padded = wn.mode == PAD_EXPLICIT && (wn.pads[0] || wn.pads[1] || wn.pads[2] || wn.pads[3] || extra[0] || extra[1]);
  tide_attrs pa = {0};
  pa.ints[2] = wn.pads[0], pa.ints[3] = wn.pads[1] + extra[0], pa.ints[4] = wn.pads[2], pa.ints[5] = wn.pads[3] + extra[1];
  pa.nints = 8;
  pa.scalars[0] = avg ? 0 : -INFINITY;
  tide_attrs a = {0};
  a.ints[0] = wn.k[0], a.ints[1] = wn.k[1], a.ints[2] = wn.s[0], a.ints[3] = wn.s[1];
  a.nints = 4;
  a.m = wn.mode == PAD_SAME ? PAD_SAME : PAD_VALID;
  if (avg && wn.mode == PAD_SAME)
    st = TIDE_FAIL(TIDE_ERR_VALUE, "AveragePool with auto_pad SAME_UPPER is not mapped (its count of cells differs from TF's)");
  const tide_tensor *p = &t[0];
  if (!st && padded) {
    st = onnx_run1(TIDE_OP_PAD, &pa, 1, &p, &t[1]);
    p = &t[1];
  }
  if (!st) st = onnx_run1(avg ? TIDE_OP_AVG_POOL2D : TIDE_OP_MAX_POOL2D, &a, 1, &p, &t[2]);
  if (!st && avg && padded) { /* divide by the cells counted, not the window's size */
    bool include = onnx_attr_i(node, "count_include_pad", 0) != 0;
    if (hw[0] < 0 || hw[1] < 0) st = TIDE_FAIL(TIDE_ERR_SHAPE, "a padded AveragePool needs the image's size");
    int64_t md[4] = {1, include ? hw[0] + wn.pads[0] + wn.pads[1] : hw[0], include ? hw[1] + wn.pads[2] + wn.pads[3] : hw[1], 1};
    tide_attrs f = {0};
    f.dtype = x->dt;
    f.scalars[0] = 1;
    for (int k = 0; k < 4; k++) f.ints[k] = md[k];
    f.nints = 4;
    if (!st) st = onnx_run1(TIDE_OP_FILL, &f, 0, NULL, &t[3]);
    tide_attrs mp = {0};
    mp.ints[2] = include ? 0 : wn.pads[0], mp.ints[3] = (include ? 0 : wn.pads[1]) + extra[0];
    mp.ints[4] = include ? 0 : wn.pads[2], mp.ints[5] = (include ? 0 : wn.pads[3]) + extra[1];
    mp.nints = 8;
    const tide_tensor *q = &t[3];
    if (!st) st = onnx_run1(TIDE_OP_PAD, &mp, 1, &q, &t[4]);
    q = &t[4];
    if (!st) st = onnx_run1(TIDE_OP_AVG_POOL2D, &a, 1, &q, &t[5]);
    if (!st) st = onnx_binary(TIDE_OP_DIV, &t[2], &t[5], &t[6]);
    if (!st) {
      tide_tensor_release(&t[2]);
      st = tide_tensor_share(&t[2], &t[6]);
    }
  }
  if (!st) st = from_nhwc(&t[2], x->ndim, &out[0]);
  release_all(t, 8);
  return st;
}

/* GlobalAveragePool, GlobalMaxPool: over every spatial axis, kept. */
MAP(map_global_pool) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  if (x->ndim < 3) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s needs N, C and spatial dims (rank %d)", node->op_type, x->ndim);
  tide_attrs a = {0};
  for (int d = 2; d < x->ndim; d++) a.ints[d - 2] = d;
  a.nints = x->ndim - 2;
  a.flags = TIDE_ATTR_KEEPDIMS;
  return onnx_run1(strcmp(node->op_type, "GlobalMaxPool") ? TIDE_OP_MEAN : TIDE_OP_MAX, &a, 1, &x, &out[0]);
}

/* A per-channel vector [C] as [C, 1, ...] against an input of rank r (channels at axis 1). */
static tide_status per_channel(const tide_tensor *v, int r, tide_tensor *out) {
  int64_t dims[TIDE_MAX_DIMS];
  dims[0] = -1;
  for (int d = 1; d < r - 1; d++) dims[d] = 1;
  return onnx_reshape(v, r - 1 > 0 ? r - 1 : 1, dims, out);
}

/* BatchNormalization in inference: x * s + (bias - mean * s), s = scale / sqrt(var + eps). */
MAP(map_batch_norm) {
  UNUSED;
  if (onnx_attr_i(node, "training_mode", 0)) return TIDE_FAIL(TIDE_ERR_VALUE, "BatchNormalization in training mode is not mapped");
  const tide_tensor *v[5] = {NULL};
  tide_status st = TIDE_OK;
  for (int k = 0; !st && k < 5; k++) st = onnx_in(node, n_in, in, k, &v[k]);
  if (st) return st;
  const tide_tensor *x = v[0];
  if (x->ndim < 2) return TIDE_FAIL(TIDE_ERR_SHAPE, "BatchNormalization needs N and C (rank %d)", x->ndim);
  tide_tensor t[9] = {{0}};
  st = onnx_scalar(v[4]->dt, (double)(float)onnx_attr_f(node, "epsilon", 1e-5), &t[0]);
  if (!st) st = onnx_binary(TIDE_OP_ADD, v[4], &t[0], &t[1]);
  if (!st) st = onnx_unary(TIDE_OP_RSQRT, &t[1], &t[2]);
  if (!st) st = onnx_binary(TIDE_OP_MUL, v[1], &t[2], &t[3]);   /* s */
  if (!st) st = onnx_binary(TIDE_OP_MUL, v[3], &t[3], &t[4]);   /* mean * s */
  if (!st) st = onnx_binary(TIDE_OP_SUB, v[2], &t[4], &t[5]);   /* bias - mean * s */
  if (!st) st = per_channel(&t[3], x->ndim, &t[6]);
  if (!st) st = per_channel(&t[5], x->ndim, &t[7]);
  if (!st) st = onnx_binary(TIDE_OP_MUL, x, &t[6], &t[8]);
  if (!st) st = onnx_binary(TIDE_OP_ADD, &t[8], &t[7], &out[0]);
  release_all(t, 9);
  return st;
}

/* LayerNormalization (opset 17): over the axes from `axis` on; Mean and InvStdDev outputs too. */
MAP(map_layer_norm) {
  UNUSED;
  const tide_tensor *x = NULL, *scale = NULL, *bias = n_in > 2 ? in[2] : NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &scale);
  if (st) return st;
  if (x->ndim < 1) return TIDE_FAIL(TIDE_ERR_SHAPE, "LayerNormalization needs its input's rank");
  int ax = onnx_axis(onnx_attr_i(node, "axis", -1), x->ndim);
  if (ax < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "LayerNormalization's axis is out of range for rank %d", x->ndim);
  tide_attrs a = {0};
  for (int d = ax; d < x->ndim; d++) a.ints[d - ax] = d;
  a.nints = x->ndim - ax;
  a.flags = TIDE_ATTR_KEEPDIMS;
  tide_tensor t[8] = {{0}};
  st = onnx_run1(TIDE_OP_MEAN, &a, 1, &x, &t[0]);
  if (!st) st = onnx_binary(TIDE_OP_SUB, x, &t[0], &t[1]);
  if (!st) st = onnx_unary(TIDE_OP_SQUARE, &t[1], &t[2]);
  const tide_tensor *p = &t[2];
  if (!st) st = onnx_run1(TIDE_OP_MEAN, &a, 1, &p, &t[3]);
  if (!st) st = onnx_scalar(x->dt, (double)(float)onnx_attr_f(node, "epsilon", 1e-5), &t[4]);
  if (!st) st = onnx_binary(TIDE_OP_ADD, &t[3], &t[4], &t[5]);
  if (!st) st = onnx_unary(TIDE_OP_RSQRT, &t[5], &t[6]);       /* InvStdDev */
  if (!st) st = onnx_binary(TIDE_OP_MUL, &t[1], &t[6], &t[7]);
  tide_tensor y = {0};
  if (!st) st = onnx_binary(TIDE_OP_MUL, &t[7], scale, bias ? &y : &out[0]);
  if (!st && bias) st = onnx_binary(TIDE_OP_ADD, &y, bias, &out[0]);
  if (!st && n_out > 1) st = tide_tensor_share(&out[1], &t[0]);
  if (!st && n_out > 2) st = tide_tensor_share(&out[2], &t[6]);
  tide_tensor_release(&y);
  release_all(t, 8);
  return st;
}

static const onnx_op OPS[] = {
    {"Conv", map_conv},                 {"ConvTranspose", map_conv_transpose},
    {"MaxPool", map_pool},              {"AveragePool", map_pool},
    {"GlobalAveragePool", map_global_pool}, {"GlobalMaxPool", map_global_pool},
    {"BatchNormalization", map_batch_norm}, {"LayerNormalization", map_layer_norm},
};

const onnx_op *onnx_ops_nn_find(const char *name) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  return NULL;
}
