/* fuzz/fuzz_idx.c — libFuzzer target for the IDX reader (read_idx): any bytes
 * as a file (plain, or gzip: the input read both as it is and gzipped) read
 * with a clear error or give a uint8 tensor of the header's shape holding the
 * file's data; never a crash, an overread or an allocation past what the file can hold.
 * fuzz-sources: kernels/io/idx.c */
#include "tide/tide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

/* The bytes as a file in memory, reached by path as a real file would be; -1 on failure. */
static int memfile(const void *data, size_t size) {
  int fd = memfd_create("fuzz_idx", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, (const char *)data + done, size - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  return fd;
}

static void read_one(int fd, size_t plain_size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  tide_tensor t;
  memset(&t, 0, sizeof t);
  if (tide_read_idx(path, &t) != TIDE_OK) {
    if (tide_last_error()[0] == '\0') __builtin_trap(); /* every refusal says why */
    return;
  }
  int64_t n = 1;
  for (int k = 0; k < t.ndim; k++) n *= t.dims[k];
  /* the data is the plain bytes after the 4-byte magic and 4 bytes per dim */
  if (t.dt != TIDE_UINT8 || n != t.nelem || (size_t)(4 + 4 * t.ndim) + (size_t)n != plain_size) __builtin_trap();
  uint64_t sum = 0;
  for (int64_t k = 0; k < n; k++) sum += ((const uint8_t *)t.data)[k];
  (void)sum;
  tide_tensor_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfile(data, size);
  if (fd < 0) return 0;
  read_one(fd, size);
  close(fd);
  /* the same bytes gzipped: the reader inflates them */
  uLongf zlen = compressBound(size) + 32;
  unsigned char *z = malloc(zlen);
  z_stream s;
  memset(&s, 0, sizeof s);
  if (z && deflateInit2(&s, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
    s.next_in = (Bytef *)data, s.avail_in = (uInt)size, s.next_out = z, s.avail_out = (uInt)zlen;
    if (deflate(&s, Z_FINISH) == Z_STREAM_END && (fd = memfile(z, s.total_out)) >= 0) {
      read_one(fd, size);
      close(fd);
    }
    deflateEnd(&s);
  }
  free(z);
  return 0;
}
