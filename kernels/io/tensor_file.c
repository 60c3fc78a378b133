/* io/tensor_file.c — the SavedModel's tensor files (constants, variables) as
 * named tensors, written and read through the safetensors module (io/safetensors.c). */
#include "tensor_file.h"

#include <stdlib.h>
#include <string.h>

#include "tide/safetensors.h"
#include "../core/internal.h"

tide_status tfile_write(const char *path, int n, const char *const *names, const tide_tensor *const *tensors) {
  return tide_safetensors_save(path, n, names, tensors, 0, NULL, NULL);
}

tide_status tfile_read(const char *path, tfile *out) {
  memset(out, 0, sizeof *out);
  tide_safetensors *f = tide_safetensors_open(path);
  if (!f) return tide_last_status();
  int64_t n = tide_safetensors_count(f);
  tide_status st = TIDE_OK;
  if (n > 0 && !(out->e = calloc((size_t)n, sizeof *out->e)))
    st = tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory reading '%s'", path);
  for (int64_t i = 0; !st && i < n; i++) {
    const char *name = tide_safetensors_name(f, i);
    if (!(out->e[i].name = strdup(name ? name : ""))) {
      st = tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory reading '%s'", path);
      break;
    }
    out->n = (int)i + 1; /* entries so far, for tfile_free */
    st = tide_safetensors_read(f, i, &out->e[i].t);
  }
  tide_safetensors_close(f);
  if (st) tfile_free(out);
  return st;
}

const tide_tensor *tfile_find(const tfile *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->e[i].name, name)) return &f->e[i].t;
  return NULL;
}

void tfile_free(tfile *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->e[i].name);
    if (f->e[i].t.storage || f->e[i].t.data) tide_tensor_release(&f->e[i].t);
  }
  free(f->e);
  f->e = NULL;
  f->n = 0;
}
