/* tide/gif.h — GIF files as TF's DecodeGif reads them (giflib): every frame composited over the one before
 * on a canvas of the largest frame's size, RGB. Used by the decode_gif op (kernels/io/gif_op.c) and the fuzz target. */
#ifndef TIDE_GIF_H
#define TIDE_GIF_H
#include "tide/export.h"
#include "tide/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A read GIF: its frames' color indices and color maps, kept until tide_gif_free. */
typedef struct tide_gif tide_gif;

/* Read the `size` bytes at `data`: every frame's descriptor, transparency (its graphics control block) and
 * de-interlaced color indices. The canvas is the largest frame's width and height (TF's rule, not the
 * screen's); frames * height * width * 3 and the indices together must stay within max_bytes. A corrupt,
 * truncated or frameless file, or one too large, is an error naming `op` and the fault (*out NULL). */
TIDE_API tide_status tide_gif_read(const char *op, const uint8_t *data, size_t size, int64_t max_bytes,
                                   tide_gif **out, int64_t *frames, int64_t *height, int64_t *width);

/* The frames into out [frames, height, width, 3], as TF: the first frame over black, each next one over
 * a copy of the one before, transparent indices keeping what is under them; an index beyond its color map
 * (or a frame with no color map) is an error naming `op`. */
TIDE_API tide_status tide_gif_pixels(const char *op, const tide_gif *gif, uint8_t *out);

TIDE_API void tide_gif_free(tide_gif *gif);

#ifdef __cplusplus
}
#endif
#endif
