/* core/tensor_text.c — a tensor as TF's tf.print and tf.strings.format show
 * it (nested brackets, `summarize` values at each end of a dimension): what
 * tide.print (graph/print.c) and the string_format op (cpu/strings_format.c) share. */
#include "tide/strings.h"
#include "tide/dtype.h"
#include "tensor_text.h"

#include <stdbool.h>
#include <stdlib.h>

/* TF's FloatToBuffer/DoubleToBuffer: the shortest of %.6g (%.15g) that reads back as the same value, else
 * %.9g (%.17g); halves print as the float32 of their value. */
static void put_float(FILE *f, double v, bool wide) {
  char buf[40];
  if (v != v) {
    fputs("nan", f);
    return;
  }
  snprintf(buf, sizeof buf, "%.*g", wide ? 15 : 6, v);
  bool same = wide ? strtod(buf, NULL) == v : strtof(buf, NULL) == (float)v;
  if (!same) snprintf(buf, sizeof buf, "%.*g", wide ? 17 : 9, v);
  fputs(buf, f);
}

static void put_element(FILE *f, const tide_tensor *t, int64_t off) {
  if (t->dt == TIDE_STRING) { /* quoted, as tf.print shows the elements of a string tensor */
    int64_t len;
    const char *b = tide_string_at(t->data, off, &len);
    fputc('"', f);
    fwrite(b, 1, (size_t)len, f);
    fputc('"', f);
    return;
  }
  if (t->dt == TIDE_INT64) {
    fprintf(f, "%lld", (long long)*(const int64_t *)((const char *)t->data + off * 8));
    return;
  }
  double v = tide_read_number(t->data, t->dt, off); /* NaN canonical: always "nan", never "-nan" */
  if (t->dt == TIDE_BOOL) fputs(v != 0 ? "1" : "0", f);
  else if (tide_dtype_is_float(t->dt)) put_float(f, v, t->dt == TIDE_FLOAT64);
  else fprintf(f, "%.0f", v);
}

/* What separates the entries of dim d: a space in the last dim; else one newline per dim below d (a blank line
 * between matrices), then d + 1 spaces, under the bracket that opened the entry. */
static void put_sep(FILE *f, const tide_tensor *t, int d) {
  if (d + 1 == t->ndim) {
    fputc(' ', f);
    return;
  }
  for (int k = d + 1; k < t->ndim; k++) fputc('\n', f);
  for (int k = 0; k <= d; k++) fputc(' ', f);
}

static void put_dims(FILE *f, const tide_tensor *t, int64_t edge, int d, int64_t off) {
  if (d == t->ndim) {
    put_element(f, t, off);
    return;
  }
  fputc('[', f);
  int64_t n = t->dims[d];
  for (int64_t i = 0; i < n; i++) {
    if (edge >= 0 && n > 2 * edge && i == edge) { /* "..." stands in for the middle entries, as an entry */
      fputs("...", f);
      put_sep(f, t, d);
      i = n - edge;
    }
    put_dims(f, t, edge, d + 1, off + i * t->strides[d]);
    if (i + 1 < n) put_sep(f, t, d);
  }
  fputc(']', f);
}

void tide_tensor_text(FILE *f, const tide_tensor *t, int64_t summarize) {
  put_dims(f, t, summarize < 0 ? -1 : summarize, 0, 0);
}
