/* cpu/assert.c — assert: pass when every element of the condition is true
 * (or, for a float one, finite), else fail with the message and a summary
 * of each data input (as TF's Assert and CheckNumerics). */
#include "../core/registry.h"

#include <stdio.h>
#include <string.h>

/* Append to buf (size cap, used *n) at most `show` values of t, row-major: "[1 -1 2 ...]". */
static void put_values(char *buf, size_t cap, size_t *n, const tide_tensor *t, int64_t show) {
  int64_t idx[TIDE_MAX_DIMS] = {0};
  *n += (size_t)snprintf(buf + *n, cap - *n, "[");
  for (int64_t i = 0; i < t->nelem && *n < cap; i++) {
    if (i == show) {
      *n += (size_t)snprintf(buf + *n, cap - *n, " ...");
      break;
    }
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    const char *gap = i ? " " : "";
    if (t->dt == TIDE_STRING) {
      int64_t len;
      const char *s = tide_string_at(t->data, off, &len);
      *n += (size_t)snprintf(buf + *n, cap - *n, "%s\"%.*s\"", gap, (int)(len > 64 ? 64 : len), s);
    } else if (t->dt == TIDE_INT64) {
      *n += (size_t)snprintf(buf + *n, cap - *n, "%s%lld", gap, (long long)((const int64_t *)t->data)[off]);
    } else {
      double v = tide_read_number(t->data, t->dt, off);
      *n += (size_t)snprintf(buf + *n, cap - *n, tide_dtype_is_float(t->dt) ? "%s%.6g" : "%s%.0f", gap, v);
    }
    for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->dims[d]; d--) idx[d] = 0;
  }
  if (*n < cap) *n += (size_t)snprintf(buf + *n, cap - *n, "]");
}

tide_status tide_cpu_assert(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_out);
  const tide_tensor *cond = in[0];
  bool is_float = cond->dt != TIDE_BOOL;
  int64_t nan = 0, inf = 0, bad = 0;
  int64_t idx[TIDE_MAX_DIMS] = {0};
  for (int64_t i = 0; i < cond->nelem && (is_float || !bad); i++) {
    int64_t off = 0;
    for (int d = 0; d < cond->ndim; d++) off += idx[d] * cond->strides[d];
    if (is_float) {
      double v = tide_read_number(cond->data, cond->dt, off);
      nan += v != v;
      inf += v == v && (v - v) != 0; /* inf - inf is NaN */
    } else {
      bad += ((const uint8_t *)cond->data)[off] == 0;
    }
    for (int d = cond->ndim - 1; d >= 0 && ++idx[d] == cond->dims[d]; d--) idx[d] = 0;
  }
  *(uint8_t *)out[0]->data = 1;
  if (!bad && !nan && !inf) return TIDE_OK;
  char msg[4096];
  size_t n = 0;
  int64_t len;
  const char *text = tide_string_at(in[1]->data, 0, &len);
  n += (size_t)snprintf(msg, sizeof msg, "%.*s", (int)(len > 2048 ? 2048 : len), text);
  if (is_float) /* as TF's CheckNumerics: "<message> : Tensor had NaN values" */
    n += (size_t)snprintf(msg + n, sizeof msg - n, " : Tensor had %s values",
                          nan && inf ? "NaN and Inf" : nan ? "NaN" : "Inf");
  int64_t show = a->n > 0 ? a->n : 3;
  for (int k = 2; k < n_in && n < sizeof msg; k++) {
    const tide_tensor *t = in[k];
    if (t->dt == TIDE_STRING && t->ndim == 0) { /* words between the values, as TF's data list */
      const char *w = tide_string_at(t->data, 0, &len);
      n += (size_t)snprintf(msg + n, sizeof msg - n, "\n%.*s", (int)(len > 512 ? 512 : len), w);
    } else {
      n += (size_t)snprintf(msg + n, sizeof msg - n, n ? " " : "");
      if (n < sizeof msg) put_values(msg, sizeof msg, &n, t, show);
    }
  }
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s", msg);
}
