/* io/bmp.c — BMP files as TF's DecodeBmp reads them (decode_image_op.cc): the header fields it reads, its
 * size checks, BGR(A) to RGB(A), bottom-up rows unless the height is negative. No library (TF uses none);
 * the op that maps this onto tensors is io/bmp_op.c. */
#include "tide/bmp.h"

/* Little-endian fields of the header (BMP's byte order, whatever the machine's). */
static int32_t le32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}
static int16_t le16(const uint8_t *p) { return (int16_t)((uint16_t)p[0] | (uint16_t)p[1] << 8); }

tide_status tide_bmp_header(const char *op, const uint8_t *p, size_t n, tide_bmp_info *info) {
  int64_t size = (int64_t)n;
  if (size < 2 || p[0] != 'B' || p[1] != 'M')
    return tide_set_error(TIDE_ERR_VALUE, "%s: not a BMP image (%lld bytes that do not start with \"BM\")", op,
                          (long long)size);
  if (size < 32)
    return tide_set_error(TIDE_ERR_VALUE, "%s: incomplete BMP content: at least 32 bytes are needed to find the "
                          "header size, width, height and bits per pixel, got %lld bytes", op, (long long)size);
  int32_t header = le32(p + 10), width = le32(p + 18), height = le32(p + 22);
  int bpp = le16(p + 28), file_channels = bpp / 8;
  if (!(file_channels == 1 || file_channels == 3 || file_channels == 4))
    return tide_set_error(TIDE_ERR_VALUE, "%s: the image must have 8, 24 or 32 bits per pixel (1, 3 or 4 channels: "
                          "bits / 8, as TF), the header says %d", op, bpp);
  if (width <= 0 || height == 0 || header < 0)
    return tide_set_error(TIDE_ERR_VALUE, "%s: invalid BMP header: width %d (must be positive), height %d (must be "
                          "nonzero), pixel data offset %d (must be nonnegative)", op, width, height, header);
  int64_t rows = height < 0 ? -(int64_t)height : height;
  if ((int64_t)width * rows >= INT32_MAX / 8)
    return tide_set_error(TIDE_ERR_VALUE, "%s: the image is too large: %dx%lld pixels (the limit is 2^28)", op,
                          width, (long long)rows);
  int64_t row_size = ((int64_t)file_channels * width + 3) / 4 * 4; /* rows padded to 4 bytes */
  int64_t diff = size - header - row_size * rows;
  if (diff != 0)
    return tide_set_error(TIDE_ERR_VALUE, "%s: the input's size (%lld bytes) should match the pixel data offset "
                          "plus row_size * abs(height) (%d + %lld * %lld) but they differ by %lld", op,
                          (long long)size, header, (long long)row_size, (long long)rows, (long long)diff);
  *info = (tide_bmp_info){.rows = rows, .width = width, .offset = header, .row_size = row_size,
                          .file_channels = file_channels, .top_down = height < 0};
  return TIDE_OK;
}

void tide_bmp_pixels(const uint8_t *data, const tide_bmp_info *info, int channels, uint8_t *o) {
  const uint8_t *pixels = data + info->offset;
  int fc = info->file_channels;
  for (int64_t i = 0; i < info->rows; i++) {
    const uint8_t *src = pixels + (info->top_down ? i : info->rows - 1 - i) * info->row_size;
    for (int64_t j = 0; j < info->width; j++, src += fc, o += channels) {
      if (fc == 1) {
        o[0] = src[0];
        if (channels >= 3) o[1] = o[2] = src[0]; /* grey repeated */
      } else { /* BGR(A) -> RGB(A) */
        o[0] = src[2], o[1] = src[1], o[2] = src[0];
      }
      if (channels == 4) o[3] = fc == 4 ? src[3] : UINT8_MAX; /* an alpha asked for and absent: opaque */
    }
  }
}
