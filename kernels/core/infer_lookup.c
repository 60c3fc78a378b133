/* core/infer_lookup.c — shape and dtype inference of the vocabulary and token ops (lookup_table, lookup_find,
 * ragged_to_tensor, text_ngrams, text_chars: Keras's lookup layers and TextVectorization), with their rank rules. */
#include "infer_rank.h"

/* The slots of a vocabulary of n tokens: a power of two, at least 2n (so a probe always meets an empty one). */
static int64_t tide_lookup_slots(int64_t n) {
  int64_t cap = 2;
  while (cap < 2 * n) cap *= 2;
  return cap;
}

static tide_status vocab_check(const tide_op_def *def, const tide_tensor *v) {
  char s[128];
  if (v->dt != TIDE_STRING && v->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the vocabulary must be string or int64, got %s", def->name,
                     tide_dtype_name(v->dt));
  if (v->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the vocabulary must be a vector, got shape %s", def->name,
                     TIDE_SHAPE_STR(s, v));
  return TIDE_OK;
}

tide_status tide_infer_lookup_table(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = vocab_check(def, in[0]);
  if (st) return st;
  int64_t cap = in[0]->dims[0] < 0 ? -1 : tide_lookup_slots(in[0]->dims[0]);
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 1, &cap);
  return TIDE_OK;
}

tide_status tide_infer_lookup_find(const tide_op_def *def, const tide_attrs *a, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *k = in[0], *v = in[1], *t = in[2];
  char s[128];
  tide_status st = vocab_check(def, v);
  if (st) return st;
  if (k->dt != v->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the keys (%s) must have the vocabulary's dtype (%s)", def->name,
                     tide_dtype_name(k->dt), tide_dtype_name(v->dt));
  if (t->dt != TIDE_INT64 || t->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the table must be lookup_table's int64 vector, got %s %s", def->name,
                     tide_dtype_name(t->dt), TIDE_SHAPE_STR(s, t));
  if (t->dims[0] >= 0 && v->dims[0] >= 0 && t->dims[0] != tide_lookup_slots(v->dims[0]))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the table has %lld slots, a vocabulary of %lld tokens has %lld (make it "
                     "with lookup_table from this vocabulary)", def->name, (long long)t->dims[0],
                     (long long)v->dims[0], (long long)tide_lookup_slots(v->dims[0]));
  if (a->m < 0 || a->n < a->m)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the first token index (%lld) must be at least the OOV slots (%lld) >= 0",
                     def->name, (long long)a->n, (long long)a->m);
  if (k->dt == TIDE_STRING && a->m > 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: string keys take at most one OOV slot, got %lld", def->name,
                     (long long)a->m);
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, k->ndim, k->dims);
  return TIDE_OK;
}

tide_status tide_infer_ragged_to_tensor(const tide_op_def *def, const tide_attrs *a, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *v = in[0], *rs = in[1], *d = in[2];
  char s[128];
  tide_status st = tide_check_dtype(def, v, "values"); /* not floats: it would need a gradient */
  if (st) return st;
  if (v->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: values must be a vector, got shape %s", def->name, TIDE_SHAPE_STR(s, v));
  if (rs->dt != TIDE_INT64 || rs->ndim != 1 || rs->dims[0] == 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must be a non-empty int64 vector, got %s %s", def->name,
                     tide_dtype_name(rs->dt), TIDE_SHAPE_STR(s, rs));
  if (d->dt != v->dt || d->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the default must be a scalar of the values' dtype %s, got %s %s", def->name,
                     tide_dtype_name(v->dt), tide_dtype_name(d->dt), TIDE_SHAPE_STR(s, d));
  if (a->n < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the width must be >= 0 (0: the longest row), got %lld", def->name,
                     (long long)a->n);
  int64_t dims[2] = {rs->dims[0] < 0 ? -1 : rs->dims[0] - 1, a->n > 0 ? a->n : -1};
  tide_tensor_set_contiguous_layout(out[0], v->dt, 2, dims);
  return TIDE_OK;
}

/* A ragged string input: values a string vector, row_splits a non-empty int64 vector. */
static tide_status ragged_strings(const tide_op_def *def, const tide_tensor *v, const tide_tensor *rs) {
  char s[128];
  if (v->dt != TIDE_STRING || v->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: values must be a string vector, got %s %s", def->name,
                     tide_dtype_name(v->dt), TIDE_SHAPE_STR(s, v));
  if (rs->dt != TIDE_INT64 || rs->ndim != 1 || rs->dims[0] == 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must be a non-empty int64 vector, got %s %s", def->name,
                     tide_dtype_name(rs->dt), TIDE_SHAPE_STR(s, rs));
  return TIDE_OK;
}

tide_status tide_infer_text_ngrams(const tide_op_def *def, const tide_attrs *a, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = ragged_strings(def, in[0], in[1]);
  if (st) return st;
  if (in[2]->dt != TIDE_STRING || in[2]->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the separator must be a scalar string", def->name);
  if (a->nints < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: give at least one n-gram width", def->name);
  for (int i = 0; i < a->nints; i++)
    if (a->ints[i] < 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: n-gram widths must be >= 1, got %lld", def->name, (long long)a->ints[i]);
  int64_t unknown = -1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, in[1]->dims);
  return TIDE_OK;
}

tide_status tide_infer_text_chars(const tide_op_def *def, const tide_attrs *a, int n_in,
                                  const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  char s[128];
  if (x->dt != TIDE_STRING || x->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the input must be a string vector, got %s %s", def->name,
                     tide_dtype_name(x->dt), TIDE_SHAPE_STR(s, x));
  int64_t unknown = -1, rows = x->dims[0] < 0 ? -1 : x->dims[0] + 1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &rows);
  return TIDE_OK;
}

tide_status tide_infer_wordpiece_tokenize(const tide_op_def *def, const tide_attrs *a, int n_in,
                                          const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *v = in[1], *t = in[2], *sfx = in[3];
  char s[128];
  if (x->dt != TIDE_STRING || x->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the input must be a string vector, got %s %s", def->name,
                     tide_dtype_name(x->dt), TIDE_SHAPE_STR(s, x));
  if (v->dt != TIDE_STRING || v->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the vocabulary must be a string vector, got %s %s", def->name,
                     tide_dtype_name(v->dt), TIDE_SHAPE_STR(s, v));
  if (t->dt != TIDE_INT64 || t->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the table must be lookup_table's int64 vector, got %s %s", def->name,
                     tide_dtype_name(t->dt), TIDE_SHAPE_STR(s, t));
  if (sfx->dt != TIDE_STRING || sfx->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the suffix indicator must be a scalar string", def->name);
  if (in[4]->dt != TIDE_STRING || in[4]->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the special tokens must be a string vector, got %s %s", def->name,
                     tide_dtype_name(in[4]->dt), TIDE_SHAPE_STR(s, in[4]));
  if (a->n < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: max bytes a word must be >= 1, got %lld", def->name,
                                 (long long)a->n);
  int64_t unknown = -1, rows = x->dims[0] < 0 ? -1 : x->dims[0] + 1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &rows);
  return TIDE_OK;
}

tide_status tide_infer_bpe_tokenize(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  static const char *const what[6] = {"the input", "the vocabulary", "the vocabulary's table", "the merges",
                                      "the merges' table", "the unsplittable tokens"};
  char s[128];
  for (int i = 0; i < 6; i++) {
    int32_t want = i == 2 || i == 4 ? TIDE_INT64 : TIDE_STRING;
    if (in[i]->dt != want || in[i]->ndim != 1)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s must be a%s vector, got %s %s", def->name, what[i],
                       want == TIDE_INT64 ? "n int64 (lookup_table's)" : " string", tide_dtype_name(in[i]->dt),
                       TIDE_SHAPE_STR(s, in[i]));
  }
  if (a->flags & ~3u) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: unknown flags %u", def->name, (unsigned)a->flags);
  int64_t unknown = -1, rows = in[0]->dims[0] < 0 ? -1 : in[0]->dims[0] + 1;
  tide_tensor_set_contiguous_layout(out[0], a->flags & 2 ? TIDE_STRING : TIDE_INT64, 1, &unknown);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT64, 1, &rows);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* The vocabulary and the table are vectors; keys of any rank give ids of that rank. */
static int vector_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 1;
}
const tide_rank_rule tide_infer_lookup_table_rank = {vector_rank, tide_rank_keeps, NULL};

static int find_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 0 : 1;
}
static bool find_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in);
  return !tide_rank_unknown(in[0]); /* the ids take the keys' shape */
}
const tide_rank_rule tide_infer_lookup_find_rank = {find_rank, find_keeps, NULL};

/* ragged_to_tensor: values and row_splits vectors, the default a scalar; the result is a matrix. */
static int ragged_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 2 ? 0 : 1;
}
const tide_rank_rule tide_infer_ragged_to_tensor_rank = {ragged_rank, tide_rank_keeps, NULL};

/* text_ngrams: values and row_splits vectors, the separator a scalar; text_chars: a vector. */
static int ngrams_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 2 ? 0 : 1;
}
const tide_rank_rule tide_infer_text_ngrams_rank = {ngrams_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_text_chars_rank = {vector_rank, tide_rank_keeps, NULL};

/* wordpiece_tokenize: the input, vocabulary, table and special tokens vectors, the suffix a scalar. */
static int wordpiece_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                          int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 3 ? 0 : 1;
}
const tide_rank_rule tide_infer_wordpiece_tokenize_rank = {wordpiece_rank, tide_rank_keeps, NULL};

/* bpe_tokenize: six vectors. */
const tide_rank_rule tide_infer_bpe_tokenize_rank = {vector_rank, tide_rank_keeps, NULL};
