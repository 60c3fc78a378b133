/* tide/jxl.h — JPEG XL files as TF's DecodeJxl reads them (libjxl): the first frame as 8-bit grey, RGB or
 * RGBA, oriented. Used by the decode_jxl op (kernels/io/jxl_op.c) and the fuzz target. */
#ifndef TIDE_JXL_H
#define TIDE_JXL_H
#include "tide/export.h"
#include "tide/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the header says: height x width pixels (after the orientation) of channels 1, 2 (grey + alpha),
 * 3 or 4 (the color channels, plus one for alpha). */
typedef struct tide_jxl_info {
  int64_t height, width;
  int channels;
} tide_jxl_info;

/* Read the `size` bytes' basic info; height * width * channels must stay within max_bytes. A file that is
 * not JPEG XL, or a bad or truncated header, is an error naming `op`. */
TIDE_API tide_status tide_jxl_info_of(const char *op, const uint8_t *data, size_t size, int64_t max_bytes,
                                      tide_jxl_info *info);

/* Decode the first frame into out [height, width, info->channels] as uint8; a corrupt or truncated
 * codestream is an error naming `op`. */
TIDE_API tide_status tide_jxl_pixels(const char *op, const uint8_t *data, size_t size, const tide_jxl_info *info,
                                     uint8_t *out);

#ifdef __cplusplus
}
#endif
#endif
