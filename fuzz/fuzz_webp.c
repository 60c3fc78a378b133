/* fuzz/fuzz_webp.c — libFuzzer target for the WebP reader (kernels/io/webp.c over libwebp and libwebpdemux, under
 * decode_webp): any bytes are refused with an error saying why, or give a header whose frames decode into
 * [frames, H, W, C] (or a refusal); never a crash, a leak or an overread.
 * fuzz-sources: kernels/io/webp.c
 * fuzz-libs: libwebpdemux libwebp */
#include "tide/tide.h"
#include "tide/webp.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  tide_webp_info info;
  if (tide_webp_info_of("decode_webp", copy, size, (int64_t)1 << 24, &info) != TIDE_OK) {
    if (!tide_last_error()[0]) __builtin_trap();
  } else {
    int64_t n = info.frames * info.height * info.width * info.channels;
    if (n < 1 || n > ((int64_t)1 << 24) || !(info.channels == 3 || info.channels == 4)) __builtin_trap();
    uint8_t *out = malloc((size_t)n);
    if (out) {
      if (tide_webp_pixels("decode_webp", copy, size, &info, out) != TIDE_OK && !tide_last_error()[0]) __builtin_trap();
      free(out);
    }
  }
  free(copy);
  return 0;
}
