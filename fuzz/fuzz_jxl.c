/* fuzz/fuzz_jxl.c — libFuzzer target for the JPEG XL reader (kernels/io/jxl.c over libjxl, under decode_jxl): any
 * bytes are refused with an error saying why, or give a header whose first frame decodes into [H, W, C] (or a
 * refusal); never a crash, a leak or an overread in tide's code.
 * fuzz-sources: kernels/io/jxl.c
 * fuzz-libs: libjxl */
#include "tide/tide.h"
#include "tide/jxl.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  tide_jxl_info info;
  if (tide_jxl_info_of("decode_jxl", copy, size, (int64_t)1 << 22, &info) != TIDE_OK) {
    if (!tide_last_error()[0]) __builtin_trap();
  } else {
    int64_t n = info.height * info.width * info.channels;
    if (n < 1 || n > ((int64_t)1 << 22) || info.channels < 1 || info.channels > 4) __builtin_trap();
    uint8_t *out = malloc((size_t)n);
    if (out) {
      if (tide_jxl_pixels("decode_jxl", copy, size, &info, out) != TIDE_OK && !tide_last_error()[0]) __builtin_trap();
      free(out);
    }
  }
  free(copy);
  return 0;
}
