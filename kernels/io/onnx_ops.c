/* io/onnx_ops.c — ONNX's elementwise, activation, reduction and matrix ops mapped
 * onto tide's registry ops (one row per op), and the helpers the other tables share. */
#include "onnx_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------ */

tide_status onnx_in(const Onnx__NodeProto *n, int n_in, const tide_tensor *const *in, int k, const tide_tensor **out) {
  if (k >= n_in || !in[k])
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s needs input %d, which the node does not give", n->op_type, k);
  *out = in[k];
  return TIDE_OK;
}

double onnx_number_at(const tide_tensor *t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;
    off += (i % dim) * t->strides[d];
    i /= dim;
  }
  return tide_read_number(t->data, t->dt, off);
}

tide_status onnx_known_ints(const tide_tensor *t, const char *what, int64_t *buf, int max, int *n) {
  if (!onnx_known(t))
    return TIDE_FAIL(TIDE_ERR_VALUE, "its %s must be known when the model loads (computed from initializers and "
                     "static shapes), but it is computed at run time", what);
  if (t->dt != TIDE_INT32 && t->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "its %s must be int32 or int64, got %s", what, tide_dtype_name(t->dt));
  if (t->ndim > 1) return TIDE_FAIL(TIDE_ERR_SHAPE, "its %s must be a scalar or a list (rank %d)", what, t->ndim);
  if (t->nelem > max) return TIDE_FAIL(TIDE_ERR_VALUE, "its %s has %" PRId64 " values; tide takes at most %d", what, t->nelem, max);
  for (int64_t i = 0; i < t->nelem; i++) { /* read as integers: INT64_MAX ("to the end") is no double */
    int64_t off = t->ndim == 1 ? i * t->strides[0] : 0;
    buf[i] = t->dt == TIDE_INT64 ? ((const int64_t *)t->data)[off] : ((const int32_t *)t->data)[off];
  }
  *n = (int)t->nelem;
  return TIDE_OK;
}

tide_status onnx_run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out) {
  tide_status st;
  if (onnx_layout_run(op, a, n, ins, out, &st)) return st; /* transposes cancelled or moved (onnx_layout.c) */
  tide_tensor *o[1] = {out};
  return tide_op_run(op, a, n, ins, 1, o);
}

tide_status onnx_slice_axis(const tide_tensor *x, int axis, int64_t start, int64_t stop, tide_tensor *out) {
  tide_attrs a = {0};
  for (int d = 0; d <= axis; d++) { /* begin, end, stride per axis; the axes before `axis` whole (masks) */
    a.ints[3 * d] = d == axis ? start : 0;
    a.ints[3 * d + 1] = d == axis ? stop : 0;
    a.ints[3 * d + 2] = 1;
    if (d != axis) a.m |= (1 << d) | (1 << (d + 8));
  }
  a.nints = 3 * (axis + 1);
  return onnx_run1(TIDE_OP_SLICE, &a, 1, &x, out);
}

tide_status onnx_scalar(int dt, double v, tide_tensor *out) {
  tide_tensor d = {0};
  tide_status st = tide_tensor_init(&d, TIDE_FLOAT64, 0, NULL);
  if (st) return st;
  *(double *)d.data = v;
  tide_attrs a = {0};
  a.dtype = dt;
  const tide_tensor *ins[1] = {&d};
  st = dt == TIDE_FLOAT64 ? tide_tensor_share(out, &d) : onnx_run1(TIDE_OP_CAST, &a, 1, ins, out);
  tide_tensor_release(&d);
  return st;
}

tide_status onnx_ints_tensor(int dt, int n, const int64_t *v, tide_tensor *out) {
  int64_t len = n;
  tide_status st = tide_tensor_init(out, dt, 1, &len);
  for (int i = 0; !st && i < n; i++) {
    if (dt == TIDE_INT64) ((int64_t *)out->data)[i] = v[i];
    else ((int32_t *)out->data)[i] = (int32_t)v[i];
  }
  return st;
}

tide_status onnx_binary(int op, const tide_tensor *a, const tide_tensor *b, tide_tensor *out) {
  const tide_tensor *ins[2] = {a, b};
  return onnx_run1(op, &(tide_attrs){0}, 2, ins, out);
}

tide_status onnx_unary(int op, const tide_tensor *x, tide_tensor *out) {
  return onnx_run1(op, &(tide_attrs){0}, 1, &x, out);
}

tide_status onnx_transpose(const tide_tensor *x, int n, const int64_t *perm, tide_tensor *out) {
  tide_attrs a = {0};
  for (int i = 0; i < n; i++) a.ints[i] = perm[i];
  a.nints = n;
  if (!onnx_known(x)) return onnx_run1(TIDE_OP_TRANSPOSE, &a, 1, &x, out);
  /* Known values (weights to HWIO) are copied contiguous once, here: a transposed view
   * would be copied again by the kernel reading it (conv2d) at every run. */
  tide_tensor view = {0};
  tide_status st = onnx_run1(TIDE_OP_TRANSPOSE, &a, 1, &x, &view);
  if (!st && tide_tensor_is_contiguous(&view)) {
    st = tide_tensor_share(out, &view);
  } else if (!st) {
    st = tide_tensor_init(out, view.dt, view.ndim, view.dims);
    if (!st) st = tide_tensor_copy_into(out, &view);
  }
  tide_tensor_release(&view);
  return st;
}

tide_status onnx_reshape(const tide_tensor *x, int n, const int64_t *dims, tide_tensor *out) {
  tide_attrs a = {0};
  for (int i = 0; i < n; i++) a.ints[i] = dims[i];
  a.nints = n;
  if (n == 0) { /* a scalar: reshape's shape as an empty tensor */
    tide_tensor s = {0};
    int64_t zero = 0;
    tide_status st = tide_tensor_init(&s, TIDE_INT64, 1, &zero);
    const tide_tensor *ins[2] = {x, &s};
    if (!st) st = onnx_run1(TIDE_OP_RESHAPE, &a, 2, ins, out);
    tide_tensor_release(&s);
    return st;
  }
  return onnx_run1(TIDE_OP_RESHAPE, &a, 1, &x, out);
}

int onnx_axis(int64_t axis, int r) {
  if (axis < -r || axis >= r) return -1;
  return (int)(axis < 0 ? axis + r : axis);
}

#define MAP(fn) static tide_status fn(onnx_import *im, const Onnx__NodeProto *node, int n_in, \
                                      const tide_tensor *const *in, int n_out, tide_tensor *out)
#define UNUSED (void)im, (void)node, (void)n_in, (void)in, (void)n_out, (void)out

/* ---- elementwise ------------------------------------------------------------------------ */

static const struct { const char *onnx; int op; } ELEMENTWISE[] = {
    {"Relu", TIDE_OP_RELU},       {"Sigmoid", TIDE_OP_SIGMOID},     {"Tanh", TIDE_OP_TANH},
    {"Exp", TIDE_OP_EXP},         {"Log", TIDE_OP_LOG},             {"Sqrt", TIDE_OP_SQRT},
    {"Neg", TIDE_OP_NEG},         {"Abs", TIDE_OP_ABS},             {"Erf", TIDE_OP_ERF},
    {"Selu", TIDE_OP_SELU},       {"Softplus", TIDE_OP_SOFTPLUS},   {"Softsign", TIDE_OP_SOFTSIGN},
    {"Floor", TIDE_OP_FLOOR},     {"Ceil", TIDE_OP_CEIL},           {"Round", TIDE_OP_ROUND},
    {"Sign", TIDE_OP_SIGN},       {"Reciprocal", TIDE_OP_RECIPROCAL}, {"Sin", TIDE_OP_SIN},
    {"Cos", TIDE_OP_COS},         {"Tan", TIDE_OP_TAN},             {"Asin", TIDE_OP_ASIN},
    {"Acos", TIDE_OP_ACOS},       {"Atan", TIDE_OP_ATAN},           {"Sinh", TIDE_OP_SINH},
    {"Cosh", TIDE_OP_COSH},       {"Asinh", TIDE_OP_ASINH},         {"Acosh", TIDE_OP_ACOSH},
    {"Atanh", TIDE_OP_ATANH},     {"Not", TIDE_OP_LOGICAL_NOT},     {"IsNaN", TIDE_OP_ISNAN},
    {"Add", TIDE_OP_ADD},         {"Sub", TIDE_OP_SUB},             {"Mul", TIDE_OP_MUL},
    {"Equal", TIDE_OP_EQUAL},     {"Less", TIDE_OP_LESS},           {"LessOrEqual", TIDE_OP_LESS_EQUAL},
    {"Greater", TIDE_OP_GREATER}, {"GreaterOrEqual", TIDE_OP_GREATER_EQUAL}, {"And", TIDE_OP_LOGICAL_AND},
    {"Or", TIDE_OP_LOGICAL_OR},   {"Xor", TIDE_OP_LOGICAL_XOR},     {"Where", TIDE_OP_WHERE},
    {"BitwiseAnd", TIDE_OP_BITWISE_AND}, {"BitwiseOr", TIDE_OP_BITWISE_OR}, {"BitwiseXor", TIDE_OP_BITWISE_XOR},
    {"BitwiseNot", TIDE_OP_INVERT},
};

MAP(map_elementwise) {
  UNUSED;
  for (size_t i = 0; i < sizeof ELEMENTWISE / sizeof ELEMENTWISE[0]; i++) {
    if (strcmp(ELEMENTWISE[i].onnx, node->op_type)) continue;
    int op = ELEMENTWISE[i].op, arity = tide_op_num_inputs(op);
    const tide_tensor *ins[3];
    for (int k = 0; k < arity; k++) {
      tide_status st = onnx_in(node, n_in, in, k, &ins[k]);
      if (st) return st;
    }
    return onnx_run1(op, &(tide_attrs){0}, arity, ins, &out[0]);
  }
  return TIDE_FAIL(TIDE_ERR_INTERNAL, "no elementwise row");
}

/* Div: integer division truncates in ONNX (C's rule), floats divide. */
MAP(map_div) {
  UNUSED;
  const tide_tensor *a = NULL, *b = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &a);
  if (!st) st = onnx_in(node, n_in, in, 1, &b);
  if (st) return st;
  return onnx_binary(tide_dtype_is_int(a->dt) ? TIDE_OP_TRUNCATEDIV : TIDE_OP_DIV, a, b, &out[0]);
}

/* Mod: fmod = 1 is C's remainder (truncated), else the divisor's sign (floor). */
MAP(map_mod) {
  UNUSED;
  const tide_tensor *a = NULL, *b = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &a);
  if (!st) st = onnx_in(node, n_in, in, 1, &b);
  if (st) return st;
  bool fmod_ = onnx_attr_i(node, "fmod", 0) != 0;
  if (!fmod_ && tide_dtype_is_float(a->dt))
    return TIDE_FAIL(TIDE_ERR_VALUE, "Mod of floats needs fmod = 1 (ONNX's rule)");
  return onnx_binary(fmod_ ? TIDE_OP_TRUNCATEMOD : TIDE_OP_MOD, a, b, &out[0]);
}

/* Pow: the exponent may have another dtype in ONNX; it takes the base's. */
MAP(map_pow) {
  UNUSED;
  const tide_tensor *a = NULL, *b = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &a);
  if (!st) st = onnx_in(node, n_in, in, 1, &b);
  if (st) return st;
  if (a->dt == b->dt) return onnx_binary(TIDE_OP_POW, a, b, &out[0]);
  tide_tensor c = {0};
  tide_attrs ca = {0};
  ca.dtype = a->dt;
  st = onnx_run1(TIDE_OP_CAST, &ca, 1, &b, &c);
  if (!st) st = onnx_binary(TIDE_OP_POW, a, &c, &out[0]);
  tide_tensor_release(&c);
  return st;
}

/* Max, Min, Sum, Mean: variadic, broadcasting pairwise. */
MAP(map_variadic) {
  UNUSED;
  int op = !strcmp(node->op_type, "Max") ? TIDE_OP_MAXIMUM : !strcmp(node->op_type, "Min") ? TIDE_OP_MINIMUM : TIDE_OP_ADD;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_tensor acc = {0};
  st = tide_tensor_share(&acc, x);
  for (int k = 1; !st && k < n_in; k++) {
    tide_tensor next = {0};
    st = onnx_in(node, n_in, in, k, &x);
    if (!st) st = onnx_binary(op, &acc, x, &next);
    tide_tensor_release(&acc);
    if (!st) st = tide_tensor_share(&acc, &next); /* a small tensor's data lives in its header: never copy one */
    tide_tensor_release(&next);
  }
  if (!st && !strcmp(node->op_type, "Mean") && n_in > 1) {
    tide_tensor c = {0};
    st = onnx_scalar(acc.dt, n_in, &c);
    if (!st) st = onnx_binary(TIDE_OP_DIV, &acc, &c, &out[0]);
    tide_tensor_release(&c);
  } else if (!st) st = tide_tensor_share(&out[0], &acc);
  tide_tensor_release(&acc);
  return st;
}

/* Identity, and Dropout in inference (its optional mask output is not made). */
MAP(map_identity) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  return st ? st : tide_tensor_share(&out[0], x);
}

/* ---- activations with attributes ------------------------------------------------------- */

MAP(map_leaky_relu) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  a.scalars[0] = onnx_attr_f(node, "alpha", 0.01);
  return onnx_run1(TIDE_OP_LEAKY_RELU, &a, 1, &x, &out[0]);
}

/* Elu: tide's is alpha = 1; others scale the negative side. */
MAP(map_elu) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  double alpha = onnx_attr_f(node, "alpha", 1.0);
  if (alpha == 1.0) return onnx_unary(TIDE_OP_ELU, x, &out[0]);
  tide_tensor e = {0}, zero = {0}, neg = {0}, al = {0}, sc = {0}, r = {0};
  st = onnx_unary(TIDE_OP_ELU, x, &e);
  if (!st) st = onnx_scalar(x->dt, 0, &zero);
  if (!st) st = onnx_binary(TIDE_OP_MINIMUM, &e, &zero, &neg);
  if (!st) st = onnx_scalar(x->dt, alpha, &al);
  if (!st) st = onnx_binary(TIDE_OP_MUL, &neg, &al, &sc);
  if (!st) st = onnx_unary(TIDE_OP_RELU, x, &r);
  if (!st) st = onnx_binary(TIDE_OP_ADD, &r, &sc, &out[0]);
  tide_tensor *all[] = {&e, &zero, &neg, &al, &sc, &r};
  for (size_t k = 0; k < 6; k++) tide_tensor_release(all[k]);
  return st;
}

MAP(map_gelu) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  if (onnx_attr_is(node, "approximate", "tanh")) a.flags |= TIDE_ATTR_APPROXIMATE;
  else if (onnx_attr(node, "approximate") && !onnx_attr_is(node, "approximate", "none"))
    return TIDE_FAIL(TIDE_ERR_VALUE, "Gelu's approximate must be \"none\" or \"tanh\"");
  return onnx_run1(TIDE_OP_GELU, &a, 1, &x, &out[0]);
}

/* clip(x, lo, hi) with lo and hi as eager scalars of x's dtype. */
static tide_status clip(const tide_tensor *x, double lo, double hi, tide_tensor *out) {
  tide_tensor l = {0}, h = {0};
  tide_status st = onnx_scalar(x->dt, lo, &l);
  if (!st) st = onnx_scalar(x->dt, hi, &h);
  const tide_tensor *ins[3] = {x, &l, &h};
  if (!st) st = onnx_run1(TIDE_OP_CLIP, &(tide_attrs){0}, 3, ins, out);
  tide_tensor_release(&l);
  tide_tensor_release(&h);
  return st;
}

/* Clip: min and max are optional inputs (opset 11+). */
MAP(map_clip) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_tensor bound[2] = {{0}};
  const tide_tensor *ins[3] = {x, NULL, NULL};
  for (int k = 0; !st && k < 2; k++) {
    if (k + 1 < n_in && in[k + 1]) {
      if (in[k + 1]->nelem != 1) st = TIDE_FAIL(TIDE_ERR_SHAPE, "Clip's %s must be one value", k ? "max" : "min");
      else if (in[k + 1]->ndim != 0) st = onnx_reshape(in[k + 1], 0, NULL, &bound[k]);
      else st = tide_tensor_share(&bound[k], in[k + 1]);
    } else {
      /* no bound: the dtype's own limit */
      double lo = -INFINITY, hi = INFINITY;
      if (x->dt == TIDE_INT8) lo = -128, hi = 127;
      else if (x->dt == TIDE_UINT8) lo = 0, hi = 255;
      else if (x->dt == TIDE_INT32) lo = -2147483648.0, hi = 2147483647.0;
      else if (x->dt == TIDE_INT64) lo = -9.2e18, hi = 9.2e18;
      st = onnx_scalar(x->dt, k ? hi : lo, &bound[k]);
    }
    ins[k + 1] = &bound[k];
  }
  if (!st) st = onnx_run1(TIDE_OP_CLIP, &(tide_attrs){0}, 3, ins, &out[0]);
  tide_tensor_release(&bound[0]);
  tide_tensor_release(&bound[1]);
  return st;
}

/* HardSigmoid: max(0, min(1, alpha x + beta)); HardSwish: x * HardSigmoid(1/6, 1/2). */
MAP(map_hard_sigmoid) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  bool swish = !strcmp(node->op_type, "HardSwish");
  double alpha = swish ? 1.0 / 6 : onnx_attr_f(node, "alpha", 0.2), beta = swish ? 0.5 : onnx_attr_f(node, "beta", 0.5);
  tide_tensor a = {0}, b = {0}, ax = {0}, axb = {0}, hs = {0};
  st = onnx_scalar(x->dt, alpha, &a);
  if (!st) st = onnx_scalar(x->dt, beta, &b);
  if (!st) st = onnx_binary(TIDE_OP_MUL, x, &a, &ax);
  if (!st) st = onnx_binary(TIDE_OP_ADD, &ax, &b, &axb);
  if (!st) st = clip(&axb, 0, 1, swish ? &hs : &out[0]);
  if (!st && swish) st = onnx_binary(TIDE_OP_MUL, x, &hs, &out[0]);
  tide_tensor *all[] = {&a, &b, &ax, &axb, &hs};
  for (size_t k = 0; k < 5; k++) tide_tensor_release(all[k]);
  return st;
}

/* Softmax, LogSoftmax (opset 13: along one axis). */
MAP(map_softmax) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  a.axis = (int32_t)onnx_attr_i(node, "axis", -1);
  return onnx_run1(strcmp(node->op_type, "Softmax") ? TIDE_OP_LOG_SOFTMAX : TIDE_OP_SOFTMAX, &a, 1, &x, &out[0]);
}

MAP(map_cast) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  int to;
  if (!strcmp(node->op_type, "CastLike")) {
    const tide_tensor *like = NULL;
    st = onnx_in(node, n_in, in, 1, &like);
    if (st) return st;
    to = like->dt;
  } else {
    int64_t code = onnx_attr_i(node, "to", 0);
    to = onnx_dtype_to_tide((int)code);
    if (to < 0) return TIDE_FAIL(TIDE_ERR_DTYPE, "a cast to %s, which tide lacks", onnx_dtype_name((int)code));
  }
  tide_attrs a = {0};
  a.dtype = to;
  return onnx_run1(TIDE_OP_CAST, &a, 1, &x, &out[0]);
}

/* ---- matrices ---------------------------------------------------------------------------- */

MAP(map_matmul) {
  UNUSED;
  const tide_tensor *ins[2] = {NULL, NULL};
  tide_status st = onnx_in(node, n_in, in, 0, &ins[0]);
  if (!st) st = onnx_in(node, n_in, in, 1, &ins[1]);
  if (st) return st;
  return onnx_run1(TIDE_OP_MATMUL, &(tide_attrs){0}, 2, ins, &out[0]);
}

/* Gemm: alpha * A' B' + beta * C. */
MAP(map_gemm) {
  UNUSED;
  const tide_tensor *ins[2] = {NULL, NULL}, *c = n_in > 2 ? in[2] : NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &ins[0]);
  if (!st) st = onnx_in(node, n_in, in, 1, &ins[1]);
  if (st) return st;
  if (ins[0]->ndim != 2 || ins[1]->ndim != 2)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "Gemm takes matrices; A has rank %d and B rank %d", ins[0]->ndim, ins[1]->ndim);
  tide_attrs a = {0};
  if (onnx_attr_i(node, "transA", 0)) a.flags |= TIDE_ATTR_TRANSPOSE_A;
  if (onnx_attr_i(node, "transB", 0)) a.flags |= TIDE_ATTR_TRANSPOSE_B;
  double alpha = onnx_attr_f(node, "alpha", 1.0), beta = onnx_attr_f(node, "beta", 1.0);
  tide_tensor ab = {0}, s = {0}, sab = {0}, bc = {0}, t = {0};
  st = onnx_run1(TIDE_OP_MATMUL, &a, 2, ins, &ab);
  if (!st && alpha != 1.0) {
    st = onnx_scalar(ab.dt, alpha, &s);
    if (!st) st = onnx_binary(TIDE_OP_MUL, &ab, &s, &sab);
    tide_tensor_release(&s);
  } else if (!st) st = tide_tensor_share(&sab, &ab);
  if (!st && c && beta != 0.0) {
    if (beta != 1.0) {
      st = onnx_scalar(c->dt, beta, &t);
      if (!st) st = onnx_binary(TIDE_OP_MUL, c, &t, &bc);
    } else st = tide_tensor_share(&bc, c);
    if (!st) st = onnx_binary(TIDE_OP_ADD, &sab, &bc, &out[0]);
  } else if (!st) st = tide_tensor_share(&out[0], &sab);
  tide_tensor *all[] = {&ab, &s, &sab, &bc, &t};
  for (size_t k = 0; k < 5; k++) tide_tensor_release(all[k]);
  return st;
}

/* ---- reductions ---------------------------------------------------------------------------- */

/* The axes of a reduction: attribute (before opset 18, and ReduceSum before 13) or input 1. */
static tide_status reduce_axes(const Onnx__NodeProto *node, int n_in, const tide_tensor *const *in, int64_t *axes,
                               int *n) {
  tide_status st = onnx_attr_ints(node, "axes", axes, TIDE_MAX_DIMS, n);
  if (st || *n >= 0) return st;
  *n = 0;
  if (n_in > 1 && in[1]) return onnx_known_ints(in[1], "axes", axes, TIDE_MAX_DIMS, n);
  return TIDE_OK;
}

MAP(map_reduce) {
  UNUSED;
  static const struct { const char *onnx; int op; int pre, post; } R[] = {
      {"ReduceSum", TIDE_OP_SUM, -1, -1},    {"ReduceMean", TIDE_OP_MEAN, -1, -1}, {"ReduceMax", TIDE_OP_MAX, -1, -1},
      {"ReduceMin", TIDE_OP_MIN, -1, -1},    {"ReduceProd", TIDE_OP_PROD, -1, -1},
      {"ReduceSumSquare", TIDE_OP_SUM, TIDE_OP_SQUARE, -1}, {"ReduceL2", TIDE_OP_SUM, TIDE_OP_SQUARE, TIDE_OP_SQRT},
      {"ReduceL1", TIDE_OP_SUM, TIDE_OP_ABS, -1}, {"ReduceLogSum", TIDE_OP_SUM, -1, TIDE_OP_LOG},
      {"ReduceLogSumExp", TIDE_OP_SUM, TIDE_OP_EXP, TIDE_OP_LOG}};
  size_t r = 0;
  while (r < sizeof R / sizeof R[0] && strcmp(R[r].onnx, node->op_type)) r++;
  if (r == sizeof R / sizeof R[0]) return TIDE_FAIL(TIDE_ERR_INTERNAL, "no reduction row");
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  int n = 0;
  st = reduce_axes(node, n_in, in, a.ints, &n);
  if (st) return st;
  if (n == 0 && onnx_attr_i(node, "noop_with_empty_axes", 0)) return tide_tensor_share(&out[0], x);
  if (n == 0) { /* every axis */
    if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s of every axis needs its input's rank", node->op_type);
    for (int d = 0; d < x->ndim; d++) a.ints[d] = d;
    n = x->ndim;
  }
  a.nints = n;
  if (onnx_attr_i(node, "keepdims", 1)) a.flags |= TIDE_ATTR_KEEPDIMS;
  tide_tensor pre = {0}, red = {0};
  if (R[r].pre >= 0) st = onnx_unary(R[r].pre, x, &pre);
  else st = tide_tensor_share(&pre, x);
  const tide_tensor *p = &pre;
  if (!st) st = onnx_run1(R[r].op, &a, 1, &p, R[r].post >= 0 ? &red : &out[0]);
  if (!st && R[r].post >= 0) st = onnx_unary(R[r].post, &red, &out[0]);
  tide_tensor_release(&pre);
  tide_tensor_release(&red);
  return st;
}

/* ArgMax, ArgMin: int64 indices, keepdims (select_last_index is not mapped). */
MAP(map_argmax) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  if (onnx_attr_i(node, "select_last_index", 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s with select_last_index is not mapped", node->op_type);
  tide_attrs a = {0};
  int64_t axis = onnx_attr_i(node, "axis", 0);
  a.axis = (int32_t)axis;
  a.dtype = TIDE_INT64;
  tide_tensor r = {0};
  st = onnx_run1(strcmp(node->op_type, "ArgMax") ? TIDE_OP_ARGMIN : TIDE_OP_ARGMAX, &a, 1, &x,
                 onnx_attr_i(node, "keepdims", 1) ? &r : &out[0]);
  if (!st && onnx_attr_i(node, "keepdims", 1)) {
    tide_attrs e = {0};
    int ax = onnx_axis(axis, x->ndim);
    e.axis = ax < 0 ? (int32_t)axis : ax;
    const tide_tensor *rr = &r;
    st = onnx_run1(TIDE_OP_EXPAND_DIMS, &e, 1, &rr, &out[0]);
  }
  tide_tensor_release(&r);
  return st;
}

/* ---- the table ------------------------------------------------------------------------------ */

static const onnx_op OPS[] = {
    {"Div", map_div},           {"Mod", map_mod},             {"Pow", map_pow},
    {"Max", map_variadic},      {"Min", map_variadic},        {"Sum", map_variadic},
    {"Mean", map_variadic},     {"Identity", map_identity},   {"Dropout", map_identity},
    {"LeakyRelu", map_leaky_relu}, {"Elu", map_elu},          {"Gelu", map_gelu},
    {"Clip", map_clip},         {"HardSigmoid", map_hard_sigmoid}, {"HardSwish", map_hard_sigmoid},
    {"Softmax", map_softmax},   {"LogSoftmax", map_softmax},  {"Cast", map_cast},
    {"CastLike", map_cast},     {"MatMul", map_matmul},       {"Gemm", map_gemm},
    {"ReduceSum", map_reduce},  {"ReduceMean", map_reduce},   {"ReduceMax", map_reduce},
    {"ReduceMin", map_reduce},  {"ReduceProd", map_reduce},   {"ReduceSumSquare", map_reduce},
    {"ReduceL2", map_reduce},   {"ReduceL1", map_reduce},     {"ReduceLogSum", map_reduce},
    {"ReduceLogSumExp", map_reduce}, {"ArgMax", map_argmax},  {"ArgMin", map_argmax},
};

const onnx_op *onnx_op_find(const char *name) {
  static const onnx_op elementwise = {"", map_elementwise};
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  for (size_t i = 0; i < sizeof ELEMENTWISE / sizeof ELEMENTWISE[0]; i++)
    if (!strcmp(ELEMENTWISE[i].onnx, name)) return &elementwise;
  const onnx_op *op = onnx_ops_shape_find(name);
  if (!op) op = onnx_ops_nn_find(name);
  if (!op) op = onnx_ops_resample_find(name);
  if (!op) op = onnx_ops_rnn_find(name);
  return op ? op : onnx_ops_more_find(name);
}
