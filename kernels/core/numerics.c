/* core/numerics.c — check numerics: the switch, and the scan of an op's
 * float results for NaN and infinities that eager ops and graph nodes run
 * while it is on (the failure names the op, the value and its inputs). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void tide_set_check_numerics(int on) {
  if (on) __atomic_fetch_or(&tide_hooks, TIDE_HOOK_NUMERICS, __ATOMIC_RELEASE);
  else __atomic_fetch_and(&tide_hooks, ~(uint32_t)TIDE_HOOK_NUMERICS, __ATOMIC_RELEASE);
}

int tide_check_numerics_enabled(void) { return (tide_hooks_now() & TIDE_HOOK_NUMERICS) != 0; }

/* Counts of NaN and infinite values of t, and the first bad element's index (row-major). */
typedef struct bad_count {
  int64_t nan, inf, first;
} bad_count;

static void note(bad_count *c, double v, int64_t i) {
  if (TIDE_LIKELY(isfinite(v))) return;
  if (c->nan + c->inf == 0) c->first = i;
  if (isnan(v)) c->nan++;
  else c->inf++;
}

static bad_count scan(const tide_tensor *t) {
  bad_count c = {0, 0, -1};
  if (t->nelem <= 0 || !t->data) return c;
  if (tide_tensor_is_contiguous(t) && t->dt == TIDE_FLOAT32) {
    const float *p = t->data;
    for (int64_t i = 0; i < t->nelem; i++) note(&c, p[i], i);
    return c;
  }
  /* any layout and float dtype: walk the index */
  int64_t idx[TIDE_MAX_DIMS] = {0};
  for (int64_t i = 0; i < t->nelem; i++) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    note(&c, tide_read_number(t->data, t->dt, off), i);
    for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->dims[d]; d--) idx[d] = 0;
  }
  return c;
}

/* "[2, 0]": the position of row-major element i in t. */
static void fmt_index(char *buf, size_t size, const tide_tensor *t, int64_t i) {
  int64_t idx[TIDE_MAX_DIMS];
  for (int d = t->ndim - 1; d >= 0; d--) {
    idx[d] = t->dims[d] > 0 ? i % t->dims[d] : 0;
    i = t->dims[d] > 0 ? i / t->dims[d] : 0;
  }
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < t->ndim && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)idx[d]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

tide_status tide_numerics_check(const char *name, int n_in, const tide_tensor *const *in, int n_out,
                                tide_tensor *const *out) {
  for (int k = 0; k < n_out; k++) {
    const tide_tensor *t = out[k];
    if (!tide_dtype_is_float(t->dt)) continue;
    bad_count c = scan(t);
    if (c.nan + c.inf == 0) continue;
    char inputs[512], shape[160], where[160];
    size_t n = 0;
    inputs[0] = 0;
    for (int i = 0; i < n_in && n < sizeof inputs; i++) {
      char s[160];
      n += (size_t)snprintf(inputs + n, sizeof inputs - n, "%s%s%s", i ? ", " : "", tide_dtype_name(in[i]->dt),
                            TIDE_SHAPE_STR(s, in[i]));
    }
    fmt_index(where, sizeof where, t, c.first);
    const char *what = c.nan && c.inf ? "NaN and Inf" : c.nan ? "NaN" : "Inf";
    return TIDE_FAIL(TIDE_ERR_VALUE,
                     "check_numerics: %s produced %s in output %d (%s%s: %lld NaN, %lld Inf of %lld values, first "
                     "at %s); its inputs: %s%s (tide.debugging.enable_check_numerics is on)",
                     name, what, k + 1, tide_dtype_name(t->dt), TIDE_SHAPE_STR(shape, t), (long long)c.nan,
                     (long long)c.inf, (long long)t->nelem, where, n_in ? "" : "none", inputs);
  }
  return TIDE_OK;
}
