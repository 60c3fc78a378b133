/* io/tensor_file.h — the SavedModel's tensor files (constants, variables):
 * named tensors in safetensors files, through tide/safetensors.h. */
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

/* Write n named tensors to path (atomically, fsynced). */
tide_status tfile_write(const char *path, int n, const char *const *names, const tide_tensor *const *tensors);
/* Read the file at path; errors name it and what is wrong. */
tide_status tfile_read(const char *path, tfile *out);
/* The tensor named `name`, or NULL. */
const tide_tensor *tfile_find(const tfile *f, const char *name);
void tfile_free(tfile *f);

#endif
