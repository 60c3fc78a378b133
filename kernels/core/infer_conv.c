/* core/infer_conv.c — dtype and shape inference for conv2d, depthwise_conv2d,
 * their backprop ops and 2-D pooling: TF's output sizes and SAME padding rule. */
#include "conv.h"
#include "infer_rank.h"
#include "unknown_dims.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Window sizes, strides, dilations, pads and image heights/widths stay within
 * int32 (TF's kernels require the same), so the window arithmetic below
 * ((k - 1) * d + 1, in + pads, out * s) cannot overflow int64. */
#define WIN_MAX INT32_MAX

/* An error naming `what` when a or b is above WIN_MAX. */
static tide_status check_max2(const char *op, const char *what, int64_t a, int64_t b) {
  if (a <= WIN_MAX && b <= WIN_MAX) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s must be at most %d, got [%lld, %lld]", op, what, WIN_MAX, (long long)a,
                   (long long)b);
}

static const char *pad_name(int64_t m) {
  return m == TIDE_PAD_VALID ? "VALID" : m == TIDE_PAD_SAME ? "SAME" : "EXPLICIT";
}

/* TF's output size along one dim (tensorflow/core/framework/kernel_shape_util.cc):
 * SAME: out = ceil(in / s), pad_total = max((out - 1) * s + keff - in, 0), before = total / 2;
 * VALID and EXPLICIT: out = (in + pads - keff + s) / s, in C's division that
 * rounds towards 0: a window larger than the padded input by less than two
 * strides gives 0 (an empty result), a larger one a negative size, which TF
 * refuses. Returns -2 for that, -1 (unknown) when the size needs an unknown
 * input or window size (SAME needs only the input's). */
static int64_t window_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t mode, int64_t *before,
                          int64_t *after) {
  int64_t keff = (k - 1) * d + 1;
  if (TIDE_UNLIKELY(in < 0 || k < 0)) {
    *before = *after = 0; /* pads are known only with both sizes */
    return mode == TIDE_PAD_SAME && in >= 0 ? (in + s - 1) / s : -1;
  }
  if (mode == TIDE_PAD_SAME) {
    int64_t out = (in + s - 1) / s;
    int64_t total = (out - 1) * s + keff - in;
    if (total < 0) total = 0;
    *before = total / 2;
    *after = total - *before;
    return out;
  }
  if (mode == TIDE_PAD_VALID) *before = *after = 0;
  int64_t out = (in + *before + *after - keff + s) / s;
  return out < 0 ? -2 : out;
}

/* Fill g's output dims and pads by `mode`; an error (naming op and `shapes`) when the window does not fit. */
static tide_status finish_geometry(const char *op, int64_t mode, tide_conv_geom *g, const char *shapes) {
  int64_t ph = g->pt, pph = g->pb, pw = g->pl, ppw = g->pr;
  int64_t oh = window_dim(g->h, g->kh, g->sh, g->dh, mode, &ph, &pph);
  int64_t ow = window_dim(g->w, g->kw, g->sw, g->dw, mode, &pw, &ppw);
  if (oh < -1 || ow < -1) {
    return TIDE_FAIL(TIDE_ERR_SHAPE,
                     "%s: the window (%lldx%lld, dilations %lldx%lld: %lldx%lld effective) is larger than the "
                     "padded input (%lldx%lld) by two strides or more, so the output size would be negative "
                     "(%s, padding %s)",
                     op, (long long)g->kh, (long long)g->kw, (long long)g->dh, (long long)g->dw,
                     (long long)((g->kh - 1) * g->dh + 1), (long long)((g->kw - 1) * g->dw + 1),
                     (long long)(g->h + ph + pph), (long long)(g->w + pw + ppw), shapes, pad_name(mode));
  }
  g->oh = oh, g->ow = ow;
  g->pt = ph, g->pb = pph, g->pl = pw, g->pr = ppw;
  return TIDE_OK;
}

tide_status tide_conv_geometry(const char *op, const tide_attrs *a, const int64_t *x, const int64_t *f,
                               bool depthwise, tide_conv_geom *g) {
  char sx[128], sf[128], shapes[300];
  snprintf(shapes, sizeof shapes, "input shape %s, filter shape %s", tide_fmt_dims(sx, sizeof sx, 4, x),
           tide_fmt_dims(sf, sizeof sf, 4, f));
  memset(g, 0, sizeof *g);
  g->n = x[0], g->h = x[1], g->w = x[2], g->c = x[3];
  g->kh = f[0], g->kw = f[1];
  int64_t mode = a->nints ? a->m : TIDE_PAD_VALID;
  /* Zero attrs (a C caller's default) mean strides and dilations of 1, VALID. */
  g->sh = g->sw = g->dh = g->dw = 1;
  if (a->nints) {
    g->sh = a->ints[0], g->sw = a->ints[1], g->dh = a->ints[2], g->dw = a->ints[3];
    g->pt = a->ints[4], g->pb = a->ints[5], g->pl = a->ints[6], g->pr = a->ints[7];
  }
  if (g->sh < 1 || g->sw < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: strides must be positive, got [%lld, %lld]", op, (long long)g->sh,
                     (long long)g->sw);
  if (g->dh < 1 || g->dw < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: dilations must be positive, got [%lld, %lld]", op, (long long)g->dh,
                     (long long)g->dw);
  if (mode < TIDE_PAD_VALID || mode > TIDE_PAD_EXPLICIT)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: padding mode must be 0 (VALID), 1 (SAME) or 2 (EXPLICIT), got %lld", op,
                     (long long)mode);
  if (mode == TIDE_PAD_EXPLICIT && (g->pt < 0 || g->pb < 0 || g->pl < 0 || g->pr < 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: explicit paddings must be non-negative, got [[%lld, %lld], [%lld, %lld]]",
                     op, (long long)g->pt, (long long)g->pb, (long long)g->pl, (long long)g->pr);
  if (mode != TIDE_PAD_EXPLICIT) g->pt = g->pb = g->pl = g->pr = 0;
  tide_status st = check_max2(op, "strides", g->sh, g->sw);
  if (!st) st = check_max2(op, "dilations", g->dh, g->dw);
  if (st) return st;
  if (g->pt > WIN_MAX || g->pb > WIN_MAX || g->pl > WIN_MAX || g->pr > WIN_MAX)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: explicit paddings must be at most %d, got [[%lld, %lld], [%lld, %lld]]", op,
                     WIN_MAX, (long long)g->pt, (long long)g->pb, (long long)g->pl, (long long)g->pr);
  /* -1 is an unknown dim (a traced graph's None): the sizes it decides are
   * unknown too, and the checks it takes part in wait for the graph's run. */
  for (int i = 0; i < 4; i++)
    if (x[i] < -1 || f[i] < -1) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: negative dimension (%s)", op, shapes);
  if (x[1] > WIN_MAX || x[2] > WIN_MAX || f[0] > WIN_MAX || f[1] > WIN_MAX)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the height and width must be at most %d (%s)", op, WIN_MAX, shapes);
  if (g->kh == 0 || g->kw == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the filter's height and width must be positive (%s)", op, shapes);
  if (!tide_dims_agree(f[2], g->c))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the input has %lld channel(s) but the filters expect %lld (%s)", op,
                     (long long)g->c, (long long)f[2], shapes);
  g->c = tide_dim_merge(g->c, f[2]);
  if (depthwise) g->mult = f[3], tide_dim_mul(g->c, f[3], &g->oc); /* c * mult fits: both are dims of real tensors */
  else g->mult = 1, g->oc = f[3];
  return finish_geometry(op, mode, g, shapes);
}

tide_status tide_pool_geometry(const char *op, const tide_attrs *a, const int64_t *x, tide_conv_geom *g) {
  char sx[128], shapes[160];
  snprintf(shapes, sizeof shapes, "input shape %s", tide_fmt_dims(sx, sizeof sx, 4, x));
  memset(g, 0, sizeof *g);
  g->n = x[0], g->h = x[1], g->w = x[2], g->c = x[3];
  g->kh = a->ints[0], g->kw = a->ints[1], g->sh = a->ints[2], g->sw = a->ints[3];
  g->dh = g->dw = g->mult = 1;
  g->oc = g->c;
  if (g->kh < 1 || g->kw < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: ksize must be positive, got [%lld, %lld]", op, (long long)g->kh,
                     (long long)g->kw);
  if (g->sh < 1 || g->sw < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: strides must be positive, got [%lld, %lld]", op, (long long)g->sh,
                     (long long)g->sw);
  tide_status st = check_max2(op, "ksize", g->kh, g->kw);
  if (!st) st = check_max2(op, "strides", g->sh, g->sw);
  if (st) return st;
  if (a->m != TIDE_PAD_VALID && a->m != TIDE_PAD_SAME)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: padding mode must be 0 (VALID) or 1 (SAME), got %lld", op, (long long)a->m);
  for (int i = 0; i < 4; i++) /* -1: unknown, as in tide_conv_geometry */
    if (x[i] < -1) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: negative dimension (%s)", op, shapes);
  if (x[1] > WIN_MAX || x[2] > WIN_MAX)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the height and width must be at most %d (%s)", op, WIN_MAX, shapes);
  return finish_geometry(op, a->m, g, shapes);
}

/* ---- checks shared by the rows ------------------------------------------------------- */

static tide_status check_rank4(const tide_op_def *def, const tide_tensor *t, const char *what, const char *layout) {
  if (t->ndim == 4) return TIDE_OK;
  char s[128];
  return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must be 4-D %s, got shape %s", def->name, what, layout,
                   TIDE_SHAPE_STR(s, t));
}

/* Both inputs float and of one dtype. */
static tide_status check_pair(const tide_op_def *def, const tide_tensor *a, const char *an, const tide_tensor *b,
                              const char *bn) {
  tide_status st = tide_check_dtype(def, a, an);
  if (st) return st;
  st = tide_check_dtype(def, b, bn);
  if (st) return st;
  if (a->dt != b->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: dtype mismatch: %s is %s but %s is %s (convert one with :cast(\"%s\"))",
                     def->name, an, tide_dtype_name(a->dt), bn, tide_dtype_name(b->dt), tide_dtype_name(a->dt));
  return TIDE_OK;
}

/* The shape a backprop op produces (attrs ints[8..11]), checked. A third
 * input, when given, holds it as a tensor (TF's input_sizes / filter_sizes:
 * a traced tide.shape(x) read when the graph runs); then ints[8..11] are what
 * the trace knew of it, -1 for a None dim (tide_shape_input's rule). */
static tide_status produced_shape(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  const char *what, int64_t *dims) {
  if (a->nints < 12)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the %s shape (attrs ints[8..11]) is missing", def->name, what);
  for (int i = 0; i < 4; i++) dims[i] = a->ints[8 + i];
  if (n_in > def->n_in) {
    tide_attrs known = {.nints = 4}, buf;
    const tide_attrs *use;
    bool unknown;
    for (int i = 0; i < 4; i++) known.ints[i] = dims[i];
    tide_status st = tide_shape_input(def, &known, n_in, in, &buf, &use, &unknown);
    if (st) return st;
    if (use->nints != 4)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the %s shape tensor must have 4 entries, got %d", def->name, what,
                       use->nints);
    for (int i = 0; i < 4; i++) dims[i] = use->ints[i];
    if (unknown) return TIDE_OK; /* -1: known when the graph runs */
  }
  for (int i = 0; i < 4; i++)
    if (dims[i] < 0) { /* all four read first: the message prints the whole shape */
      char s[128];
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the %s shape %s has a negative dimension", def->name, what,
                       tide_fmt_dims(s, sizeof s, 4, dims));
    }
  return TIDE_OK;
}

/* out_backprop must have the forward output's shape (an unknown dim agrees with any). */
static tide_status check_dy(const tide_op_def *def, const tide_tensor *dy, const tide_conv_geom *g,
                            const char *forward) {
  int64_t want[4] = {g->n, g->oh, g->ow, g->oc};
  for (int i = 0; i < 4; i++)
    if (!tide_dims_agree(dy->dims[i], want[i])) {
      char s1[128], s2[128];
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: out_backprop has shape %s but the %s gives %s", def->name,
                       TIDE_SHAPE_STR(s1, dy), forward, tide_fmt_dims(s2, sizeof s2, 4, want));
    }
  return TIDE_OK;
}

static tide_status set_out(const tide_op_def *def, tide_tensor *o, int dt, const int64_t *dims) {
  tide_tensor_set_contiguous_layout(o, dt, 4, dims);
  if (o->nelem < 0 && !tide_dims_any_unknown(4, dims))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result is too large", def->name);
  return TIDE_OK;
}

#define IMAGE "[batch, height, width, channels]"
#define FILTER "[height, width, in_channels, out_channels]"
#define DW_FILTER "[height, width, in_channels, channel_multiplier]"

/* conv2d / depthwise_conv2d: (input, filters) -> output. */
static tide_status infer_forward(const tide_op_def *def, const tide_attrs *a, const tide_tensor *const *in,
                                 tide_tensor *const *out, bool dw) {
  const tide_tensor *x = in[0], *f = in[1];
  tide_status st = check_pair(def, x, "input", f, "filters");
  if (!st) st = check_rank4(def, x, "input", IMAGE);
  if (!st) st = check_rank4(def, f, "filters", dw ? DW_FILTER : FILTER);
  tide_conv_geom g;
  if (!st) st = tide_conv_geometry(def->name, a, x->dims, f->dims, dw, &g);
  if (st) return st;
  int64_t dims[4] = {g.n, g.oh, g.ow, g.oc};
  return set_out(def, out[0], x->dt, dims);
}

/* *_backprop_input: (out_backprop, filters[, input shape]) -> d input, shaped by attrs (or that input). */
static tide_status infer_bp_input(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                                  tide_tensor *const *out, bool dw) {
  const tide_tensor *dy = in[0], *f = in[1];
  tide_status st = check_pair(def, dy, "out_backprop", f, "filters");
  if (!st) st = check_rank4(def, dy, "out_backprop", IMAGE);
  if (!st) st = check_rank4(def, f, "filters", dw ? DW_FILTER : FILTER);
  int64_t xd[4];
  if (!st) st = produced_shape(def, a, ni, in, "input", xd);
  tide_conv_geom g;
  if (!st) st = tide_conv_geometry(def->name, a, xd, f->dims, dw, &g);
  if (!st) st = check_dy(def, dy, &g, "convolution of that input with these filters");
  return st ? st : set_out(def, out[0], dy->dt, xd);
}

/* *_backprop_filter: (input, out_backprop[, filter shape]) -> d filters, shaped by attrs (or that input). */
static tide_status infer_bp_filter(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                                   tide_tensor *const *out, bool dw) {
  const tide_tensor *x = in[0], *dy = in[1];
  tide_status st = check_pair(def, x, "input", dy, "out_backprop");
  if (!st) st = check_rank4(def, x, "input", IMAGE);
  if (!st) st = check_rank4(def, dy, "out_backprop", IMAGE);
  int64_t fd[4];
  if (!st) st = produced_shape(def, a, ni, in, "filter", fd);
  tide_conv_geom g;
  if (!st) st = tide_conv_geometry(def->name, a, x->dims, fd, dw, &g);
  if (!st) st = check_dy(def, dy, &g, "convolution of this input with filters of that shape");
  return st ? st : set_out(def, out[0], x->dt, fd);
}

tide_status tide_infer_conv2d(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                              int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return infer_forward(def, a, in, out, false);
}

tide_status tide_infer_conv2d_bp_input(const tide_op_def *def, const tide_attrs *a, int ni,
                                       const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(no);
  return infer_bp_input(def, a, ni, in, out, false);
}

tide_status tide_infer_conv2d_bp_filter(const tide_op_def *def, const tide_attrs *a, int ni,
                                        const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(no);
  return infer_bp_filter(def, a, ni, in, out, false);
}

tide_status tide_infer_depthwise(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                                 int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return infer_forward(def, a, in, out, true);
}

tide_status tide_infer_depthwise_bp_input(const tide_op_def *def, const tide_attrs *a, int ni,
                                          const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(no);
  return infer_bp_input(def, a, ni, in, out, true);
}

tide_status tide_infer_depthwise_bp_filter(const tide_op_def *def, const tide_attrs *a, int ni,
                                           const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(no);
  return infer_bp_filter(def, a, ni, in, out, true);
}

/* ---- pooling ------------------------------------------------------------------------- */

tide_status tide_infer_pool2d(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                              int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (!st) st = check_rank4(def, x, "input", IMAGE);
  tide_conv_geom g;
  if (!st) st = tide_pool_geometry(def->name, a, x->dims, &g);
  if (st) return st;
  int64_t dims[4] = {g.n, g.oh, g.ow, g.c};
  return set_out(def, out[0], x->dt, dims);
}

/* max_pool2d_grad (input, output, out_backprop); avg_pool2d_grad (input, out_backprop). */
tide_status tide_infer_pool2d_grad(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                                   int no, tide_tensor *const *out) {
  TIDE_UNUSED(no);
  const tide_tensor *x = in[0], *dy = in[ni - 1];
  tide_status st = check_pair(def, x, "input", dy, "out_backprop");
  if (!st && ni == 3) st = check_pair(def, x, "input", in[1], "output");
  if (!st) st = check_rank4(def, x, "input", IMAGE);
  if (!st) st = check_rank4(def, dy, "out_backprop", IMAGE);
  if (!st && ni == 3) st = check_rank4(def, in[1], "output", IMAGE);
  tide_conv_geom g;
  if (!st) st = tide_pool_geometry(def->name, a, x->dims, &g);
  if (!st) st = check_dy(def, dy, &g, "pooling of that input");
  if (!st && ni == 3) {
    int64_t want[4] = {g.n, g.oh, g.ow, g.c};
    for (int i = 0; i < 4 && !st; i++)
      if (!tide_dims_agree(in[1]->dims[i], want[i])) {
        char s1[128], s2[128];
        st = TIDE_FAIL(TIDE_ERR_SHAPE, "%s: output has shape %s but the pooling of that input gives %s", def->name,
                       TIDE_SHAPE_STR(s1, in[1]), tide_fmt_dims(s2, sizeof s2, 4, want));
      }
  }
  return st ? st : set_out(def, out[0], x->dt, x->dims);
}

/* max_pool2d_grad_grad (input, output, grad): grad has the input's shape and
 * the result the output's (the pooling of that input). An unknown dim takes
 * what the other operands know. */
tide_status tide_infer_max_pool2d_grad_grad(const tide_op_def *def, const tide_attrs *a, int ni,
                                            const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  const tide_tensor *x = in[0], *y = in[1], *gx = in[2];
  tide_status st = check_pair(def, x, "input", y, "output");
  if (!st) st = check_pair(def, x, "input", gx, "grad");
  if (!st) st = check_rank4(def, x, "input", IMAGE);
  if (!st) st = check_rank4(def, y, "output", IMAGE);
  if (!st) st = check_rank4(def, gx, "grad", IMAGE);
  if (st) return st;
  char s1[128], s2[128];
  int64_t xd[4];
  for (int i = 0; i < 4; i++) {
    if (!tide_dims_agree(gx->dims[i], x->dims[i]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: grad has shape %s but must have the input's shape %s", def->name,
                       TIDE_SHAPE_STR(s1, gx), TIDE_SHAPE_STR(s2, x));
    xd[i] = tide_dim_merge(x->dims[i], gx->dims[i]);
  }
  tide_conv_geom g;
  st = tide_pool_geometry(def->name, a, xd, &g);
  if (st) return st;
  int64_t yd[4] = {g.n, g.oh, g.ow, g.c};
  for (int i = 0; i < 4; i++) {
    if (!tide_dims_agree(y->dims[i], yd[i]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: output has shape %s but the pooling of that input gives %s", def->name,
                       TIDE_SHAPE_STR(s1, y), tide_fmt_dims(s2, sizeof s2, 4, yd));
    yd[i] = tide_dim_merge(yd[i], y->dims[i]);
  }
  return set_out(def, out[0], x->dt, yd);
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* NHWC images and HWIO filters: rank 4 is the only one. */
static int image_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 4;
}
const tide_rank_rule tide_infer_conv2d_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_conv2d_bp_input_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_conv2d_bp_filter_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_depthwise_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_depthwise_bp_input_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_depthwise_bp_filter_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_pool2d_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_pool2d_grad_rank = {image_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_max_pool2d_grad_grad_rank = {image_rank, tide_rank_keeps, NULL};
