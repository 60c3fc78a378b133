/* core/infer_index.c — shape and dtype inference of TF's index-driven ops:
 * gather_nd, tensor_scatter_nd_*, where(cond), unique and the segment family. */
#include "infer_rank.h"
#include "unknown_dims.h"

/* Check that an index input is int32 or int64 (what: "indices", "segment_ids"). */
static tide_status check_index_dtype(const tide_op_def *def, const tide_tensor *idx, const char *what) {
  if (idx->dt == TIDE_INT32 || idx->dt == TIDE_INT64) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be int32 or int64, got %s (use :cast(\"int32\"))", def->name, what,
                   idx->dt >= 0 && idx->dt < TIDE_NUM_DTYPES ? tide_dtype_name(idx->dt) : "an invalid dtype");
}

/* ---- gather_nd and tensor_scatter_nd_* ------------------------------------------ */

/* The checks gather_nd and the scatters share, against t (params or tensor,
 * named `what`): indices [batch..., m..., K] with K known, 0 <= batch_dims <
 * rank(indices), batch_dims + K <= rank(t), and the batch dims agreeing. The
 * slices' shape, indices.shape[:-1] + t.shape[batch_dims + K:], goes to dims/nd. */
static tide_status nd_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *t, const tide_tensor *idx,
                           const char *what, int64_t *dims, int *nd) {
  tide_status st = check_index_dtype(def, idx, "indices");
  if (st) return st;
  char st_[128], si[128];
  if (idx->ndim < 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: indices must have at least one dimension (its last holds the index "
                     "tuples), got a 0-d tensor", def->name);
  int64_t bd = a->n;
  if (bd < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: batch_dims must not be negative, got %lld", def->name, (long long)bd);
  if (bd >= idx->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: batch_dims (%lld) must be less than the rank of indices (%d, shape %s)",
                     def->name, (long long)bd, idx->ndim, TIDE_SHAPE_STR(si, idx));
  int64_t k = idx->dims[idx->ndim - 1];
  if (k < 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the last dimension of indices (the index depth) must be known, got shape %s",
                     def->name, TIDE_SHAPE_STR(si, idx));
  if (bd + k > t->ndim)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: index tuples of length %lld (the last dimension of indices %s)%s cannot "
                     "index %s of rank %d (shape %s)", def->name, (long long)k, TIDE_SHAPE_STR(si, idx),
                     bd ? " after the batch dims" : "", what, t->ndim, TIDE_SHAPE_STR(st_, t));
  for (int d = 0; d < bd; d++)
    if (!tide_dims_agree(t->dims[d], idx->dims[d]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: with batch_dims=%lld, %s and indices must agree on their first %lld dims, "
                       "but dimension %d differs (%s %s, indices %s)", def->name, (long long)bd, what, (long long)bd, d,
                       what, TIDE_SHAPE_STR(st_, t), TIDE_SHAPE_STR(si, idx));
  int n = 0;
  if (idx->ndim - 1 + t->ndim - (int)(bd + k) > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the slices would have more than %d dims (%s %s, indices %s)", def->name,
                     TIDE_MAX_DIMS, what, TIDE_SHAPE_STR(st_, t), TIDE_SHAPE_STR(si, idx));
  for (int d = 0; d < idx->ndim - 1; d++) dims[n++] = d < bd ? tide_dim_merge(idx->dims[d], t->dims[d]) : idx->dims[d];
  for (int d = (int)(bd + k); d < t->ndim; d++) dims[n++] = t->dims[d];
  *nd = n;
  return TIDE_OK;
}

/* gather_nd(params, indices): indices.shape[:-1] + params.shape[batch_dims + K:]. */
tide_status tide_infer_gather_nd(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "params");
  if (st) return st;
  int64_t dims[TIDE_MAX_DIMS];
  int n = 0;
  if ((st = nd_plan(def, a, in[0], in[1], "params", dims, &n)) != TIDE_OK) return st;
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, n, dims);
  return TIDE_OK;
}

/* tensor_scatter_nd_add/update(tensor, indices, updates): tensor's shape, with
 * updates shaped like gather_nd(tensor, indices) would be. */
tide_status tide_infer_scatter_nd(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *t = in[0], *idx = in[1], *upd = in[2];
  tide_status st = tide_check_dtype(def, t, "tensor");
  if (st) return st;
  if (upd->dt != t->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: updates are %s but tensor is %s (convert with :cast(\"%s\"))", def->name,
                     tide_dtype_name(upd->dt), tide_dtype_name(t->dt), tide_dtype_name(t->dt));
  char st_[128], si[128], su[128], se[128];
  if (t->ndim == 0) /* TF: "Indices and updates specified for empty output shape" */
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: tensor must have at least one dimension, got a 0-d tensor", def->name);
  int64_t want[TIDE_MAX_DIMS];
  int n = 0;
  if ((st = nd_plan(def, a, t, idx, "tensor", want, &n)) != TIDE_OK) return st;
  bool same = upd->ndim == n;
  for (int d = 0; same && d < n; d++) same = tide_dims_agree(upd->dims[d], want[d]);
  if (!same)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: updates have shape %s but must have shape %s (indices.shape[:-1] + "
                     "tensor.shape[batch_dims + K:] with tensor %s, indices %s)", def->name, TIDE_SHAPE_STR(su, upd),
                     tide_fmt_dims(se, sizeof se, n, want), TIDE_SHAPE_STR(st_, t), TIDE_SHAPE_STR(si, idx));
  /* tensor's dims, an unknown one taken from indices or updates where they know it */
  int64_t dims[TIDE_MAX_DIMS];
  int64_t bd = a->n, k = idx->dims[idx->ndim - 1];
  for (int d = 0; d < t->ndim; d++) dims[d] = t->dims[d];
  for (int d = 0; d < bd; d++) dims[d] = tide_dim_merge(dims[d], tide_dim_merge(want[d], upd->dims[d]));
  for (int d = (int)(bd + k), u = idx->ndim - 1; d < t->ndim; d++, u++) dims[d] = tide_dim_merge(dims[d], upd->dims[u]);
  tide_tensor_set_contiguous_layout(out[0], t->dt, t->ndim, dims);
  return TIDE_OK;
}

/* ---- where(cond), unique: sizes counted by the kernel (TIDE_OPF_DATA_SHAPE) -------- */

/* where_indices(cond): int64 [N, rank], N (the nonzero count) unknown until it runs.
 * TF's Where refuses a 0-d condition ("Unhandled input dimensions: 0"). */
tide_status tide_infer_where_indices(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "condition");
  if (st) return st;
  if (in[0]->ndim == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the condition must have at least one dimension, got a 0-d tensor (as TF's "
                     "Where; reshape it to [1])", def->name);
  int64_t dims[2] = {-1, in[0]->ndim};
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 2, dims);
  return TIDE_OK;
}

/* unique(x): y [U] (U unknown until it runs) of x's dtype and idx [n] of attrs.dtype. */
tide_status tide_infer_unique(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "x");
  if (st) return st;
  if (a->dtype != TIDE_INT32 && a->dtype != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: out_idx must be int32 or int64, got %s", def->name,
                     a->dtype >= 0 && a->dtype < TIDE_NUM_DTYPES ? tide_dtype_name(a->dtype) : "an invalid dtype");
  char sx[128];
  if (x->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: x must be 1-D, got shape %s (reshape it with :reshape{-1})", def->name,
                     TIDE_SHAPE_STR(sx, x));
  int64_t unknown = -1;
  tide_tensor_set_contiguous_layout(out[0], x->dt, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], a->dtype, 1, x->dims);
  return TIDE_OK;
}

/* ---- segment_* (sorted ids) and unsorted_segment_* (num_segments) ----------------- */

/* The value of the one-element int tensor s, when it holds data (eagerly, at a
 * graph's run, or a graph constant); -1 while tracing a computed one. */
static tide_status num_segments_of(const tide_op_def *def, const tide_tensor *s, int64_t *value) {
  tide_status st = check_index_dtype(def, s, "num_segments");
  if (st) return st;
  char ss[128];
  if (s->nelem != 1 && !(s->nelem < 0 && s->ndim <= 1))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: num_segments must be a scalar, got shape %s", def->name,
                     TIDE_SHAPE_STR(ss, s));
  *value = -1;
  if ((s->flags & TIDE_TENSOR_SYMBOLIC) || !s->data) return TIDE_OK;
  *value = s->dt == TIDE_INT32 ? *(const int32_t *)s->data : *(const int64_t *)s->data;
  if (*value < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_segments must not be negative, got %lld", def->name, (long long)*value);
  return TIDE_OK;
}

/* Sorted (data, segment_ids [N]) -> [-1] + data.shape[1:] (the count is the
 * last id + 1, known when it runs); unsorted (data, segment_ids, num_segments)
 * -> [num_segments] + data.shape[rank(segment_ids):], ids a prefix of data's shape. */
tide_status tide_infer_segment(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *ids = in[1];
  tide_status st = tide_check_dtype(def, x, "data");
  if (!st) st = check_index_dtype(def, ids, "segment_ids");
  if (st) return st;
  char sx[128], si[128];
  int64_t dims[TIDE_MAX_DIMS];
  if (def->n_in == 2) { /* sorted */
    if (x->ndim < 1)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: data must have at least one dimension, got a 0-d tensor", def->name);
    if (ids->ndim != 1)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: segment_ids must be 1-D, got shape %s", def->name, TIDE_SHAPE_STR(si, ids));
    if (!tide_dims_agree(ids->dims[0], x->dims[0]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: segment_ids (shape %s) must have one id per row of data (shape %s)",
                       def->name, TIDE_SHAPE_STR(si, ids), TIDE_SHAPE_STR(sx, x));
    dims[0] = -1;
    for (int d = 1; d < x->ndim; d++) dims[d] = x->dims[d];
    tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, dims);
    return TIDE_OK;
  }
  bool prefix = ids->ndim <= x->ndim;
  for (int d = 0; prefix && d < ids->ndim; d++) prefix = tide_dims_agree(ids->dims[d], x->dims[d]);
  if (!prefix)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: data's shape %s does not start with segment_ids' shape %s", def->name,
                     TIDE_SHAPE_STR(sx, x), TIDE_SHAPE_STR(si, ids));
  if (x->ndim - ids->ndim + 1 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have more than %d dims (data %s, segment_ids %s)", def->name,
                     TIDE_MAX_DIMS, TIDE_SHAPE_STR(sx, x), TIDE_SHAPE_STR(si, ids));
  int64_t segments = -1;
  if ((st = num_segments_of(def, in[2], &segments)) != TIDE_OK) return st;
  int n = 0;
  dims[n++] = segments;
  for (int d = ids->ndim; d < x->ndim; d++) dims[n++] = x->dims[d];
  tide_tensor_set_contiguous_layout(out[0], x->dt, n, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* gather_nd: gather's rule; the tensor_scatter_nd ops: scatter_add's. */
const tide_rank_rule tide_infer_gather_nd_rank = {NULL, NULL, tide_gather_unknown_rank};
const tide_rank_rule tide_infer_scatter_nd_rank = {NULL, NULL, tide_scatter_unknown_rank};

/* [N, rank], both known when it runs. */
static tide_status where_indices_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "condition");
  if (st) return st;
  int64_t dims[2] = {-1, -1};
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 2, dims);
  return TIDE_OK;
}
const tide_rank_rule tide_infer_where_indices_rank = {NULL, NULL, where_indices_unknown_rank};

/* unique's x: a vector, its only rank. */
static int unique_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 1;
}
const tide_rank_rule tide_infer_unique_rank = {unique_rank, tide_rank_keeps, NULL};

/* Sorted: data [N, ...], segment_ids [N]; unsorted: segment_ids' shape is a
 * prefix of data's, num_segments a scalar. */
static int segment_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  if (i == 2) return 0;
  if (def->n_in == 2) return 1;
  if (i == 0) return tide_rank_unknown(in[1]) ? 1 : in[1]->ndim;
  return tide_rank_unknown(in[0]) ? 1 : (in[0]->ndim < 1 ? in[0]->ndim : 1);
}
static bool segment_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  return !tide_rank_unknown(in[0]) && (def->n_in == 2 || !tide_rank_unknown(in[1]));
}
const tide_rank_rule tide_infer_segment_rank = {segment_rank, segment_keeps, NULL};
