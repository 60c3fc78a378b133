/* fuzz/fuzz_safetensors.c — libFuzzer target for the safetensors reader: any bytes
 * as a file must open with a clear error or read every tensor; never crash or overread.
 * fuzz-sources: kernels/io/safetensors.c kernels/io/file_bytes.c kernels/io/atomic_file.c fuzz/engine_shims.c */
#include "tide/tide.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The input as a file in memory, reached by path as a real file would be. */
  int fd = memfd_create("fuzz_safetensors", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  tide_safetensors *f = tide_safetensors_open(path);
  if (!f) {
    /* Every refusal must say why. */
    if (tide_last_error()[0] == '\0') __builtin_trap();
  } else {
    int64_t n = tide_safetensors_count(f);
    for (int64_t i = 0; i < n; i++) {
      const char *name = tide_safetensors_name(f, i);
      if (!name || tide_safetensors_find(f, name) != i) __builtin_trap();
      int32_t dt, nd;
      int64_t dims[TIDE_MAX_DIMS];
      if (tide_safetensors_info(f, i, &dt, &nd, dims) != TIDE_OK) __builtin_trap();
      tide_tensor t;
      memset(&t, 0, sizeof t);
      if (tide_safetensors_read(f, i, &t) == TIDE_OK) {
        /* The tensor holds what the header promised. */
        if (t.dt != dt || t.ndim != nd) __builtin_trap();
        for (int k = 0; k < nd; k++)
          if (t.dims[k] != dims[k]) __builtin_trap();
        if (t.dt == TIDE_BOOL)
          for (int64_t k = 0; k < t.nelem; k++)
            if (((const uint8_t *)t.data)[k] > 1) __builtin_trap();
        tide_tensor_release(&t);
      }
    }
    int64_t m = tide_safetensors_metadata_count(f);
    for (int64_t i = 0; i < m; i++)
      if (!tide_safetensors_metadata_key(f, i) || !tide_safetensors_metadata_value(f, i)) __builtin_trap();
    tide_safetensors_close(f);
  }
  tide_clear_error();
  close(fd);
  return 0;
}
