/* core/infer_linalg.c — dtype and shape inference for matmul, the creation
 * ops (fill, linspace, eye, range) and the random creation ops. */
#include "linalg.h"
#include "infer_rank.h"
#include "unknown_dims.h"

#include <math.h>

/* ---- matmul --------------------------------------------------------------------- */

tide_status tide_matmul_dims(const char *op, const tide_attrs *attrs, const tide_tensor *a, const tide_tensor *b,
                             tide_mm_dims *d) {
  char sa[128], sb[128];
  if (a->ndim < 1 || b->ndim < 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: both inputs need rank >= 1, got shapes %s and %s (use mul for scalars)", op,
                     TIDE_SHAPE_STR(sa, a), TIDE_SHAPE_STR(sb, b));
  d->a_vec = a->ndim == 1;
  d->b_vec = b->ndim == 1;
  /* A vector has no orientation to flip: numpy places it by its position. */
  d->ta = !d->a_vec && (attrs->flags & TIDE_ATTR_TRANSPOSE_A);
  d->tb = !d->b_vec && (attrs->flags & TIDE_ATTR_TRANSPOSE_B);
  int na = a->ndim, nb = b->ndim;
  int64_t ka;
  if (d->a_vec) d->m = 1, ka = a->dims[0];
  else d->m = a->dims[na - (d->ta ? 1 : 2)], ka = a->dims[na - (d->ta ? 2 : 1)];
  int64_t kb;
  if (d->b_vec) kb = b->dims[0], d->n = 1;
  else kb = b->dims[nb - (d->tb ? 1 : 2)], d->n = b->dims[nb - (d->tb ? 2 : 1)];
  /* An unknown inner dim agrees with any (TF's Merge); the graph's run checks it. */
  if (!tide_dims_agree(ka, kb))
    return TIDE_FAIL(TIDE_ERR_SHAPE,
                     "%s: inner dimensions do not match: a has shape %s%s and b has shape %s%s (%lld vs %lld)", op,
                     TIDE_SHAPE_STR(sa, a), d->ta ? " (transposed)" : "", TIDE_SHAPE_STR(sb, b),
                     d->tb ? " (transposed)" : "", (long long)ka, (long long)kb);
  d->k = tide_dim_merge(ka, kb);
  int ba = d->a_vec ? 0 : na - 2, bb = d->b_vec ? 0 : nb - 2;
  tide_status st = tide_broadcast_dims(op, ba, a->dims, bb, b->dims, &d->nb, d->batch);
  if (st)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: batch dimensions do not broadcast: a has shape %s and b has shape %s", op,
                     TIDE_SHAPE_STR(sa, a), TIDE_SHAPE_STR(sb, b));
  int rank = d->nb + !d->a_vec + !d->b_vec;
  if (rank > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have rank %d (at most %d)", op, rank, TIDE_MAX_DIMS);
  return TIDE_OK;
}

tide_status tide_infer_matmul(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *a = in[0], *b = in[1];
  tide_status st = tide_check_same_dtype(def, a, b, "a", "b");
  if (!st) st = tide_check_dtype(def, a, "a");
  if (st) return st;
  tide_mm_dims d;
  st = tide_matmul_dims(def->name, attrs, a, b, &d);
  if (st) return st;
  int64_t dims[TIDE_MAX_DIMS];
  int nd = d.nb;
  for (int i = 0; i < d.nb; i++) dims[i] = d.batch[i];
  if (!d.a_vec) dims[nd++] = d.m;
  if (!d.b_vec) dims[nd++] = d.n;
  tide_tensor_set_contiguous_layout(out[0], a->dt, nd, dims); /* tide_op_run rejects an overflowing size */
  return TIDE_OK;
}

/* ---- creation ------------------------------------------------------------------- */

/* The attrs' dtype, checked against the op's set. */
static tide_status check_attr_dtype(const tide_op_def *def, int dt) {
  if (dt < 0 || dt >= TIDE_NUM_DTYPES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: invalid dtype code %d", def->name, dt);
  if (def->dtypes & (1u << dt)) return TIDE_OK;
  const char *want = def->dtypes == TIDE_DTS_FLOAT ? "a float dtype (float32, float64, float16 or bfloat16)"
                     : def->dtypes == TIDE_DTS_NUMERIC ? "a numeric dtype (not bool)" : "another dtype";
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: dtype must be %s, got %s", def->name, want, tide_dtype_name(dt));
}

/* A shape from attrs.ints: rank <= TIDE_MAX_DIMS, no negative dims, size fits. */
static tide_status check_shape(const tide_op_def *def, int nd, const int64_t *dims, int dt) {
  if (nd < 0 || nd > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape has rank %d (at most %d)", def->name, nd, TIDE_MAX_DIMS);
  char s[128];
  for (int i = 0; i < nd; i++)
    if (dims[i] < 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape %s has a negative dimension (%lld at %d)", def->name,
                       tide_fmt_dims(s, sizeof s, nd, dims), (long long)dims[i], i);
  int64_t n = tide_dims_product(nd, dims);
  if (n < 0 || (uint64_t)n > (uint64_t)INT64_MAX / tide_dtype_size_unchecked(dt))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape %s is too large", def->name, tide_fmt_dims(s, sizeof s, nd, dims));
  return TIDE_OK;
}

/* random_uniform over an integer dtype: bounds are integers of the dtype, max > min (TF). */
static tide_status check_int_bounds(const tide_op_def *def, const tide_attrs *attrs) {
  double lo = attrs->scalars[0], hi = attrs->scalars[1];
  int dt = attrs->dtype;
  if (lo != floor(lo) || hi != floor(hi))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: minval and maxval must be integers for %s, got %g and %g", def->name,
                     tide_dtype_name(dt), lo, hi);
  bool fits = lo >= -9223372036854775808.0 && hi < 9223372036854775808.0 && (double)tide_sat_int(lo, dt) == lo &&
              (double)tide_sat_int(hi, dt) == hi;
  if (!fits)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: minval %g and maxval %g must lie in the range of %s", def->name, lo, hi,
                     tide_dtype_name(dt));
  if (!(hi > lo))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: needs minval < maxval for %s, got minval %g and maxval %g", def->name,
                     tide_dtype_name(dt), lo, hi);
  return TIDE_OK;
}

tide_status tide_infer_create(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  int dt = attrs->dtype;
  tide_status st = check_attr_dtype(def, dt);
  if (st) return st;
  if (dt == TIDE_STRING && attrs->scalars[0] != 0) /* a string's element is a reference, not a number */
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: a string tensor is filled with \"\" here (a number cannot be a string); "
                     "broadcast a string tensor for other values", def->name);
  tide_attrs buf;
  bool unknown;
  if ((st = tide_shape_input(def, attrs, n_in, in, &buf, &attrs, &unknown)) != TIDE_OK) return st;
  if (def->id == TIDE_OP_RANDOM_UNIFORM && tide_dtype_is_int(dt) && (st = check_int_bounds(def, attrs)) != TIDE_OK)
    return st;
  if (unknown) { /* a traced shape tensor: its length is the rank, its values come at run time */
    tide_shape_input_unknown(out[0], dt, attrs);
    return TIDE_OK;
  }
  int64_t dims[TIDE_MAX_DIMS];
  int nd;
  if (def->id == TIDE_OP_LINSPACE) {
    if (attrs->nints != 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects ints = {num}, got %d value(s)", def->name, attrs->nints);
    if (attrs->ints[0] < 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num must be at least 1, got %lld", def->name, (long long)attrs->ints[0]);
    nd = 1, dims[0] = attrs->ints[0];
  } else if (def->id == TIDE_OP_EYE) {
    if (attrs->nints != 2)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects ints = {rows, cols}, got %d value(s)", def->name, attrs->nints);
    nd = 2, dims[0] = attrs->ints[0], dims[1] = attrs->ints[1];
  } else {
    nd = attrs->nints;
    if (nd > TIDE_MAX_DIMS)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape has rank %d (at most %d)", def->name, nd, TIDE_MAX_DIMS);
    for (int i = 0; i < nd; i++) dims[i] = attrs->ints[i];
  }
  st = check_shape(def, nd, dims, dt);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], dt, nd, dims);
  return TIDE_OK;
}

/* ---- range ---------------------------------------------------------------------- */

int64_t tide_range_count(const char *op, double start, double limit, double delta, int dt) {
  if (tide_dtype_is_int(dt)) {
    /* TF casts the arguments to the dtype first, then counts exactly. */
    int64_t s = tide_sat_int(start, dt), l = tide_sat_int(limit, dt), d = tide_sat_int(delta, dt);
    if (d == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: requires delta != 0 (got %g)", op, delta), -1;
    if (d > 0 && s > l)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: requires start <= limit when delta > 0 (got start %lld, limit %lld)", op,
                       (long long)s, (long long)l), -1;
    if (d < 0 && s < l)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: requires start >= limit when delta < 0 (got start %lld, limit %lld)", op,
                       (long long)s, (long long)l), -1;
    uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
    uint64_t step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
    uint64_t n = span / step + (span % step != 0);
    if (n > (uint64_t)INT64_MAX / 8)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the result would have %llu elements, too many", op,
                       (unsigned long long)n), -1;
    return (int64_t)n;
  }
  if (!isfinite(start) || !isfinite(limit) || !isfinite(delta))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: start, limit and delta must be finite (got %g, %g, %g)", op, start, limit,
                     delta), -1;
  if (delta == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: requires delta != 0 (got %g)", op, delta), -1;
  if (delta > 0 && start > limit)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: requires start <= limit when delta > 0 (got start %g, limit %g)", op, start,
                     limit), -1;
  if (delta < 0 && start < limit)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: requires start >= limit when delta < 0 (got start %g, limit %g)", op, start,
                     limit), -1;
  /* TF computes the size in the dtype: ceil(|(limit - start) / delta|). */
  double n = dt == TIDE_FLOAT64 ? ceil(fabs((limit - start) / delta))
                                : (double)ceilf(fabsf(((float)limit - (float)start) / (float)delta));
  if (!(n <= 1e15))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the result would have %g elements, too many", op, n), -1;
  return (int64_t)n;
}

/* range_dynamic's bounds: its three inputs, 0-d tensors of the result's dtype
 * (an unknown rank is checked when the graph runs). Their values, when known
 * (eager data or a graph constant), go in b[0..2]. */
static tide_status range_bounds(const tide_op_def *def, int dt, const tide_tensor *const *in, double *b, bool *known) {
  static const char *const what[3] = {"start", "limit", "delta"};
  char ss[128];
  *known = true;
  for (int i = 0; i < 3; i++) {
    const tide_tensor *t = in[i];
    if (t->ndim != 0 && t->ndim != TIDE_UNKNOWN_RANK)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must be a scalar (0-d), got shape %s", def->name, what[i],
                       TIDE_SHAPE_STR(ss, t));
    if (t->dt != dt)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s is %s but the result is %s (cast it)", def->name, what[i],
                       tide_dtype_name(t->dt), tide_dtype_name(dt));
    if ((t->flags & TIDE_TENSOR_SYMBOLIC) || t->data == NULL || t->ndim != 0) *known = false;
    else b[i] = tide_read_number(t->data, t->dt, 0);
  }
  return TIDE_OK;
}

tide_status tide_infer_range(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                             const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int dt = attrs->dtype;
  tide_status st = check_attr_dtype(def, dt);
  if (st) return st;
  double b[3] = {attrs->scalars[0], attrs->scalars[1], attrs->scalars[2]};
  if (def->id == TIDE_OP_RANGE_DYNAMIC) { /* a length unknown (-1) until the values are */
    bool known;
    if ((st = range_bounds(def, dt, in, b, &known))) return st;
    if (!known) {
      int64_t unknown = -1;
      tide_tensor_set_contiguous_layout(out[0], dt, 1, &unknown);
      return TIDE_OK;
    }
  }
  int64_t n = tide_range_count(def->name, b[0], b[1], b[2], dt);
  if (n < 0) return tide_last_status();
  tide_tensor_set_contiguous_layout(out[0], dt, 1, &n);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* matmul: a matrix stands in (a vector or a batch is known only when the graph runs). */
static int matmul_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 2;
}
const tide_rank_rule tide_infer_matmul_rank = {matmul_rank, NULL, NULL};
/* Creation: the only input is a shape input (a vector); the shape comes from it alone. */
const tide_rank_rule tide_infer_create_rank = {NULL, tide_rank_keeps, NULL};
/* range takes no inputs: never called. */
const tide_rank_rule tide_infer_range_rank = {NULL, NULL, NULL};
