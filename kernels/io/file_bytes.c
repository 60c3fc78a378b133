/* io/file_bytes.c — a whole regular file read into memory, checked against
 * the file policy and its kind before a byte is read (see file_bytes.h). */
#include "file_bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

tide_status file_bytes_read(const char *path, const char *who, size_t max_bytes, unsigned char **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!path || !*path) return tide_set_error(TIDE_ERR_VALUE, "%s: the path is empty", who);
  tide_status st = tide_file_check(path, false);
  if (st) return st;
  /* tide_file_open: no link swapped in since the check, and a FIFO or device refused, never waited on */
  int fd = tide_file_open(path, O_RDONLY, 0);
  if (fd < 0) return tide_set_error(TIDE_ERR_IO, "%s: cannot open '%s': %s", who, path, tide_file_why());
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return tide_set_error(TIDE_ERR_IO, "%s: cannot read '%s': %s", who, path, strerror(e));
  }
  if (sb.st_size < 0 || (uint64_t)sb.st_size > (uint64_t)max_bytes) {
    close(fd);
    return tide_set_error(TIDE_ERR_IO, "%s: '%s' has %lld bytes, more than the %zu this reader takes", who, path,
                          (long long)sb.st_size, max_bytes);
  }
  size_t size = (size_t)sb.st_size;
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) {
    close(fd);
    return tide_set_error(TIDE_ERR_MEMORY, "%s: out of memory reading '%s' (%zu bytes)", who, path, size);
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : 0;
      close(fd);
      free(buf);
      return tide_set_error(TIDE_ERR_IO, "%s: cannot read '%s': %s", who, path,
                            e ? strerror(e) : "it ended early (it changed while being read)");
    }
    got += (size_t)r;
  }
  close(fd);
  *out = buf;
  *n = size;
  return TIDE_OK;
}

int file_pread_all(int fd, void *buf, size_t n, uint64_t off) {
  unsigned char *p = buf;
  while (n > 0) {
    size_t chunk = n > (1u << 30) ? (1u << 30) : n;
    ssize_t r = pread(fd, p, chunk, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) {
      errno = 0;
      return -1;
    }
    p += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
}
