/* io/tf_ops_nn.c — TF's image ops mapped onto tide's (channels-last only): Conv2D,
 * DepthwiseConv2dNative, MaxPool, AvgPool, and FusedBatchNorm* in inference. */
#include "tf_internal.h"

#include <string.h>

enum { PAD_VALID = 0, PAD_SAME = 1, PAD_EXPLICIT = 2 }; /* tide's conv and pool modes (ops.def) */

static bool attr_is(const Tensorflow__NodeDef *n, const char *k, const char *want) {
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  size_t len = strlen(want);
  return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S && a->s.len == len && !memcmp(a->s.data, want, len);
}

/* A list attribute of 4 ints in NHWC order ([1, h, w, 1]): h and w, or the default. */
static tide_status hw_pair(const Tensorflow__NodeDef *n, const char *k, int64_t dflt, int64_t out[2]) {
  out[0] = out[1] = dflt;
  const Tensorflow__AttrValue *a = tf_attr(n, k);
  if (!a) return TIDE_OK;
  if (a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || a->list->n_i != 4 || a->list->i[0] != 1 ||
      a->list->i[3] != 1 || a->list->i[1] < 1 || a->list->i[2] < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its %s must be [1, h, w, 1] with h, w >= 1 (NHWC)", k);
  out[0] = a->list->i[1];
  out[1] = a->list->i[2];
  return TIDE_OK;
}

static tide_status nhwc(const Tensorflow__NodeDef *n) {
  const Tensorflow__AttrValue *a = tf_attr(n, "data_format");
  if (!a || attr_is(n, "data_format", "NHWC")) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_VALUE, "data_format %.*s is not mapped (tide is channels-last: NHWC)",
                   a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S ? (int)a->s.len : 1,
                   a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S ? (const char *)a->s.data : "?");
}

/* padding (and explicit_paddings) as tide's mode and [top, bottom, left, right]. */
static tide_status padding(const Tensorflow__NodeDef *n, bool explicit_ok, int64_t *mode, int64_t pads[4]) {
  memset(pads, 0, 4 * sizeof *pads);
  if (attr_is(n, "padding", "SAME")) *mode = PAD_SAME;
  else if (attr_is(n, "padding", "VALID")) *mode = PAD_VALID;
  else if (explicit_ok && attr_is(n, "padding", "EXPLICIT")) {
    const Tensorflow__AttrValue *e = tf_attr(n, "explicit_paddings");
    if (!e || e->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || e->list->n_i != 8 || e->list->i[0] || e->list->i[1] ||
        e->list->i[6] || e->list->i[7])
      return TIDE_FAIL(TIDE_ERR_VALUE, "its explicit_paddings must pad only height and width (8 values, NHWC)");
    for (int k = 0; k < 4; k++) {
      pads[k] = e->list->i[2 + k];
      if (pads[k] < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "its explicit_paddings are negative");
    }
    *mode = PAD_EXPLICIT;
  } else return TIDE_FAIL(TIDE_ERR_VALUE, "its padding is not SAME, VALID%s", explicit_ok ? " or EXPLICIT" : "");
  return TIDE_OK;
}

static tide_status two_tensors(tf_val *const *in, int n_in, const tide_tensor **a, const tide_tensor **b) {
  if (n_in < 2 || in[0]->var >= 0 || in[1]->var >= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "it needs two tensor inputs");
  *a = &in[0]->t;
  *b = &in[1]->t;
  return TIDE_OK;
}

static tide_status run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tf_val *out) {
  tide_tensor *o[1] = {&out->t};
  tide_status st = tide_op_run(op, a, n, ins, 1, o);
  if (!st) out->set = true;
  return st;
}

/* Conv2D and DepthwiseConv2dNative: (x, filters) with strides, dilations and padding. */
tide_status tf_map_conv(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                        tf_val *out) {
  (void)im, (void)n_out;
  const tide_tensor *ins[2];
  int64_t s[2], d[2], mode, pads[4];
  tide_status st = two_tensors(in, n_in, &ins[0], &ins[1]);
  if (!st) st = nhwc(node);
  if (!st) st = hw_pair(node, "strides", 1, s);
  if (!st) st = hw_pair(node, "dilations", 1, d);
  if (!st) st = padding(node, true, &mode, pads);
  if (st) return st;
  tide_attrs a = {0};
  a.ints[0] = s[0], a.ints[1] = s[1], a.ints[2] = d[0], a.ints[3] = d[1];
  for (int k = 0; k < 4; k++) a.ints[4 + k] = pads[k];
  a.nints = 12;
  a.m = mode;
  return run1(strcmp(node->op, "Conv2D") ? TIDE_OP_DEPTHWISE_CONV2D : TIDE_OP_CONV2D, &a, 2, ins, &out[0]);
}

/* MaxPool and AvgPool: ksize, strides, SAME or VALID. */
tide_status tf_map_pool(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                        tf_val *out) {
  (void)im, (void)n_out;
  if (n_in < 1 || in[0]->var >= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "it needs a tensor input");
  const tide_tensor *x = &in[0]->t;
  int64_t k[2], s[2], mode, pads[4];
  tide_status st = nhwc(node);
  if (!st) st = hw_pair(node, "ksize", 1, k);
  if (!st) st = hw_pair(node, "strides", 1, s);
  if (!st) st = padding(node, false, &mode, pads);
  if (st) return st;
  tide_attrs a = {0};
  a.ints[0] = k[0], a.ints[1] = k[1], a.ints[2] = s[0], a.ints[3] = s[1];
  a.nints = 4;
  a.m = mode;
  return run1(strcmp(node->op, "MaxPool") ? TIDE_OP_AVG_POOL2D : TIDE_OP_MAX_POOL2D, &a, 1, &x, &out[0]);
}

/* FusedBatchNorm, V2, V3 in inference (is_training false): y = (x - mean) * scale / sqrt(var + eps) + offset;
 * the other outputs (batch statistics, reserve spaces) give the mean and variance. */
tide_status tf_map_batch_norm(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                              tf_val *out) {
  (void)im;
  const Tensorflow__AttrValue *tr = tf_attr(node, "is_training");
  if (tr && tr->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && tr->b)
    return TIDE_FAIL(TIDE_ERR_VALUE, "a FusedBatchNorm in training mode (is_training) is not mapped");
  tide_status st = nhwc(node);
  if (st) return st;
  if (n_in < 5) return TIDE_FAIL(TIDE_ERR_VALUE, "it needs x, scale, offset, mean and variance");
  for (int k = 0; k < 5; k++)
    if (in[k]->var >= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "input %d is a variable's handle where a tensor is due", k);
  const tide_tensor *x = &in[0]->t, *scale = &in[1]->t, *offset = &in[2]->t, *mean = &in[3]->t, *var = &in[4]->t;
  const Tensorflow__AttrValue *ea = tf_attr(node, "epsilon");
  double eps = ea && ea->value_case == TENSORFLOW__ATTR_VALUE__VALUE_F ? ea->f : 1e-4;
  tide_tensor e = {0}, eps_t = {0}, ve = {0}, r = {0}, mul = {0}, xc = {0}, prod = {0};
  tide_attrs none = {0}, c = {0};
  c.dtype = var->dt;
  st = tide_tensor_init(&e, TIDE_FLOAT64, 0, NULL); /* eps as a scalar of var's dtype */
  if (!st) {
    *(double *)e.data = (double)(float)eps; /* TF's attribute is a float */
    const tide_tensor *ci[1] = {&e};
    tide_tensor *co[1] = {&eps_t};
    st = tide_op_run(TIDE_OP_CAST, &c, 1, ci, 1, co);
  }
  /* one registry op of N inputs: OUT = OP(A, B) */
#define STEP(OP, N, A, B, OUT)                                                                           \
  if (!st) {                                                                                         \
    const tide_tensor *i2[2] = {(A), (B)};                                                           \
    tide_tensor *o2[1] = {(OUT)};                                                                    \
    st = tide_op_run((OP), &none, (N), i2, 1, o2);                                                \
  }
  STEP(TIDE_OP_ADD, 2, var, &eps_t, &ve)
  STEP(TIDE_OP_RSQRT, 1, &ve, NULL, &r)
  STEP(TIDE_OP_MUL, 2, &r, scale, &mul)
  STEP(TIDE_OP_SUB, 2, x, mean, &xc)
  STEP(TIDE_OP_MUL, 2, &xc, &mul, &prod)
#undef STEP
  if (!st) {
    const tide_tensor *i2[2] = {&prod, offset};
    st = run1(TIDE_OP_ADD, &none, 2, i2, &out[0]);
  }
  for (int k = 1; !st && k < n_out; k++) st = tf_val_copy(&out[k], k % 2 ? in[3] : in[4]);
  tide_tensor *all[] = {&e, &eps_t, &ve, &r, &mul, &xc, &prod};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tide_tensor_release(all[k]);
  return st;
}
