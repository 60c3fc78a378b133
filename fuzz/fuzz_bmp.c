/* fuzz/fuzz_bmp.c — libFuzzer target for the BMP reader (kernels/io/bmp.c, under decode_bmp): any bytes are
 * refused with an error saying why, or give a header whose pixels fill [rows, width, channels] for each
 * channel count TF allows; never a crash or an overread.
 * fuzz-sources: kernels/io/bmp.c */
#include "tide/tide.h"
#include "tide/bmp.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1); /* exactly the input's bytes: ASan sees a read past them */
  if (!copy) return 0;
  memcpy(copy, data, size);
  tide_bmp_info info;
  if (tide_bmp_header("decode_bmp", copy, size, &info) != TIDE_OK) {
    if (!tide_last_error()[0]) __builtin_trap(); /* every refusal says why */
  } else {
    if (info.rows <= 0 || info.width <= 0 || info.offset + info.row_size * info.rows != (int64_t)size) __builtin_trap();
    for (int channels = info.file_channels == 1 ? 1 : 3; channels <= 4; channels++) {
      size_t n = (size_t)(info.rows * info.width * channels);
      uint8_t *out = malloc(n ? n : 1);
      if (!out) break;
      tide_bmp_pixels(copy, &info, channels, out);
      free(out);
      if (channels == 1) channels = 2; /* 1, then 3 and 4 */
    }
  }
  free(copy);
  return 0;
}
