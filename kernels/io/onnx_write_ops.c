/* io/onnx_write_ops.c — registry ops as ONNX nodes: elementwise ops (one ONNX op, or a
 * short composition where ONNX has none), reductions, and the shape ops; the NN ops are in onnx_write_nn.c. */
#include "onnx_write.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- one registry op, one ONNX op ----------------------------------------------------- */

typedef struct direct {
  const char *name;
  int min_opset;
} direct;

static const direct DIRECT[TIDE_NUM_OPS] = {
  [TIDE_OP_NEG] = {"Neg", 0}, [TIDE_OP_ABS] = {"Abs", 0}, [TIDE_OP_SIGN] = {"Sign", 0},
  [TIDE_OP_EXP] = {"Exp", 0}, [TIDE_OP_LOG] = {"Log", 0}, [TIDE_OP_SQRT] = {"Sqrt", 0},
  [TIDE_OP_RECIPROCAL] = {"Reciprocal", 0}, [TIDE_OP_SIN] = {"Sin", 0}, [TIDE_OP_COS] = {"Cos", 0},
  [TIDE_OP_TAN] = {"Tan", 0}, [TIDE_OP_TANH] = {"Tanh", 0}, [TIDE_OP_SIGMOID] = {"Sigmoid", 0},
  [TIDE_OP_SELU] = {"Selu", 0}, [TIDE_OP_SOFTPLUS] = {"Softplus", 0}, [TIDE_OP_SOFTSIGN] = {"Softsign", 0},
  [TIDE_OP_ERF] = {"Erf", 0}, [TIDE_OP_FLOOR] = {"Floor", 0}, [TIDE_OP_CEIL] = {"Ceil", 0},
  [TIDE_OP_ISNAN] = {"IsNaN", 0}, [TIDE_OP_LOGICAL_NOT] = {"Not", 0},
  [TIDE_OP_ASIN] = {"Asin", 0}, [TIDE_OP_ACOS] = {"Acos", 0}, [TIDE_OP_ATAN] = {"Atan", 0},
  [TIDE_OP_SINH] = {"Sinh", 0}, [TIDE_OP_COSH] = {"Cosh", 0}, [TIDE_OP_ASINH] = {"Asinh", 0},
  [TIDE_OP_ACOSH] = {"Acosh", 0}, [TIDE_OP_ATANH] = {"Atanh", 0}, [TIDE_OP_COPY] = {"Identity", 0},
  [TIDE_OP_INVERT] = {"BitwiseNot", 18},
  [TIDE_OP_ADD] = {"Add", 0}, [TIDE_OP_SUB] = {"Sub", 0}, [TIDE_OP_MUL] = {"Mul", 0},
  [TIDE_OP_POW] = {"Pow", 0}, [TIDE_OP_MAXIMUM] = {"Max", 0}, [TIDE_OP_MINIMUM] = {"Min", 0},
  [TIDE_OP_EQUAL] = {"Equal", 0}, [TIDE_OP_LESS] = {"Less", 0}, [TIDE_OP_LESS_EQUAL] = {"LessOrEqual", 0},
  [TIDE_OP_GREATER] = {"Greater", 0}, [TIDE_OP_GREATER_EQUAL] = {"GreaterOrEqual", 0},
  [TIDE_OP_LOGICAL_AND] = {"And", 0}, [TIDE_OP_LOGICAL_OR] = {"Or", 0}, [TIDE_OP_LOGICAL_XOR] = {"Xor", 0},
  [TIDE_OP_BITWISE_AND] = {"BitwiseAnd", 18}, [TIDE_OP_BITWISE_OR] = {"BitwiseOr", 18},
  [TIDE_OP_BITWISE_XOR] = {"BitwiseXor", 18}, [TIDE_OP_WHERE] = {"Where", 0},
  [TIDE_OP_SOFTMAX] = {"Softmax", 0}, [TIDE_OP_LOG_SOFTMAX] = {"LogSoftmax", 0}, [TIDE_OP_CONCAT] = {"Concat", 0},
};

static tide_status map_direct(onnx_export *x, const ox_call *c) {
  Onnx__NodeProto *n = ox_node(x, DIRECT[c->op].name, c->n_in, c->in, 1, c->out);
  if (c->op == TIDE_OP_SOFTMAX || c->op == TIDE_OP_LOG_SOFTMAX || c->op == TIDE_OP_CONCAT)
    ox_attr_i(x, n, "axis", c->a->axis);
  return TIDE_OK;
}

/* x's dtype (the first input's). */
static int dt0(const ox_call *c) { return c->din[0]->dt; }

static const char *num(onnx_export *x, int dt, double v) { return ox_init_scalar(x, dt, v); }

static const char *cast(onnx_export *x, const char *v, int dt, const char *out) {
  const char *in[1] = {v};
  if (!out) out = ox_fresh(x, "Cast");
  Onnx__NodeProto *n = ox_node(x, "Cast", 1, in, 1, &out);
  ox_attr_i(x, n, "to", ox_dtype(dt));
  return out;
}

/* ---- compositions --------------------------------------------------------------------- */

static tide_status map_unary_more(onnx_export *x, const ox_call *c) {
  const char *v = c->in[0], *out = c->out[0];
  int dt = dt0(c);
  bool is_float = tide_dtype_is_float(dt);
  switch (c->op) {
  case TIDE_OP_SQUARE: ox_op2(x, "Mul", v, v, out); break;
  case TIDE_OP_RSQRT: ox_op1(x, "Reciprocal", ox_op1(x, "Sqrt", v, NULL), out); break;
  case TIDE_OP_EXPM1: ox_op2(x, "Sub", ox_op1(x, "Exp", v, NULL), num(x, dt, 1), out); break;
  case TIDE_OP_LOG1P: ox_op1(x, "Log", ox_op2(x, "Add", v, num(x, dt, 1), NULL), out); break;
  case TIDE_OP_ERFC: ox_op2(x, "Sub", num(x, dt, 1), ox_op1(x, "Erf", v, NULL), out); break;
  case TIDE_OP_ISFINITE: /* x - x is 0 exactly when x is finite (NaN for inf and NaN) */
    ox_op2(x, "Equal", ox_op2(x, "Sub", v, v, NULL), num(x, dt, 0), out);
    break;
  case TIDE_OP_ISINF: { /* not NaN, and not finite */
    const char *finite = ox_op2(x, "Equal", ox_op2(x, "Sub", v, v, NULL), num(x, dt, 0), NULL);
    ox_op2(x, "And", ox_op2(x, "Equal", v, v, NULL), ox_op1(x, "Not", finite, NULL), out);
    break;
  }
  case TIDE_OP_ROUND: /* both round half to even */
    ox_op1(x, is_float ? "Round" : "Identity", v, out);
    break;
  case TIDE_OP_RELU:
    if (is_float || x->opset >= 14) ox_op1(x, "Relu", v, out);
    else ox_op2(x, "Max", v, num(x, dt, 0), out);
    break;
  case TIDE_OP_RELU6:
  case TIDE_OP_HARD_TANH: {
    double lo = c->op == TIDE_OP_RELU6 ? 0 : -1, hi = c->op == TIDE_OP_RELU6 ? 6 : 1;
    const char *in[3] = {v, num(x, dt, lo), num(x, dt, hi)};
    ox_node(x, "Clip", 3, in, 1, &out);
    break;
  }
  case TIDE_OP_ELU: ox_attr_f(x, ox_node(x, "Elu", 1, &v, 1, &out), "alpha", 1.0f); break;
  case TIDE_OP_LEAKY_RELU: ox_attr_f(x, ox_node(x, "LeakyRelu", 1, &v, 1, &out), "alpha", (float)c->a->scalars[0]); break;
  case TIDE_OP_GELU: {
    bool approx = (c->a->flags & TIDE_ATTR_APPROXIMATE) != 0;
    if (x->opset >= 20) {
      Onnx__NodeProto *n = ox_node(x, "Gelu", 1, &v, 1, &out);
      if (approx) ox_attr_s(x, n, "approximate", "tanh");
      break;
    }
    const char *inner;
    if (approx) { /* tanh(sqrt(2 / pi) * (x + 0.044715 x^3)) */
      const char *x3 = ox_op2(x, "Mul", ox_op2(x, "Mul", v, v, NULL), v, NULL);
      const char *s = ox_op2(x, "Add", v, ox_op2(x, "Mul", x3, num(x, dt, 0.044715), NULL), NULL);
      inner = ox_op1(x, "Tanh", ox_op2(x, "Mul", s, num(x, dt, sqrt(2.0 / M_PI)), NULL), NULL);
    } else { /* erf(x / sqrt 2) */
      inner = ox_op1(x, "Erf", ox_op2(x, "Mul", v, num(x, dt, M_SQRT1_2), NULL), NULL);
    }
    const char *half_x = ox_op2(x, "Mul", v, num(x, dt, 0.5), NULL);
    ox_op2(x, "Mul", half_x, ox_op2(x, "Add", inner, num(x, dt, 1), NULL), out);
    break;
  }
  case TIDE_OP_CAST: {
    if (!ox_dtype(c->dout[0]->dt)) return ox_fail(x, "a cast to %s has no ONNX form", tide_dtype_name(c->dout[0]->dt));
    cast(x, v, c->dout[0]->dt, out);
    break;
  }
  default: return ox_fail(x, "no ONNX mapping");
  }
  return TIDE_OK;
}

static tide_status map_binary_more(onnx_export *x, const ox_call *c) {
  const char *a = c->in[0], *b = c->in[1], *out = c->out[0];
  int dt = dt0(c);
  bool is_float = tide_dtype_is_float(dt);
  switch (c->op) {
  case TIDE_OP_DIV:
    if (c->dout[0]->dt != dt) { /* TF's truediv of integers: in the float dtype of the result */
      a = cast(x, a, c->dout[0]->dt, NULL), b = cast(x, b, c->dout[0]->dt, NULL);
    }
    ox_op2(x, "Div", a, b, out);
    break;
  case TIDE_OP_NOT_EQUAL: ox_op1(x, "Not", ox_op2(x, "Equal", a, b, NULL), out); break;
  case TIDE_OP_SQUARED_DIFFERENCE: {
    const char *d = ox_op2(x, "Sub", a, b, NULL);
    ox_op2(x, "Mul", d, d, out);
    break;
  }
  case TIDE_OP_FLOORDIV:
    if (is_float) ox_op1(x, "Floor", ox_op2(x, "Div", a, b, NULL), out);
    else { /* (a - floormod(a, b)) / b divides exactly */
      Onnx__NodeProto *m = NULL;
      const char *in[2] = {a, b}, *r = ox_fresh(x, "Mod");
      m = ox_node(x, "Mod", 2, in, 1, &r);
      ox_attr_i(x, m, "fmod", 0);
      ox_op2(x, "Div", ox_op2(x, "Sub", a, r, NULL), b, out);
    }
    break;
  case TIDE_OP_MOD:
    if (is_float) /* a - floor(a / b) * b: the divisor's sign, as TF's floormod */
      ox_op2(x, "Sub", a, ox_op2(x, "Mul", ox_op1(x, "Floor", ox_op2(x, "Div", a, b, NULL), NULL), b, NULL), out);
    else ox_attr_i(x, ox_node(x, "Mod", 2, c->in, 1, &out), "fmod", 0);
    break;
  case TIDE_OP_TRUNCATEMOD: ox_attr_i(x, ox_node(x, "Mod", 2, c->in, 1, &out), "fmod", 1); break;
  case TIDE_OP_TRUNCATEDIV:
    if (is_float) return ox_fail(x, "truncatediv of %s has no ONNX form tide writes", tide_dtype_name(dt));
    ox_op2(x, "Div", a, b, out); /* ONNX's integer Div truncates */
    break;
  case TIDE_OP_DIV_NO_NAN: {
    const char *zero = num(x, c->dout[0]->dt, 0);
    if (c->dout[0]->dt != dt) a = cast(x, a, c->dout[0]->dt, NULL), b = cast(x, b, c->dout[0]->dt, NULL);
    const char *in[3] = {ox_op2(x, "Equal", b, zero, NULL), zero, ox_op2(x, "Div", a, b, NULL)};
    ox_node(x, "Where", 3, in, 1, &out);
    break;
  }
  case TIDE_OP_CLIP: /* min(max(x, lo), hi), as tf.clip_by_value; lo and hi broadcast */
    ox_op2(x, "Min", ox_op2(x, "Max", a, b, NULL), c->in[2], out);
    break;
  default: return ox_fail(x, "no ONNX mapping");
  }
  return TIDE_OK;
}

/* ---- reductions --------------------------------------------------------------------- */

static tide_status map_reduce(onnx_export *x, const ox_call *c) {
  static const char *const NAMES[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"};
  const char *name = NAMES[c->op == TIDE_OP_SUM ? 0 : c->op == TIDE_OP_MEAN ? 1 : c->op == TIDE_OP_MAX ? 2
                           : c->op == TIDE_OP_MIN ? 3 : 4];
  const tide_attrs *a = c->a;
  bool axes_input = c->op == TIDE_OP_SUM || x->opset >= 18;
  const char *in[2] = {c->in[0], NULL};
  int n_in = 1;
  if (a->nints > 0 && axes_input) in[1] = ox_init_ints(x, a->nints, a->ints), n_in = 2;
  Onnx__NodeProto *n = ox_node(x, name, n_in, in, 1, c->out);
  if (a->nints > 0 && !axes_input) ox_attr_ints(x, n, "axes", a->nints, a->ints);
  ox_attr_i(x, n, "keepdims", (a->flags & TIDE_ATTR_KEEPDIMS) ? 1 : 0);
  return TIDE_OK;
}

/* any, all: ONNX reduces no bools before opset 20, so through int32 and back. */
static tide_status map_any_all(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  const char *in[2] = {cast(x, c->in[0], TIDE_INT32, NULL), NULL};
  int n_in = 1;
  if (a->nints > 0 && x->opset >= 18) in[1] = ox_init_ints(x, a->nints, a->ints), n_in = 2;
  const char *r = ox_fresh(x, c->op == TIDE_OP_ANY ? "ReduceMax" : "ReduceMin");
  Onnx__NodeProto *n = ox_node(x, c->op == TIDE_OP_ANY ? "ReduceMax" : "ReduceMin", n_in, in, 1, &r);
  if (a->nints > 0 && x->opset < 18) ox_attr_ints(x, n, "axes", a->nints, a->ints);
  ox_attr_i(x, n, "keepdims", (a->flags & TIDE_ATTR_KEEPDIMS) ? 1 : 0);
  cast(x, r, TIDE_BOOL, c->out[0]);
  return TIDE_OK;
}

static tide_status map_argreduce(onnx_export *x, const ox_call *c) {
  bool i64 = c->dout[0]->dt == TIDE_INT64;
  const char *r = i64 ? c->out[0] : ox_fresh(x, "ArgMax");
  Onnx__NodeProto *n = ox_node(x, c->op == TIDE_OP_ARGMAX ? "ArgMax" : "ArgMin", 1, c->in, 1, &r);
  ox_attr_i(x, n, "axis", c->a->axis);
  ox_attr_i(x, n, "keepdims", 0);
  if (!i64) cast(x, r, c->dout[0]->dt, c->out[0]);
  return TIDE_OK;
}

static tide_status map_cumsum(onnx_export *x, const ox_call *c) {
  const char *in[2] = {c->in[0], ox_init_scalar(x, TIDE_INT64, c->a->axis)}; /* a scalar axis */
  Onnx__NodeProto *n = ox_node(x, "CumSum", 2, in, 1, c->out);
  if (c->a->flags & TIDE_ATTR_EXCLUSIVE) ox_attr_i(x, n, "exclusive", 1);
  if (c->a->flags & TIDE_ATTR_REVERSE) ox_attr_i(x, n, "reverse", 1);
  return TIDE_OK;
}

/* ---- shapes ------------------------------------------------------------------------- */

/* A shape given as an input tensor (TIDE_OPF_SHAPE_INPUT): as int64. */
static const char *shape_input(onnx_export *x, const ox_call *c, int k) {
  return c->din[k]->dt == TIDE_INT64 ? c->in[k] : cast(x, c->in[k], TIDE_INT64, NULL);
}

static tide_status map_reshape(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  const char *shape;
  bool zero = false;
  if (c->n_in >= 2) shape = shape_input(x, c, 1);
  else {
    shape = ox_init_ints(x, a->nints, a->ints);
    for (int i = 0; i < a->nints; i++) zero = zero || a->ints[i] == 0;
  }
  if (zero && x->opset < 14) return ox_fail(x, "a reshape to a dim of 0 needs opset 14 (allowzero)");
  Onnx__NodeProto *n = ox_node(x, "Reshape", 2, (const char *[]){c->in[0], shape}, 1, c->out);
  /* tide's 0 is a dim of size 0, never "copy the input's dim" */
  if (x->opset >= 14 && (zero || c->n_in >= 2)) ox_attr_i(x, n, "allowzero", 1);
  return TIDE_OK;
}

static tide_status map_broadcast_to(onnx_export *x, const ox_call *c) {
  const char *shape = c->n_in >= 2 ? shape_input(x, c, 1) : ox_init_ints(x, c->a->nints, c->a->ints);
  ox_op2(x, "Expand", c->in[0], shape, c->out[0]);
  return TIDE_OK;
}

static tide_status map_transpose(onnx_export *x, const ox_call *c) {
  Onnx__NodeProto *n = ox_node(x, "Transpose", 1, c->in, 1, c->out);
  if (c->a->nints > 0) ox_attr_ints(x, n, "perm", c->a->nints, c->a->ints);
  return TIDE_OK;
}

static tide_status map_matrix_transpose(onnx_export *x, const ox_call *c) {
  int r = c->din[0]->ndim;
  if (r < 2) return ox_fail(x, "needs a rank known to be at least 2");
  int64_t perm[TIDE_MAX_DIMS];
  for (int i = 0; i < r; i++) perm[i] = i;
  perm[r - 2] = r - 1, perm[r - 1] = r - 2;
  ox_attr_ints(x, ox_node(x, "Transpose", 1, c->in, 1, c->out), "perm", r, perm);
  return TIDE_OK;
}

/* Squeeze and Unsqueeze: axes as an input from opset 13 on. */
static void squeeze(onnx_export *x, const char *op, const char *v, int n, const int64_t *axes, const char *out) {
  ox_node(x, op, 2, (const char *[]){v, ox_init_ints(x, n, axes)}, 1, &out);
}

static tide_status map_squeeze(onnx_export *x, const ox_call *c) {
  const tide_tensor *d = c->din[0];
  if (c->a->nints > 0) {
    squeeze(x, "Squeeze", c->in[0], c->a->nints, c->a->ints, c->out[0]);
    return TIDE_OK;
  }
  /* every dim of size 1: they must be known */
  int64_t axes[TIDE_MAX_DIMS];
  int n = 0;
  if (d->ndim < 0) return ox_fail(x, "squeeze without axes needs the input's rank");
  for (int i = 0; i < d->ndim; i++) {
    if (d->dims[i] < 0) return ox_fail(x, "squeeze without axes needs every dim known (dim %d is not)", i);
    if (d->dims[i] == 1) axes[n++] = i;
  }
  if (n == 0) ox_op1(x, "Identity", c->in[0], c->out[0]);
  else squeeze(x, "Squeeze", c->in[0], n, axes, c->out[0]);
  return TIDE_OK;
}

static tide_status map_expand_dims(onnx_export *x, const ox_call *c) {
  int64_t axis = c->a->axis;
  squeeze(x, "Unsqueeze", c->in[0], 1, &axis, c->out[0]);
  return TIDE_OK;
}

/* tide's slice (Python's start:stop:step per leading dim, masks for left-out ends, and
 * dims indexed away) as Slice, then Squeeze of the indexed dims. */
static tide_status map_slice(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  int given = a->nints / 3;
  int64_t starts[TIDE_MAX_DIMS], ends[TIDE_MAX_DIMS], axes[TIDE_MAX_DIMS], steps[TIDE_MAX_DIMS], shrink[TIDE_MAX_DIMS];
  int n = 0, ns = 0;
  for (int i = 0; i < given && i < TIDE_MAX_DIMS; i++) {
    int64_t start = a->ints[3 * i], stop = a->ints[3 * i + 1], step = a->ints[3 * i + 2];
    bool is_shrink = (a->n >> i) & 1, no_start = (a->m >> i) & 1, no_stop = (a->m >> (i + 8)) & 1;
    if (is_shrink) {
      starts[n] = start, ends[n] = start == -1 ? INT64_MAX : start + 1, steps[n] = 1, axes[n++] = i;
      shrink[ns++] = i;
      continue;
    }
    if (step == 0) return ox_fail(x, "step 0 in dim %d", i);
    if (no_start && no_stop && step == 1) continue; /* the whole dim */
    starts[n] = no_start ? (step > 0 ? 0 : INT64_MAX) : start;
    ends[n] = no_stop ? (step > 0 ? INT64_MAX : INT64_MIN) : stop;
    steps[n] = step, axes[n++] = i;
  }
  const char *v = c->in[0];
  const char *sliced = ns ? ox_fresh(x, "Slice") : c->out[0];
  if (n == 0) ox_op1(x, "Identity", v, sliced);
  else {
    const char *in[5] = {v, ox_init_ints(x, n, starts), ox_init_ints(x, n, ends), ox_init_ints(x, n, axes),
                         ox_init_ints(x, n, steps)};
    ox_node(x, "Slice", 5, in, 1, &sliced);
  }
  if (ns) squeeze(x, "Squeeze", sliced, ns, shrink, c->out[0]);
  return TIDE_OK;
}

static tide_status map_tile(onnx_export *x, const ox_call *c) {
  ox_op2(x, "Tile", c->in[0], ox_init_ints(x, c->a->nints, c->a->ints), c->out[0]);
  return TIDE_OK;
}

static tide_status map_pad(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  int r = a->nints / 2;
  int64_t pads[2 * TIDE_MAX_DIMS];
  for (int d = 0; d < r && d < TIDE_MAX_DIMS; d++) pads[d] = a->ints[2 * d], pads[r + d] = a->ints[2 * d + 1];
  const char *in[3] = {c->in[0], ox_init_ints(x, 2 * r, pads), ox_init_scalar(x, dt0(c), a->scalars[0])};
  ox_node(x, "Pad", 3, in, 1, c->out);
  return TIDE_OK;
}

static tide_status map_gather(onnx_export *x, const ox_call *c) {
  if (c->a->n != 0) return ox_fail(x, "gather with batch_dims = %lld has no ONNX form tide writes", (long long)c->a->n);
  ox_attr_i(x, ox_node(x, "Gather", 2, c->in, 1, c->out), "axis", c->a->axis);
  return TIDE_OK;
}

/* gather_nd: GatherND with batch_dims, its indices as int64 (ONNX's only index type). */
static tide_status map_gather_nd(onnx_export *x, const ox_call *c) {
  const char *in[2] = {c->in[0], c->din[1]->dt == TIDE_INT64 ? c->in[1] : cast(x, c->in[1], TIDE_INT64, NULL)};
  Onnx__NodeProto *n = ox_node(x, "GatherND", 2, in, 1, c->out);
  if (c->a->n) ox_attr_i(x, n, "batch_dims", c->a->n);
  return TIDE_OK;
}

static tide_status map_shape(onnx_export *x, const ox_call *c) {
  const char *op = c->op == TIDE_OP_SHAPE ? "Shape" : "Size";
  int dt = c->dout[0]->dt;
  if (dt == TIDE_INT64) ox_op1(x, op, c->in[0], c->out[0]);
  else cast(x, ox_op1(x, op, c->in[0], NULL), dt, c->out[0]);
  return TIDE_OK;
}

static tide_status map_fill(onnx_export *x, const ox_call *c) {
  const char *shape = c->n_in >= 1 ? shape_input(x, c, 0) : ox_init_ints(x, c->a->nints, c->a->ints);
  ox_attr_scalar(x, ox_node(x, "ConstantOfShape", 1, &shape, 1, c->out), "value", c->dout[0]->dt, c->a->scalars[0]);
  return TIDE_OK;
}

static tide_status map_range(onnx_export *x, const ox_call *c) {
  int dt = c->dout[0]->dt;
  const tide_attrs *a = c->a;
  const char *in[3] = {num(x, dt, a->scalars[0]), num(x, dt, a->scalars[1]), num(x, dt, a->scalars[2])};
  ox_node(x, "Range", 3, in, 1, c->out);
  return TIDE_OK;
}

/* one_hot as TF has it: a position is `on` where the index equals it, so an index out of
 * [0, depth) (negative too, which ONNX's OneHot would count from the end) gives all `off`:
 * Equal(Unsqueeze(indices, axis), Range(depth) laid along axis), then Where. */
static tide_status map_one_hot(onnx_export *x, const ox_call *c) {
  const tide_attrs *a = c->a;
  int r = c->dout[0]->ndim;
  if (r < 1) return ox_fail(x, "needs the indices' rank known");
  int axis = a->axis < 0 ? a->axis + r : a->axis;
  if (axis < 0 || axis >= r) return ox_fail(x, "axis %d is out of range for a rank-%d result", (int)a->axis, r);
  int64_t ax = axis, depth = a->n, shape[TIDE_MAX_DIMS];
  int idt = c->din[0]->dt, n = r - axis;
  const char *indices = c->in[0];
  if (idt != TIDE_INT32 && idt != TIDE_INT64) indices = cast(x, indices, TIDE_INT64, NULL), idt = TIDE_INT64; /* Range's types */
  for (int i = 0; i < n; i++) shape[i] = i == 0 ? depth : 1;
  const char *range_in[3] = {num(x, idt, 0), num(x, idt, (double)depth), num(x, idt, 1)};
  const char *range = ox_fresh(x, "Range");
  ox_node(x, "Range", 3, range_in, 1, &range);
  const char *along = ox_op2(x, "Reshape", range, ox_init_ints(x, n, shape), NULL);
  const char *idx = ox_op2(x, "Unsqueeze", indices, ox_init_ints(x, 1, &ax), NULL);
  int dt = c->dout[0]->dt;
  const char *in[3] = {ox_op2(x, "Equal", idx, along, NULL), num(x, dt, a->scalars[0]), num(x, dt, a->scalars[1])};
  ox_node(x, "Where", 3, in, 1, c->out);
  return TIDE_OK;
}

/* top_k along the last axis: TopK's values, and its int64 indices as tide's int32. */
static tide_status map_top_k(onnx_export *x, const ox_call *c) {
  int64_t k = c->a->n;
  const char *in[2] = {c->in[0], ox_init_ints(x, 1, &k)};
  const char *outs[2] = {c->out[0], ox_fresh(x, "TopK")};
  Onnx__NodeProto *n = ox_node(x, "TopK", 2, in, 2, outs);
  ox_attr_i(x, n, "axis", -1);
  ox_attr_i(x, n, "largest", 1);
  ox_attr_i(x, n, "sorted", 1);
  cast(x, outs[1], c->dout[1]->dt, c->out[1]);
  return TIDE_OK;
}

ox_map_fn ox_mapping(const onnx_export *x, int op) {
  if (op < 0 || op >= TIDE_NUM_OPS) return NULL;
  if (DIRECT[op].name) return x->opset >= DIRECT[op].min_opset ? map_direct : NULL;
  switch (op) {
  case TIDE_OP_SQUARE: case TIDE_OP_RSQRT: case TIDE_OP_EXPM1: case TIDE_OP_LOG1P: case TIDE_OP_ERFC:
  case TIDE_OP_ISFINITE: case TIDE_OP_ISINF: case TIDE_OP_ROUND: case TIDE_OP_RELU: case TIDE_OP_RELU6: case TIDE_OP_HARD_TANH:
  case TIDE_OP_ELU: case TIDE_OP_LEAKY_RELU: case TIDE_OP_GELU: case TIDE_OP_CAST:
    return map_unary_more;
  case TIDE_OP_DIV: case TIDE_OP_NOT_EQUAL: case TIDE_OP_SQUARED_DIFFERENCE: case TIDE_OP_FLOORDIV:
  case TIDE_OP_MOD: case TIDE_OP_TRUNCATEMOD: case TIDE_OP_TRUNCATEDIV: case TIDE_OP_DIV_NO_NAN: case TIDE_OP_CLIP:
    return map_binary_more;
  case TIDE_OP_SUM: case TIDE_OP_MEAN: case TIDE_OP_MAX: case TIDE_OP_MIN: case TIDE_OP_PROD: return map_reduce;
  case TIDE_OP_ANY: case TIDE_OP_ALL: return map_any_all;
  case TIDE_OP_ARGMAX: case TIDE_OP_ARGMIN: return map_argreduce;
  case TIDE_OP_CUMSUM: return map_cumsum;
  case TIDE_OP_RESHAPE: return map_reshape;
  case TIDE_OP_BROADCAST_TO: return map_broadcast_to;
  case TIDE_OP_TRANSPOSE: return map_transpose;
  case TIDE_OP_MATRIX_TRANSPOSE: return map_matrix_transpose;
  case TIDE_OP_SQUEEZE: return map_squeeze;
  case TIDE_OP_EXPAND_DIMS: return map_expand_dims;
  case TIDE_OP_SLICE: return map_slice;
  case TIDE_OP_TILE: return map_tile;
  case TIDE_OP_PAD: return map_pad;
  case TIDE_OP_GATHER: return map_gather;
  case TIDE_OP_GATHER_ND: return map_gather_nd;
  case TIDE_OP_SHAPE: case TIDE_OP_SIZE: return map_shape;
  case TIDE_OP_FILL: return map_fill;
  case TIDE_OP_RANGE: return map_range;
  case TIDE_OP_ONE_HOT: return map_one_hot;
  case TIDE_OP_TOP_K: return map_top_k;
  default: return ox_nn_mapping(x, op);
  }
}
