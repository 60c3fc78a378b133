/* tide/bmp.h — BMP files as TF's DecodeBmp reads them: the header's fields checked against the bytes, then
 * the pixels as RGB(A). Used by the decode_bmp op (kernels/io/bmp_op.c) and the fuzz target. */
#ifndef TIDE_BMP_H
#define TIDE_BMP_H
#include "tide/export.h"
#include "tide/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the header says, once checked: rows x width pixels of file_channels bytes (1, 3 or 4), rows of
 * row_size bytes (padded to 4) from `offset`, top-down when the stored height is negative. */
typedef struct tide_bmp_info {
  int64_t rows, width, offset, row_size;
  int file_channels;
  bool top_down;
} tide_bmp_info;

/* Read and check the header of the `size` bytes at `data` (TF's checks: a "BM" signature, at least 32
 * bytes, 8/24/32 bits per pixel, width > 0, height != 0, a non-negative offset, and exactly offset +
 * row_size * rows bytes); an error names `op` and the fault. */
TIDE_API tide_status tide_bmp_header(const char *op, const uint8_t *data, size_t size, tide_bmp_info *info);

/* The pixels of a checked file into out [rows, width, channels] (channels 1 only for 8-bit files, else 3
 * or 4): BGR(A) -> RGB(A), grey repeated, an alpha asked for and absent made opaque (TF's DecodeBMP). */
TIDE_API void tide_bmp_pixels(const uint8_t *data, const tide_bmp_info *info, int channels, uint8_t *out);

#ifdef __cplusplus
}
#endif
#endif
