/* core/infer_unicode.c — shape and dtype inference of tide.strings' Unicode
 * and matching ops: unicode_decode, unicode_encode, unicode_script, regex_full_match, unsorted_segment_join. */
#include "infer_rank.h"

/* The encoding (attr m, 0..3) and error mode (attr n, 0..2) of decode and encode. */
static tide_status check_codec(const tide_op_def *def, const tide_attrs *a) {
  if (a->m < 0 || a->m > 3)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: unknown encoding %lld (0 UTF-8, 1 UTF-16-BE, 2 UTF-32-BE, 3 ISO-8859-1)",
                     def->name, (long long)a->m);
  if (a->n < 0 || a->n > 2)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: unknown error mode %lld (0 replace, 1 ignore, 2 strict)", def->name,
                     (long long)a->n);
  return TIDE_OK;
}

/* unicode_decode (x 0-d or 1-d) -> int32 code points [?], int64 row_splits [rows + 1], int64 offsets [?]. */
tide_status tide_infer_unicode_decode(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  char sh[128];
  if (x->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  if (x->ndim > 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input must be a scalar or a vector, got shape %s (reshape it first)",
                     def->name, TIDE_SHAPE_STR(sh, x));
  tide_status st = check_codec(def, a);
  if (st) return st;
  int64_t unknown = -1, rows = x->ndim == 0 ? 2 : (x->dims[0] < 0 ? -1 : x->dims[0] + 1);
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT32, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &rows);
  tide_tensor_set_contiguous_layout(out[2], TIDE_INT64, 1, &unknown);
  return TIDE_OK;
}

/* unicode_encode (code points int32/int64[, int64 row_splits]) -> strings: [rows], or one a code point. */
tide_status tide_infer_unicode_encode(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  char sh[128];
  if (n_in != 1 && n_in != 2)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects code points and maybe row_splits, got %d inputs", def->name, n_in);
  if (x->dt != TIDE_INT32 && x->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: code points must be int32 or int64, got %s", def->name,
                     tide_dtype_name(x->dt));
  tide_status st = check_codec(def, a);
  if (st) return st;
  if (n_in == 1) {
    tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, x->ndim, x->dims);
    return TIDE_OK;
  }
  const tide_tensor *s = in[1];
  if (x->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: ragged code points must be a vector, got shape %s", def->name,
                     TIDE_SHAPE_STR(sh, x));
  if (s->dt != TIDE_INT64 || s->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must be a 1-D int64 tensor, got %s %s", def->name,
                     tide_dtype_name(s->dt), TIDE_SHAPE_STR(sh, s));
  if (s->dims[0] == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must have at least one element", def->name);
  int64_t rows = s->dims[0] < 0 ? -1 : s->dims[0] - 1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 1, &rows);
  return TIDE_OK;
}

/* unicode_script (int32 code points) -> int32 of their shape. */
tide_status tide_infer_unicode_script(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_INT32)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be int32 code points, got %s", def->name,
                     tide_dtype_name(in[0]->dt));
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT32, in[0]->ndim, in[0]->dims);
  return TIDE_OK;
}

/* regex_full_match (x, pattern 0-d) -> bool of x's shape. */
tide_status tide_infer_regex_full_match(const tide_op_def *def, const tide_attrs *a, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  char sh[128];
  if (in[0]->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(in[0]->dt));
  if (in[1]->dt != TIDE_STRING || in[1]->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the pattern must be a scalar string, got %s %s", def->name,
                     tide_dtype_name(in[1]->dt), TIDE_SHAPE_STR(sh, in[1]));
  tide_tensor_set_contiguous_layout(out[0], TIDE_BOOL, in[0]->ndim, in[0]->dims);
  return TIDE_OK;
}

/* unsorted_segment_join (x, segment_ids, separator 0-d) -> [num_segments] + x's dims past the ids'. */
tide_status tide_infer_unsorted_segment_join(const tide_op_def *def, const tide_attrs *a, int n_in,
                                             const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *ids = in[1];
  char sx[128], si[128];
  if (x->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: inputs must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
  if (ids->dt != TIDE_INT32 && ids->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: segment_ids must be int32 or int64, got %s", def->name,
                     tide_dtype_name(ids->dt));
  if (in[2]->dt != TIDE_STRING || in[2]->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the separator must be a scalar string", def->name);
  if (a->n < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: num_segments must be 0 or more, got %lld", def->name, (long long)a->n);
  bool prefix = ids->ndim <= x->ndim;
  for (int d = 0; d < ids->ndim && prefix; d++)
    prefix = ids->dims[d] < 0 || x->dims[d] < 0 || ids->dims[d] == x->dims[d];
  if (!prefix)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: segment_ids' shape %s must be a prefix of the inputs' shape %s", def->name,
                     TIDE_SHAPE_STR(si, ids), TIDE_SHAPE_STR(sx, x));
  int64_t dims[TIDE_MAX_DIMS];
  int nd = 1 + x->ndim - ids->ndim;
  dims[0] = a->n;
  for (int d = ids->ndim; d < x->ndim; d++) dims[1 + d - ids->ndim] = x->dims[d];
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, nd, dims);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* decode's input is a scalar or a vector and its outputs are vectors either way. */
static int unicode_decode_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 1;
}
const tide_rank_rule tide_infer_unicode_decode_rank = {unicode_decode_rank, tide_rank_keeps, NULL};

/* encode with row splits: both vectors; alone, each code point keeps its place (the written rule). */
static int unicode_encode_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return n_in == 2 ? 1 : -1;
}
static tide_status unicode_encode_unknown(const tide_op_def *def, const tide_attrs *a, int n_in,
                                          const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_INT32 && in[0]->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: code points must be int32 or int64, got %s", def->name,
                     tide_dtype_name(in[0]->dt));
  tide_status st = check_codec(def, a);
  if (!st) tide_rank_set_unknown(out[0], TIDE_STRING);
  return st;
}
const tide_rank_rule tide_infer_unicode_encode_rank = {unicode_encode_rank, tide_rank_keeps, unicode_encode_unknown};

const tide_rank_rule tide_infer_unicode_script_rank = {tide_rank_scalar, NULL, NULL};

static bool full_match_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  return !tide_rank_unknown(in[0]);
}
const tide_rank_rule tide_infer_regex_full_match_rank = {tide_rank_scalar, full_match_keeps, NULL};

/* segment join: the separator a scalar; the inputs' and ids' ranks shape the result (written rule). */
static int segment_join_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 2 ? 0 : -1;
}
static tide_status segment_join_unknown(const tide_op_def *def, const tide_attrs *a, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: inputs must be a string tensor, got %s", def->name,
                     tide_dtype_name(in[0]->dt));
  if (in[1]->dt != TIDE_INT32 && in[1]->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: segment_ids must be int32 or int64, got %s", def->name,
                     tide_dtype_name(in[1]->dt));
  tide_rank_set_unknown(out[0], TIDE_STRING);
  return TIDE_OK;
}
static bool segment_join_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  return !tide_rank_unknown(in[0]) && !tide_rank_unknown(in[1]);
}
const tide_rank_rule tide_infer_unsorted_segment_join_rank = {segment_join_rank, segment_join_keeps,
                                                              segment_join_unknown};
