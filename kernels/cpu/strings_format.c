/* cpu/strings_format.c — tf.strings.format: the template's pieces and the
 * tensors in turn, each tensor as tf.print shows it (core/tensor_text.c). */
#include "strings_util.h"
#include "../core/tensor_text.h"

#include <stdio.h>

tide_status tide_cpu_string_format(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size); /* the text grows with the tensors: a stream sizes it */
  if (!f) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  for (int k = 0; k < n_in; k++) {
    int64_t len;
    const char *piece = tide_str_at(in[0], k, &len);
    fwrite(piece, 1, (size_t)len, f);
    if (k + 1 < n_in) tide_tensor_text(f, in[k + 1], a->n);
  }
  bool failed = ferror(f) != 0;
  if (fclose(f) != 0 || failed || !text) {
    free(text);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  }
  tide_strings_adopt(o);
  tide_status st = tide_str_put(o, 0, text, (int64_t)size);
  free(text);
  return st;
}
