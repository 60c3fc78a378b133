/* graph/print.c — what tide.print shows when a graph runs: its text with
 * each %t replaced by a tensor, formatted as TF's tf.print does (nested
 * brackets, at most 3 values at each end of a dimension). */
#include "graph_internal.h"

#include <stdio.h>
#include <string.h>

enum { EDGE = 3 };

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
  else if (tide_dtype_is_float(t->dt)) fprintf(f, "%.6g", v);
  else fprintf(f, "%.0f", v);
}

static void put_dims(FILE *f, const tide_tensor *t, int d, int64_t off) {
  if (d == t->ndim) {
    put_element(f, t, off);
    return;
  }
  fputc('[', f);
  int64_t n = t->dims[d];
  for (int64_t i = 0; i < n; i++) {
    if (n > 2 * EDGE && i == EDGE) {
      fputs(d + 1 == t->ndim ? "... " : "...\n ", f);
      i = n - EDGE;
    }
    put_dims(f, t, d + 1, off + i * t->strides[d]);
    if (i + 1 < n) fputs(d + 1 == t->ndim ? " " : "\n ", f);
  }
  fputc(']', f);
}

tide_status tide_print(const char *text, int n, const tide_tensor *const *tensors) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!tensors[i] || (tensors[i]->flags & TIDE_TENSOR_SYMBOLIC) || (!tensors[i]->data && tensors[i]->nelem > 0))
      return TIDE_FAIL(TIDE_ERR_VALUE, "print: tensor %d has no value to print", i + 1);
  for (const char *c = text ? text : ""; *c; c++) {
    if (c[0] == '%' && c[1] == 't' && k < n) {
      put_dims(stdout, tensors[k++], 0, 0);
      c++;
    } else if (c[0] == '%' && c[1] == '%') {
      fputc('%', stdout);
      c++;
    } else {
      fputc(*c, stdout);
    }
  }
  fputc('\n', stdout);
  fflush(stdout);
  return TIDE_OK;
}

tide_status tide_graph_print_node(const gnode *n, const tide_tensor *const *vals) {
  return tide_print(n->text, n->n_in, vals);
}
