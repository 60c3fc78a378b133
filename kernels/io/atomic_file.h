/* io/atomic_file.h — replacing a file all at once: writes go to a temporary file
 * beside it, which is fsynced and renamed into place (then the folder is fsynced). */
#ifndef TIDE_IO_ATOMIC_FILE_H
#define TIDE_IO_ATOMIC_FILE_H

#include "tide/tide.h"

/* kernels/io uses only the public C API (so fuzz targets can link it alone). */
#define TIDE_FAIL(status, ...) tide_set_error((status), __VA_ARGS__)

/* A file being written; buffered, so many small writes cost few system calls. */
typedef struct atomic_file {
  int fd;
  char *path;          /* the file to replace */
  char *tmp;           /* the temporary file beside it */
  const char *who;     /* the caller's name, for messages ("safetensors") */
  unsigned char *buf;
  size_t used, cap;
  uint64_t written;    /* bytes handed to the kernel so far */
  uint64_t synced;     /* of those, the ones whose writeback was started */
} atomic_file;

/* Create the temporary file for `path`. On failure nothing is left behind. */
tide_status atomic_file_begin(atomic_file *a, const char *path, const char *who);
/* Append n bytes. On failure the caller calls atomic_file_abort. */
tide_status atomic_file_write(atomic_file *a, const void *data, size_t n);
/* Flush, fsync, rename into place, fsync the folder, free. On failure the
 * temporary file is removed, the old file untouched, and `a` freed. */
tide_status atomic_file_commit(atomic_file *a);
/* Close and remove the temporary file, free `a`. Safe after a failed begin. */
void atomic_file_abort(atomic_file *a);

#endif
