/* core/shape_input.c — shapes as tensors: the shape and size ops' inference,
 * and reading the shape input of an op flagged TIDE_OPF_SHAPE_INPUT. */
#include "infer_rank.h"

#include <stdio.h>
#include <string.h>

/* The values of a shape tensor are known when it holds data: eagerly, at a
 * graph's run, or a graph constant. A traced value's descriptor (symbolic) or
 * a plan's layout header (no data) has only the length. */
static bool values_known(const tide_tensor *s) {
  return !(s->flags & TIDE_TENSOR_SYMBOLIC) && (s->data != NULL || s->nelem == 0);
}

tide_status tide_shape_input(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             tide_attrs *buf, const tide_attrs **use, bool *unknown) {
  *use = a;
  *unknown = false;
  if (!(def->flags & TIDE_OPF_SHAPE_INPUT) || n_in <= def->n_in) return TIDE_OK;
  const tide_tensor *s = in[def->n_in];
  char ss[128];
  if (s->dt != TIDE_INT32 && s->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the shape must be an int32 or int64 tensor, got %s %s (use :cast(\"int32\"))",
                     def->name, tide_dtype_name(s->dt), TIDE_SHAPE_STR(ss, s));
  if (s->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the shape must be a 1-D tensor, got shape %s", def->name,
                     TIDE_SHAPE_STR(ss, s));
  *buf = *a;
  if (s->dims[0] < 0) { /* a traced shape of unknown length: the result's rank is unknown too */
    buf->nints = -1;
    *unknown = true;
    *use = buf;
    return TIDE_OK;
  }
  if (s->dims[0] > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the shape has %lld entries (at most %d)", def->name, (long long)s->dims[0],
                     TIDE_MAX_DIMS);
  buf->nints = (int32_t)s->dims[0];
  *unknown = !values_known(s);
  /* attrs ints of the shape's length say what the caller knew of the values
   * while tracing (-1: known only at run time): they size the traced result,
   * and the run checks that the values keep them. */
  bool hinted = a->nints == buf->nints;
  for (int i = 0; i < buf->nints; i++) {
    int64_t hint = hinted && a->ints[i] >= 0 ? a->ints[i] : -1;
    if (*unknown) buf->ints[i] = hint;
    else {
      const char *p = (const char *)s->data + i * s->strides[0] * (int64_t)tide_dtype_size_unchecked(s->dt);
      buf->ints[i] = s->dt == TIDE_INT32 ? *(const int32_t *)p : *(const int64_t *)p;
      if (hint >= 0 && buf->ints[i] != hint)
        return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the shape tensor holds %lld at %d where the traced graph has %lld",
                         def->name, (long long)buf->ints[i], i, (long long)hint);
    }
  }
  *use = buf;
  /* Negative values (reshape's one -1 aside, which it checks itself), named
   * as numbers: a shape string would print -1 as None. */
  for (int i = 0; !*unknown && def->id != TIDE_OP_RESHAPE && i < buf->nints; i++)
    if (buf->ints[i] < 0) {
      char vals[256];
      int len = 0;
      for (int k = 0; k < buf->nints && len < (int)sizeof vals - 24; k++)
        len += snprintf(vals + len, sizeof vals - (size_t)len, "%s%lld", k ? ", " : "", (long long)buf->ints[k]);
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the shape tensor holds a negative dimension: [%s] (%lld at %d)", def->name,
                       vals, (long long)buf->ints[i], i);
    }
  return TIDE_OK;
}

void tide_shape_input_unknown(tide_tensor *out, int dt, const tide_attrs *use) {
  if (use->nints < 0) { /* a shape of unknown length */
    tide_tensor_set_contiguous_layout(out, dt, TIDE_UNKNOWN_RANK, NULL);
    return;
  }
  tide_tensor_set_contiguous_layout(out, dt, use->nints, use->ints);
}

/* shape: [rank]; size: a scalar. Both in attrs.dtype, int32 or int64 (TF's out_type).
 * The one family whose inference reads an unknown rank itself (infer_rank.c). */
tide_status tide_infer_shape_of(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (a->dtype != TIDE_INT32 && a->dtype != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: out_type must be int32 or int64, got %s", def->name,
                     a->dtype >= 0 && a->dtype < TIDE_NUM_DTYPES ? tide_dtype_name(a->dtype) : "an invalid dtype");
  int64_t rank = in[0]->ndim < 0 ? -1 : in[0]->ndim; /* an unknown rank: a vector of unknown length */
  tide_tensor_set_contiguous_layout(out[0], a->dtype, def->id == TIDE_OP_SHAPE ? 1 : 0, &rank);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* shape and size read an unknown rank themselves (a vector of unknown length). */
const tide_rank_rule tide_infer_shape_of_rank = {NULL, NULL, tide_infer_shape_of};
