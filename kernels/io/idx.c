/* io/idx.c — IDX files (MNIST's format: a magic number, big-endian dims, then
 * the data), plain or gzipped, read through zlib straight into a tensor. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tide/records.h"
#include "../core/internal.h"

/* gzread until len bytes are in buf or the data ends: the count, or -1 on
 * corrupt data. (gzread takes an unsigned int: big reads go in 1 GiB steps.) */
static int64_t read_into(gzFile gz, unsigned char *buf, int64_t len) {
  int64_t got = 0;
  while (got < len) {
    int64_t step = len - got > (1 << 30) ? (1 << 30) : len - got;
    int n = gzread(gz, buf + got, (unsigned)step);
    if (n < 0) return -1;
    if (n == 0) break;
    got += n;
  }
  return got;
}

/* zlib cannot expand data more than about 1032 times: a header claiming more
 * than that from this file is a lie, refused before allocating. */
enum { MAX_RATIO = 1100 };

static tide_status read_body(gzFile gz, const char *path, int64_t file_bytes, tide_tensor *out) {
  unsigned char head[4];
  int64_t n = read_into(gz, head, 4);
  if (n < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' holds corrupt gzip data", path);
  if (n < 4 || head[0] != 0 || head[1] != 0 || head[2] != 8) {
    const char *kind = NULL;
    if (tide_file_kind(path, &kind) != TIDE_FILE_UNKNOWN && kind)
      return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' is not an IDX file: it is %s", path, kind);
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' is not an IDX file of unsigned bytes (its magic number is wrong)",
                     path);
  }
  int ndim = head[3];
  if (ndim > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' has %d dims; tide takes at most %d", path, ndim, TIDE_MAX_DIMS);
  int64_t dims[TIDE_MAX_DIMS];
  int64_t count = 1;
  for (int i = 0; i < ndim; i++) {
    unsigned char b[4];
    if (read_into(gz, b, 4) != 4) return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' is truncated in its header", path);
    dims[i] = ((int64_t)b[0] << 24) | ((int64_t)b[1] << 16) | ((int64_t)b[2] << 8) | b[3];
    if (dims[i] > 0 && count > INT64_MAX / dims[i])
      return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' has a header whose dims overflow", path);
    count *= dims[i];
  }
  if (count > file_bytes * MAX_RATIO + 4096)
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' holds at most %lld bytes of data, but its header says %lld", path,
                     (long long)(file_bytes * MAX_RATIO), (long long)count);
  tide_status st = tide_tensor_init_heap(out, TIDE_UINT8, ndim, dims);
  if (st) return st;
  int64_t got = count > 0 ? read_into(gz, out->data, count) : 0;
  unsigned char extra[1];
  int64_t more = got == count ? read_into(gz, extra, 1) : 0;
  if (got < 0 || more < 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' holds corrupt gzip data", path);
  else if (got != count) st = TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' holds %lld bytes of data, but its header says %lld",
                                        path, (long long)got, (long long)count);
  else if (more > 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: '%s' holds more bytes of data, but its header says %lld",
                                    path, (long long)count);
  if (st) tide_tensor_release(out);
  return st;
}

tide_status tide_read_idx(const char *path, tide_tensor *out) {
  if (!path || !out) return TIDE_FAIL(TIDE_ERR_VALUE, "read_idx: a path and an output tensor are required");
  tide_status checked = tide_file_check(path, false);
  if (checked) return checked;
  struct stat sb;
  int fd = tide_file_open(path, O_RDONLY, 0); /* a regular file: a FIFO or a device is refused, never waited on */
  if (fd < 0)
    return TIDE_FAIL(TIDE_ERR_IO, "read_idx: cannot read '%s': %s", path,
                     errno == EISDIR || errno == EINVAL ? "not a regular file" : tide_file_why());
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return TIDE_FAIL(TIDE_ERR_IO, "read_idx: cannot read '%s': %s", path, strerror(errno));
  }
  gzFile gz = gzdopen(fd, "rb"); /* plain files read as they are */
  if (!gz) {
    close(fd);
    return TIDE_FAIL(TIDE_ERR_IO, "read_idx: cannot read '%s'", path);
  }
  gzbuffer(gz, 1 << 17);
  tide_status st = read_body(gz, path, (int64_t)sb.st_size, out);
  gzclose(gz);
  return st;
}
