/* cpu/strings_number.c — strings to numbers (TF's string_to_number: the
 * whole string must be a number, else an error naming it) and numbers to
 * strings (TF's as_string defaults: floats as %f, ints in decimal, bools as words). */
#include "strings_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* Parse b (len bytes, NUL after) as dtype dt into out[k]: ASCII whitespace at
 * either end is allowed (as TF's safe_strto*), anything else must be the number. */
static tide_status parse(const tide_op_def *def, const char *b, int64_t len, int dt, void *out, int64_t k) {
  int64_t lo = 0, hi = len;
  while (lo < hi && tide_ascii_space((unsigned char)b[lo])) lo++;
  while (hi > lo && tide_ascii_space((unsigned char)b[hi - 1])) hi--;
  char small[64], *text = hi - lo < (int64_t)sizeof small ? small : malloc((size_t)(hi - lo + 1));
  if (!text) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  memcpy(text, b + lo, (size_t)(hi - lo));
  text[hi - lo] = 0;
  char *end = NULL;
  errno = 0;
  bool ok = hi > lo && (int64_t)strlen(text) == hi - lo; /* a NUL inside is no number */
  if (dt == TIDE_FLOAT32 || dt == TIDE_FLOAT64) {
    double v = ok ? strtod(text, &end) : 0;
    ok = ok && end == text + (hi - lo);
    if (ok && dt == TIDE_FLOAT32) ((float *)out)[k] = (float)v;
    else if (ok) ((double *)out)[k] = v;
  } else {
    long long v = ok ? strtoll(text, &end, 10) : 0;
    ok = ok && end == text + (hi - lo) && errno != ERANGE && (dt == TIDE_INT64 || (v >= INT32_MIN && v <= INT32_MAX));
    if (ok && dt == TIDE_INT32) ((int32_t *)out)[k] = (int32_t)v;
    else if (ok) ((int64_t *)out)[k] = v;
  }
  if (text != small) free(text);
  if (ok) return TIDE_OK;
  char shown[64];
  snprintf(shown, sizeof shown, "%.*s%s", (int)(len < 48 ? len : 48), b, len > 48 ? "..." : "");
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: could not convert string \"%s\" (element %lld) to %s", def->name, shown,
                   (long long)k, tide_dtype_name(dt));
}

tide_status tide_cpu_string_number(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  if (def->id == TIDE_OP_STRING_TO_NUMBER) {
    for (int64_t k = 0; k < o->nelem; k++) {
      int64_t len;
      const char *b = tide_str_at(x, k, &len);
      tide_status st = parse(def, b, len, o->dt, o->data, k);
      if (st) return st;
    }
    return TIDE_OK;
  }
  /* as_string, as TF's defaults print: 3.141593, 1.000000, nan, inf; 12; true. */
  tide_strings_adopt(o);
  for (int64_t k = 0; k < o->nelem; k++) {
    char buf[64];
    int n;
    int64_t off = tide_str_offset(x, k);
    if (x->dt == TIDE_BOOL) n = snprintf(buf, sizeof buf, "%s", ((const uint8_t *)x->data)[off] ? "true" : "false");
    else if (x->dt == TIDE_INT64) n = snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)x->data)[off]);
    else if (tide_dtype_is_int(x->dt)) n = snprintf(buf, sizeof buf, "%.0f", tide_read_number(x->data, x->dt, off));
    else {
      double v = tide_read_number(x->data, x->dt, off);
      n = isnan(v) ? snprintf(buf, sizeof buf, "nan") : isinf(v) ? snprintf(buf, sizeof buf, v < 0 ? "-inf" : "inf")
                                                          : snprintf(buf, sizeof buf, "%f", v);
    }
    tide_status st = tide_str_put(o, k, buf, n);
    if (st) return st;
  }
  return TIDE_OK;
}
