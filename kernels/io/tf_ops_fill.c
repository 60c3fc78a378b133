/* io/tf_ops_fill.c — the TF ops that make and cut tensors around TF's loops and Keras's RNN cells: Fill,
 * ZerosLike/OnesLike (shapes known at load time or read at run time), Range (bounds known or not) and Split
 * into equal parts along a known axis. */
#include "tf_internal.h"

#include <inttypes.h>
#include <string.h>

static tide_status run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tf_val *out) {
  tide_tensor *o[1] = {&out->t};
  tide_status st = tide_op_run(op, a, n, ins, 1, o);
  if (!st) out->set = true;
  return st;
}

/* x's dims, all known, into a.ints; false when one is not (or the rank is unknown). */
static bool known_shape(const tide_tensor *x, tide_attrs *a) {
  if (x->ndim < 0 || x->ndim > TIDE_MAX_INTS) return false;
  for (int d = 0; d < x->ndim; d++) {
    if (x->dims[d] < 0) return false;
    a->ints[d] = x->dims[d];
  }
  a->nints = x->ndim;
  return true;
}

/* value (dtype dt) everywhere in a tensor of shape `shape` (a 1-D integer tensor: known or read at run time). */
static tide_status fill(int dt, double value, const tide_tensor *shape, bool shape_known, tf_val *out) {
  tide_attrs a = {0};
  a.dtype = dt;
  a.scalars[0] = value;
  if (shape_known && shape->nelem <= TIDE_MAX_INTS) {
    a.nints = (int32_t)shape->nelem;
    for (int64_t i = 0; i < shape->nelem; i++) {
      a.ints[i] = (int64_t)tf_number_at(shape, i);
      if (a.ints[i] < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "its shape has dim %" PRId64, a.ints[i]);
    }
    return run1(TIDE_OP_FILL, &a, 0, NULL, out);
  }
  return run1(TIDE_OP_FILL, &a, 1, &shape, out);
}

/* Fill(dims, value): value known when the model loads is the fill's; else zeros + value. */
static tide_status map_fill(int n_in, tf_val *const *in, tf_val *out) {
  const tide_tensor *dims = NULL, *v = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &dims);
  if (!st) st = tf_tensor_in(in, n_in, 1, &v);
  if (st) return st;
  if (dims->ndim != 1 || (dims->dt != TIDE_INT32 && dims->dt != TIDE_INT64))
    return TIDE_FAIL(TIDE_ERR_VALUE, "its dims must be a 1-D integer tensor, got %s of rank %d",
                     tide_dtype_name(dims->dt), dims->ndim);
  if (v->ndim != 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "its value must be a scalar, got rank %d", v->ndim);
  if (v->dt == TIDE_STRING) return TIDE_FAIL(TIDE_ERR_DTYPE, "a Fill of strings is not mapped");
  if (tf_val_known(in[1])) return fill(v->dt, tf_number_at(v, 0), dims, tf_val_known(in[0]), out);
  tf_val zeros = {.var = -1};
  st = fill(v->dt, 0, dims, tf_val_known(in[0]), &zeros);
  if (!st) {
    const tide_tensor *ins[2] = {&zeros.t, v};
    st = run1(v->dt == TIDE_BOOL ? TIDE_OP_LOGICAL_OR : TIDE_OP_ADD, &(tide_attrs){0}, 2, ins, out);
  }
  tf_val_release(&zeros);
  return st;
}

/* ZerosLike/OnesLike(x): a fill of x's shape (known, or x's shape at run time). */
static tide_status map_like(const char *op, int n_in, tf_val *const *in, tf_val *out) {
  const tide_tensor *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (st) return st;
  if (x->dt == TIDE_STRING) return TIDE_FAIL(TIDE_ERR_DTYPE, "a %s of strings is not mapped", op);
  double v = strcmp(op, "ZerosLike") ? 1 : 0;
  tide_attrs a = {0};
  a.dtype = x->dt;
  a.scalars[0] = v;
  if (known_shape(x, &a)) return run1(TIDE_OP_FILL, &a, 0, NULL, out);
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "a %s of a tensor of unknown rank is not mapped", op);
  tf_val shape = {.var = -1};
  tide_attrs s = {0};
  s.dtype = TIDE_INT64;
  st = run1(TIDE_OP_SHAPE, &s, 1, &x, &shape);
  const tide_tensor *p = &shape.t;
  if (!st) st = run1(TIDE_OP_FILL, &a, 1, &p, out);
  tf_val_release(&shape);
  return st;
}

/* Range(start, limit, delta) of dtype Tidx: range_dynamic, whose length is known when the bounds are. */
static tide_status map_range(const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, tf_val *out) {
  const tide_tensor *ins[3];
  for (int k = 0; k < 3; k++) {
    tide_status st = tf_tensor_in(in, n_in, k, &ins[k]);
    if (st) return st;
    if (ins[k]->ndim != 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "its input %d must be a scalar, got rank %d", k, ins[k]->ndim);
  }
  const Tensorflow__AttrValue *t = tf_attr(node, "Tidx");
  int dt = t && t->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE ? tf_dtype_to_tide((int)t->type) : ins[0]->dt;
  if (dt < 0) return TIDE_FAIL(TIDE_ERR_DTYPE, "a Range of a dtype tide does not map");
  tide_attrs a = {0};
  a.dtype = dt;
  return run1(TIDE_OP_RANGE_DYNAMIC, &a, 3, ins, out);
}

/* Split(split_dim, value), num_split equal parts: one slice each along the known axis. */
static tide_status map_split(const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out, tf_val *out) {
  const tide_tensor *axis_t = NULL, *x = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &axis_t);
  if (!st) st = tf_tensor_in(in, n_in, 1, &x);
  if (st) return st;
  if (!tf_val_known(in[0]) || axis_t->nelem != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its split_dim must be one number known when the model loads");
  int64_t axis = (int64_t)tf_number_at(axis_t, 0);
  if (x->ndim < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "a Split of a tensor of unknown rank is not mapped");
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim || axis + 1 > TIDE_MAX_INTS / 3)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its split_dim is out of range for a tensor of rank %d", x->ndim);
  int64_t size = x->dims[axis];
  if (n_out < 1 || size < 0 || size % n_out)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "it splits dim %" PRId64 " of size %" PRId64 " into %d parts: the size must be "
                     "known when the model loads and divide evenly", axis, size, n_out);
  for (int k = 0; !st && k < n_out; k++) {
    tide_attrs a = {0};
    for (int d = 0; d < axis; d++) { /* whole dims: begin and end masks */
      a.ints[3 * d + 2] = 1;
      a.m |= (int64_t)1 << d | ((int64_t)1 << d) << 8;
    }
    a.ints[3 * axis] = k * (size / n_out);
    a.ints[3 * axis + 1] = (k + 1) * (size / n_out);
    a.ints[3 * axis + 2] = 1;
    a.nints = (int32_t)(3 * (axis + 1));
    st = run1(TIDE_OP_SLICE, &a, 1, &x, &out[k]);
  }
  (void)node;
  return st;
}

tide_status tf_map_fill_ops(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                            tf_val *out) {
  (void)im;
  const char *op = node->op;
  if (!strcmp(op, "Fill")) return map_fill(n_in, in, out);
  if (!strcmp(op, "ZerosLike") || !strcmp(op, "OnesLike")) return map_like(op, n_in, in, out);
  if (!strcmp(op, "Range")) return map_range(node, n_in, in, out);
  if (!strcmp(op, "Split")) return map_split(node, n_in, in, n_out, out);
  return TIDE_FAIL(TIDE_ERR_INTERNAL, "no fill mapping for %s", op);
}
