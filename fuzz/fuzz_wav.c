/* fuzz/fuzz_wav.c — libFuzzer target for the WAV reader (kernels/io/wav.c, under decode_wav): any bytes are
 * refused with an error saying why, or give a header whose samples are all inside the bytes, read for the file's
 * channels and for padded and up-mixed shapes; never a crash or an overread.
 * fuzz-sources: kernels/io/wav.c */
#include "tide/tide.h"
#include "tide/wav.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1); /* exactly the input's bytes: ASan sees a read past them */
  if (!copy) return 0;
  memcpy(copy, data, size);
  tide_wav_info info;
  if (tide_wav_header("decode_wav", copy, size, &info) != TIDE_OK) {
    if (!tide_last_error()[0]) __builtin_trap(); /* every refusal says why */
  } else {
    if (info.channels < 1 || info.sample_count < 0 ||
        info.data_offset + 2 * info.sample_count * info.channels > (int64_t)size)
      __builtin_trap();
    int64_t shapes[3][2] = {{info.sample_count, info.channels}, {info.sample_count + 3, 1}, {2, info.channels + 2}};
    for (int i = 0; i < 3; i++) {
      if (shapes[i][0] * shapes[i][1] > (1 << 22)) continue;
      size_t n = (size_t)(shapes[i][0] * shapes[i][1]);
      float *out = malloc((n ? n : 1) * sizeof(float));
      if (!out) break;
      tide_wav_samples(copy, &info, shapes[i][0], shapes[i][1], out);
      free(out);
    }
  }
  free(copy);
  return 0;
}
