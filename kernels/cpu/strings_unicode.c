/* cpu/strings_unicode.c — Unicode decode and encode (TF's UnicodeDecodeWithOffsets
 * and UnicodeEncode: UTF-8, UTF-16-BE, UTF-32-BE and ISO-8859-1, with TF's error
 * modes) and unicode_script (ICU's script codes, as TF's UnicodeScript).
 *
 * Encodings (attr m): 0 UTF-8, 1 UTF-16-BE, 2 UTF-32-BE, 3 ISO-8859-1 (one
 * byte a character). Errors (attr n): 0 replace (an invalid sequence gives
 * ints[0], the replacement character), 1 ignore (it is dropped), 2 strict (an
 * error naming the element). ints[1] = 1: C0 control characters (U+0000-U+001F) are
 * replaced too (TF's replace_control_characters). An invalid UTF-8 sequence is
 * ICU's (and TF's): the longest start of a valid sequence, or one byte. */
#include "icu_load.h"
#include "strings_util.h"

#include <stdio.h>
#include <unicode/uscript.h>
#include <unicode/uversion.h>

enum { ENC_UTF8, ENC_UTF16BE, ENC_UTF32BE, ENC_LATIN1 };
enum { ERR_REPLACE, ERR_IGNORE, ERR_STRICT };

static const char *const ENCODING_NAMES[] = {"UTF-8", "UTF-16-BE", "UTF-32-BE", "ISO-8859-1"};

/* The next character of s[i..n) in encoding enc: its code point (-1: an
 * invalid sequence) and the bytes it takes (*len >= 1). */
static int32_t next_char(int enc, const unsigned char *s, int64_t i, int64_t n, int64_t *len) {
  if (enc == ENC_LATIN1) return *len = 1, s[i];
  if (enc == ENC_UTF32BE) {
    if (n - i < 4) return *len = n - i, -1;
    *len = 4;
    uint32_t c = (uint32_t)s[i] << 24 | (uint32_t)s[i + 1] << 16 | (uint32_t)s[i + 2] << 8 | s[i + 3];
    return c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ? -1 : (int32_t)c;
  }
  if (enc == ENC_UTF16BE) {
    if (n - i < 2) return *len = n - i, -1;
    uint32_t u = (uint32_t)s[i] << 8 | s[i + 1];
    *len = 2;
    if (u < 0xD800 || u > 0xDFFF) return (int32_t)u;
    if (u >= 0xDC00 || n - i < 4) return -1; /* a lone low surrogate, or a high one at the end */
    uint32_t v = (uint32_t)s[i + 2] << 8 | s[i + 3];
    if (v < 0xDC00 || v > 0xDFFF) return -1;
    *len = 4;
    return (int32_t)(0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00));
  }
  unsigned c = s[i];
  if (c < 0x80) return *len = 1, (int32_t)c;
  int64_t need;
  unsigned lo = 0x80, hi = 0xBF;
  int32_t cp;
  if (c >= 0xC2 && c <= 0xDF) need = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) {
    need = 3, cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4, cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
  } else {
    return *len = 1, -1;
  }
  int64_t k = 1; /* the maximal subpart: the bytes that could still start a valid sequence */
  for (; k < need && i + k < n; k++) {
    unsigned b = s[i + k];
    if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) break;
    cp = cp << 6 | (int32_t)(b & 0x3F);
  }
  *len = k;
  return k == need ? cp : -1;
}

static bool control(int32_t c) { return c >= 0 && c < 0x20; } /* C0, as TF documents */

/* unicode_decode (x 0-d or 1-d) -> int32 code points, int64 row_splits, int64 byte offsets. */
tide_status tide_cpu_unicode_decode(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int64_t rows = x->ndim == 0 ? 1 : x->dims[0], total = 0;
  int enc = (int)a->m;
  int32_t repl = (int32_t)a->ints[0];
  /* pass 0 counts, pass 1 writes */
  int32_t *cps = NULL;
  int64_t *offs = NULL, *rs = NULL;
  for (int pass = 0; pass < 2; pass++) {
    int64_t at = 0;
    for (int64_t r = 0; r < rows; r++) {
      int64_t n;
      const unsigned char *s = (const unsigned char *)tide_str_at(x, r, &n);
      for (int64_t i = 0; i < n;) {
        int64_t len;
        int32_t c = next_char(enc, s, i, n, &len);
        bool bad = c < 0;
        if (bad && a->n == ERR_STRICT)
          return TIDE_FAIL(TIDE_ERR_VALUE, "%s: element %lld is not valid %s (at byte %lld; errors = \"strict\")",
                           def->name, (long long)r, ENCODING_NAMES[enc], (long long)i);
        if (!bad && a->ints[1] && control(c)) c = repl;
        if (!(bad && a->n == ERR_IGNORE)) {
          if (pass) cps[at] = bad ? repl : c, offs[at] = i;
          at++;
        }
        i += len;
      }
      if (pass) rs[r + 1] = at;
    }
    if (pass == 0) {
      total = at;
      int64_t nsplits = rows + 1;
      tide_status st = tide_tensor_init(out[0], TIDE_INT32, 1, &total);
      if (!st) st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits);
      if (!st) st = tide_tensor_init(out[2], TIDE_INT64, 1, &total);
      if (st) return st;
      cps = out[0]->data, rs = out[1]->data, offs = out[2]->data;
      rs[0] = 0;
    }
  }
  return TIDE_OK;
}

/* Append code point c in encoding enc; false when enc cannot hold it. */
static bool put_char(tide_strbuf *b, int enc, int32_t c, bool *oom) {
  unsigned char t[4];
  int64_t n;
  if (c < 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
  if (enc == ENC_LATIN1) {
    if (c > 0xFF) return false;
    t[0] = (unsigned char)c, n = 1;
  } else if (enc == ENC_UTF32BE) {
    t[0] = 0, t[1] = (unsigned char)(c >> 16), t[2] = (unsigned char)(c >> 8), t[3] = (unsigned char)c, n = 4;
  } else if (enc == ENC_UTF16BE) {
    if (c < 0x10000) {
      t[0] = (unsigned char)(c >> 8), t[1] = (unsigned char)c, n = 2;
    } else {
      uint32_t v = (uint32_t)c - 0x10000, hi = 0xD800 + (v >> 10), lo = 0xDC00 + (v & 0x3FF);
      t[0] = (unsigned char)(hi >> 8), t[1] = (unsigned char)hi, t[2] = (unsigned char)(lo >> 8);
      t[3] = (unsigned char)lo, n = 4;
    }
  } else if (c < 0x80) {
    t[0] = (unsigned char)c, n = 1;
  } else if (c < 0x800) {
    t[0] = (unsigned char)(0xC0 | c >> 6), t[1] = (unsigned char)(0x80 | (c & 0x3F)), n = 2;
  } else if (c < 0x10000) {
    t[0] = (unsigned char)(0xE0 | c >> 12), t[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    t[2] = (unsigned char)(0x80 | (c & 0x3F)), n = 3;
  } else {
    t[0] = (unsigned char)(0xF0 | c >> 18), t[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    t[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F)), t[3] = (unsigned char)(0x80 | (c & 0x3F)), n = 4;
  }
  if (!tide_strbuf_add(b, (const char *)t, n)) *oom = true;
  return true;
}

/* unicode_encode (code points[, int64 row_splits]): with row splits, one
 * string a row (a vector); without, one string per code point (its shape). */
tide_status tide_cpu_unicode_encode(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int enc = (int)a->m;
  int32_t repl = (int32_t)a->ints[0];
  const int64_t *rs = n_in == 2 ? in[1]->data : NULL;
  int64_t rows = out[0]->nelem, rstride = n_in == 2 ? in[1]->strides[0] : 0;
  if (rs) {
    int64_t nr = in[1]->dims[0];
    for (int64_t r = 0; r < nr; r++) {
      int64_t v = rs[r * rstride], prev = r ? rs[(r - 1) * rstride] : 0;
      if ((r == 0 && v != 0) || v < prev || (r == nr - 1 && v != x->nelem))
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must start at 0, never decrease and end at the number of "
                         "code points (%lld)", def->name, (long long)x->nelem);
    }
  }
  tide_strings_adopt(out[0]);
  tide_strbuf b = {0};
  tide_status st = TIDE_OK;
  for (int64_t r = 0; r < rows && !st; r++) {
    int64_t lo = rs ? rs[r * rstride] : r, hi = rs ? rs[(r + 1) * rstride] : r + 1;
    bool oom = false;
    b.n = 0;
    for (int64_t k = lo; k < hi && !oom; k++) {
      int64_t off = tide_str_offset(x, k);
      int32_t c = x->dt == TIDE_INT64 ? (int32_t)((const int64_t *)x->data)[off] : ((const int32_t *)x->data)[off];
      if (x->dt == TIDE_INT64 && ((const int64_t *)x->data)[off] != c) c = -1;
      if (put_char(&b, enc, c, &oom)) continue;
      if (a->n == ERR_STRICT) {
        st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: code point %lld of row %lld is not a valid %s character (errors = "
                       "\"strict\")", def->name, (long long)c, (long long)r, ENCODING_NAMES[enc]);
        break;
      }
      if (a->n == ERR_REPLACE && !put_char(&b, enc, repl, &oom))
        st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: replacement_char %lld is not a valid %s character", def->name,
                       (long long)repl, ENCODING_NAMES[enc]);
    }
    if (oom) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    if (!st) st = tide_str_put(out[0], r, b.p, b.n);
  }
  free(b.p);
  return st;
}

/* unicode_script (int32 code points) -> int32 ICU UScriptCode each; -1 (USCRIPT_INVALID_CODE) where ICU fails. */
tide_status tide_cpu_unicode_script(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_icu *icu = tide_icu_get(); /* cpu/icu_load.c: ICU opened on first use, not linked */
  if (!icu) {
    char why[300];
    snprintf(why, sizeof why, "%s", tide_last_error()); /* the message is about to be rewritten */
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: %s", def->name, why);
  }
  const tide_tensor *x = in[0];
  int32_t *o = out[0]->data;
  for (int64_t k = 0; k < out[0]->nelem; k++) {
    UErrorCode err = U_ZERO_ERROR;
    UScriptCode sc = icu->get_script(((const int32_t *)x->data)[tide_str_offset(x, k)], &err);
    o[k] = U_SUCCESS(err) ? (int32_t)sc : -1;
  }
  return TIDE_OK;
}
