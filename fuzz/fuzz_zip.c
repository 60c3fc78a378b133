/* fuzz/fuzz_zip.c — libFuzzer target for the zip reader: any bytes must open with
 * a clear error, or list entries that each read (CRC checked) or fail cleanly.
 * fuzz-sources: kernels/io/zip_file.c kernels/io/file_bytes.c kernels/io/atomic_file.c
 * fuzz-libs: zip */
#include "tide/tide.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tide_zip *z = tide_zip_open_memory(data, size, "fuzz");
  if (!z) {
    if (tide_last_error()[0] == '\0') __builtin_trap();
    tide_clear_error();
    return 0;
  }
  int64_t n = tide_zip_count(z);
  for (int64_t i = 0; i < n; i++) {
    const char *name = tide_zip_name(z, i);
    if (!name || tide_zip_find(z, name) != i) __builtin_trap(); /* names are unique */
    size_t got = 0;
    const void *bytes = tide_zip_read(z, i, &got);
    if (bytes) {
      if ((int64_t)got != tide_zip_size(z, i)) __builtin_trap();
    } else if (tide_last_error()[0] == '\0') {
      __builtin_trap();
    }
    tide_clear_error();
  }
  tide_zip_close(z);
  tide_clear_error();
  return 0;
}
