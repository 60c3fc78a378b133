/* io/read_file_op.c — the read_file op (TF's ReadFile): a path (a 0-d string tensor) to the file's bytes as a
 * 0-d string tensor, read through the file policy, so a traced map reads files on pipeline threads. */
#include "../core/registry.h"
#include "../core/infer_rank.h"
#include "file_bytes.h"
#include "tide/strings.h"

#include <stdlib.h>
#include <string.h>

/* The most bytes one file may hold: a string element's length is an int64, but one file read whole into memory
 * past 2 GiB is a mistake in an input pipeline (TFRecordDataset streams large data). */
#define READ_FILE_MAX ((size_t)1 << 31)

/* read_file(filename 0-d string) -> 0-d string. */
tide_status tide_infer_read_file(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt != TIDE_STRING || in[0]->ndim > 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: filename must be a scalar string tensor, got a %d-D %s tensor", def->name,
                     in[0]->ndim, tide_dtype_name(in[0]->dt));
  tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 0, NULL);
  return TIDE_OK;
}

const tide_rank_rule tide_infer_read_file_rank = {NULL, NULL, NULL};

tide_status tide_cpu_read_file(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int64_t len = 0;
  const char *s = tide_string_at(in[0]->data, 0, &len);
  if (len > 0 && memchr(s, 0, (size_t)len))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: filename holds a NUL byte", def->name);
  char *name = malloc((size_t)len + 1); /* string elements carry a length, not a terminator */
  if (!name) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  if (len > 0) memcpy(name, s, (size_t)len);
  name[len] = 0;
  unsigned char *bytes = NULL;
  size_t n = 0;
  tide_status st = file_bytes_read(name, def->name, READ_FILE_MAX, &bytes, &n);
  free(name);
  if (st == TIDE_OK) st = tide_string_set(out[0], 0, (const char *)bytes, (int64_t)n);
  free(bytes);
  return st;
}
