/* tide/webp.h — WebP files as TF's DecodeWebP reads them (libwebp): a still image, or an animation's frames
 * as whole RGBA canvases. Used by the decode_webp op (kernels/io/webp_op.c) and the fuzz target. */
#ifndef TIDE_WEBP_H
#define TIDE_WEBP_H
#include "tide/export.h"
#include "tide/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the file says: frames of height x width pixels; channels 4 when it has alpha or is an animation
 * (animations decode to RGBA), else 3. */
typedef struct tide_webp_info {
  int64_t frames, height, width;
  int channels;
  bool animated;
} tide_webp_info;

/* Read the `size` bytes' header (and an animation's frame count); frames * height * width * channels must
 * stay within max_bytes. A bad or truncated header is an error naming `op`. */
TIDE_API tide_status tide_webp_info_of(const char *op, const uint8_t *data, size_t size, int64_t max_bytes,
                                       tide_webp_info *info);

/* Decode into out [frames, height, width, info->channels]; a corrupt bitstream is an error naming `op`. */
TIDE_API tide_status tide_webp_pixels(const char *op, const uint8_t *data, size_t size, const tide_webp_info *info,
                                      uint8_t *out);

#ifdef __cplusplus
}
#endif
#endif
