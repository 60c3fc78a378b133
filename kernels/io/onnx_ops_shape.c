/* io/onnx_ops_shape.c — ONNX's shape ops mapped onto tide's: Reshape, Flatten,
 * Transpose, Squeeze/Unsqueeze, Concat, Split, Slice, Gather, Expand, Tile, Pad,
 * Shape, Size, ConstantOfShape, Range, Constant. Shapes, axes and starts come from
 * attributes or from inputs known when the model loads. */
#include "onnx_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAP(fn) static tide_status fn(onnx_import *im, const Onnx__NodeProto *node, int n_in, \
                                      const tide_tensor *const *in, int n_out, tide_tensor *out)
#define UNUSED (void)im, (void)node, (void)n_in, (void)in, (void)n_out, (void)out
enum { BIG = 1 << 30 }; /* an index past this is "to the end" (ONNX writes INT64_MAX) */

static bool dims_known(const tide_tensor *x) {
  if (x->ndim < 0) return false;
  for (int d = 0; d < x->ndim; d++)
    if (x->dims[d] < 0) return false;
  return true;
}

/* Reshape: a 0 keeps the input's dim (unless allowzero); the shape may be computed at run time. */
MAP(map_reshape) {
  UNUSED;
  const tide_tensor *x = NULL, *s = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &s);
  if (st) return st;
  bool allowzero = onnx_attr_i(node, "allowzero", 0) != 0;
  if (onnx_known(s)) {
    int64_t dims[TIDE_MAX_DIMS];
    int n = 0;
    st = onnx_known_ints(s, "shape", dims, TIDE_MAX_DIMS, &n);
    if (st) return st;
    for (int d = 0; d < n && !allowzero; d++) {
      if (dims[d] != 0) continue;
      if (d >= x->ndim) return TIDE_FAIL(TIDE_ERR_SHAPE, "its shape keeps dim %d of an input of rank %d", d, x->ndim);
      dims[d] = x->dims[d];
      if (dims[d] < 0) goto dynamic; /* an unknown dim kept: the shape is made at run time */
    }
    return onnx_reshape(x, n, dims, &out[0]);
  }
dynamic:;
  /* a run-time shape: 0 entries take shape(x)'s (where rank allows) */
  tide_tensor sx = {0}, head = {0}, z = {0}, zero = {0}, s64 = {0}, sh = {0};
  tide_attrs c = {0};
  c.dtype = TIDE_INT64;
  st = onnx_run1(TIDE_OP_CAST, &c, 1, &s, &s64);
  int64_t n = s->ndim == 1 ? s->dims[0] : -1;
  if (!st && !allowzero && n >= 0 && x->ndim >= n) {
    tide_attrs sa = {0}, sl = {0};
    sa.dtype = TIDE_INT64;
    st = onnx_run1(TIDE_OP_SHAPE, &sa, 1, &x, &sx);
    sl.ints[0] = 0, sl.ints[1] = n, sl.ints[2] = 1, sl.nints = 3;
    const tide_tensor *p = &sx;
    if (!st) st = onnx_run1(TIDE_OP_SLICE, &sl, 1, &p, &head);
    if (!st) st = onnx_scalar(TIDE_INT64, 0, &zero);
    if (!st) st = onnx_binary(TIDE_OP_EQUAL, &s64, &zero, &z);
    const tide_tensor *w[3] = {&z, &head, &s64};
    if (!st) st = onnx_run1(TIDE_OP_WHERE, &(tide_attrs){0}, 3, w, &sh);
  } else if (!st) st = tide_tensor_share(&sh, &s64);
  const tide_tensor *ins[2] = {x, &sh};
  if (!st) st = onnx_run1(TIDE_OP_RESHAPE, &(tide_attrs){0}, 2, ins, &out[0]);
  tide_tensor *all[] = {&sx, &head, &z, &zero, &s64, &sh};
  for (size_t k = 0; k < 6; k++) tide_tensor_release(all[k]);
  return st;
}

/* Flatten: [prod(dims before axis), prod(the rest)]; one side may hold the unknown dims. */
MAP(map_flatten) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Flatten needs its input's rank");
  int64_t axis = onnx_attr_i(node, "axis", 1);
  int ax = axis == x->ndim ? x->ndim : onnx_axis(axis, x->ndim);
  if (ax < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Flatten's axis %" PRId64 " is out of range for rank %d", axis, x->ndim);
  int64_t p[2] = {1, 1};
  bool known[2] = {true, true};
  for (int d = 0; d < x->ndim; d++) {
    if (x->dims[d] < 0) known[d >= ax] = false;
    else p[d >= ax] *= x->dims[d];
  }
  if (!known[0] && !known[1]) return TIDE_FAIL(TIDE_ERR_SHAPE, "Flatten of a shape with unknown dims on both sides of its axis");
  if (!known[0]) p[0] = -1;
  if (!known[1]) p[1] = -1;
  return onnx_reshape(x, 2, p, &out[0]);
}

MAP(map_transpose) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  int64_t perm[TIDE_MAX_DIMS];
  int n;
  st = onnx_attr_ints(node, "perm", perm, TIDE_MAX_DIMS, &n);
  if (st) return st;
  if (n < 0) { /* reversed */
    if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Transpose without perm needs its input's rank");
    n = x->ndim;
    for (int d = 0; d < n; d++) perm[d] = n - 1 - d;
  }
  if (n == 0) return tide_tensor_share(&out[0], x);
  return onnx_transpose(x, n, perm, &out[0]);
}

/* Axes of Squeeze/Unsqueeze/...: the attribute (before opset 13) or input 1. */
static tide_status axes_of(const Onnx__NodeProto *node, int n_in, const tide_tensor *const *in, int64_t *axes, int *n) {
  tide_status st = onnx_attr_ints(node, "axes", axes, TIDE_MAX_DIMS, n);
  if (st || *n >= 0) return st;
  *n = -1;
  if (n_in > 1 && in[1]) return onnx_known_ints(in[1], "axes", axes, TIDE_MAX_DIMS, n);
  return TIDE_OK;
}

MAP(map_squeeze) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  int n;
  st = axes_of(node, n_in, in, a.ints, &n);
  if (st) return st;
  if (n == 0) return tide_tensor_share(&out[0], x);
  a.nints = n < 0 ? 0 : n;
  return onnx_run1(TIDE_OP_SQUEEZE, &a, 1, &x, &out[0]);
}

/* Unsqueeze: each axis counts in the output's rank; inserted in ascending order. */
MAP(map_unsqueeze) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  int64_t axes[TIDE_MAX_DIMS];
  int n;
  st = axes_of(node, n_in, in, axes, &n);
  if (st) return st;
  if (n <= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Unsqueeze needs axes");
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Unsqueeze needs its input's rank");
  int r = x->ndim + n;
  for (int k = 0; k < n; k++) {
    int ax = onnx_axis(axes[k], r);
    if (ax < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Unsqueeze's axis %" PRId64 " is out of range for rank %d", axes[k], r);
    axes[k] = ax;
  }
  for (int a = 1; a < n; a++) /* sorted */
    for (int b = a; b > 0 && axes[b - 1] > axes[b]; b--) {
      int64_t t = axes[b];
      axes[b] = axes[b - 1];
      axes[b - 1] = t;
    }
  tide_tensor cur = {0};
  st = tide_tensor_share(&cur, x);
  for (int k = 0; !st && k < n; k++) {
    tide_tensor next = {0};
    tide_attrs e = {0};
    e.axis = (int32_t)axes[k];
    const tide_tensor *c = &cur;
    st = onnx_run1(TIDE_OP_EXPAND_DIMS, &e, 1, &c, &next);
    tide_tensor_release(&cur);
    if (!st) st = tide_tensor_share(&cur, &next); /* a small tensor's data lives in its header: never copy one */
    tide_tensor_release(&next);
  }
  if (!st) st = tide_tensor_share(&out[0], &cur);
  tide_tensor_release(&cur);
  return st;
}

MAP(map_concat) {
  UNUSED;
  if (n_in < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "Concat needs inputs");
  for (int k = 0; k < n_in; k++)
    if (!in[k]) return TIDE_FAIL(TIDE_ERR_VALUE, "Concat's input %d is left out", k);
  if (n_in == 1) return tide_tensor_share(&out[0], in[0]);
  tide_attrs a = {0};
  a.axis = (int32_t)onnx_attr_i(node, "axis", 0);
  return onnx_run1(TIDE_OP_CONCAT, &a, n_in, in, &out[0]);
}

/* Split: sizes from input 1 (opset 13), the attribute, or equal parts (num_outputs, or one per output). */
MAP(map_split) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  int ax = onnx_axis(onnx_attr_i(node, "axis", 0), x->ndim);
  if (ax < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Split's axis is out of range for rank %d", x->ndim);
  int64_t sizes[64];
  int n = -1;
  if (n_out > 64) return TIDE_FAIL(TIDE_ERR_VALUE, "Split into %d parts; tide maps at most 64", n_out);
  st = onnx_attr_ints(node, "split", sizes, 64, &n);
  if (!st && n < 0 && n_in > 1 && in[1]) st = onnx_known_ints(in[1], "split", sizes, 64, &n);
  if (st) return st;
  int64_t dim = x->dims[ax];
  if (n < 0) {
    if (dim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Split in equal parts of an unknown dim");
    n = n_out;
    int64_t part = (dim + n - 1) / n;
    for (int k = 0; k < n; k++) sizes[k] = k < n - 1 ? part : dim - part * (n - 1);
  }
  if (n != n_out) return TIDE_FAIL(TIDE_ERR_VALUE, "Split gives %d sizes for %d outputs", n, n_out);
  int64_t at = 0;
  for (int k = 0; !st && k < n; k++) {
    if (sizes[k] < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Split's size %d is negative", k);
    st = onnx_slice_axis(x, ax, at, at + sizes[k], &out[k]);
    at += sizes[k];
  }
  if (!st && dim >= 0 && at != dim)
    st = TIDE_FAIL(TIDE_ERR_SHAPE, "Split's sizes add up to %" PRId64 ", but the axis has %" PRId64, at, dim);
  return st;
}

/* Slice(data, starts, ends, axes, steps): known starts, ends, axes and steps. */
MAP(map_slice) {
  UNUSED;
  const tide_tensor *x = NULL, *ts = NULL, *te = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &ts);
  if (!st) st = onnx_in(node, n_in, in, 2, &te);
  if (st) return st;
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Slice needs its input's rank");
  int64_t s[TIDE_MAX_DIMS], e[TIDE_MAX_DIMS], axes[TIDE_MAX_DIMS], steps[TIDE_MAX_DIMS];
  int ns, ne, na = -1, nt = -1;
  st = onnx_known_ints(ts, "starts", s, TIDE_MAX_DIMS, &ns);
  if (!st) st = onnx_known_ints(te, "ends", e, TIDE_MAX_DIMS, &ne);
  if (!st && n_in > 3 && in[3]) st = onnx_known_ints(in[3], "axes", axes, TIDE_MAX_DIMS, &na);
  if (!st && n_in > 4 && in[4]) st = onnx_known_ints(in[4], "steps", steps, TIDE_MAX_DIMS, &nt);
  if (st) return st;
  if (ne != ns || (na >= 0 && na != ns) || (nt >= 0 && nt != ns))
    return TIDE_FAIL(TIDE_ERR_VALUE, "Slice's starts, ends, axes and steps differ in length");
  tide_attrs a = {0};
  int r = x->ndim;
  for (int d = 0; d < r; d++) { /* untouched dims: everything */
    a.ints[3 * d] = 0, a.ints[3 * d + 1] = 0, a.ints[3 * d + 2] = 1;
    a.m |= (1 << d) | (1 << (d + 8));
  }
  for (int k = 0; k < ns; k++) {
    int d = onnx_axis(na >= 0 ? axes[k] : k, r);
    if (d < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Slice's axis %" PRId64 " is out of range for rank %d", na >= 0 ? axes[k] : k, r);
    int64_t step = nt >= 0 ? steps[k] : 1;
    if (step == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Slice's step is 0");
    a.m &= ~((1 << d) | (1 << (d + 8)));
    a.ints[3 * d] = s[k] > BIG ? BIG : s[k] < -BIG ? -BIG : s[k];
    a.ints[3 * d + 1] = e[k];
    a.ints[3 * d + 2] = step;
    if ((step > 0 && e[k] >= BIG) || (step < 0 && e[k] <= -BIG)) a.m |= 1 << (d + 8), a.ints[3 * d + 1] = 0;
  }
  a.nints = 3 * r;
  return onnx_run1(TIDE_OP_SLICE, &a, 1, &x, &out[0]);
}

/* Gather: known negative indices count from the end of a known dim. */
MAP(map_gather) {
  UNUSED;
  const tide_tensor *x = NULL, *idx = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &idx);
  if (st) return st;
  int64_t axis = onnx_attr_i(node, "axis", 0);
  int ax = onnx_axis(axis, x->ndim);
  if (ax < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Gather's axis %" PRId64 " is out of range for rank %d", axis, x->ndim);
  tide_tensor fixed = {0};
  const tide_tensor *ins[2] = {x, idx};
  if (onnx_known(idx) && x->dims[ax] >= 0 && (idx->dt == TIDE_INT32 || idx->dt == TIDE_INT64) && idx->ndim <= 1 &&
      idx->nelem <= 4096) { /* known indices (a list or one): negative ones count from the end */
    int64_t v[4096];
    int n = 0;
    st = onnx_known_ints(idx, "indices", v, 4096, &n);
    bool neg = false;
    for (int i = 0; !st && i < n; i++) neg |= v[i] < 0;
    if (!st && neg) {
      for (int i = 0; i < n; i++)
        if (v[i] < 0 && v[i] >= -x->dims[ax]) v[i] += x->dims[ax];
      st = idx->ndim == 1 ? onnx_ints_tensor(idx->dt, n, v, &fixed) : onnx_scalar(idx->dt, (double)v[0], &fixed);
      ins[1] = &fixed;
    }
  }
  tide_attrs a = {0};
  a.axis = ax;
  if (!st) st = onnx_run1(TIDE_OP_GATHER, &a, 2, ins, &out[0]);
  tide_tensor_release(&fixed);
  return st;
}

/* Expand: numpy's two-way broadcast, as x + zeros(shape) (x | false for bools). */
MAP(map_expand) {
  UNUSED;
  const tide_tensor *x = NULL, *s = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &s);
  if (st) return st;
  tide_attrs f = {0};
  f.dtype = x->dt;
  tide_tensor zeros = {0}, s64 = {0};
  tide_attrs c = {0};
  c.dtype = TIDE_INT64;
  st = onnx_run1(TIDE_OP_CAST, &c, 1, &s, &s64);
  const tide_tensor *p = &s64;
  if (!st) st = onnx_run1(TIDE_OP_FILL, &f, 1, &p, &zeros);
  if (!st) st = onnx_binary(x->dt == TIDE_BOOL ? TIDE_OP_LOGICAL_OR : TIDE_OP_ADD, x, &zeros, &out[0]);
  tide_tensor_release(&zeros);
  tide_tensor_release(&s64);
  return st;
}

MAP(map_tile) {
  UNUSED;
  const tide_tensor *x = NULL, *r = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &r);
  tide_attrs a = {0};
  int n = 0;
  if (!st) st = onnx_known_ints(r, "repeats", a.ints, TIDE_MAX_DIMS, &n);
  if (st) return st;
  a.nints = n;
  return onnx_run1(TIDE_OP_TILE, &a, 1, &x, &out[0]);
}

/* Pad: pads [begins..., ends...] (input, or attribute before opset 11), on axes; constant mode
 * is tide's pad op, edge, reflect and wrap are Gathers (onnx_ops_resample.c). */
MAP(map_pad) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  size_t ml;
  const char *mode = onnx_attr_s(node, "mode", &ml);
  int indexed = !ml || (ml == 8 && !memcmp(mode, "constant", 8)) ? 0
                : ml == 4 && !memcmp(mode, "edge", 4)            ? ONNX_PAD_EDGE
                : ml == 7 && !memcmp(mode, "reflect", 7)         ? ONNX_PAD_REFLECT
                : ml == 4 && !memcmp(mode, "wrap", 4)            ? ONNX_PAD_WRAP
                                                                 : -1;
  if (indexed < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "Pad's mode '%.*s' is not one of ONNX's (constant, edge, reflect, wrap)", (int)ml, mode);
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Pad needs its input's rank");
  int64_t p[2 * TIDE_MAX_DIMS], axes[TIDE_MAX_DIMS];
  int np = -1, na = -1;
  st = onnx_attr_ints(node, "pads", p, 2 * TIDE_MAX_DIMS, &np);
  if (!st && np < 0) {
    const tide_tensor *tp = NULL;
    st = onnx_in(node, n_in, in, 1, &tp);
    if (!st) st = onnx_known_ints(tp, "pads", p, 2 * TIDE_MAX_DIMS, &np);
  }
  if (!st && n_in > 3 && in[3]) st = onnx_known_ints(in[3], "axes", axes, TIDE_MAX_DIMS, &na);
  if (st) return st;
  int k = na >= 0 ? na : x->ndim;
  if (np != 2 * k) return TIDE_FAIL(TIDE_ERR_VALUE, "Pad has %d pads for %d axes", np, k);
  tide_attrs a = {0};
  for (int j = 0; j < k; j++) {
    int d = onnx_axis(na >= 0 ? axes[j] : j, x->ndim);
    if (d < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Pad's axis is out of range for rank %d", x->ndim);
    if (p[j] < 0 || p[k + j] < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Pad's negative pads (cropping) are not mapped");
    a.ints[2 * d] = p[j];
    a.ints[2 * d + 1] = p[k + j];
  }
  a.nints = 2 * x->ndim;
  if (indexed) {
    int64_t before[TIDE_MAX_DIMS], after[TIDE_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) before[d] = a.ints[2 * d], after[d] = a.ints[2 * d + 1];
    return onnx_pad_indexed(x, before, after, indexed, &out[0]);
  }
  if (n_in > 2 && in[2]) {
    if (!onnx_known(in[2]) || in[2]->nelem != 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "Pad's constant_value must be one value known when the model loads");
    a.scalars[0] = onnx_number_at(in[2], 0);
  } else a.scalars[0] = onnx_attr_f(node, "value", 0);
  return onnx_run1(TIDE_OP_PAD, &a, 1, &x, &out[0]);
}

/* Shape (with start and end): known when those dims are, else a shape op. */
MAP(map_shape) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Shape needs its input's rank");
  int r = x->ndim;
  int64_t s = onnx_attr_i(node, "start", 0), e = onnx_attr_i(node, "end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = s < 0 ? 0 : s > r ? r : s;
  e = e < 0 ? 0 : e > r ? r : e;
  if (e < s) e = s;
  bool known = true;
  for (int64_t d = s; d < e; d++) known &= x->dims[d] >= 0;
  if (known) return onnx_ints_tensor(TIDE_INT64, (int)(e - s), x->dims + s, &out[0]);
  tide_attrs a = {0};
  a.dtype = TIDE_INT64;
  tide_tensor full = {0};
  st = onnx_run1(TIDE_OP_SHAPE, &a, 1, &x, &full);
  if (!st && (s > 0 || e < r)) st = onnx_slice_axis(&full, 0, s, e, &out[0]);
  else if (!st) st = tide_tensor_share(&out[0], &full);
  tide_tensor_release(&full);
  return st;
}

MAP(map_size) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  if (dims_known(x)) {
    int64_t n = x->nelem;
    st = onnx_scalar(TIDE_INT64, (double)n, &out[0]);
    return st;
  }
  tide_attrs a = {0};
  a.dtype = TIDE_INT64;
  return onnx_run1(TIDE_OP_SIZE, &a, 1, &x, &out[0]);
}

/* A Constant's value, or ConstantOfShape's (one value). */
static tide_status attr_value(onnx_import *im, const Onnx__NodeProto *node, tide_tensor *out) {
  char what[300];
  snprintf(what, sizeof what, "the value of node '%s'", node->name ? node->name : "");
  const Onnx__AttributeProto *a = onnx_attr(node, "value");
  if (a && a->t) return onnx_tensor_from_proto(a->t, im->dir, what, out);
  if ((a = onnx_attr(node, "value_float")) && a->has_f) return onnx_scalar(TIDE_FLOAT32, a->f, out);
  if ((a = onnx_attr(node, "value_int")) && a->has_i) return onnx_scalar(TIDE_INT64, (double)a->i, out);
  if ((a = onnx_attr(node, "value_ints"))) {
    if (a->n_ints > (1u << 20)) return TIDE_FAIL(TIDE_ERR_VALUE, "a Constant of %zu ints", a->n_ints);
    int64_t n = (int64_t)a->n_ints;
    tide_status st = tide_tensor_init(out, TIDE_INT64, 1, &n);
    if (!st && n) memcpy(out->data, a->ints, (size_t)n * 8);
    return st;
  }
  if ((a = onnx_attr(node, "value_floats"))) {
    if (a->n_floats > (1u << 20)) return TIDE_FAIL(TIDE_ERR_VALUE, "a Constant of %zu floats", a->n_floats);
    int64_t n = (int64_t)a->n_floats;
    tide_status st = tide_tensor_init(out, TIDE_FLOAT32, 1, &n);
    if (!st && n) memcpy(out->data, a->floats, (size_t)n * 4);
    return st;
  }
  return TIDE_FAIL(TIDE_ERR_VALUE, "a %s without a value tide reads (value, value_float(s), value_int(s))", node->op_type);
}

MAP(map_constant) {
  UNUSED;
  return attr_value(im, node, &out[0]);
}

MAP(map_constant_of_shape) {
  UNUSED;
  const tide_tensor *s = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &s);
  if (st) return st;
  tide_attrs f = {0};
  f.dtype = TIDE_FLOAT32;
  if (onnx_attr(node, "value")) {
    tide_tensor v = {0};
    st = attr_value(im, node, &v);
    if (!st && v.nelem != 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "ConstantOfShape's value must be one value");
    if (!st) f.dtype = v.dt, f.scalars[0] = onnx_number_at(&v, 0);
    tide_tensor_release(&v);
    if (st) return st;
  }
  if (onnx_known(s)) {
    int n;
    st = onnx_known_ints(s, "shape", f.ints, TIDE_MAX_DIMS, &n);
    if (st) return st;
    f.nints = n;
    if (n == 0) { /* a scalar */
      tide_tensor one = {0};
      f.ints[0] = 1, f.nints = 1;
      st = onnx_run1(TIDE_OP_FILL, &f, 0, NULL, &one);
      if (!st) st = onnx_reshape(&one, 0, NULL, &out[0]);
      tide_tensor_release(&one);
      return st;
    }
    return onnx_run1(TIDE_OP_FILL, &f, 0, NULL, &out[0]);
  }
  tide_tensor s64 = {0};
  tide_attrs c = {0};
  c.dtype = TIDE_INT64;
  st = onnx_run1(TIDE_OP_CAST, &c, 1, &s, &s64);
  const tide_tensor *p = &s64;
  if (!st) st = onnx_run1(TIDE_OP_FILL, &f, 1, &p, &out[0]);
  tide_tensor_release(&s64);
  return st;
}

MAP(map_range) {
  UNUSED;
  const tide_tensor *t[3] = {NULL, NULL, NULL};
  tide_status st = TIDE_OK;
  for (int k = 0; !st && k < 3; k++) st = onnx_in(node, n_in, in, k, &t[k]);
  if (st) return st;
  for (int k = 0; k < 3; k++)
    if (t[k]->nelem != 1 && t[k]->ndim != 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "Range takes scalars");
  tide_attrs a = {0};
  a.dtype = t[0]->dt;
  if (onnx_known(t[0]) && onnx_known(t[1]) && onnx_known(t[2])) {
    for (int k = 0; k < 3; k++) a.scalars[k] = onnx_number_at(t[k], 0);
    if (a.scalars[2] == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "Range's delta is 0");
    return onnx_run1(TIDE_OP_RANGE, &a, 0, NULL, &out[0]);
  }
  return onnx_run1(TIDE_OP_RANGE_DYNAMIC, &a, 3, t, &out[0]);
}

static const onnx_op OPS[] = {
    {"Reshape", map_reshape},   {"Flatten", map_flatten},     {"Transpose", map_transpose},
    {"Squeeze", map_squeeze},   {"Unsqueeze", map_unsqueeze}, {"Concat", map_concat},
    {"Split", map_split},       {"Slice", map_slice},         {"Gather", map_gather},
    {"Expand", map_expand},     {"Tile", map_tile},           {"Pad", map_pad},
    {"Shape", map_shape},       {"Size", map_size},           {"Constant", map_constant},
    {"ConstantOfShape", map_constant_of_shape},               {"Range", map_range},
};

const onnx_op *onnx_ops_shape_find(const char *name) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  return NULL;
}
