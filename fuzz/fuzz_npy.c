/* fuzz/fuzz_npy.c — libFuzzer target for the .npy reader: any bytes as a file
 * must read with a clear error or give a tensor of the header's shape; never crash or overread.
 * fuzz-sources: kernels/io/npy.c kernels/io/file_bytes.c kernels/io/atomic_file.c fuzz/engine_shims.c */
#include "tide/tide.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The input as a file in memory, reached by path as a real file would be. */
  int fd = memfd_create("fuzz_npy", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  tide_tensor t;
  memset(&t, 0, sizeof t);
  if (tide_npy_read(path, &t) != TIDE_OK) {
    if (tide_last_error()[0] == '\0') __builtin_trap(); /* every refusal says why */
  } else {
    int64_t n = 1;
    for (int k = 0; k < t.ndim; k++) n *= t.dims[k];
    if (n != t.nelem) __builtin_trap();
    if (t.dt == TIDE_BOOL)
      for (int64_t k = 0; k < t.nelem; k++)
        if (((const uint8_t *)t.data)[k] > 1) __builtin_trap();
    if (t.dt == TIDE_STRING)
      for (int64_t k = 0; k < t.nelem; k++) {
        int64_t len;
        tide_string_at(t.data, k, &len);
        if (len < 0) __builtin_trap();
      }
    tide_tensor_release(&t);
  }
  close(fd);
  return 0;
}
