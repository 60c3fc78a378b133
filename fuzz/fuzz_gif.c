/* fuzz/fuzz_gif.c — libFuzzer target for the GIF reader (kernels/io/gif.c over giflib, under decode_gif): any
 * bytes are refused with an error saying why, or read into frames that composite into [frames, H, W, 3]
 * (or a refusal naming a bad color index); never a crash, a leak or an overread.
 * fuzz-sources: kernels/io/gif.c
 * fuzz-libs: -lgif */
#include "tide/tide.h"
#include "tide/gif.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1); /* exactly the input's bytes: ASan sees a read past them */
  if (!copy) return 0;
  memcpy(copy, data, size);
  tide_gif *gif = NULL;
  int64_t frames = 0, h = 0, w = 0;
  if (tide_gif_read("decode_gif", copy, size, (int64_t)1 << 24, &gif, &frames, &h, &w) != TIDE_OK) {
    if (!tide_last_error()[0] || gif) __builtin_trap(); /* every refusal says why, and keeps nothing */
  } else {
    if (frames < 1 || h < 1 || w < 1 || frames * h * w * 3 > ((int64_t)1 << 24)) __builtin_trap();
    uint8_t *out = malloc((size_t)(frames * h * w * 3));
    if (out) {
      if (tide_gif_pixels("decode_gif", gif, out) != TIDE_OK && !tide_last_error()[0]) __builtin_trap();
      free(out);
    }
    tide_gif_free(gif);
  }
  free(copy);
  return 0;
}
