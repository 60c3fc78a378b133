/* cpu/strings_map.c — one string in, one value out: lower, upper, strip
 * (ASCII, as TF's ops), and length in bytes or UTF-8 characters. */
#include "strings_util.h"

tide_status tide_cpu_string_map(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  if (def->id == TIDE_OP_STRING_LENGTH) {
    for (int64_t k = 0; k < o->nelem; k++) {
      int64_t len;
      const char *b = tide_str_at(x, k, &len);
      ((int32_t *)o->data)[k] = a->n == 1 ? (int32_t)tide_utf8_chars(b, len) : (int32_t)len;
    }
    return TIDE_OK;
  }
  tide_strings_adopt(o);
  char *buf = NULL;
  int64_t cap = 0;
  for (int64_t k = 0; k < o->nelem; k++) {
    int64_t len;
    const char *b = tide_str_at(x, k, &len);
    if (def->id == TIDE_OP_STRING_STRIP) {
      int64_t lo = 0, hi = len;
      while (lo < hi && tide_ascii_space((unsigned char)b[lo])) lo++;
      while (hi > lo && tide_ascii_space((unsigned char)b[hi - 1])) hi--;
      tide_status st = tide_str_put(o, k, b + lo, hi - lo);
      if (st) return free(buf), st;
      continue;
    }
    if (len > cap) {
      char *grown = realloc(buf, (size_t)len);
      if (!grown) return free(buf), TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
      buf = grown, cap = len;
    }
    bool lower = def->id == TIDE_OP_STRING_LOWER;
    for (int64_t i = 0; i < len; i++) {
      unsigned char c = (unsigned char)b[i];
      buf[i] = (char)(lower ? (c >= 'A' && c <= 'Z' ? c + 32 : c) : (c >= 'a' && c <= 'z' ? c - 32 : c));
    }
    tide_status st = tide_str_put(o, k, buf, len);
    if (st) return free(buf), st;
  }
  free(buf);
  return TIDE_OK;
}
