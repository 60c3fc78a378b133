/* graph/print.c — what tide.print shows when a graph runs: its text with
 * each %t replaced by a tensor, formatted as TF's tf.print does (nested
 * brackets, at most 3 values at each end of a dimension: core/tensor_text.c). */
#include "graph_internal.h"
#include "../core/tensor_text.h"

#include <stdio.h>
#include <string.h>

enum { EDGE = 3 }; /* tf.print's summarize */

tide_status tide_print(const char *text, int n, const tide_tensor *const *tensors) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!tensors[i] || (tensors[i]->flags & TIDE_TENSOR_SYMBOLIC) || (!tensors[i]->data && tensors[i]->nelem > 0))
      return TIDE_FAIL(TIDE_ERR_VALUE, "print: tensor %d has no value to print", i + 1);
  for (const char *c = text ? text : ""; *c; c++) {
    if (c[0] == '%' && c[1] == 't' && k < n) {
      tide_tensor_text(stdout, tensors[k++], EDGE);
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
