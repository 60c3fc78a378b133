/* core/infer_strings.c — shape and dtype inference of the string ops
 * (tide.strings): elementwise maps, join with broadcasting, reduce_join,
 * substr, regex_replace, and split (whose sizes come from the data). */
#include "infer_rank.h"
#include "ngrams_count.h"

/* A 0-d string input (separator, pattern, rewrite), named in the error. */
static tide_status scalar_string(const tide_op_def *def, const tide_tensor *t, const char *what) {
  if (t->dt != TIDE_STRING || t->ndim != 0) {
    char s[128];
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s must be a scalar string, got %s %s", def->name, what,
                     tide_dtype_name(t->dt), TIDE_SHAPE_STR(s, t));
  }
  return TIDE_OK;
}

tide_status tide_infer_string_map(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int dt = TIDE_STRING;
  if (def->id == TIDE_OP_AS_STRING) {
    if (x->dt == TIDE_STRING)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "as_string: the input is already a string tensor");
  } else if (x->dt != TIDE_STRING) {
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  }
  if (def->id == TIDE_OP_STRING_LENGTH) dt = TIDE_INT32;
  if (def->id == TIDE_OP_STRING_TO_NUMBER) {
    dt = a->dtype;
    if (dt != TIDE_FLOAT32 && dt != TIDE_FLOAT64 && dt != TIDE_INT32 && dt != TIDE_INT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "string_to_number: out_type must be float32, float64, int32 or int64, got %s",
                       tide_dtype_name(dt));
  }
  tide_tensor_set_contiguous_layout(out[0], dt, x->ndim, x->dims);
  return TIDE_OK;
}

tide_status tide_infer_string_join(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_out);
  if (n_in < 2) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects a separator and at least one input", def->name);
  tide_status st = scalar_string(def, in[0], "the separator");
  if (st) return st;
  int nd = 0;
  int64_t dims[TIDE_MAX_DIMS];
  for (int k = 1; k < n_in; k++) {
    if (in[k]->dt != TIDE_STRING)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input %d must be a string tensor, got %s", def->name, k,
                       tide_dtype_name(in[k]->dt));
    if ((st = tide_broadcast_dims(def->name, nd, dims, in[k]->ndim, in[k]->dims, &nd, dims)) != TIDE_OK) return st;
  }
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, nd, dims);
  return TIDE_OK;
}

/* string_format: pieces (1-D, one more than the tensors) and any tensors -> one 0-d string. */
tide_status tide_infer_string_format(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_out);
  if (n_in < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects the template's pieces", def->name);
  const tide_tensor *p = in[0];
  if (p->dt != TIDE_STRING || p->ndim != 1 || (p->dims[0] >= 0 && p->dims[0] != n_in)) {
    char s[128];
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the pieces must be a 1-D string tensor of %d (one more than the %d tensors), got %s %s",
                     def->name, n_in, n_in - 1, tide_dtype_name(p->dt), TIDE_SHAPE_STR(s, p));
  }
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 0, NULL);
  return TIDE_OK;
}

tide_status tide_infer_reduce_join(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = scalar_string(def, in[1], "the separator");
  if (st) return st;
  const tide_tensor *x = in[0];
  if (x->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  bool mask[TIDE_MAX_DIMS];
  if ((st = tide_reduce_axes(def, a, x->ndim, mask)) != TIDE_OK) return st;
  int nd = 0;
  int64_t dims[TIDE_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++)
    if (!mask[d]) dims[nd++] = x->dims[d];
    else if (a->flags & TIDE_ATTR_KEEPDIMS) dims[nd++] = 1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, nd, dims);
  return TIDE_OK;
}

tide_status tide_infer_substr(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(in[0]->dt));
  for (int k = 1; k < 3; k++)
    if (in[k]->dt != TIDE_INT32 && in[k]->dt != TIDE_INT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be int32 or int64, got %s", def->name, k == 1 ? "pos" : "len",
                       tide_dtype_name(in[k]->dt));
  int nd;
  int64_t dims[TIDE_MAX_DIMS];
  tide_status st = tide_broadcast_dims(def->name, in[0]->ndim, in[0]->dims, in[1]->ndim, in[1]->dims, &nd, dims);
  if (!st) st = tide_broadcast_dims(def->name, nd, dims, in[2]->ndim, in[2]->dims, &nd, dims);
  if (!st) tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, nd, dims);
  return st;
}

tide_status tide_infer_regex_replace(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(in[0]->dt));
  tide_status st = scalar_string(def, in[1], "the pattern");
  if (!st) st = scalar_string(def, in[2], "the rewrite");
  if (!st) tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, in[0]->ndim, in[0]->dims);
  return st;
}

tide_status tide_infer_string_split(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  if (x->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  if (x->ndim > 1) {
    char s[128];
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input must be a scalar or a vector, got shape %s (reshape it first)",
                     def->name, TIDE_SHAPE_STR(s, x));
  }
  tide_status st = scalar_string(def, in[1], "sep");
  if (st) return st;
  int64_t unknown = -1, rows = x->ndim == 0 ? 2 : (x->dims[0] < 0 ? -1 : x->dims[0] + 1);
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &rows);
  return TIDE_OK;
}

/* to_hash_bucket*: int64 buckets of x's shape; n = the number of buckets (> 0). */
tide_status tide_infer_string_hash(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  if (x->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  if (a->n < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_buckets must be at least 1, got %lld", def->name, (long long)a->n);
  if (a->m < 0 || a->m > 2)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: unknown hash kind %lld (0 fast, 1 strong, 2 legacy)", def->name,
                     (long long)a->m);
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, x->ndim, x->dims);
  return TIDE_OK;
}

/* ngrams (data, separator, left_pad, right_pad[, row_splits]): cpu/strings_ngrams.c says the layout. */
tide_status tide_infer_string_ngrams(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  char sh[128];
  if (n_in != 4 && n_in != 5)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects data, separator, left_pad, right_pad and maybe row_splits, got %d "
                     "inputs", def->name, n_in);
  const tide_tensor *x = in[0];
  if (x->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: data must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  static const char *const what[] = {NULL, "the separator", "left_pad", "right_pad"};
  for (int k = 1; k < 4; k++) {
    tide_status st = scalar_string(def, in[k], what[k]);
    if (st) return st;
  }
  if (a->nints < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: ngram_width needs at least one width", def->name);
  for (int i = 0; i < a->nints; i++)
    if (a->ints[i] < 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: every ngram_width must be at least 1, got %lld", def->name,
                       (long long)a->ints[i]);
  int64_t unknown = -1;
  if (n_in == 5) {
    const tide_tensor *s = in[4];
    if (x->ndim != 1)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: ragged values must be a vector, got shape %s", def->name,
                       TIDE_SHAPE_STR(sh, x));
    if (s->dt != TIDE_INT64 || s->ndim != 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must be a 1-D int64 tensor, got %s %s", def->name,
                       tide_dtype_name(s->dt), TIDE_SHAPE_STR(sh, s));
    tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 1, &unknown);
    tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, s->dims);
    return TIDE_OK;
  }
  if (x->ndim < 1) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: data must have rank 1 or more, got a scalar", def->name);
  int64_t dims[TIDE_MAX_DIMS], rows = 1;
  for (int d = 0; d < x->ndim - 1; d++) {
    dims[d] = x->dims[d];
    rows = rows < 0 || x->dims[d] < 0 ? -1 : rows * x->dims[d];
  }
  int64_t width = x->dims[x->ndim - 1];
  dims[x->ndim - 1] = width < 0 ? -1 : tide_ngrams_count(a, width);
  int64_t nsplits = rows < 0 ? -1 : rows + 1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, x->ndim, dims);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &nsplits);
  return TIDE_OK;
}

/* cross_hashed (x1, ..., xn): each [B, k_i] string or int64, the same B; -> int64 [B, k_1*...*k_n]. */
tide_status tide_infer_cross_hashed(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  char sh[128];
  if (n_in < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects at least one input", def->name);
  if (a->n < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_buckets must be 0 (none) or more, got %lld", def->name, (long long)a->n);
  int64_t rows = -1, width = 1;
  for (int i = 0; i < n_in; i++) {
    const tide_tensor *t = in[i];
    if (t->dt != TIDE_STRING && t->dt != TIDE_INT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input %d must be string or int64, got %s", def->name, i + 1,
                       tide_dtype_name(t->dt));
    if (t->ndim != 2)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input %d must be 2-D [batch, features], got shape %s", def->name, i + 1,
                       TIDE_SHAPE_STR(sh, t));
    if (t->dims[0] >= 0) {
      if (rows >= 0 && rows != t->dims[0])
        return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input %d has %lld rows, an earlier input %lld", def->name, i + 1,
                         (long long)t->dims[0], (long long)rows);
      rows = t->dims[0];
    }
    width = width < 0 || t->dims[1] < 0 ? -1 : width * t->dims[1];
  }
  int64_t dims[2] = {rows, width};
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 2, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* Elementwise: separators, patterns, rewrites and substr's positions are
 * scalars or broadcast, so a scalar fits. The result's shape is known when
 * the inputs that shape it are (not a separator, pattern or rewrite, which
 * must be scalars). */
const tide_rank_rule tide_infer_string_map_rank = {tide_rank_scalar, NULL, NULL};
const tide_rank_rule tide_infer_string_hash_rank = {tide_rank_scalar, NULL, NULL};

static bool regex_replace_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  return !tide_rank_unknown(in[0]);
}
const tide_rank_rule tide_infer_regex_replace_rank = {tide_rank_scalar, regex_replace_keeps, NULL};

/* The shaping inputs from `first` on all known. */
static bool known_from(int first, int n_in, const tide_tensor *const *in) {
  for (int k = first; k < n_in; k++)
    if (tide_rank_unknown(in[k])) return false;
  return true;
}
static bool string_join_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a);
  return known_from(1, n_in, in); /* in[0]: the separator */
}
const tide_rank_rule tide_infer_string_join_rank = {tide_rank_scalar, string_join_keeps, NULL};
static bool substr_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a);
  return known_from(0, n_in, in);
}
const tide_rank_rule tide_infer_substr_rank = {tide_rank_scalar, substr_keeps, NULL};

/* reduce_join: its separator a scalar; its input's axes are several (the
 * rule below): as reductions, all axes without keepdims give a scalar. */
static int reduce_join_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 1 ? 0 : -1;
}
static bool reduce_join_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  return !tide_rank_unknown(in[0]); /* only the separator's rank was unknown */
}
static tide_status reduce_join_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                            const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(in[0]->dt));
  if (in[1]->dt != TIDE_STRING || in[1]->ndim > 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the separator must be a scalar string", def->name);
  if (a->nints == 0 && !(a->flags & TIDE_ATTR_KEEPDIMS)) tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 0, NULL);
  else tide_rank_set_unknown(out[0], TIDE_STRING);
  return TIDE_OK;
}
const tide_rank_rule tide_infer_reduce_join_rank = {reduce_join_rank, reduce_join_keeps, reduce_join_unknown_rank};

/* split's input a vector, its separator a scalar: both outputs are vectors whatever its rank (0 or 1). */
static int string_split_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 1 : 0;
}
const tide_rank_rule tide_infer_string_split_rank = {string_split_rank, tide_rank_keeps, NULL};

/* ngrams: the pads and separator are scalars, row_splits a vector, ragged
 * values a vector; dense data of unknown rank has no stand-in (the rule below). */
static int string_ngrams_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(in);
  if (i == 0) return n_in == 5 ? 1 : -1;
  return i == 4 ? 1 : 0;
}
static tide_status string_ngrams_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: data must be a string tensor, got %s", def->name, tide_dtype_name(in[0]->dt));
  int64_t unknown = -1;
  tide_rank_set_unknown(out[0], TIDE_STRING);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &unknown);
  return TIDE_OK;
}
const tide_rank_rule tide_infer_string_ngrams_rank = {string_ngrams_rank, tide_rank_keeps, string_ngrams_unknown_rank};

/* cross_hashed: every input is 2-D, so a stand-in of rank 2 holds. */
static int cross_hashed_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 2;
}
const tide_rank_rule tide_infer_cross_hashed_rank = {cross_hashed_rank, tide_rank_keeps, NULL};

/* string_format: the pieces are a vector, the tensors any rank; the result is always 0-d. */
static int string_format_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 1 : 0;
}
const tide_rank_rule tide_infer_string_format_rank = {string_format_rank, tide_rank_keeps, NULL};

/* fingerprint: [d0, ...] of any dtype -> uint8 [d0, 8] (one fingerprint per row). */
tide_status tide_infer_fingerprint(const tide_op_def *def, const tide_attrs *a, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "data");
  if (st) return st;
  if (a->m != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: unknown method %lld (0: farmhash64)", def->name, (long long)a->m);
  if (x->ndim < 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: data must have rank at least 1, got a 0-d tensor", def->name);
  int64_t dims[2] = {x->dims[0], 8};
  tide_tensor_set_contiguous_layout(out[0], TIDE_UINT8, 2, dims);
  return TIDE_OK;
}

/* Unknown rank: a rank-1 stand-in gives [?, 8], which holds for every rank the op takes. */
static int fingerprint_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 1;
}
const tide_rank_rule tide_infer_fingerprint_rank = {fingerprint_rank, tide_rank_keeps, NULL};
