/* io/onnx_ops_resample.c — ONNX ops that read each output element from input elements at
 * positions known when the model loads: Pad's edge, reflect and wrap modes, and Resize's
 * modes past tide's two resize kernels (every coordinate transform, nearest rounding, linear, cubic).
 * Each is a composite of registry ops: per axis, Gathers of index lists computed at load,
 * weighted by constants (linear: 2 taps, cubic: 4), so gradients and every backend come free. */
#include "onnx_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An output axis may be this long at most: index and weight lists are made at load. */
#define RESAMPLE_MAX_LEN ((int64_t)1 << 26)

/* Scratch of n values of dtype dt as a tensor, not malloc: while a model loads, its storage is
 * charged to the load cap (load_cap.c), so a hostile size is refused before it is allocated. */
static tide_status scratch(int dt, int64_t n, tide_tensor *t) { return tide_tensor_init(t, dt, 1, &n); }

/* A new eager int64 list of n indices. */
static tide_status index_list(int64_t n, const int64_t *v, tide_tensor *out) {
  tide_status st = tide_tensor_init(out, TIDE_INT64, 1, &n);
  if (!st) memcpy(out->data, v, (size_t)n * sizeof *v);
  return st;
}

/* x gathered along axis by the n indices v (all within the axis). */
static tide_status gather_axis(const tide_tensor *x, int axis, int64_t n, const int64_t *v, tide_tensor *out) {
  tide_tensor idx = {0};
  tide_status st = index_list(n, v, &idx);
  tide_attrs a = {0};
  a.axis = axis;
  const tide_tensor *ins[2] = {x, &idx};
  if (!st) st = onnx_run1(TIDE_OP_GATHER, &a, 2, ins, out);
  tide_tensor_release(&idx);
  return st;
}

/* ---- Pad: edge, reflect, wrap ------------------------------------------------------- */

/* Where output position i (of before + n + after) reads from, in [0, n). */
static int64_t pad_source(int64_t i, int64_t before, int64_t n, int mode) {
  int64_t j = i - before;
  if (mode == ONNX_PAD_EDGE) return j < 0 ? 0 : j >= n ? n - 1 : j;
  if (mode == ONNX_PAD_WRAP) return ((j % n) + n) % n;
  if (n == 1) return 0; /* reflect: numpy's, the edge not repeated, as often as the pad needs */
  int64_t p = 2 * (n - 1);
  j = ((j % p) + p) % p;
  return j > n - 1 ? p - j : j;
}

tide_status onnx_pad_indexed(const tide_tensor *x, const int64_t *before, const int64_t *after, int mode, tide_tensor *out) {
  tide_tensor cur = {0};
  tide_status st = tide_tensor_share(&cur, x);
  for (int d = 0; !st && d < x->ndim; d++) {
    if (!before[d] && !after[d]) continue;
    int64_t n = x->dims[d];
    if (n < 0) return tide_tensor_release(&cur), TIDE_FAIL(TIDE_ERR_SHAPE, "Pad's edge, reflect and wrap modes need the "
                                                           "padded axes' sizes when the model loads (axis %d is not known)", d);
    if (n == 0) return tide_tensor_release(&cur), TIDE_FAIL(TIDE_ERR_SHAPE, "Pad of an empty axis (%d) in edge, reflect "
                                                            "or wrap mode has nothing to repeat", d);
    if (before[d] > RESAMPLE_MAX_LEN || after[d] > RESAMPLE_MAX_LEN || n > RESAMPLE_MAX_LEN ||
        before[d] + n + after[d] > RESAMPLE_MAX_LEN)
      return tide_tensor_release(&cur), TIDE_FAIL(TIDE_ERR_VALUE, "Pad of %" PRId64 " + %" PRId64 " + %" PRId64
                                                  " on axis %d (at most %" PRId64 ")", before[d], n, after[d], d, RESAMPLE_MAX_LEN);
    int64_t len = before[d] + n + after[d];
    tide_tensor v = {0}, next = {0};
    st = scratch(TIDE_INT64, len, &v);
    for (int64_t i = 0; !st && i < len; i++) ((int64_t *)v.data)[i] = pad_source(i, before[d], n, mode);
    if (!st) st = gather_axis(&cur, d, len, v.data, &next);
    tide_tensor_release(&v);
    tide_tensor_release(&cur);
    memset(&cur, 0, sizeof cur);
    if (!st) st = tide_tensor_share(&cur, &next); /* shared, never copied: a small header points into itself */
    tide_tensor_release(&next);
  }
  if (!st) st = tide_tensor_share(out, &cur);
  tide_tensor_release(&cur);
  return st;
}

/* ---- Resize ----------------------------------------------------------------------- */

enum { CT_HALF, CT_HALF_SYM, CT_PYTORCH_HALF, CT_ALIGN, CT_ASYM, CT_CROP };
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };
enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };

static bool attr_eq(const char *s, size_t n, const char *want) { return n == strlen(want) && !memcmp(s, want, n); }

/* ONNX's coordinate transform: output position x (of out) on the input axis (of in), scale = out / in
 * unless the model's scales say otherwise. */
static double source_coord(int ct, double x, int64_t in, int64_t out, double scale) {
  switch (ct) {
  case CT_HALF_SYM: {
    double adj = (double)out / (scale * (double)in), center = (double)in / 2;
    return center * (1 - adj) + (x + 0.5) / scale - 0.5;
  }
  case CT_PYTORCH_HALF: return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  case CT_ALIGN: return out == 1 ? 0 : x * (double)(in - 1) / (double)(out - 1);
  case CT_ASYM: return x / scale;
  default: return (x + 0.5) / scale - 0.5;
  }
}

static int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

static int64_t nearest_index(int nm, double c) {
  double f = floor(c);
  switch (nm) {
  case NM_FLOOR: return (int64_t)f;
  case NM_CEIL: return (int64_t)ceil(c);
  case NM_ROUND_CEIL: return c - f == 0.5 ? (int64_t)f + 1 : (int64_t)round(c);
  default: return c - f == 0.5 ? (int64_t)f : (int64_t)round(c);
  }
}

/* Keys' cubic convolution weights of the 4 taps at floor(c) - 1 .. floor(c) + 2 (t = c - floor(c)). */
static void cubic_weights(double A, double t, double w[4]) {
  double s[4] = {t + 1, t, 1 - t, 2 - t};
  for (int k = 0; k < 4; k++) {
    double d = s[k];
    w[k] = d <= 1 ? ((A + 2) * d - (A + 3)) * d * d + 1 : ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  }
}

typedef struct rs_plan {
  int mode, ct, nm;
  double cubic_a;
  bool exclude_outside;
} rs_plan;

/* The taps of one axis: idx[k * out + i] and w[k * out + i] for k < taps; false when the axis is left as it is. */
static bool axis_taps(const rs_plan *p, int64_t in, int64_t out, double scale, int taps, int64_t *idx, double *w) {
  bool identity = in == out;
  for (int64_t i = 0; i < out; i++) {
    double c = source_coord(p->ct, (double)i, in, out, scale);
    if (p->mode == RS_NEAREST) {
      idx[i] = clamp_index(nearest_index(p->nm, c), in);
      w[i] = 1;
      identity &= idx[i] == i;
      continue;
    }
    if (p->mode == RS_LINEAR) {
      c = c < 0 ? 0 : c > (double)(in - 1) ? (double)(in - 1) : c;
      double f = floor(c);
      idx[i] = clamp_index((int64_t)f, in), idx[out + i] = clamp_index((int64_t)f + 1, in);
      w[i] = 1 - (c - f), w[out + i] = c - f;
      identity &= idx[i] == i && w[out + i] == 0;
      continue;
    }
    double f = floor(c), cw[4], sum = 0;
    cubic_weights(p->cubic_a, c - f, cw);
    for (int k = 0; k < 4; k++) {
      int64_t j = (int64_t)f - 1 + k;
      if (p->exclude_outside && (j < 0 || j >= in)) cw[k] = 0;
      sum += cw[k];
      idx[k * out + i] = clamp_index(j, in);
    }
    for (int k = 0; k < 4; k++) w[k * out + i] = p->exclude_outside && sum != 0 ? cw[k] / sum : cw[k];
    identity &= idx[out + i] == i && w[out + i] == 1 && w[i] == 0 && w[2 * out + i] == 0 && w[3 * out + i] == 0;
  }
  (void)taps;
  return !identity;
}

/* The weights of tap k as a tensor of dtype dt shaped to broadcast along axis d of a rank-r value. */
static tide_status weight_tensor(const double *w, int64_t out, int d, int r, int dt, tide_tensor *res) {
  int64_t dims[TIDE_MAX_DIMS];
  for (int k = 0; k < r; k++) dims[k] = k == d ? out : 1;
  tide_tensor w64 = {0};
  tide_status st = tide_tensor_init(&w64, TIDE_FLOAT64, r, dims);
  if (st) return st;
  memcpy(w64.data, w, (size_t)out * sizeof *w);
  tide_attrs a = {0};
  a.dtype = dt;
  const tide_tensor *ins[1] = {&w64};
  st = dt == TIDE_FLOAT64 ? tide_tensor_share(res, &w64) : onnx_run1(TIDE_OP_CAST, &a, 1, ins, res);
  tide_tensor_release(&w64);
  return st;
}

/* cur resampled along axis d to out positions: sum over taps of Gather(cur, idx_k) * w_k. */
static tide_status resample_axis(const rs_plan *p, const tide_tensor *cur, int d, int64_t out, double scale, tide_tensor *res) {
  int64_t in = cur->dims[d];
  int taps = p->mode == RS_NEAREST ? 1 : p->mode == RS_LINEAR ? 2 : 4;
  tide_tensor ti = {0}, tw = {0};
  tide_status st = scratch(TIDE_INT64, taps * out, &ti);
  if (!st) st = scratch(TIDE_FLOAT64, taps * out, &tw);
  if (st) return tide_tensor_release(&ti), st;
  int64_t *idx = ti.data;
  double *w = tw.data;
  if (!axis_taps(p, in, out, scale, taps, idx, w)) st = tide_tensor_share(res, cur);
  else if (taps == 1) st = gather_axis(cur, d, out, idx, res);
  else {
    tide_tensor acc = {0};
    for (int k = 0; !st && k < taps; k++) {
      tide_tensor g = {0}, wt = {0}, term = {0};
      st = gather_axis(cur, d, out, idx + k * out, &g);
      if (!st) st = weight_tensor(w + k * out, out, d, cur->ndim, cur->dt, &wt);
      if (!st) st = onnx_binary(TIDE_OP_MUL, &g, &wt, k ? &term : &acc);
      if (!st && k) {
        tide_tensor sum = {0};
        st = onnx_binary(TIDE_OP_ADD, &acc, &term, &sum);
        tide_tensor_release(&acc);
        memset(&acc, 0, sizeof acc);
        if (!st) st = tide_tensor_share(&acc, &sum);
        tide_tensor_release(&sum);
      }
      tide_tensor_release(&g), tide_tensor_release(&wt), tide_tensor_release(&term);
    }
    if (!st) st = tide_tensor_share(res, &acc);
    tide_tensor_release(&acc);
  }
  tide_tensor_release(&ti), tide_tensor_release(&tw);
  return st;
}

/* Whether tide's nearest kernel (TF2's: floor((i + 0.5) * in / out)) picks what ONNX's rule does
 * on an axis: at whole-number upscales most rules do, but not all (half_pixel with floor, asymmetric
 * rounding at x3), so the lists are compared. */
static bool kernel_nearest_agrees(const rs_plan *p, int64_t in, int64_t out, double scale) {
  if (in <= 0 || out > RESAMPLE_MAX_LEN) return false;
  for (int64_t i = 0; i < out; i++) {
    int64_t k = clamp_index((int64_t)floor(((double)i + 0.5) * (double)in / (double)out), in);
    if (clamp_index(nearest_index(p->nm, source_coord(p->ct, (double)i, in, out, scale)), in) != k) return false;
  }
  return true;
}

static const int64_t TO_NHWC[4] = {0, 2, 3, 1}, TO_NCHW[4] = {0, 3, 1, 2};

/* tide's own resize kernel on the NHWC view of an NCHW image. */
static tide_status resize_kernel(int op, const tide_tensor *x, int64_t oh, int64_t ow, tide_tensor *out) {
  tide_tensor t[2] = {{0}};
  tide_attrs a = {0};
  a.ints[0] = oh, a.ints[1] = ow, a.nints = 2;
  a.dtype = x->dt;
  tide_status st = onnx_transpose(x, 4, TO_NHWC, &t[0]);
  const tide_tensor *p = &t[0];
  if (!st) st = onnx_run1(op, &a, 1, &p, &t[1]);
  if (!st) st = onnx_transpose(&t[1], 4, TO_NCHW, out);
  tide_tensor_release(&t[0]), tide_tensor_release(&t[1]);
  return st;
}

/* Resize (opsets 11 to 21) of any rank, on the axes whose sizes are known: the output sizes from
 * `sizes` or floor(in * scale); linear with half_pixel on NCHW images is tide's bilinear kernel
 * (TF2's), nearest at whole-number upscales its nearest kernel; the rest Gathers (above). */
static tide_status map_resize(onnx_import *im, const Onnx__NodeProto *node, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *out) {
  (void)im, (void)n_out;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  int r = x->ndim;
  if (r < 1) return TIDE_FAIL(TIDE_ERR_SHAPE, "Resize needs its input's rank (and it must be 1 or more)");
  size_t ml, cl, nl;
  const char *mode = onnx_attr_s(node, "mode", &ml), *ct = onnx_attr_s(node, "coordinate_transformation_mode", &cl);
  const char *nm = onnx_attr_s(node, "nearest_mode", &nl);
  rs_plan p = {.cubic_a = onnx_attr_f(node, "cubic_coeff_a", -0.75), .exclude_outside = onnx_attr_i(node, "exclude_outside", 0) != 0};
  p.mode = !ml || attr_eq(mode, ml, "nearest") ? RS_NEAREST : attr_eq(mode, ml, "linear") ? RS_LINEAR
           : attr_eq(mode, ml, "cubic") ? RS_CUBIC : -1;
  if (p.mode < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's mode '%.*s' is not one of nearest, linear, cubic", (int)ml, mode);
  p.ct = !cl || attr_eq(ct, cl, "half_pixel") ? CT_HALF : attr_eq(ct, cl, "half_pixel_symmetric") ? CT_HALF_SYM
         : attr_eq(ct, cl, "pytorch_half_pixel") ? CT_PYTORCH_HALF : attr_eq(ct, cl, "align_corners") ? CT_ALIGN
         : attr_eq(ct, cl, "asymmetric") ? CT_ASYM : attr_eq(ct, cl, "tf_crop_and_resize") ? CT_CROP : -1;
  if (p.ct < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's coordinate_transformation_mode '%.*s' is not ONNX's", (int)cl, ct);
  if (p.ct == CT_CROP) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's coordinate_transformation_mode tf_crop_and_resize is not mapped");
  p.nm = !nl || attr_eq(nm, nl, "round_prefer_floor") ? NM_ROUND_FLOOR : attr_eq(nm, nl, "round_prefer_ceil") ? NM_ROUND_CEIL
         : attr_eq(nm, nl, "floor") ? NM_FLOOR : attr_eq(nm, nl, "ceil") ? NM_CEIL : -1;
  if (p.nm < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's nearest_mode '%.*s' is not ONNX's", (int)nl, nm);
  size_t kl;
  const char *keep = onnx_attr_s(node, "keep_aspect_ratio_policy", &kl);
  if (kl && !attr_eq(keep, kl, "stretch"))
    return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's keep_aspect_ratio_policy %.*s is not mapped (stretch is)", (int)kl, keep);
  /* the axes resized (opset 18's axes attribute; all by default) */
  int64_t ax[TIDE_MAX_DIMS];
  int nax = -1;
  st = onnx_attr_ints(node, "axes", ax, TIDE_MAX_DIMS, &nax);
  if (st) return st;
  if (nax < 0) {
    nax = r;
    for (int d = 0; d < r; d++) ax[d] = d;
  }
  for (int k = 0; k < nax; k++)
    if ((ax[k] = onnx_axis(ax[k], r)) < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's axes are out of range for rank %d", r);
  const tide_tensor *scales = n_in > 2 && in[2] && in[2]->nelem > 0 ? in[2] : NULL;
  const tide_tensor *sizes = n_in > 3 && in[3] && in[3]->nelem > 0 ? in[3] : NULL;
  int64_t osz[TIDE_MAX_DIMS];
  double scl[TIDE_MAX_DIMS];
  for (int d = 0; d < r; d++) osz[d] = x->dims[d], scl[d] = 1;
  if (sizes) {
    int64_t v[TIDE_MAX_DIMS];
    int n;
    st = onnx_known_ints(sizes, "sizes", v, TIDE_MAX_DIMS, &n);
    if (st) return st;
    if (n != nax) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize has %d sizes for %d axes", n, nax);
    for (int k = 0; k < nax; k++) osz[ax[k]] = v[k];
  } else if (scales) {
    if (!onnx_known(scales) || scales->nelem != nax)
      return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's scales must be %d values known when the model loads", nax);
    for (int k = 0; k < nax; k++) {
      double s = onnx_number_at(scales, k);
      if (!(s > 0 && s < 1 << 30)) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's scale %g is not a positive size factor", s);
      scl[ax[k]] = s;
      if (x->dims[ax[k]] >= 0) {
        double o = floor((double)x->dims[ax[k]] * s);
        if (!(o < (double)RESAMPLE_MAX_LEN)) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize's scale %g gives %g positions", s, o);
        osz[ax[k]] = (int64_t)o;
      } else if (s != 1)
        return TIDE_FAIL(TIDE_ERR_SHAPE, "Resize needs the size of each axis it resizes when the model loads (axis %d is not known)", (int)ax[k]);
    }
  } else return TIDE_FAIL(TIDE_ERR_VALUE, "Resize needs scales or sizes");
  for (int d = 0; d < r; d++) {
    if (osz[d] == x->dims[d] && (scales ? scl[d] == 1 : 1)) continue;
    if (x->dims[d] < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Resize needs the size of each axis it resizes when the model loads (axis %d is not known)", d);
    if (osz[d] < 1 || osz[d] > RESAMPLE_MAX_LEN || x->dims[d] == 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "Resize of axis %d from %" PRId64 " to %" PRId64 " positions", d, x->dims[d], osz[d]);
    if (!scales) scl[d] = (double)osz[d] / (double)x->dims[d];
  }
  if (onnx_attr_i(node, "antialias", 0) && p.mode != RS_NEAREST)
    for (int d = 0; d < r; d++)
      if (scl[d] < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "Resize with antialias when it shrinks (axis %d) is not mapped", d);
  if (p.mode != RS_NEAREST && x->dt != TIDE_FLOAT32 && x->dt != TIDE_FLOAT64 && x->dt != TIDE_FLOAT16 && x->dt != TIDE_BFLOAT16)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "Resize in %s mode takes floating-point images, not %s", p.mode == RS_LINEAR ? "linear" : "cubic",
                     tide_dtype_name(x->dt));
  /* tide's kernels where they compute exactly ONNX's: NCHW, only H and W, scales the sizes' ratios */
  bool hw_only = r == 4 && osz[0] == x->dims[0] && osz[1] == x->dims[1] && scl[0] == 1 && scl[1] == 1;
  bool exact_scale = !scales || (scl[2] == (double)osz[2] / (double)x->dims[2] && scl[3] == (double)osz[3] / (double)x->dims[3]);
  if (hw_only && exact_scale && p.mode == RS_LINEAR && (p.ct == CT_HALF || (p.ct == CT_PYTORCH_HALF && osz[2] > 1 && osz[3] > 1)))
    return resize_kernel(TIDE_OP_RESIZE_BILINEAR, x, osz[2], osz[3], &out[0]);
  if (hw_only && p.mode == RS_NEAREST && kernel_nearest_agrees(&p, x->dims[2], osz[2], scl[2]) &&
      kernel_nearest_agrees(&p, x->dims[3], osz[3], scl[3]))
    return resize_kernel(TIDE_OP_RESIZE_NEAREST, x, osz[2], osz[3], &out[0]);
  tide_tensor cur = {0};
  st = tide_tensor_share(&cur, x);
  for (int d = 0; !st && d < r; d++) {
    if (osz[d] == x->dims[d] && scl[d] == 1) continue; /* every transform is the identity there */
    if (x->dims[d] < 0) continue; /* an unknown axis kept as it is (scale 1) */
    tide_tensor next = {0};
    st = resample_axis(&p, &cur, d, osz[d], scl[d], &next);
    tide_tensor_release(&cur);
    memset(&cur, 0, sizeof cur);
    if (!st) st = tide_tensor_share(&cur, &next);
    tide_tensor_release(&next);
  }
  if (!st) st = tide_tensor_share(&out[0], &cur);
  tide_tensor_release(&cur);
  return st;
}

static const onnx_op OPS[] = {
    {"Resize", map_resize},
};

const onnx_op *onnx_ops_resample_find(const char *name) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  return NULL;
}
