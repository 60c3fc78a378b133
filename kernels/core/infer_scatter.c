/* core/infer_scatter.c — shape and dtype inference of scatter_add, the inverse
 * of gather: base [P...], updates shaped like gather(base, indices) -> base's shape. */
#include "infer_rank.h"
#include "unknown_dims.h"

/* Check scatter_add's (base, indices, updates) against the gather layout rules
 * (axis against base, batch_dims against indices, as tf.gather reads them). */
tide_status tide_infer_scatter_add(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *base = in[0], *idx = in[1], *upd = in[2];
  tide_status st = tide_check_dtype(def, base, "base");
  if (st) return st;
  if (idx->dt != TIDE_INT32 && idx->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: indices must be int32 or int64, got %s (use :cast(\"int32\"))", def->name,
                     tide_dtype_name(idx->dt));
  if (upd->dt != base->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: updates are %s but base is %s (convert with :cast(\"%s\"))", def->name,
                     tide_dtype_name(upd->dt), tide_dtype_name(base->dt), tide_dtype_name(base->dt));
  char sb[128], si[128], su[128], se[128];
  if (base->ndim == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: base must have at least one dimension, got a 0-d tensor", def->name);
  int64_t bd = a->n < 0 ? a->n + idx->ndim : a->n;
  if (bd < 0 || bd > idx->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: batch_dims %lld is out of range for indices of rank %d (shape %s)",
                     def->name, (long long)a->n, idx->ndim, TIDE_SHAPE_STR(si, idx));
  int ax = tide_normalize_axis(def->name, a->axis, base->ndim);
  if (ax < 0) return tide_last_status();
  if (bd > ax)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: batch_dims (%lld) must be less than or equal to axis (%d)", def->name,
                     (long long)bd, ax);
  for (int d = 0; d < bd; d++)
    if (!tide_dims_agree(base->dims[d], idx->dims[d]))
      return TIDE_FAIL(TIDE_ERR_SHAPE,
                       "%s: with batch_dims=%lld, base and indices must agree on their first %lld dims, but "
                       "dimension %d differs (base %s, indices %s)", def->name, (long long)bd, (long long)bd, d,
                       TIDE_SHAPE_STR(sb, base), TIDE_SHAPE_STR(si, idx));
  /* updates: base.shape[:axis] + indices.shape[batch_dims:] + base.shape[axis+1:], as gather's output */
  int nexp = base->ndim - 1 + idx->ndim - (int)bd;
  if (nexp > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: updates would need rank %d, more than %d (base %s, indices %s)", def->name,
                     nexp, TIDE_MAX_DIMS, TIDE_SHAPE_STR(sb, base), TIDE_SHAPE_STR(si, idx));
  int64_t want[TIDE_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < ax; d++) want[n++] = d < bd ? tide_dim_merge(base->dims[d], idx->dims[d]) : base->dims[d];
  for (int d = (int)bd; d < idx->ndim; d++) want[n++] = idx->dims[d];
  for (int d = ax + 1; d < base->ndim; d++) want[n++] = base->dims[d];
  bool same = upd->ndim == n;
  for (int d = 0; same && d < n; d++) same = tide_dims_agree(upd->dims[d], want[d]);
  if (!same)
    return TIDE_FAIL(TIDE_ERR_SHAPE,
                     "%s: updates have shape %s but must have shape %s (base.shape[:axis] + "
                     "indices.shape[batch_dims:] + base.shape[axis+1:] with base %s, indices %s, axis %d, "
                     "batch_dims %lld)", def->name, TIDE_SHAPE_STR(su, upd), tide_fmt_dims(se, sizeof se, n, want),
                     TIDE_SHAPE_STR(sb, base), TIDE_SHAPE_STR(si, idx), ax, (long long)bd);
  /* base's dims, an unknown one taken from updates (or indices) where they know it */
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0; d < base->ndim; d++) dims[d] = base->dims[d];
  for (int d = 0; d < ax; d++) dims[d] = tide_dim_merge(want[d], upd->dims[d]);
  for (int d = ax + 1, u = n - (base->ndim - ax - 1); d < base->ndim; d++, u++)
    dims[d] = tide_dim_merge(dims[d], upd->dims[u]);
  tide_tensor_set_contiguous_layout(out[0], base->dt, base->ndim, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* (base, indices, updates) -> base's shape: the dtypes checked (the
 * tensor_scatter_nd_* ops share it, naming their first input "tensor"). */
tide_status tide_scatter_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const char *what = def->id == TIDE_OP_SCATTER_ADD ? "base" : "tensor";
  tide_status st = tide_check_dtype(def, in[0], what);
  if (!st) st = tide_rank_check_index(def, in[1], "indices");
  if (!st) st = tide_rank_check_like(def, in[2], "updates", in[0], what);
  if (!st) tide_rank_shape_of_first(in[0], out[0]);
  return st;
}
const tide_rank_rule tide_infer_scatter_add_rank = {NULL, NULL, tide_scatter_unknown_rank};
