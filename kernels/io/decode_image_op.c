/* io/decode_image_op.c — the decode_image op (TF's DecodeImageV2 with expand_animations=False): encoded bytes to
 * uint8 [H, W, C], the format told by its signature, so a traced map decodes any of a folder's images in C. */
#include "image_io.h"
#include "../core/infer_rank.h"
#include "tide/gif.h"

#include <string.h>

/* The formats decode_image takes here: TF's (PNG, JPEG, BMP, GIF) and those tide adds (WebP, JPEG XL). */
typedef enum { FMT_UNKNOWN, FMT_PNG, FMT_JPEG, FMT_BMP, FMT_GIF, FMT_WEBP, FMT_JXL } image_format;

/* The format of `n` encoded bytes from their first bytes (the signatures tide.image.decode_image sniffs). */
static image_format sniff(const unsigned char *b, size_t n) {
  if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) return FMT_PNG;
  if (n >= 2 && b[0] == 0xFF && b[1] == 0xD8) return FMT_JPEG;
  if (n >= 2 && b[0] == 'B' && b[1] == 'M') return FMT_BMP;
  if (n >= 3 && memcmp(b, "GIF", 3) == 0) return FMT_GIF;
  if (n >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0) return FMT_WEBP;
  if ((n >= 2 && b[0] == 0xFF && b[1] == 0x0A) || (n >= 12 && memcmp(b, "\0\0\0\x0cJXL \r\n\x87\n", 12) == 0))
    return FMT_JXL;
  return FMT_UNKNOWN;
}

/* decode_image(contents) -> uint8 [H, W, C]; n = channels (0: the file's, 1, 3, 4). */
tide_status tide_infer_decode_image(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status s = tide_image_check_decode(def, in[0], a->n, TIDE_IMAGE_CHANNELS(0, 1, 3, 4), "0, 1, 3 or 4");
  if (s != TIDE_OK) return s;
  tide_image_infer_hwc(out[0], TIDE_UINT8, a->n);
  return TIDE_OK;
}

const tide_rank_rule tide_infer_decode_image_rank = {NULL, NULL, NULL};

/* A GIF's first frame (TF's decode_image with expand_animations=False), composited as decode_gif does. */
static tide_status first_gif_frame(const tide_op_def *def, const tide_image_bytes *b, tide_tensor *out) {
  tide_gif *gif = NULL;
  int64_t frames = 0, h = 0, w = 0;
  tide_status st = tide_gif_read(def->name, b->data, b->size, TIDE_IMAGE_MAX_BYTES, &gif, &frames, &h, &w);
  uint8_t *all = NULL;
  if (st == TIDE_OK && frames < 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: the GIF has no frame", def->name);
  if (st == TIDE_OK && !(all = malloc((size_t)(frames * h * w * 3))))
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld frames of %lldx%lld", def->name, (long long)frames,
                   (long long)h, (long long)w);
  if (st == TIDE_OK) st = tide_gif_pixels(def->name, gif, all);
  int64_t dims[3] = {h, w, 3};
  if (st == TIDE_OK && tide_tensor_init(out, TIDE_UINT8, 3, dims) != TIDE_OK)
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lldx%lld", def->name, (long long)h, (long long)w);
  if (st == TIDE_OK) memcpy(out->data, all, (size_t)(h * w * 3));
  free(all);
  tide_gif_free(gif);
  return st;
}

/* The first frame of an animated WebP: decode_webp gives [frames, H, W, C]; keep frame 0 as [H, W, C]. */
static tide_status first_webp_frame(const tide_op_def *def, const tide_attrs *a, const tide_tensor *const *in,
                                    tide_tensor *out) {
  tide_tensor all_frames = {0}; /* a blank header the decoder gives a buffer */
  tide_tensor *all = &all_frames;
  tide_status st = tide_cpu_decode_webp(def, a, 1, in, 1, &all);
  int64_t dims[3] = {all->dims[1], all->dims[2], all->dims[3]};
  if (st == TIDE_OK && tide_tensor_init(out, TIDE_UINT8, 3, dims) != TIDE_OK)
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  if (st == TIDE_OK) memcpy(out->data, all->data, (size_t)(dims[0] * dims[1] * dims[2]));
  tide_tensor_release(all);
  return st;
}

tide_status tide_cpu_decode_image(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  image_format f = sniff(b.data, b.size);
  /* Each format's own channel rule, in TF's words, before its decoder runs (they read a->n). */
  tide_attrs fa = *a;
  fa.dtype = TIDE_UINT8;
  switch (f) {
  case FMT_PNG: st = tide_cpu_decode_png(def, &fa, 1, in, 1, out); break;
  case FMT_JPEG:
    if (a->n == 4) st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: JPEG does not support 4 channels", def->name);
    else {
      fa.m = 1;    /* ratio */
      fa.axis = 1; /* TF's default DCT: INTEGER_FAST */
      st = tide_cpu_decode_jpeg(def, &fa, 1, in, 1, out);
    }
    break;
  case FMT_BMP:
    if (a->n == 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: channels must be 0, 3 or 4 for BMP, got 1", def->name);
    else st = tide_cpu_decode_bmp(def, &fa, 1, in, 1, out);
    break;
  case FMT_GIF:
    if (a->n == 1 || a->n == 4)
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: channels must be 0 or 3 for GIF, got %lld", def->name, (long long)a->n);
    else st = first_gif_frame(def, &b, out[0]);
    break;
  case FMT_WEBP:
    if (a->n == 1) st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: channels must be 0, 3 or 4 for WebP, got 1", def->name);
    else st = first_webp_frame(def, &fa, in, out[0]);
    break;
  case FMT_JXL: st = tide_cpu_decode_jxl(def, &fa, 1, in, 1, out); break;
  default:
    st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: unknown image format: the bytes start with none of PNG's, JPEG's, BMP's, "
                   "GIF's, WebP's or JPEG XL's signatures", def->name);
  }
  free(b.owned);
  return st;
}
