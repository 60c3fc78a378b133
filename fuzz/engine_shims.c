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

/* core/dtype.c's table of element sizes, filled from tide_dtype_size before any input runs. */
uint8_t tide_dtype_bytes[TIDE_NUM_DTYPES];
__attribute__((constructor)) static void fill_dtype_bytes(void) {
  for (int dt = 0; dt < TIDE_NUM_DTYPES; dt++) tide_dtype_bytes[dt] = (uint8_t)tide_dtype_size(dt);
}

/* core/tensor.c's: a contiguous header for dims (an unknown dim, -1, gives nelem -1 and 0 strides outside it). */
void tide_tensor_set_contiguous_layout(tide_tensor *t, int dtype, int ndim, const int64_t *dims);
void tide_tensor_set_contiguous_layout(tide_tensor *t, int dtype, int ndim, const int64_t *dims) {
  if (ndim < 0) {
    for (int i = 0; i < TIDE_MAX_DIMS; i++) t->dims[i] = t->strides[i] = 0;
    t->ndim = TIDE_UNKNOWN_RANK;
    t->dt = dtype;
    t->nelem = -1;
    return;
  }
  int64_t copy[TIDE_MAX_DIMS], stride = 1, n = 1, sign = 0; /* dims may alias t->dims */
  int overflow = 0;
  for (int i = 0; i < ndim; i++) copy[i] = dims[i];
  for (int i = ndim - 1; i >= 0; i--) {
    t->dims[i] = copy[i];
    t->strides[i] = stride;
    stride = copy[i] < 0 ? 0 : stride * (copy[i] ? copy[i] : 1);
    sign |= copy[i];
    overflow |= __builtin_mul_overflow(n, copy[i], &n);
  }
  for (int i = ndim; i < TIDE_MAX_DIMS; i++) t->dims[i] = t->strides[i] = 0;
  t->ndim = ndim;
  t->dt = dtype;
  t->nelem = overflow || sign < 0 ? -1 : n;
}

/* core/tensor.c's: dims as "[2, None, 3]" for messages. */
const char *tide_fmt_dims(char *buf, size_t size, int ndim, const int64_t *dims);
const char *tide_fmt_dims(char *buf, size_t size, int ndim, const int64_t *dims) {
  size_t used = 0;
  buf[0] = '\0';
  if (ndim < 0) {
    snprintf(buf, size, "<unknown>");
    return buf;
  }
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && used < size; i++) {
    if (dims[i] == -1)
      used += (size_t)snprintf(buf + used, size - used, i ? ", None" : "None");
    else
      used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}
