/* io/tf_ops.c — TF's raw ops mapped onto tide's registry ops: one row per TF op
 * (its name, outputs, mapping). Shape, axis and permutation inputs must be known
 * when the model loads (constants, or computed from constants and static shapes). */
#include "tf_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- attributes and inputs ------------------------------------------------------ */

static bool attr_b(const Tensorflow__NodeDef *n, const char *k) {
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && a->b;
}
static int64_t attr_i(const Tensorflow__NodeDef *n, const char *k, int64_t dflt) {
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I ? a->i : dflt;
}
static double attr_f(const Tensorflow__NodeDef *n, const char *k, double dflt) {
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_F ? a->f : dflt;
}
static int attr_type(const Tensorflow__NodeDef *n, const char *k) {
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE ? (int)a->type : 0;
}
/* A string attribute as its bytes ("" when absent). */
static const char *attr_s(const Tensorflow__NodeDef *n, const char *k, size_t *len) {
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  bool ok = a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S;
  *len = ok ? a->s.len : 0;
  return ok ? (const char *)a->s.data : "";
}

/* Input k as a tensor (a resource handle is refused); shared with tf_ops_more.c (tf_internal.h). */
tide_status tf_tensor_in(tf_val *const *in, int n_in, int k, const tide_tensor **out) {
  if (k >= n_in) return TIDE_FAIL(TIDE_ERR_VALUE, "it has %d inputs; input %d is needed", n_in, k);
  if (in[k]->var >= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "input %d is a variable's handle where a tensor is due", k);
  *out = &in[k]->t;
  return TIDE_OK;
}

/* Element i (row-major) of eager tensor t, as a number; shared with tf_ops_more.c (tf_internal.h). */
double tf_number_at(const tide_tensor *t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;
    off += (i % dim) * t->strides[d];
    i /= dim;
  }
  return tide_read_number(t->data, t->dt, off);
}

/* Input k's values, known at load time: at most max integers; shared (tf_internal.h). */
tide_status tf_known_ints(tf_val *const *in, int n_in, int k, const char *what, int64_t *buf, int max, int *n) {
  const tide_tensor *t = NULL;
  tide_status st = tf_tensor_in(in, n_in, k, &t);
  if (st) return st;
  if (!tf_val_known(in[k]))
    return TIDE_FAIL(TIDE_ERR_VALUE, "its %s (input %d) must be known when the model loads, but it is computed at run "
                     "time", what, k);
  if (t->dt != TIDE_INT32 && t->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "its %s must be int32 or int64, got %s", what, tide_dtype_name(t->dt));
  if (t->nelem > max) return TIDE_FAIL(TIDE_ERR_VALUE, "its %s has %" PRId64 " values; tide takes at most %d", what, t->nelem, max);
  for (int64_t i = 0; i < t->nelem; i++) buf[i] = (int64_t)tf_number_at(t, i);
  *n = (int)t->nelem;
  return TIDE_OK;
}

/* A new eager scalar of dtype dt holding v. */
static tide_status scalar(int dt, double v, tide_tensor *out) {
  tide_tensor d = {0};
  tide_status st = tide_tensor_init(&d, TIDE_FLOAT64, 0, NULL);
  if (st) return st;
  *(double *)d.data = v;
  if (dt == TIDE_FLOAT64) {
    st = tide_tensor_share(out, &d);
  } else {
    tide_attrs a = {0};
    a.dtype = dt;
    const tide_tensor *ins[1] = {&d};
    tide_tensor *outs[1] = {out};
    st = tide_op_run(TIDE_OP_CAST, &a, 1, ins, 1, outs);
  }
  tide_tensor_release(&d);
  return st;
}

static tide_status run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tf_val *out) {
  tide_tensor *o[1] = {&out->t};
  tide_status st = tide_op_run(op, a, n, ins, 1, o);
  if (!st) out->set = true;
  return st;
}

#define MAP(fn) static tide_status fn(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, \
                                      int n_out, tf_val *out)
#define UNUSED (void)im, (void)node, (void)n_in, (void)in, (void)n_out, (void)out

/* ---- the mappings ------------------------------------------------------------------ */

MAP(map_identity) {
  UNUSED;
  if (n_in < n_out) return TIDE_FAIL(TIDE_ERR_VALUE, "it has %d inputs for %d outputs", n_in, n_out);
  for (int k = 0; k < n_out; k++) {
    tide_status st = tf_val_copy(&out[k], in[k]);
    if (st) return st;
  }
  return TIDE_OK;
}

MAP(map_const) {
  UNUSED;
  const Tensorflow__AttrValue *v = tf_attr(node, "value");
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR)
    return TIDE_FAIL(TIDE_ERR_VALUE, "a Const without a tensor value");
  tide_status st = tf_tensor_from_proto(v->tensor, "the Const", &out[0].t);
  if (!st) out[0].set = true;
  return st;
}

MAP(map_read_variable) {
  UNUSED;
  if (n_in < 1 || in[0]->var < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "its input is not a variable's handle");
  tide_status st = tide_graph_variable(im->g, im->vars[in[0]->var], &out[0].t);
  if (!st) out[0].set = true;
  return st;
}

/* Elementwise ops: one TF op, one registry op. */
static const struct { const char *tf; int op; } ELEMENTWISE[] = {
    {"Relu", TIDE_OP_RELU},       {"Sigmoid", TIDE_OP_SIGMOID},   {"Tanh", TIDE_OP_TANH},
    {"Exp", TIDE_OP_EXP},         {"Log", TIDE_OP_LOG},           {"Sqrt", TIDE_OP_SQRT},
    {"Rsqrt", TIDE_OP_RSQRT},     {"Neg", TIDE_OP_NEG},           {"Abs", TIDE_OP_ABS},
    {"Square", TIDE_OP_SQUARE},   {"Erf", TIDE_OP_ERF},           {"Erfc", TIDE_OP_ERFC},
    {"Elu", TIDE_OP_ELU},         {"Selu", TIDE_OP_SELU},         {"Softplus", TIDE_OP_SOFTPLUS},
    {"Floor", TIDE_OP_FLOOR},     {"Ceil", TIDE_OP_CEIL},         {"Sign", TIDE_OP_SIGN},
    {"Reciprocal", TIDE_OP_RECIPROCAL}, {"Inv", TIDE_OP_RECIPROCAL}, {"Sin", TIDE_OP_SIN},
    {"Cos", TIDE_OP_COS},         {"Tan", TIDE_OP_TAN},           {"Log1p", TIDE_OP_LOG1P},
    {"Expm1", TIDE_OP_EXPM1},     {"LogicalNot", TIDE_OP_LOGICAL_NOT}, {"IsNan", TIDE_OP_ISNAN},
    {"IsInf", TIDE_OP_ISINF},     {"IsFinite", TIDE_OP_ISFINITE},
    {"AddV2", TIDE_OP_ADD},       {"Add", TIDE_OP_ADD},           {"Sub", TIDE_OP_SUB},
    {"Mul", TIDE_OP_MUL},         {"RealDiv", TIDE_OP_DIV},       {"Maximum", TIDE_OP_MAXIMUM},
    {"Minimum", TIDE_OP_MINIMUM}, {"Pow", TIDE_OP_POW},           {"SquaredDifference", TIDE_OP_SQUARED_DIFFERENCE},
    {"FloorDiv", TIDE_OP_FLOORDIV}, {"FloorMod", TIDE_OP_MOD},    {"DivNoNan", TIDE_OP_DIV_NO_NAN},
    {"Less", TIDE_OP_LESS},       {"LessEqual", TIDE_OP_LESS_EQUAL}, {"Greater", TIDE_OP_GREATER},
    {"GreaterEqual", TIDE_OP_GREATER_EQUAL}, {"Equal", TIDE_OP_EQUAL}, {"NotEqual", TIDE_OP_NOT_EQUAL},
    {"LogicalAnd", TIDE_OP_LOGICAL_AND}, {"LogicalOr", TIDE_OP_LOGICAL_OR}, {"Atan2", TIDE_OP_ATAN2},
    {"SelectV2", TIDE_OP_WHERE},
};

MAP(map_elementwise) {
  UNUSED;
  for (size_t i = 0; i < sizeof ELEMENTWISE / sizeof ELEMENTWISE[0]; i++) {
    if (strcmp(ELEMENTWISE[i].tf, node->op)) continue;
    int op = ELEMENTWISE[i].op, arity = tide_op_num_inputs(op);
    const tide_tensor *ins[3];
    for (int k = 0; k < arity; k++) {
      tide_status st = tf_tensor_in(in, n_in, k, &ins[k]);
      if (st) return st;
    }
    tide_attrs a = {0};
    return run1(op, &a, arity, ins, &out[0]);
  }
  return TIDE_FAIL(TIDE_ERR_INTERNAL, "no elementwise row");
}

/* Select (TF1): as SelectV2 when the condition has x's shape or is a scalar. */
MAP(map_select) {
  UNUSED;
  const tide_tensor *c = NULL, *x = NULL, *y = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &c);
  if (!st) st = tf_tensor_in(in, n_in, 1, &x);
  if (!st) st = tf_tensor_in(in, n_in, 2, &y);
  if (st) return st;
  if (c->ndim != 0 && c->ndim != x->ndim)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "Select with a condition of rank %d for values of rank %d (TF1's row "
                     "selection) is not mapped", c->ndim, x->ndim);
  tide_attrs a = {0};
  const tide_tensor *ins[3] = {c, x, y};
  return run1(TIDE_OP_WHERE, &a, 3, ins, &out[0]);
}

MAP(map_bias_add) {
  UNUSED;
  size_t len;
  const char *f = attr_s(node, "data_format", &len);
  if (len && !(len == 4 && !memcmp(f, "NHWC", 4)) && !(len == 3 && !memcmp(f, "NWC", 3)) &&
      !(len == 5 && !memcmp(f, "NDHWC", 5)))
    return TIDE_FAIL(TIDE_ERR_VALUE, "data_format %.*s is not mapped (tide is channels-last)", (int)len, f);
  const tide_tensor *ins[2];
  tide_status st = tf_tensor_in(in, n_in, 0, &ins[0]);
  if (!st) st = tf_tensor_in(in, n_in, 1, &ins[1]);
  if (st) return st;
  tide_attrs a = {0};
  return run1(TIDE_OP_ADD, &a, 2, ins, &out[0]);
}

MAP(map_matmul) {
  UNUSED;
  const tide_tensor *ins[2];
  tide_status st = tf_tensor_in(in, n_in, 0, &ins[0]);
  if (!st) st = tf_tensor_in(in, n_in, 1, &ins[1]);
  if (st) return st;
  tide_attrs a = {0};
  bool batch = strncmp(node->op, "BatchMatMul", 11) == 0;
  if (attr_b(node, batch ? "adj_x" : "transpose_a")) a.flags |= TIDE_ATTR_TRANSPOSE_A;
  if (attr_b(node, batch ? "adj_y" : "transpose_b")) a.flags |= TIDE_ATTR_TRANSPOSE_B;
  return run1(TIDE_OP_MATMUL, &a, 2, ins, &out[0]);
}

MAP(map_softmax) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  a.axis = -1;
  return run1(strcmp(node->op, "Softmax") ? TIDE_OP_LOG_SOFTMAX : TIDE_OP_SOFTMAX, &a, 1, &x, &out[0]);
}

MAP(map_leaky_relu) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  a.scalars[0] = attr_f(node, "alpha", 0.2);
  return run1(TIDE_OP_LEAKY_RELU, &a, 1, &x, &out[0]);
}

/* Relu6: clip_by_value(x, 0, 6). */
MAP(map_relu6) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_tensor lo = {0}, hi = {0};
  st = scalar(x->dt, 0, &lo);
  if (!st) st = scalar(x->dt, 6, &hi);
  if (!st) {
    tide_attrs a = {0};
    const tide_tensor *ins[3] = {x, &lo, &hi};
    st = run1(TIDE_OP_CLIP, &a, 3, ins, &out[0]);
  }
  tide_tensor_release(&lo);
  tide_tensor_release(&hi);
  return st;
}

MAP(map_cast) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  int to = tf_dtype_to_tide(attr_type(node, "DstT"));
  if (to < 0 || to == TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "a cast to %s, which tide does not map", tf_dtype_name(attr_type(node, "DstT")));
  tide_attrs a = {0};
  a.dtype = to;
  return run1(TIDE_OP_CAST, &a, 1, &x, &out[0]);
}

/* Reshape: the shape goes in as an input (known or not), as tide's reshape takes one. */
MAP(map_reshape) {
  UNUSED;
  const tide_tensor *ins[2];
  tide_status st = tf_tensor_in(in, n_in, 0, &ins[0]);
  if (!st) st = tf_tensor_in(in, n_in, 1, &ins[1]);
  if (st) return st;
  tide_attrs a = {0};
  return run1(TIDE_OP_RESHAPE, &a, 2, ins, &out[0]);
}

/* Shape: known at load time when every dim is, else a shape op. */
MAP(map_shape) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  int dt = attr_type(node, "out_type") == TENSORFLOW__DATA_TYPE__DT_INT64 ? TIDE_INT64 : TIDE_INT32;
  bool known = x->ndim >= 0;
  for (int d = 0; known && d < x->ndim; d++) known = x->dims[d] >= 0;
  if (!known) {
    tide_attrs a = {0};
    a.dtype = dt;
    return run1(TIDE_OP_SHAPE, &a, 1, &x, &out[0]);
  }
  int64_t n = x->ndim;
  st = tide_tensor_init(&out[0].t, dt, 1, &n);
  for (int d = 0; !st && d < x->ndim; d++) {
    if (dt == TIDE_INT64) ((int64_t *)out[0].t.data)[d] = x->dims[d];
    else ((int32_t *)out[0].t.data)[d] = (int32_t)x->dims[d];
  }
  if (!st) out[0].set = true;
  return st;
}

/* Reductions: axes known at load time; an empty list reduces nothing, as in TF. */
MAP(map_reduce) {
  UNUSED;
  static const struct { const char *tf; int op; } R[] = {
      {"Sum", TIDE_OP_SUM}, {"Mean", TIDE_OP_MEAN}, {"Max", TIDE_OP_MAX}, {"Min", TIDE_OP_MIN},
      {"Prod", TIDE_OP_PROD}, {"All", TIDE_OP_ALL}, {"Any", TIDE_OP_ANY}};
  int op = -1;
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
    if (!strcmp(R[i].tf, node->op)) op = R[i].op;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  int n = 0;
  st = tf_known_ints(in, n_in, 1, "reduction axes", a.ints, TIDE_MAX_DIMS, &n);
  if (st) return st;
  if (n == 0) return tf_val_copy(&out[0], in[0]);
  a.nints = n;
  if (attr_b(node, "keep_dims")) a.flags |= TIDE_ATTR_KEEPDIMS;
  return run1(op, &a, 1, &x, &out[0]);
}

MAP(map_argmax) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  int64_t axis;
  int n = 0;
  st = tf_known_ints(in, n_in, 1, "axis", &axis, 1, &n);
  if (!st && n != 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "its axis must be one number");
  if (st) return st;
  tide_attrs a = {0};
  a.axis = (int32_t)axis;
  a.dtype = attr_type(node, "output_type") == TENSORFLOW__DATA_TYPE__DT_INT32 ? TIDE_INT32 : TIDE_INT64;
  return run1(strcmp(node->op, "ArgMax") ? TIDE_OP_ARGMIN : TIDE_OP_ARGMAX, &a, 1, &x, &out[0]);
}

MAP(map_transpose) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  int n = 0;
  st = tf_known_ints(in, n_in, 1, "permutation", a.ints, TIDE_MAX_DIMS, &n);
  if (st) return st;
  if (n == 0) return tf_val_copy(&out[0], in[0]); /* a scalar */
  a.nints = n;
  return run1(TIDE_OP_TRANSPOSE, &a, 1, &x, &out[0]);
}

MAP(map_concat) {
  UNUSED;
  if (n_in < 2) return TIDE_FAIL(TIDE_ERR_VALUE, "ConcatV2 needs values and an axis");
  int64_t axis;
  int n = 0;
  tide_status st = tf_known_ints(in, n_in, n_in - 1, "axis", &axis, 1, &n);
  if (!st && n != 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "its axis must be one number");
  if (st) return st;
  const tide_tensor *ins[n_in];
  for (int k = 0; !st && k < n_in - 1; k++) st = tf_tensor_in(in, n_in, k, &ins[k]);
  if (st) return st;
  if (n_in == 2) return tf_val_copy(&out[0], in[0]);
  tide_attrs a = {0};
  a.axis = (int32_t)axis;
  return run1(TIDE_OP_CONCAT, &a, n_in - 1, ins, &out[0]);
}

/* Pack: each value gets a new axis, then they are concatenated along it. */
MAP(map_pack) {
  UNUSED;
  if (n_in < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "Pack needs values");
  tide_attrs e = {0};
  e.axis = (int32_t)attr_i(node, "axis", 0);
  tide_tensor parts[n_in];
  const tide_tensor *ins[n_in];
  memset(parts, 0, sizeof parts);
  tide_status st = TIDE_OK;
  int made = 0;
  for (int k = 0; !st && k < n_in; k++) {
    const tide_tensor *x = NULL;
    st = tf_tensor_in(in, n_in, k, &x);
    tide_tensor *o[1] = {&parts[k]};
    if (!st) st = tide_op_run(TIDE_OP_EXPAND_DIMS, &e, 1, &x, 1, o);
    if (!st) ins[made++] = &parts[k];
  }
  if (!st && n_in == 1) st = tide_tensor_share(&out[0].t, &parts[0]), out[0].set = !st;
  else if (!st) st = run1(TIDE_OP_CONCAT, &e, n_in, ins, &out[0]);
  for (int k = 0; k < made; k++) tide_tensor_release(&parts[k]);
  return st;
}

MAP(map_expand_dims) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  int64_t axis;
  int n = 0;
  if (!st) st = tf_known_ints(in, n_in, 1, "axis", &axis, 1, &n);
  if (!st && n != 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "its axis must be one number");
  if (st) return st;
  tide_attrs a = {0};
  a.axis = (int32_t)axis;
  return run1(TIDE_OP_EXPAND_DIMS, &a, 1, &x, &out[0]);
}

MAP(map_squeeze) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  const Tensorflow__AttrValue *d = tf_attr(node, "squeeze_dims");
  if (d && d->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && d->list->n_i > 0) {
    if (d->list->n_i > TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_VALUE, "too many squeeze_dims");
    for (size_t i = 0; i < d->list->n_i; i++) a.ints[i] = d->list->i[i];
    a.nints = (int32_t)d->list->n_i;
  }
  return run1(TIDE_OP_SQUEEZE, &a, 1, &x, &out[0]);
}

/* StridedSlice: TF's begin, end and shrink masks are tide slice's; new-axis entries are size-1 dims inserted
 * after the slice; bounds computed at run time go to tf_map_strided_slice_dynamic (tf_ops_more.c). */
MAP(map_strided_slice) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  int64_t new_axis = attr_i(node, "new_axis_mask", 0), shrink = attr_i(node, "shrink_axis_mask", 0);
  int64_t bmask = attr_i(node, "begin_mask", 0), emask = attr_i(node, "end_mask", 0);
  if (attr_i(node, "ellipsis_mask", 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "a StridedSlice with an ellipsis mask is not mapped");
  if (n_in >= 3 && (!tf_val_known(in[1]) || !tf_val_known(in[2]))) {
    if (new_axis) return TIDE_FAIL(TIDE_ERR_VALUE, "a StridedSlice with a new-axis mask and run-time bounds is not mapped");
    return tf_map_strided_slice_dynamic(node, n_in, in, bmask, emask, shrink, out);
  }
  int64_t b[TIDE_MAX_DIMS], e[TIDE_MAX_DIMS], s[TIDE_MAX_DIMS];
  int nb = 0, ne = 0, ns = 0;
  st = tf_known_ints(in, n_in, 1, "begin", b, TIDE_MAX_DIMS, &nb);
  if (!st) st = tf_known_ints(in, n_in, 2, "end", e, TIDE_MAX_DIMS, &ne);
  if (!st) st = tf_known_ints(in, n_in, 3, "strides", s, TIDE_MAX_DIMS, &ns);
  if (!st && (nb != ne || nb != ns || nb == 0))
    st = TIDE_FAIL(TIDE_ERR_VALUE, "begin, end and strides have %d, %d and %d values", nb, ne, ns);
  if (st) return st;
  tide_attrs a = {0};
  int kept = 0, out_dim = 0, n_new = 0;
  int32_t new_at[TIDE_MAX_DIMS];
  for (int d = 0; d < nb; d++) {
    if (new_axis >> d & 1) { /* a new size-1 dim at this place of the result */
      new_at[n_new++] = out_dim++;
      continue;
    }
    a.ints[3 * kept] = b[d];
    a.ints[3 * kept + 1] = e[d];
    a.ints[3 * kept + 2] = s[d];
    a.n |= (shrink >> d & 1) << kept;
    a.m |= (bmask >> d & 1) << kept | ((emask >> d & 1) << kept) << 8;
    out_dim += !(shrink >> d & 1);
    kept++;
  }
  a.nints = 3 * kept;
  if (n_new == 0) return run1(TIDE_OP_SLICE, &a, 1, &x, &out[0]);
  tf_val cur = {.var = -1};
  st = kept ? run1(TIDE_OP_SLICE, &a, 1, &x, &cur) : tf_val_copy(&cur, in[0]);
  for (int k = 0; !st && k < n_new; k++) {
    tide_attrs ex = {0};
    ex.axis = new_at[k];
    tf_val nx = {.var = -1};
    const tide_tensor *ei[1] = {&cur.t};
    st = run1(TIDE_OP_EXPAND_DIMS, &ex, 1, ei, &nx);
    if (!st) st = tf_val_copy(&cur, &nx);
    tf_val_release(&nx);
  }
  if (!st) st = tf_val_copy(&out[0], &cur);
  tf_val_release(&cur);
  return st;
}

MAP(map_gather) {
  UNUSED;
  const tide_tensor *ins[2];
  tide_status st = tf_tensor_in(in, n_in, 0, &ins[0]);
  if (!st) st = tf_tensor_in(in, n_in, 1, &ins[1]);
  int64_t axis = 0;
  int n = 1;
  if (!st && n_in > 2) st = tf_known_ints(in, n_in, 2, "axis", &axis, 1, &n);
  if (!st && n != 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "its axis must be one number");
  if (st) return st;
  tide_attrs a = {0};
  a.axis = (int32_t)axis;
  a.n = attr_i(node, "batch_dims", 0);
  return run1(TIDE_OP_GATHER, &a, 2, ins, &out[0]);
}

MAP(map_pad) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  tide_attrs a = {0};
  int n = 0;
  st = tf_known_ints(in, n_in, 1, "paddings", a.ints, 2 * TIDE_MAX_DIMS, &n);
  if (st) return st;
  a.nints = n;
  if (n_in > 2) { /* PadV2's constant */
    const tide_tensor *c = NULL;
    st = tf_tensor_in(in, n_in, 2, &c);
    if (!st && (!tf_val_known(in[2]) || c->nelem != 1))
      st = TIDE_FAIL(TIDE_ERR_VALUE, "its constant_values must be one number known when the model loads");
    if (st) return st;
    a.scalars[0] = tf_number_at(c, 0);
  }
  return run1(TIDE_OP_PAD, &a, 1, &x, &out[0]);
}

MAP(map_add_n) {
  UNUSED;
  if (n_in < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "AddN needs values");
  tide_status st = tf_val_copy(&out[0], in[0]);
  for (int k = 1; !st && k < n_in; k++) {
    const tide_tensor *ins[2] = {&out[0].t, NULL};
    st = tf_tensor_in(in, n_in, k, &ins[1]);
    tf_val sum = {.var = -1};
    if (!st) st = run1(TIDE_OP_ADD, &(tide_attrs){0}, 2, ins, &sum);
    if (!st) st = tf_val_copy(&out[0], &sum);
    tf_val_release(&sum);
  }
  return st;
}

/* ---- the table ----------------------------------------------------------------------- */

static const tf_op OPS[] = {
    {"Identity", map_identity, 1, NULL},        {"Snapshot", map_identity, 1, NULL},
    {"StopGradient", map_identity, 1, NULL},    {"PreventGradient", map_identity, 1, NULL},
    {"PlaceholderWithDefault", map_identity, 1, NULL}, {"IdentityN", map_identity, -1, NULL},
    {"Const", map_const, 1, NULL},              {"NoOp", map_identity, 0, NULL},
    {"ReadVariableOp", map_read_variable, 1, NULL},
    {"StatefulPartitionedCall", NULL, 0, "output"}, {"PartitionedCall", NULL, 0, "output"},
    {"MatMul", map_matmul, 1, NULL},            {"BatchMatMulV2", map_matmul, 1, NULL},
    {"BatchMatMulV3", map_matmul, 1, NULL},     {"BiasAdd", map_bias_add, 1, NULL},
    {"Softmax", map_softmax, 1, NULL},          {"LogSoftmax", map_softmax, 1, NULL},
    {"LeakyRelu", map_leaky_relu, 1, NULL},     {"Relu6", map_relu6, 1, NULL},
    {"Cast", map_cast, 1, NULL},                {"Reshape", map_reshape, 1, NULL},
    {"Shape", map_shape, 1, NULL},              {"Sum", map_reduce, 1, NULL},
    {"Mean", map_reduce, 1, NULL},              {"Max", map_reduce, 1, NULL},
    {"Min", map_reduce, 1, NULL},               {"Prod", map_reduce, 1, NULL},
    {"All", map_reduce, 1, NULL},               {"Any", map_reduce, 1, NULL},
    {"ArgMax", map_argmax, 1, NULL},            {"ArgMin", map_argmax, 1, NULL},
    {"Transpose", map_transpose, 1, NULL},      {"ConcatV2", map_concat, 1, NULL},
    {"Pack", map_pack, 1, NULL},                {"ExpandDims", map_expand_dims, 1, NULL},
    {"Squeeze", map_squeeze, 1, NULL},          {"StridedSlice", map_strided_slice, 1, NULL},
    {"GatherV2", map_gather, 1, NULL},          {"Pad", map_pad, 1, NULL},
    {"PadV2", map_pad, 1, NULL},                {"AddN", map_add_n, 1, NULL},
    {"Select", map_select, 1, NULL},
    /* tf_ops_more.c */
    {"Einsum", tf_map_einsum, 1, NULL},         {"OneHot", tf_map_one_hot, 1, NULL},
    {"ResourceGather", tf_map_resource_gather, 1, NULL},
    /* tf_ops_control.c, tf_ops_list.c */
    {"If", tf_map_if, -1, NULL},                {"StatelessIf", tf_map_if, -1, NULL},
    {"While", tf_map_while, -1, NULL},          {"StatelessWhile", tf_map_while, -1, NULL},
    {"TensorListReserve", tf_map_tensor_list, 1, NULL}, {"TensorListFromTensor", tf_map_tensor_list, 1, NULL},
    {"TensorListSetItem", tf_map_tensor_list, 1, NULL}, {"TensorListGetItem", tf_map_tensor_list, 1, NULL},
    {"TensorListStack", tf_map_tensor_list, 1, NULL},
    /* tf_ops_fill.c */
    {"Fill", tf_map_fill_ops, 1, NULL},         {"ZerosLike", tf_map_fill_ops, 1, NULL},
    {"OnesLike", tf_map_fill_ops, 1, NULL},     {"Range", tf_map_fill_ops, 1, NULL},
    {"Split", tf_map_fill_ops, -1, NULL},
    /* tf_ops_nn.c */
    {"Conv2D", tf_map_conv, 1, NULL},           {"DepthwiseConv2dNative", tf_map_conv, 1, NULL},
    {"MaxPool", tf_map_pool, 1, NULL},          {"AvgPool", tf_map_pool, 1, NULL},
    {"FusedBatchNorm", tf_map_batch_norm, 5, "y batch_mean batch_variance reserve_space_1 reserve_space_2"},
    {"FusedBatchNormV2", tf_map_batch_norm, 5, "y batch_mean batch_variance reserve_space_1 reserve_space_2"},
    {"FusedBatchNormV3", tf_map_batch_norm, 6,
     "y batch_mean batch_variance reserve_space_1 reserve_space_2 reserve_space_3"},
};

const tf_op *tf_op_find(const char *name) {
  static tf_op elementwise = {"", map_elementwise, 1, NULL};
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  for (size_t i = 0; i < sizeof ELEMENTWISE / sizeof ELEMENTWISE[0]; i++)
    if (!strcmp(ELEMENTWISE[i].tf, name)) return &elementwise;
  return NULL;
}

int tf_op_num_outputs(const tf_op *op, const Tensorflow__NodeDef *node) {
  if (op->n_out >= 0) return op->n_out;
  /* If: one output per type of Tout; While: one per loop variable (its T list) */
  if (op->fn == tf_map_if || op->fn == tf_map_while) {
    const Tensorflow__AttrValue *types = tf_attr(node, op->fn == tf_map_if ? "Tout" : "T");
    return types && types->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && types->list ? (int)types->list->n_type
                                                                                           : 0;
  }
  if (!strcmp(node->op, "Split")) return (int)attr_i(node, "num_split", 0);
  int n = 0; /* IdentityN: one output per data input */
  for (size_t k = 0; k < node->n_input; k++) n += node->input[k][0] != '^';
  return n;
}
