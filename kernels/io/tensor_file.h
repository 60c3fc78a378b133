/* io/tensor_file.h — the SavedModel's tensor files (constants, variables):
 * safetensors, written and read by a small internal codec until the
 * full safetensors module (kernels/io/safetensors.{c,h}) takes its place. */
#ifndef TIDE_IO_TENSOR_FILE_H
#define TIDE_IO_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tide/tensor.h"

typedef struct tfile_entry {
  char *name;
  tide_tensor t;
} tfile_entry;

typedef struct tfile {
  int n;
  tfile_entry *e;
} tfile;

/* Write n named tensors to path (not atomic: the caller writes a temporary
 * file), fsynced before it returns. */
tide_status tfile_write(const char *path, int n, const char *const *names, const tide_tensor *const *tensors);
/* Read the file at path; errors name it and what is wrong. */
tide_status tfile_read(const char *path, tfile *out);
/* Parse a file's bytes (`what` names it in errors). */
tide_status tfile_parse(const uint8_t *buf, size_t len, const char *what, tfile *out);
/* The tensor named `name`, or NULL. */
const tide_tensor *tfile_find(const tfile *f, const char *name);
void tfile_free(tfile *f);

#endif
