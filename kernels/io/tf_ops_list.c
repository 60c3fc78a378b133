/* io/tf_ops_list.c — TF's TensorList ops (what tf.TensorArray and Keras's RNN loops save as) mapped onto dense
 * tensors [num_elements, element...]: a list is its stacked tensor, so a While carries it as one loop variable
 * and gradients flow through registry ops (where, gather), as tide.TensorArray does. */
#include "tf_internal.h"

#include "tide/strings.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static tide_status run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tf_val *out) {
  tide_tensor *o[1] = {&out->t};
  tide_status st = tide_op_run(op, a, n, ins, 1, o);
  if (!st) out->set = true;
  return st;
}

/* TensorListReserve(element_shape, num_elements): zeros [num_elements, element_shape], a dim TF leaves unknown
 * (-1) being 1 here: the first SetItem broadcasts it to the item's (a While lets that dim change). */
static tide_status map_reserve(const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, tf_val *out) {
  int64_t shape[TIDE_MAX_DIMS], count = 0;
  int nd = 0, one = 0;
  tide_status st = tf_known_ints(in, n_in, 0, "element_shape", shape, TIDE_MAX_DIMS - 1, &nd);
  if (!st) st = tf_known_ints(in, n_in, 1, "num_elements", &count, 1, &one);
  if (st) return st;
  if (in[0]->t.ndim == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "a TensorList whose elements have unknown rank is not mapped (give the "
                     "TensorArray an element_shape)");
  if (one != 1 || count < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "a TensorList of unknown or negative size (%" PRId64 ") is not mapped: tide's "
                     "lists have a size known when the model loads", count);
  const Tensorflow__AttrValue *a = tf_attr(node, "element_dtype");
  int dt = a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE ? tf_dtype_to_tide((int)a->type) : -1;
  if (dt < 0) return TIDE_FAIL(TIDE_ERR_DTYPE, "a TensorList of a dtype tide does not map");
  int64_t dims[TIDE_MAX_DIMS] = {count};
  int64_t bytes = count * (int64_t)tide_dtype_size(dt);
  for (int d = 0; d < nd; d++) {
    if (shape[d] < -1) return TIDE_FAIL(TIDE_ERR_SHAPE, "its element_shape has dim %" PRId64, shape[d]);
    dims[d + 1] = shape[d] < 0 ? 1 : shape[d];
    if (__builtin_mul_overflow(bytes, dims[d + 1], &bytes) || bytes > ((int64_t)1 << 31))
      return TIDE_FAIL(TIDE_ERR_VALUE, "a TensorList of more than 2 GiB is not mapped");
  }
  st = tide_tensor_init(&out->t, dt, nd + 1, dims);
  if (!st) {
    memset(out->t.data, 0, (size_t)bytes);
    out->set = true;
  }
  return st;
}

/* The list input k: a tensor with a first (element) dim. */
static tide_status list_in(tf_val *const *in, int n_in, int k, const tide_tensor **out) {
  tide_status st = tf_tensor_in(in, n_in, k, out);
  if (!st && (*out)->ndim < 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "input %d is not a TensorList (a tensor of rank %d)", k, (*out)->ndim);
  return st;
}

/* An index input as an int32 scalar (TF's are int32 already). */
static tide_status index_in(tf_val *const *in, int n_in, int k, const tide_tensor **out) {
  tide_status st = tf_tensor_in(in, n_in, k, out);
  if (!st && ((*out)->ndim != 0 || ((*out)->dt != TIDE_INT32 && (*out)->dt != TIDE_INT64)))
    return TIDE_FAIL(TIDE_ERR_VALUE, "its index must be an integer scalar, got %s of rank %d",
                     tide_dtype_name((*out)->dt), (*out)->ndim);
  return st;
}

/* An assert that 0 <= idx < rows when the graph runs (as TF's TensorListSetItem fails): an effect node, kept in
 * program order. */
static tide_status check_index(const tide_tensor *idx, int64_t rows) {
  tide_tensor lo = {0}, hi = {0}, ge = {0}, lt = {0}, ok = {0}, msg = {0}, res = {0};
  tide_attrs a = {0};
  tide_status st = tide_tensor_init(&lo, idx->dt, 0, NULL);
  if (!st) st = tide_tensor_init(&hi, idx->dt, 0, NULL);
  if (!st) {
    if (idx->dt == TIDE_INT32) {
      *(int32_t *)lo.data = 0;
      *(int32_t *)hi.data = (int32_t)rows;
    } else {
      *(int64_t *)lo.data = 0;
      *(int64_t *)hi.data = rows;
    }
  }
  const tide_tensor *p[3];
  tide_tensor *o[1];
  if (!st) {
    p[0] = idx, p[1] = &lo, o[0] = &ge;
    st = tide_op_run(TIDE_OP_GREATER_EQUAL, &a, 2, p, 1, o);
  }
  if (!st) {
    p[0] = idx, p[1] = &hi, o[0] = &lt;
    st = tide_op_run(TIDE_OP_LESS, &a, 2, p, 1, o);
  }
  if (!st) {
    p[0] = &ge, p[1] = &lt, o[0] = &ok;
    st = tide_op_run(TIDE_OP_LOGICAL_AND, &a, 2, p, 1, o);
  }
  char text[96];
  int len = snprintf(text, sizeof text, "TensorListSetItem: index out of range for a TensorList of size %" PRId64,
                     rows);
  if (!st) st = tide_tensor_init(&msg, TIDE_STRING, 0, NULL);
  if (!st) st = tide_string_set(&msg, 0, text, len);
  if (!st) {
    p[0] = &ok, p[1] = &msg, p[2] = idx, o[0] = &res;
    st = tide_op_run(TIDE_OP_ASSERT, &a, 3, p, 1, o);
  }
  tide_tensor *all[] = {&lo, &hi, &ge, &lt, &ok, &msg, &res};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tide_tensor_release(all[k]);
  return st;
}

/* TensorListSetItem(list, index, item): where(row == index, item, list) over the rows, so the index may be
 * known only at run time (a loop's counter) and the gradient is where's; an index out of range fails when the
 * graph runs, as in TF. */
static tide_status map_set_item(int n_in, tf_val *const *in, tf_val *out) {
  const tide_tensor *list = NULL, *idx = NULL, *item = NULL;
  tide_status st = list_in(in, n_in, 0, &list);
  if (!st) st = index_in(in, n_in, 1, &idx);
  if (!st) st = tf_tensor_in(in, n_in, 2, &item);
  if (st) return st;
  int64_t rows = list->dims[0];
  if (rows < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "a TensorList of a size unknown at load time is not mapped");
  if (item->ndim != list->ndim - 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "its item has rank %d but the list's elements have rank %d", item->ndim,
                     list->ndim - 1);
  st = check_index(idx, rows);
  if (st) return st;
  tide_tensor iota = {0}, mask = {0}, mask_shape = {0}, shaped = {0}, row = {0};
  st = tide_tensor_init(&iota, idx->dt, 1, &rows);
  for (int64_t i = 0; !st && i < rows; i++) {
    if (idx->dt == TIDE_INT32) ((int32_t *)iota.data)[i] = (int32_t)i;
    else ((int64_t *)iota.data)[i] = i;
  }
  int64_t nd = list->ndim;
  if (!st) st = tide_tensor_init(&mask_shape, TIDE_INT64, 1, &nd);
  for (int d = 0; !st && d < list->ndim; d++) ((int64_t *)mask_shape.data)[d] = d ? 1 : rows;
  tide_attrs a = {0};
  if (!st) {
    const tide_tensor *ins[2] = {&iota, idx};
    tide_tensor *o[1] = {&mask};
    st = tide_op_run(TIDE_OP_EQUAL, &a, 2, ins, 1, o);
  }
  if (!st) {
    const tide_tensor *ins[2] = {&mask, &mask_shape};
    tide_tensor *o[1] = {&shaped};
    st = tide_op_run(TIDE_OP_RESHAPE, &a, 2, ins, 1, o);
  }
  if (!st) {
    tide_tensor *o[1] = {&row};
    st = tide_op_run(TIDE_OP_EXPAND_DIMS, &a, 1, &item, 1, o); /* axis 0 */
  }
  if (!st) {
    const tide_tensor *ins[3] = {&shaped, &row, list};
    st = run1(TIDE_OP_WHERE, &a, 3, ins, out);
  }
  tide_tensor_release(&iota);
  tide_tensor_release(&mask);
  tide_tensor_release(&mask_shape);
  tide_tensor_release(&shaped);
  tide_tensor_release(&row);
  return st;
}

/* TensorListGetItem(list, index, element_shape): gather(list, index) along the rows. */
static tide_status map_get_item(int n_in, tf_val *const *in, tf_val *out) {
  const tide_tensor *ins[2];
  tide_status st = list_in(in, n_in, 0, &ins[0]);
  if (!st) st = index_in(in, n_in, 1, &ins[1]);
  if (st) return st;
  tide_attrs a = {0};
  return run1(TIDE_OP_GATHER, &a, 2, ins, out);
}

tide_status tf_map_tensor_list(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                               tf_val *out) {
  (void)im, (void)n_out;
  const char *op = node->op;
  if (!strcmp(op, "TensorListReserve")) return map_reserve(node, n_in, in, out);
  if (!strcmp(op, "TensorListSetItem")) return map_set_item(n_in, in, out);
  if (!strcmp(op, "TensorListGetItem")) return map_get_item(n_in, in, out);
  /* TensorListFromTensor(tensor, element_shape) and TensorListStack(list, element_shape): the tensor is the list */
  const tide_tensor *t = NULL;
  tide_status st = list_in(in, n_in, 0, &t);
  if (st) return st;
  return tf_val_copy(&out[0], in[0]);
}
