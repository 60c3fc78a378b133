/* cpu/text_ngrams.c — TextVectorization's token steps on ragged rows (values + int64 row_splits): text_ngrams
 * (TF's strings.ngrams without padding: each row's n-grams, width by width) and text_chars (UTF-8 characters). */
#include "strings_util.h"

/* row_splits checked against the values: start 0, never decrease, end at their count. */
static tide_status check_splits(const tide_op_def *def, const tide_tensor *rs, int64_t nv) {
  const int64_t *sp = rs->data;
  int64_t rows = rs->dims[0] - 1, ss = rs->strides[0];
  if (sp[0] != 0 || sp[rows * ss] != nv)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must start at 0 and end at the %lld values, got %lld ... %lld",
                     def->name, (long long)nv, (long long)sp[0], (long long)sp[rows * ss]);
  for (int64_t r = 0; r < rows; r++)
    if (sp[(r + 1) * ss] < sp[r * ss])
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must not decrease (row %lld)", def->name, (long long)r);
  return TIDE_OK;
}

/* text_ngrams(values, row_splits, separator): ints = the widths, in order. */
tide_status tide_cpu_text_ngrams(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *v = in[0], *rs = in[1];
  tide_status st = check_splits(def, rs, v->dims[0]);
  if (st) return st;
  int64_t seplen;
  const char *sep = tide_string_at(in[2]->data, 0, &seplen);
  const int64_t *sp = rs->data;
  int64_t rows = rs->dims[0] - 1, ss = rs->strides[0], total = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int w = 0; w < a->nints; w++) {
      int64_t len = sp[(r + 1) * ss] - sp[r * ss];
      if (len >= a->ints[w]) total += len - a->ints[w] + 1;
    }
  int64_t nsplits = rows + 1;
  if ((st = tide_tensor_init(out[0], TIDE_STRING, 1, &total)) != TIDE_OK) return st;
  if ((st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits)) != TIDE_OK) return st;
  tide_strings_adopt(out[0]);
  int64_t *os = out[1]->data, k = 0;
  tide_strbuf buf = {0};
  os[0] = 0;
  for (int64_t r = 0; r < rows && !st; r++) {
    int64_t b = sp[r * ss], len = sp[(r + 1) * ss] - b;
    for (int w = 0; w < a->nints && !st; w++) {
      int64_t width = a->ints[w];
      for (int64_t i = 0; i + width <= len && !st; i++) {
        if (width == 1) { /* a unigram is the token itself: share it */
          tide_string *s = ((tide_string *const *)v->data)[(b + i) * v->strides[0]];
          tide_string_retain(s);
          ((tide_string **)out[0]->data)[k++] = s;
          continue;
        }
        buf.n = 0;
        for (int64_t j = 0; j < width; j++) {
          int64_t tl;
          const char *t = tide_string_at(v->data, (b + i + j) * v->strides[0], &tl);
          if ((j > 0 && !tide_strbuf_add(&buf, sep, seplen)) || !tide_strbuf_add(&buf, t, tl)) {
            st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
            break;
          }
        }
        if (!st) st = tide_str_put(out[0], k++, buf.p, buf.n);
      }
    }
    os[r + 1] = k;
  }
  free(buf.p);
  return st;
}

/* The bytes of the UTF-8 character starting at b[0] (n bytes left): a lead byte's length when its continuation
 * bytes follow, else 1 (an invalid byte is a character of its own, as TF's replacement keeps its place). */
static int64_t char_len(const unsigned char *b, int64_t n) {
  int64_t want = b[0] < 0x80 ? 1 : (b[0] >> 5) == 6 ? 2 : (b[0] >> 4) == 14 ? 3 : (b[0] >> 3) == 30 ? 4 : 1;
  if (want > n) return 1;
  for (int64_t i = 1; i < want; i++)
    if ((b[i] & 0xC0) != 0x80) return 1;
  return want;
}

/* text_chars(x 1-D): each string's UTF-8 characters as a ragged row. */
tide_status tide_cpu_text_chars(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int64_t rows = x->dims[0], total = 0;
  for (int64_t r = 0; r < rows; r++) {
    int64_t len;
    const unsigned char *b = (const unsigned char *)tide_str_at(x, r, &len);
    for (int64_t i = 0; i < len; i += char_len(b + i, len - i)) total++;
  }
  int64_t nsplits = rows + 1;
  tide_status st = tide_tensor_init(out[0], TIDE_STRING, 1, &total);
  if (!st) st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits);
  if (st) return st;
  tide_strings_adopt(out[0]);
  int64_t *os = out[1]->data, k = 0;
  os[0] = 0;
  for (int64_t r = 0; r < rows && !st; r++) {
    int64_t len;
    const char *b = tide_str_at(x, r, &len);
    for (int64_t i = 0, c; i < len && !st; i += c) {
      c = char_len((const unsigned char *)b + i, len - i);
      st = tide_str_put(out[0], k++, b + i, c);
    }
    os[r + 1] = k;
  }
  return st;
}
