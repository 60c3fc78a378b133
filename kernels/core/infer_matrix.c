/* core/infer_matrix.c — dtype and shape inference for tf.linalg's ops: band
 * parts and diagonals (any dtype), and the LAPACK decompositions and solvers. */
#include "infer_rank.h"
#include "matrix.h"
#include "unknown_dims.h"

#include <string.h>

/* ---- shared checks ---------------------------------------------------------------- */

tide_status tide_check_matrix(const tide_op_def *def, const tide_tensor *x, const char *what, bool square) {
  char s[128];
  if (x->ndim < 2)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must have rank >= 2 (a matrix or a batch of matrices), got shape %s",
                     def->name, what, TIDE_SHAPE_STR(s, x));
  if (square && !tide_dims_agree(x->dims[x->ndim - 2], x->dims[x->ndim - 1]))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: Input matrix must be square: %s has shape %s", def->name, what,
                     TIDE_SHAPE_STR(s, x));
  return TIDE_OK;
}

/* out: dtype dt, dims[0..nb) of x's batch then the n given. */
static void set_batch_dims(tide_tensor *out, int dt, const tide_tensor *x, int nb, int n, const int64_t *last) {
  int64_t dims[TIDE_MAX_DIMS];
  for (int i = 0; i < nb; i++) dims[i] = x->dims[i];
  for (int i = 0; i < n; i++) dims[nb + i] = last[i];
  tide_tensor_set_contiguous_layout(out, dt, nb + n, dims);
}

/* An empty 1-D output: the vectors an op was asked not to compute (TF leaves them empty). */
static void set_empty(tide_tensor *out, int dt) {
  int64_t zero = 0;
  tide_tensor_set_contiguous_layout(out, dt, 1, &zero);
}

/* ---- band part (and matrix_transpose, which shares its checks) ------------------------------------------------------------------- */

tide_status tide_infer_band_part(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                 const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (!st) st = tide_check_matrix(def, x, "input", false);
  if (st) return st;
  if (def->id == TIDE_OP_MATRIX_TRANSPOSE) {
    int64_t dims[TIDE_MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    dims[x->ndim - 2] = x->dims[x->ndim - 1], dims[x->ndim - 1] = x->dims[x->ndim - 2];
    tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, dims);
    return TIDE_OK;
  }
  if (attrs->nints != 2)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects ints = {num_lower, num_upper}, got %d value(s)", def->name,
                     attrs->nints);
  int64_t rows = x->dims[x->ndim - 2], cols = x->dims[x->ndim - 1];
  if (rows >= 0 && attrs->ints[0] > rows)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_lower must be negative or less or equal to number of rows (%lld) got: "
                     "%lld", def->name, (long long)rows, (long long)attrs->ints[0]);
  if (cols >= 0 && attrs->ints[1] > cols)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_upper must be negative or less or equal to number of columns (%lld) "
                     "got: %lld", def->name, (long long)cols, (long long)attrs->ints[1]);
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, x->dims);
  return TIDE_OK;
}

/* ---- diagonals (TF's MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3) ------------------ */

/* The range k = (lo, hi) of attrs: two ints, lo <= hi. */
static tide_status diag_range(const tide_op_def *def, const tide_attrs *attrs, int nints, int64_t *lo, int64_t *hi) {
  if (attrs->nints != nints)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects %d ints (k's range%s), got %d", def->name, nints,
                     nints == 4 ? ", num_rows, num_cols" : "", attrs->nints);
  *lo = attrs->ints[0], *hi = attrs->ints[1];
  if (*lo > *hi)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: lower_diag_index must not be larger than upper_diag_index: %lld > %lld",
                     def->name, (long long)*lo, (long long)*hi);
  if (*lo < -(int64_t)INT32_MAX || *hi > INT32_MAX)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: diagonal index %lld is out of the int32 range", def->name,
                     (long long)(*lo < 0 ? *lo : *hi));
  return TIDE_OK;
}

/* k in range of an M x N matrix (TF: -M < k < N, or 0). */
static tide_status diag_in_bounds(const tide_op_def *def, int64_t k, int64_t m, int64_t n, const char *which) {
  if (k == 0 || m < 0 || n < 0 || (-m < k && k < n)) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s_diag_index is out of bound: %lld. It must be between %lld and %lld",
                   def->name, which, (long long)k, (long long)-m, (long long)n);
}

int64_t tide_max_diag_len(int64_t m, int64_t n, int64_t lo, int64_t hi) {
  if (m < 0 || n < 0) return -1;
  int64_t a = m + (hi < 0 ? hi : 0), b = n - (lo > 0 ? lo : 0);
  return a < b ? a : b;
}

/* matrix_diag: diagonal [..., (num_diags,) max_diag_len] -> [..., num_rows, num_cols]. */
static tide_status infer_diag(const tide_op_def *def, const tide_attrs *attrs, const tide_tensor *d,
                              tide_tensor *out) {
  char s[128];
  int64_t lo = 0, hi = 0;
  tide_status st = diag_range(def, attrs, 4, &lo, &hi);
  if (st) return st;
  int64_t num_diags = hi - lo + 1;
  if (d->ndim < (num_diags > 1 ? 2 : 1))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: diagonal must be at least %s, received shape: %s", def->name,
                     num_diags > 1 ? "2-dim for a range of diagonals" : "1-dim", TIDE_SHAPE_STR(s, d));
  if (num_diags > 1 && !tide_dims_agree(d->dims[d->ndim - 2], num_diags))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: The number of diagonals provided in the input does not match the "
                     "lower_diag_index and upper_diag_index range: diagonal has shape %s, k = (%lld, %lld)",
                     def->name, TIDE_SHAPE_STR(s, d), (long long)lo, (long long)hi);
  int64_t len = d->dims[d->ndim - 1], rows = attrs->ints[2], cols = attrs->ints[3];
  if (rows < -1 || cols < -1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_rows and num_cols must be -1 (inferred) or >= 0, got %lld and %lld",
                     def->name, (long long)rows, (long long)cols);
  int64_t min_rows = len < 0 ? -1 : len - (hi < 0 ? hi : 0);
  int64_t min_cols = len < 0 ? -1 : len + (lo > 0 ? lo : 0);
  if (rows >= 0 && min_rows >= 0 && rows < min_rows)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: The number of rows is too small: num_rows %lld, at least %lld for "
                     "diagonals of length %lld with k = (%lld, %lld)", def->name, (long long)rows, (long long)min_rows,
                     (long long)len, (long long)lo, (long long)hi);
  if (cols >= 0 && min_cols >= 0 && cols < min_cols)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: The number of columns is too small: num_cols %lld, at least %lld for "
                     "diagonals of length %lld with k = (%lld, %lld)", def->name, (long long)cols, (long long)min_cols,
                     (long long)len, (long long)lo, (long long)hi);
  if (rows < 0 && cols < 0) {
    rows = min_rows < 0 ? -1 : (min_rows > min_cols ? min_rows : min_cols);
    cols = rows;
  } else if (rows < 0) {
    rows = min_rows;
  } else if (cols < 0) {
    cols = min_cols;
  }
  if (len >= 0 && rows != min_rows && cols != min_cols)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: The number of rows or columns is not consistent with the specified "
                     "d_lower, d_upper, and diagonal: [%lld, %lld] for diagonals of length %lld with k = (%lld, %lld)",
                     def->name, (long long)rows, (long long)cols, (long long)len, (long long)lo, (long long)hi);
  int nb = d->ndim - (num_diags > 1 ? 2 : 1);
  int64_t last[2] = {rows, cols};
  if (nb + 2 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have rank %d (at most %d)", def->name, nb + 2,
                     TIDE_MAX_DIMS);
  set_batch_dims(out, d->dt, d, nb, 2, last);
  return TIDE_OK;
}

/* matrix_diag_part: [..., M, N] -> [..., (num_diags,) max_diag_len]. */
static tide_status infer_diag_part(const tide_op_def *def, const tide_attrs *attrs, const tide_tensor *x,
                                   tide_tensor *out) {
  int64_t lo = 0, hi = 0;
  tide_status st = diag_range(def, attrs, 2, &lo, &hi);
  if (!st) st = tide_check_matrix(def, x, "input", false);
  if (st) return st;
  int64_t m = x->dims[x->ndim - 2], n = x->dims[x->ndim - 1];
  if ((st = diag_in_bounds(def, lo, m, n, "lower")) || (st = diag_in_bounds(def, hi, m, n, "upper"))) return st;
  int64_t last[2] = {hi - lo + 1, tide_max_diag_len(m, n, lo, hi)};
  bool many = hi > lo;
  set_batch_dims(out, x->dt, x, x->ndim - 2, many ? 2 : 1, many ? last : last + 1);
  return TIDE_OK;
}

/* matrix_set_diag: x [..., M, N], diagonal as matrix_diag_part gives -> x's shape. */
static tide_status infer_set_diag(const tide_op_def *def, const tide_attrs *attrs, const tide_tensor *x,
                                  const tide_tensor *d, tide_tensor *out) {
  char sx[128], sd[128], se[128];
  tide_tensor want;
  memset(&want, 0, sizeof want);
  tide_status st = tide_check_same_dtype(def, x, d, "input", "diagonal");
  if (!st) st = infer_diag_part(def, attrs, x, &want);
  if (st) return st;
  bool ok = want.ndim == d->ndim;
  for (int i = 0; ok && i < d->ndim; i++) ok = tide_dims_agree(want.dims[i], d->dims[i]);
  if (!ok)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the diagonal's shape does not fit: either its first dimensions don't "
                     "match input.shape[:-2], or its last is not the longest diagonal in k = (%lld, %lld): input "
                     "shape %s, diagonal shape %s, expected %s", def->name, (long long)attrs->ints[0],
                     (long long)attrs->ints[1], TIDE_SHAPE_STR(sx, x), TIDE_SHAPE_STR(sd, d),
                     TIDE_SHAPE_STR(se, &want));
  int64_t dims[TIDE_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    dims[i] = x->dims[i];
    if (i < x->ndim - 2) dims[i] = tide_dim_merge(x->dims[i], d->dims[i]);
  }
  tide_tensor_set_contiguous_layout(out, x->dt, x->ndim, dims);
  return TIDE_OK;
}

tide_status tide_infer_matrix_diag(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = tide_check_dtype(def, in[0], def->id == TIDE_OP_MATRIX_DIAG ? "diagonal" : "input");
  if (st) return st;
  switch (def->id) {
  case TIDE_OP_MATRIX_DIAG: return infer_diag(def, attrs, in[0], out[0]);
  case TIDE_OP_MATRIX_DIAG_PART: return infer_diag_part(def, attrs, in[0], out[0]);
  default: return infer_set_diag(def, attrs, in[0], in[1], out[0]);
  }
}

/* ---- one square matrix in: inverse, determinants, cholesky, lu, eigen, expm ------------ */

tide_status tide_infer_square(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (!st) st = tide_check_matrix(def, x, "input", true);
  if (st) return st;
  int nb = x->ndim - 2;
  int64_t n = tide_dim_merge(x->dims[nb], x->dims[nb + 1]), nn[2] = {n, n};
  switch (def->id) {
  case TIDE_OP_MATRIX_DETERMINANT:
  case TIDE_OP_LOG_MATRIX_DETERMINANT: /* sign and log|det|: the batch dims */
    for (int k = 0; k < n_out; k++) set_batch_dims(out[k], x->dt, x, nb, 0, NULL);
    return TIDE_OK;
  case TIDE_OP_LU: /* packed factors, and the row permutation */
    if (attrs->dtype != TIDE_INT32 && attrs->dtype != TIDE_INT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: output_idx_type must be int32 or int64, got %s", def->name,
                       attrs->dtype >= 0 && attrs->dtype < TIDE_NUM_DTYPES ? tide_dtype_name(attrs->dtype) : "?");
    set_batch_dims(out[0], x->dt, x, nb, 2, nn);
    set_batch_dims(out[1], attrs->dtype, x, nb, 1, nn);
    return TIDE_OK;
  case TIDE_OP_SELF_ADJOINT_EIG: /* ascending eigenvalues, eigenvectors as columns */
    set_batch_dims(out[0], x->dt, x, nb, 1, nn);
    if (attrs->flags & TIDE_ATTR_VALUES_ONLY) set_empty(out[1], x->dt);
    else set_batch_dims(out[1], x->dt, x, nb, 2, nn);
    return TIDE_OK;
  case TIDE_OP_EIG: /* eigenvalues' real and imaginary parts, then the eigenvectors' */
    set_batch_dims(out[0], x->dt, x, nb, 1, nn);
    set_batch_dims(out[1], x->dt, x, nb, 1, nn);
    for (int k = 2; k < 4; k++) {
      if (attrs->flags & TIDE_ATTR_VALUES_ONLY) set_empty(out[k], x->dt);
      else set_batch_dims(out[k], x->dt, x, nb, 2, nn);
    }
    return TIDE_OK;
  default: /* a matrix of the input's shape */
    set_batch_dims(out[0], x->dt, x, nb, 2, nn);
    return TIDE_OK;
  }
}

/* ---- qr and svd: any M x N --------------------------------------------------------- */

tide_status tide_infer_decompose(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                 const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (!st) st = tide_check_matrix(def, x, "input", false);
  if (st) return st;
  int nb = x->ndim - 2;
  int64_t m = x->dims[nb], n = x->dims[nb + 1];
  int64_t k = m < 0 || n < 0 ? -1 : (m < n ? m : n);
  bool full = (attrs->flags & TIDE_ATTR_FULL_MATRICES) != 0;
  if (def->id == TIDE_OP_QR) { /* q [M, K or M], r [K or M, N] */
    int64_t c = full ? m : k, q[2] = {m, c}, r[2] = {c, n};
    set_batch_dims(out[0], x->dt, x, nb, 2, q);
    set_batch_dims(out[1], x->dt, x, nb, 2, r);
    return TIDE_OK;
  }
  /* svd: s [K], u [M, K or M], v [N, K or N] */
  set_batch_dims(out[0], x->dt, x, nb, 1, &k);
  if (attrs->flags & TIDE_ATTR_VALUES_ONLY) {
    set_empty(out[1], x->dt);
    set_empty(out[2], x->dt);
    return TIDE_OK;
  }
  int64_t u[2] = {m, full ? m : k}, v[2] = {n, full ? n : k};
  set_batch_dims(out[1], x->dt, x, nb, 2, u);
  set_batch_dims(out[2], x->dt, x, nb, 2, v);
  return TIDE_OK;
}

/* ---- solvers: (a [..., M, N], b [..., M, K]) -> [..., N, K] ----------------------------- */

tide_status tide_infer_matrix_solve(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *a = in[0], *b = in[1];
  char sa[128], sb[128];
  bool ls = def->id == TIDE_OP_MATRIX_SOLVE_LS;
  tide_status st = tide_check_dtype(def, a, "matrix");
  if (!st) st = tide_check_same_dtype(def, a, b, "matrix", "rhs");
  if (!st) st = tide_check_matrix(def, a, "matrix", !ls);
  if (!st) st = tide_check_matrix(def, b, "rhs", false);
  if (st) return st;
  int na = a->ndim - 2, nbr = b->ndim - 2;
  if (!tide_dims_agree(a->dims[na], b->dims[nbr]))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: Input matrix and rhs are incompatible: matrix has shape %s and rhs %s "
                     "(their rows differ)", def->name, TIDE_SHAPE_STR(sa, a), TIDE_SHAPE_STR(sb, b));
  int64_t dims[TIDE_MAX_DIMS];
  int nbatch;
  if (def->id == TIDE_OP_MATRIX_TRIANGULAR_SOLVE) { /* batch dims broadcast (TF 2's MatrixTriangularSolve) */
    if (tide_broadcast_dims(def->name, na, a->dims, nbr, b->dims, &nbatch, dims))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: batch dimensions do not broadcast: matrix has shape %s and rhs %s",
                       def->name, TIDE_SHAPE_STR(sa, a), TIDE_SHAPE_STR(sb, b));
  } else { /* TF's MatrixSolve and MatrixSolveLs: the same batch dims */
    bool same = na == nbr;
    for (int i = 0; same && i < na; i++) same = tide_dims_agree(a->dims[i], b->dims[i]);
    if (!same)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: All input tensors must have the same outer dimensions: matrix has shape "
                       "%s and rhs %s", def->name, TIDE_SHAPE_STR(sa, a), TIDE_SHAPE_STR(sb, b));
    nbatch = na;
    for (int i = 0; i < na; i++) dims[i] = tide_dim_merge(a->dims[i], b->dims[i]);
  }
  if (nbatch + 2 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have rank %d (at most %d)", def->name, nbatch + 2,
                     TIDE_MAX_DIMS);
  dims[nbatch] = ls ? a->dims[na + 1] : tide_dim_merge(a->dims[na], b->dims[nbr]);
  dims[nbatch + 1] = b->dims[nbr + 1];
  tide_tensor_set_contiguous_layout(out[0], a->dt, nbatch + 2, dims);
  return TIDE_OK;
}

/* tridiagonal_solve: (diagonals [..., 3, M], rhs [..., M, K]) -> [..., M, K]. */
tide_status tide_infer_tridiagonal_solve(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                         const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *d = in[0], *b = in[1];
  char sd[128], sb[128];
  tide_status st = tide_check_dtype(def, d, "diagonals");
  if (!st) st = tide_check_same_dtype(def, d, b, "diagonals", "rhs");
  if (!st) st = tide_check_matrix(def, d, "diagonals", false);
  if (!st) st = tide_check_matrix(def, b, "rhs", false);
  if (st) return st;
  int nd = d->ndim - 2, nr = b->ndim - 2;
  bool ok = tide_dims_agree(d->dims[nd], 3) && nd == nr && tide_dims_agree(d->dims[nd + 1], b->dims[nr]);
  for (int i = 0; ok && i < nd; i++) ok = tide_dims_agree(d->dims[i], b->dims[i]);
  if (!ok)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: expects diagonals of shape [..., 3, M] and rhs of shape [..., M, K] with "
                     "the same batch dims, got %s and %s", def->name, TIDE_SHAPE_STR(sd, d), TIDE_SHAPE_STR(sb, b));
  int64_t dims[TIDE_MAX_DIMS];
  for (int i = 0; i < nr; i++) dims[i] = tide_dim_merge(d->dims[i], b->dims[i]);
  dims[nr] = tide_dim_merge(d->dims[nd + 1], b->dims[nr]);
  dims[nr + 1] = b->dims[nr + 1];
  tide_tensor_set_contiguous_layout(out[0], b->dt, b->ndim, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* One matrix stands in for any batch of them; the results' ranks stay unknown. */
static int matrix_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 2;
}
const tide_rank_rule tide_infer_band_part_rank = {matrix_rank, NULL, NULL};
const tide_rank_rule tide_infer_square_rank = {matrix_rank, NULL, NULL};
const tide_rank_rule tide_infer_decompose_rank = {matrix_rank, NULL, NULL};
const tide_rank_rule tide_infer_matrix_solve_rank = {matrix_rank, NULL, NULL};
const tide_rank_rule tide_infer_tridiagonal_solve_rank = {matrix_rank, NULL, NULL};

/* One diagonal is a vector, a range of them a matrix (one row each); set_diag's
 * x [..., M, N] and diagonals [..., (K,) L] take their ranks from each other. */
static int diag_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(n_in);
  bool one = a->nints >= 2 && a->ints[0] == a->ints[1];
  if (def->id == TIDE_OP_MATRIX_DIAG) return one ? 1 : 2;
  if (def->id == TIDE_OP_MATRIX_DIAG_PART) return 2;
  const tide_tensor *other = in[1 - i];
  if (i == 0) return tide_rank_unknown(other) ? 2 : tide_rank_capped(other->ndim + (one ? 1 : 0));
  if (tide_rank_unknown(other)) return one ? 1 : 2;
  int r = other->ndim - (one ? 1 : 0);
  return r < 1 ? 1 : r;
}
const tide_rank_rule tide_infer_matrix_diag_rank = {diag_rank, NULL, NULL};
