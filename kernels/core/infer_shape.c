/* core/infer_shape.c — dtype and shape inference for the shape ops that copy:
 * concat, tile, pad, gather, one_hot and reverse (TensorFlow's rules and messages). */
#include "infer_rank.h"
#include "unknown_dims.h"

/* ---- concat ----------------------------------------------------------------------- */

/* Unknown (-1) dims, as TF's ConcatV2 shape function: the axis's length is
 * unknown when any input's is; another dim takes the length any input knows. */
tide_status tide_infer_concat(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *x0 = in[0];
  tide_status st = tide_check_dtype(def, x0, "input 1");
  if (st) return st;
  if (x0->ndim == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot concatenate 0-d tensors (use tide.stack to make a vector)",
                     def->name);
  int ax = tide_normalize_axis(def->name, a->axis, x0->ndim);
  if (ax < 0) return tide_last_status();
  int64_t dims[TIDE_MAX_DIMS];
  int from[TIDE_MAX_DIMS]; /* the input each known dim came from, for errors */
  for (int d = 0; d < x0->ndim; d++) dims[d] = x0->dims[d], from[d] = 0;
  char s0[128], si[128];
  for (int i = 1; i < n_in; i++) {
    const tide_tensor *x = in[i];
    if (x->dt != x0->dt)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input %d is %s but input 1 is %s (convert with :cast(\"%s\"))",
                       def->name, i + 1, tide_dtype_name(x->dt), tide_dtype_name(x0->dt), tide_dtype_name(x0->dt));
    if (x->ndim != x0->ndim)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input %d has rank %d but input 1 has rank %d (shapes %s and %s)",
                       def->name, i + 1, x->ndim, x0->ndim, TIDE_SHAPE_STR(s0, x0), TIDE_SHAPE_STR(si, x));
    for (int d = 0; d < x0->ndim; d++) {
      if (d == ax) {
        if (!tide_dim_add(dims[d], x->dims[d], &dims[d]))
          return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result is too large", def->name);
      } else if (!tide_dims_agree(x->dims[d], dims[d])) {
        const tide_tensor *xf = in[from[d]];
        return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: dimension %d of input %d is %lld but input %d has %lld (shapes %s and %s)",
                         def->name, d, i + 1, (long long)x->dims[d], from[d] + 1, (long long)dims[d],
                         TIDE_SHAPE_STR(s0, xf), TIDE_SHAPE_STR(si, x));
      } else if (dims[d] < 0) {
        dims[d] = x->dims[d], from[d] = i;
      }
    }
  }
  tide_tensor_set_contiguous_layout(out[0], x0->dt, x0->ndim, dims);
  return TIDE_OK;
}

/* ---- tile ------------------------------------------------------------------------- */

tide_status tide_infer_tile(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  char sx[128], sm[128];
  if (a->nints != x->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: multiples %s has %d entries but the input has rank %d (shape %s)",
                     def->name, tide_fmt_dims(sm, sizeof sm, a->nints <= TIDE_MAX_INTS ? a->nints : 0, a->ints),
                     a->nints, x->ndim, TIDE_SHAPE_STR(sx, x));
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) {
    if (a->ints[d] < 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: multiples[%d] is %lld; multiples must be >= 0", def->name, d,
                       (long long)a->ints[d]);
    /* an unknown dim times a multiple is unknown, except times 0 (TF's Multiply) */
    if (!tide_dim_mul(x->dims[d], a->ints[d], &dims[d]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result is too large", def->name);
  }
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, dims);
  return TIDE_OK;
}

/* ---- pad -------------------------------------------------------------------------- */

tide_status tide_infer_pad(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  char sx[128];
  if (a->nints != 2 * x->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE,
                     "%s: paddings must have one (before, after) pair per dimension: the input has rank %d (shape %s) "
                     "but %d numbers were given", def->name, x->ndim, TIDE_SHAPE_STR(sx, x), a->nints);
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) {
    int64_t before = a->ints[2 * d], after = a->ints[2 * d + 1];
    if (before < 0 || after < 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: paddings for dimension %d are (%lld, %lld); they must be >= 0",
                       def->name, d, (long long)before, (long long)after);
    if (!tide_dim_add(x->dims[d], before, &dims[d]) || !tide_dim_add(dims[d], after, &dims[d]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result is too large", def->name);
  }
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, dims);
  return TIDE_OK;
}

/* ---- gather ------------------------------------------------------------------------- */

/* Check gather's arguments (tf.gather's rules); gives the normalized axis and batch_dims. */
static tide_status gather_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *params,
                               const tide_tensor *indices, int *axis, int *batch_dims) {
  tide_status st = tide_check_dtype(def, params, "params");
  if (st) return st;
  if (indices->dt != TIDE_INT32 && indices->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: indices must be int32 or int64, got %s (use :cast(\"int32\"))", def->name,
                     tide_dtype_name(indices->dt));
  char sp[128], si[128];
  if (params->ndim == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: params must have at least one dimension, got a 0-d tensor", def->name);
  int64_t bd = a->n < 0 ? a->n + indices->ndim : a->n;
  if (bd < 0 || bd > indices->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: batch_dims %lld is out of range for indices of rank %d (shape %s)",
                     def->name, (long long)a->n, indices->ndim, TIDE_SHAPE_STR(si, indices));
  int ax = tide_normalize_axis(def->name, a->axis, params->ndim);
  if (ax < 0) return tide_last_status();
  if (bd > ax)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: batch_dims (%lld) must be less than or equal to axis (%d)", def->name,
                     (long long)bd, ax);
  for (int d = 0; d < bd; d++)
    if (!tide_dims_agree(params->dims[d], indices->dims[d]))
      return TIDE_FAIL(TIDE_ERR_SHAPE,
                       "%s: with batch_dims=%lld, params and indices must agree on their first %lld dims, but "
                       "dimension %d differs (params %s, indices %s)", def->name, (long long)bd, (long long)bd, d,
                       TIDE_SHAPE_STR(sp, params), TIDE_SHAPE_STR(si, indices));
  int nout = params->ndim - 1 + indices->ndim - (int)bd;
  if (nout > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have rank %d, more than %d (params %s, indices %s)",
                     def->name, nout, TIDE_MAX_DIMS, TIDE_SHAPE_STR(sp, params), TIDE_SHAPE_STR(si, indices));
  *axis = ax;
  *batch_dims = (int)bd;
  return TIDE_OK;
}

tide_status tide_infer_gather(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *p = in[0], *idx = in[1];
  int ax = 0, bd = 0;
  tide_status st = gather_plan(def, a, p, idx, &ax, &bd);
  if (st) return st;
  /* params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:] */
  int64_t dims[TIDE_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < ax; d++) dims[n++] = d < bd ? tide_dim_merge(p->dims[d], idx->dims[d]) : p->dims[d];
  for (int d = bd; d < idx->ndim; d++) dims[n++] = idx->dims[d];
  for (int d = ax + 1; d < p->ndim; d++) dims[n++] = p->dims[d];
  tide_tensor_set_contiguous_layout(out[0], p->dt, n, dims);
  return TIDE_OK;
}

/* ---- one_hot ------------------------------------------------------------------------ */

tide_status tide_infer_one_hot(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "indices");
  if (st) return st;
  if (a->dtype < 0 || a->dtype >= TIDE_NUM_DTYPES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: invalid target dtype code %d", def->name, a->dtype);
  if (a->n < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: depth must be >= 0, got %lld", def->name, (long long)a->n);
  if (x->ndim >= TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have more than %d dims", def->name, TIDE_MAX_DIMS);
  /* TF: axis is -1 (last) or in [0, rank]; other negative values are errors. */
  if (a->axis < -1 || a->axis > x->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: axis %d is out of range for indices of rank %d (valid: -1 to %d)",
                     def->name, a->axis, x->ndim, x->ndim);
  int ax = a->axis == -1 ? x->ndim : a->axis;
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0, j = 0; d <= x->ndim; d++) dims[d] = d == ax ? a->n : x->dims[j++];
  tide_tensor_set_contiguous_layout(out[0], a->dtype, x->ndim + 1, dims);
  return TIDE_OK;
}

/* ---- reverse ------------------------------------------------------------------------ */

/* reverse: the input's dtype and shape; the axes (attrs.ints) must exist, each once. */
tide_status tide_infer_reverse(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  bool flip[TIDE_MAX_DIMS];
  st = tide_axis_mask(def->name, a->nints, a->ints, x->ndim, flip);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, x->dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* concat: stand-ins of a known input's rank (TF's merge), or of any rank when none is known. */
static int concat_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(i);
  for (int k = 0; k < n_in; k++)
    if (!tide_rank_unknown(in[k])) return in[k]->ndim;
  return TIDE_MAX_DIMS;
}
static bool concat_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a);
  for (int k = 0; k < n_in; k++)
    if (!tide_rank_unknown(in[k])) return true;
  return false;
}
const tide_rank_rule tide_infer_concat_rank = {concat_rank, concat_keeps, NULL};

/* One multiple per dim. */
static int tile_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return tide_rank_capped(a->nints);
}
const tide_rank_rule tide_infer_tile_rank = {tile_rank, tide_rank_keeps, NULL};

/* A (before, after) pair per dim; an odd count fits no rank. */
static int pad_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return a->nints % 2 ? -1 : tide_rank_capped(a->nints / 2);
}
static tide_status pad_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(n_out), TIDE_UNUSED(out);
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: paddings must be (before, after) pairs, got %d numbers", def->name, a->nints);
}
const tide_rank_rule tide_infer_pad_rank = {pad_rank, tide_rank_keeps, pad_unknown_rank};

/* (params, indices): the dtypes checked, an unknown rank (gather_nd's rule too). */
tide_status tide_gather_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "params");
  if (!st) st = tide_rank_check_index(def, in[1], "indices");
  if (!st) tide_rank_set_unknown(out[0], in[0]->dt);
  return st;
}
const tide_rank_rule tide_infer_gather_rank = {NULL, NULL, tide_gather_unknown_rank};

/* One axis of a result one rank higher. */
static int one_hot_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return TIDE_MAX_DIMS - 1;
}
const tide_rank_rule tide_infer_one_hot_rank = {one_hot_rank, NULL, NULL};

/* Several axes, checked when the graph runs: the generic rule (x's dtype, an unknown rank). */
const tide_rank_rule tide_infer_reverse_rank = {NULL, NULL, NULL};

/* ---- bitcast ------------------------------------------------------------------------ */

/* tf.bitcast's shapes: the same element size keeps the shape; a smaller target adds a last dim of the size
 * ratio; a larger one needs the last dim to be that ratio and takes it away. */
tide_status tide_infer_bitcast(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  if (a->dtype < 0 || a->dtype >= TIDE_NUM_DTYPES || !(TIDE_DTS_ALL & (1u << a->dtype)))
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: type must be a numeric or bool dtype, got %s", def->name,
                     tide_dtype_name(a->dtype));
  size_t si = tide_dtype_size(x->dt), so = tide_dtype_size(a->dtype);
  int64_t dims[TIDE_MAX_DIMS];
  int nd = x->ndim;
  for (int i = 0; i < nd; i++) dims[i] = x->dims[i];
  if (si > so) {
    if (nd == TIDE_MAX_DIMS)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have more than %d dims", def->name, TIDE_MAX_DIMS);
    dims[nd++] = (int64_t)(si / so);
  } else if (si < so) {
    char s[128];
    int64_t ratio = (int64_t)(so / si);
    if (nd == 0 || (dims[nd - 1] >= 0 && dims[nd - 1] != ratio))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot bitcast from %s to %s: shape %s does not end in %lld",
                       def->name, tide_dtype_name(x->dt), tide_dtype_name(a->dtype), TIDE_SHAPE_STR(s, x),
                       (long long)ratio);
    nd--;
  }
  tide_tensor_set_contiguous_layout(out[0], a->dtype, nd, dims);
  return TIDE_OK;
}

/* Unknown rank: the stand-in's inference checks the dtypes; the result's rank is unknown too (it may gain or
 * lose a dim). */
static tide_status bitcast_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], "input");
  if (st) return st;
  if (a->dtype < 0 || a->dtype >= TIDE_NUM_DTYPES || !(TIDE_DTS_ALL & (1u << a->dtype)))
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: type must be a numeric or bool dtype, got %s", def->name,
                     tide_dtype_name(a->dtype));
  tide_rank_set_unknown(out[0], a->dtype);
  return TIDE_OK;
}
const tide_rank_rule tide_infer_bitcast_rank = {NULL, NULL, bitcast_unknown_rank};
