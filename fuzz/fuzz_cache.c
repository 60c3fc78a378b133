/* fuzz/fuzz_cache.c — libFuzzer target for the cache stage's file reader
 * (tide/data_cache.h): any bytes as a cache file, read as elements of
 * (int64) and of (float32 [any shape], string), give elements of those dtypes
 * until the end record, or an error naming the file and the offset; after an
 * error every call fails; never a crash or an overread.
 * fuzz-sources: kernels/data/cache_file.c kernels/io/record.c kernels/io/crc32c.c kernels/io/atomic_file.c fuzz/engine_shims.c */
#include "tide/data_cache.h"
#include "tide/tide.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void read_all(const char *path, int ncomp, const int32_t *dtypes) {
  tide_cache_reader *r = tide_cache_reader_open(path, ncomp, dtypes);
  if (!r) {
    if (!tide_last_error()[0]) __builtin_trap(); /* every refusal says why */
    return;
  }
  for (int k = 0; k < 100000; k++) {
    tide_tensor t[2];
    memset(t, 0, sizeof t);
    tide_tensor *outs[2] = {&t[0], &t[1]};
    int end = 0;
    if (tide_cache_reader_next(r, ncomp, outs, &end) != TIDE_OK) {
      if (!tide_last_error()[0]) __builtin_trap();
      int end2 = 0;
      if (tide_cache_reader_next(r, ncomp, outs, &end2) == TIDE_OK) __builtin_trap(); /* failed stays failed */
      break;
    }
    if (end) break;
    for (int c = 0; c < ncomp; c++) {
      if (t[c].dt != dtypes[c]) __builtin_trap();
      int64_t n = 1;
      for (int d = 0; d < t[c].ndim; d++) n *= t[c].dims[d];
      if (n != t[c].nelem) __builtin_trap();
      if (t[c].dt == TIDE_STRING)
        for (int64_t i = 0; i < n; i++) {
          int64_t len;
          const char *s = tide_string_at(t[c].data, i, &len);
          if (len < 0 || (len && !s)) __builtin_trap();
        }
      else {
        uint64_t sum = 0; /* every byte read: a short buffer shows under ASan */
        for (int64_t i = 0; i < n * (int64_t)tide_dtype_size(t[c].dt); i++) sum += ((const uint8_t *)t[c].data)[i];
        (void)sum;
      }
      tide_tensor_release(&t[c]);
    }
  }
  tide_cache_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz_cache", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  static const int32_t one[1] = {TIDE_INT64}, two[2] = {TIDE_FLOAT32, TIDE_STRING};
  read_all(path, 1, one);
  read_all(path, 2, two);
  close(fd);
  return 0;
}
