/* cpu/strings_ngrams.c — ngrams (TF's StringNGrams): the n-grams of each row
 * of tokens, joined by a separator, padded at both ends; dense rows or ragged ones.
 *
 * Inputs (data, separator, left_pad, right_pad[, row_splits]): four inputs,
 * data's rows are its last axis (dense); five, data is a vector cut by int64
 * row_splits (ragged). ints = the widths in order, n = pad width (-1: width - 1
 * for each width), m = 1: preserve short sequences. Outputs the n-grams (dense:
 * data's shape with the last axis the count; ragged: a vector) and int64 row splits.
 * The rules (pad width capped at width - 1, where pads and tokens go, a
 * short sequence kept whole) follow TF's string_ngrams_op.cc line for line. */
#include "../core/ngrams_count.h"
#include "strings_util.h"

typedef struct {
  const tide_tensor *x;
  const char *sep, *lpad, *rpad;
  int64_t nsep, nlpad, nrpad;
  tide_strbuf buf;
} ngram_ctx;

/* Write count n-grams of width w over the row's tokens (data elements
 * first..first+len) into o from element at, as TF's CreateNgrams. */
static tide_status make(ngram_ctx *c, const tide_attrs *a, int64_t first, int64_t count, int64_t w, tide_tensor *o,
                        int64_t at) {
  int64_t pad = tide_ngrams_pad(a, w);
  for (int64_t g = 0; g < count; g++) {
    int64_t left = pad - g > 0 ? pad - g : 0;
    int64_t right = pad - (count - (g + 1)) > 0 ? pad - (count - (g + 1)) : 0;
    int64_t tokens = w - (left + right), start = left > 0 ? 0 : g - pad;
    bool ok = true;
    c->buf.n = 0;
    for (int64_t k = 0; k < left; k++)
      ok = ok && tide_strbuf_add(&c->buf, c->lpad, c->nlpad) && tide_strbuf_add(&c->buf, c->sep, c->nsep);
    for (int64_t k = 0; k < tokens; k++) {
      int64_t len;
      const char *b = tide_str_at(c->x, first + start + k, &len);
      ok = ok && tide_strbuf_add(&c->buf, b, len);
      if (k + 1 < tokens) ok = ok && tide_strbuf_add(&c->buf, c->sep, c->nsep);
    }
    if (tokens > 0) {
      for (int64_t k = 0; k < right; k++)
        ok = ok && tide_strbuf_add(&c->buf, c->sep, c->nsep) && tide_strbuf_add(&c->buf, c->rpad, c->nrpad);
    } else { /* the left pads ended on a separator: end on a pad, not a separator */
      for (int64_t k = 0; k + 1 < right; k++)
        ok = ok && tide_strbuf_add(&c->buf, c->rpad, c->nrpad) && tide_strbuf_add(&c->buf, c->sep, c->nsep);
      ok = ok && tide_strbuf_add(&c->buf, c->rpad, c->nrpad);
    }
    if (!ok) return TIDE_FAIL(TIDE_ERR_MEMORY, "ngrams: out of memory");
    tide_status st = tide_str_put(o, at + g, c->buf.p, c->buf.n);
    if (st) return st;
  }
  return TIDE_OK;
}

/* The row splits of the input: given (ragged, checked), or every `width` elements (dense). */
static tide_status input_splits(const tide_op_def *def, int n_in, const tide_tensor *const *in, int64_t *rows,
                                int64_t **out) {
  const tide_tensor *x = in[0];
  if (n_in == 5) {
    const tide_tensor *s = in[4];
    int64_t n = s->dims[0];
    if (n < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must have at least one element", def->name);
    int64_t *r = malloc((size_t)n * sizeof *r);
    if (!r) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    for (int64_t i = 0; i < n; i++) {
      r[i] = ((const int64_t *)s->data)[i * s->strides[0]];
      if ((i == 0 && r[i] != 0) || (i > 0 && r[i] < r[i - 1]) || (i == n - 1 && r[i] != x->dims[0])) {
        free(r);
        return TIDE_FAIL(TIDE_ERR_VALUE,
                         "%s: row_splits must start at 0, never decrease and end at the number of values (%lld)",
                         def->name, (long long)x->dims[0]);
      }
    }
    *rows = n - 1, *out = r;
    return TIDE_OK;
  }
  int64_t width = x->dims[x->ndim - 1], n = width ? x->nelem / width : 1;
  for (int d = 0; d < x->ndim - 1 && !width; d++) n *= x->dims[d]; /* rows of no tokens */
  int64_t *r = malloc((size_t)(n + 1) * sizeof *r);
  if (!r) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  for (int64_t i = 0; i <= n; i++) r[i] = i * width;
  *rows = n, *out = r;
  return TIDE_OK;
}

tide_status tide_cpu_string_ngrams(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  int64_t rows = 0, *splits = NULL;
  tide_status st = input_splits(def, n_in, in, &rows, &splits);
  if (st) return st;
  int64_t total = 0;
  for (int64_t r = 0; r < rows; r++) total += tide_ngrams_count(a, splits[r + 1] - splits[r]);
  int64_t nsplits = rows + 1;
  const tide_tensor *x = in[0];
  if (n_in == 5) {
    st = tide_tensor_init(out[0], TIDE_STRING, 1, &total);
  } else { /* dense: every row gives as many; the last axis becomes their count */
    int64_t dims[TIDE_MAX_DIMS];
    for (int d = 0; d < x->ndim - 1; d++) dims[d] = x->dims[d];
    dims[x->ndim - 1] = tide_ngrams_count(a, x->dims[x->ndim - 1]);
    st = tide_tensor_init(out[0], TIDE_STRING, x->ndim, dims);
  }
  if (!st) st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits);
  if (st) return free(splits), st;
  tide_strings_adopt(out[0]);
  ngram_ctx c = {.x = x};
  c.sep = tide_string_at(in[1]->data, 0, &c.nsep);
  c.lpad = tide_string_at(in[2]->data, 0, &c.nlpad);
  c.rpad = tide_string_at(in[3]->data, 0, &c.nrpad);
  int64_t *os = out[1]->data, at = 0;
  os[0] = 0;
  for (int64_t r = 0; r < rows && !st; r++) {
    int64_t first = splits[r], len = splits[r + 1] - first, start = at;
    for (int i = 0; i < a->nints && !st; i++) {
      int64_t cnt = tide_ngrams_of_width(a, len, a->ints[i]);
      st = make(&c, a, first, cnt, a->ints[i], out[0], at);
      at += cnt;
    }
    if (!st && a->m && at == start && len > 0) /* a short sequence: one n-gram of it all, padded */
      st = make(&c, a, first, 1, len + 2 * a->n, out[0], at++);
    os[r + 1] = at;
  }
  free(c.buf.p);
  free(splits);
  return st;
}
