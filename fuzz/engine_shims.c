/* fuzz/engine_shims.c — the engine's internal helpers that a target's
 * fuzz-sources call (kernels/core/internal.h), made again from the public API:
 * libtide keeps its own copies hidden, so a target that compiles a reader in
 * with the sanitizers links these instead. Same behaviour; name it in
 * fuzz-sources where a reader needs it. */
#include "tide/tide.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

FILE *tide_file_fopen(const char *path, const char *mode);
tide_status tide_contiguous_or_copy(const char *op, const tide_tensor *x, tide_tensor *tmp, const tide_tensor **use);

/* core/file_policy.c's: tide_file_open's descriptor as a FILE. */
FILE *tide_file_fopen(const char *path, const char *mode) {
  int flags = mode[0] == 'r' ? O_RDONLY : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND : O_WRONLY | O_CREAT | O_TRUNC;
  int fd = tide_file_open(path, flags, 0666);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, mode);
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

/* core/copy.c's: x itself when contiguous, else a contiguous copy in tmp. */
tide_status tide_contiguous_or_copy(const char *op, const tide_tensor *x, tide_tensor *tmp, const tide_tensor **use) {
  (void)op;
  memset(tmp, 0, sizeof *tmp);
  *use = x;
  if (tide_tensor_is_contiguous(x)) return TIDE_OK;
  tide_status st = tide_tensor_init(tmp, x->dt, x->ndim, x->dims);
  if (!st) st = tide_tensor_copy_into(tmp, x);
  *use = tmp;
  return st;
}
