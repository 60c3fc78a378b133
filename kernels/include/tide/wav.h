/* tide/wav.h — WAV files as TF's DecodeWav reads them: 16-bit PCM only, the RIFF chunks walked and checked
 * against the bytes, the samples as floats in [-1, 1). Used by the decode_wav op (kernels/io/wav_op.c) and the
 * fuzz target. */
#ifndef TIDE_WAV_H
#define TIDE_WAV_H
#include "tide/export.h"
#include "tide/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a checked file holds: sample_count frames of channels int16 values from byte `data_offset`, at
 * sample_rate frames a second. */
typedef struct tide_wav_info {
  int64_t sample_count, data_offset;
  int32_t channels;
  uint32_t sample_rate;
} tide_wav_info;

/* Walk and check the `size` bytes at `data` (TF's checks and messages: RIFF/WAVE, a 16- or 18-byte fmt chunk,
 * PCM, at least one channel, 16 bits, consistent block align and byte rate, chunks under 2^31 bytes, one data
 * chunk whose samples are all there); an error names `op` and the fault. */
TIDE_API tide_status tide_wav_header(const char *op, const uint8_t *data, size_t size, tide_wav_info *info);

/* The samples of a checked file into out [samples, channels] as value / 32768: frames past the file's are 0,
 * output channel c is the file's channel min(c, channels - 1) (TF's DecodeWav up- and down-mixing). */
TIDE_API void tide_wav_samples(const uint8_t *data, const tide_wav_info *info, int64_t samples, int64_t channels,
                               float *out);

#ifdef __cplusplus
}
#endif
#endif
