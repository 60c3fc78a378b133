/* io/image_io.h — what the image codecs share: the encoded bytes an op reads
 * (a 1-D uint8 tensor, as one contiguous buffer) and the size limits. */
#ifndef TIDE_IO_IMAGE_IO_H
#define TIDE_IO_IMAGE_IO_H

#include "../core/registry.h"
#include "tide/strings.h"

#include <stdlib.h>

/* The most bytes a decoded image may take: TF's JPEG decoder refuses
 * 2^29 (jpeg_mem.cc), and a hostile header must not make us allocate more. */
#define TIDE_IMAGE_MAX_BYTES ((int64_t)1 << 29)

/* Encoded bytes: `data` points into the tensor, or into `owned` (a copy made
 * when the tensor is strided), which the caller frees. */
typedef struct tide_image_bytes {
  const unsigned char *data;
  size_t size;
  unsigned char *owned;
} tide_image_bytes;

/* True when t can be a decoder's contents: a 0-d string tensor (TF's
 * form: what TFRecords and files give), or the bytes as a 1-D uint8 tensor
 * (either of unknown rank while tracing). */
static inline int tide_image_contents_ok(const tide_tensor *t) {
  if (t->dt == TIDE_STRING) return t->ndim == 0 || t->ndim < 0;
  return t->dt == TIDE_UINT8 && (t->ndim == 1 || t->ndim < 0);
}

/* Read the contents input of image op `def` (see tide_image_contents_ok). */
static inline tide_status tide_image_bytes_of(const tide_op_def *def, const tide_tensor *t, tide_image_bytes *b) {
  b->owned = NULL;
  b->data = NULL;
  b->size = 0;
  if (t->dt == TIDE_STRING && t->ndim == 0) {
    int64_t len = 0;
    b->data = (const unsigned char *)tide_string_at(t->data, 0, &len);
    b->size = (size_t)len;
    return TIDE_OK;
  }
  if (t->dt != TIDE_UINT8 || t->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: contents must be a scalar string tensor, a Lua string or the bytes as a "
                     "1-D uint8 tensor, got a %d-D %s tensor", def->name, t->ndim, tide_dtype_name(t->dt));
  b->size = (size_t)t->nelem;
  if (t->nelem == 0 || t->strides[0] == 1) {
    b->data = t->data;
    return TIDE_OK;
  }
  if (!(b->owned = malloc(b->size))) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  const unsigned char *src = t->data;
  for (int64_t i = 0; i < t->nelem; i++) b->owned[i] = src[i * t->strides[0]];
  b->data = b->owned;
  return TIDE_OK;
}

/* The argument checks every decoder's inference starts with: the contents
 * input (see tide_image_contents_ok) and the channels attribute, one of those
 * `allowed` (bit c set: c channels may be asked for; 0 is the file's own),
 * which `allowed_text` lists for the error ("0, 3 or 4 for BMP"). */
static inline tide_status tide_image_check_decode(const tide_op_def *def, const tide_tensor *contents,
                                                  int64_t channels, unsigned allowed, const char *allowed_text) {
  if (!tide_image_contents_ok(contents))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: contents must be a scalar string tensor, a Lua string or the bytes "
                     "as a 1-D uint8 tensor, got a %d-D %s tensor", def->name, contents->ndim,
                     tide_dtype_name(contents->dt));
  if (channels < 0 || channels > 4 || !(allowed >> channels & 1u))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: channels must be %s, got %lld", def->name, allowed_text, (long long)channels);
  return TIDE_OK;
}

/* Bits of tide_image_check_decode's `allowed`. */
#define TIDE_IMAGE_CHANNELS(...) tide_image_channel_bits((int[]){__VA_ARGS__, -1})
static inline unsigned tide_image_channel_bits(const int *counts) {
  unsigned bits = 0;
  for (; *counts >= 0; counts++) bits |= 1u << *counts;
  return bits;
}

/* Infer [H, W, C] with H and W unknown (known when the bytes are decoded)
 * and C = `channels`, or unknown when 0 (the file's own). */
static inline void tide_image_infer_hwc(tide_tensor *out, int dtype, int64_t channels) {
  int64_t dims[3] = {-1, -1, channels > 0 ? channels : -1};
  tide_tensor_set_contiguous_layout(out, dtype, 3, dims);
}

#endif
