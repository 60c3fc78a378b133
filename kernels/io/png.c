/* io/png.c — decode_png and encode_png (TF's DecodePng and EncodePng) with
 * libpng, the library TF uses, with TF's transforms, so decoded pixels agree. */
#include "image_io.h"
#include "../core/infer_rank.h"

#include <png.h>
#include <zlib.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

/* libpng reports errors through this context: the message is kept and the
 * call longjmps back to the setjmp in the decoder or encoder (libpng's
 * default would print and abort). */
typedef struct png_ctx {
  const unsigned char *data; /* reading: the encoded bytes */
  size_t size, pos;
  unsigned char *out;        /* writing: a growing buffer */
  size_t out_size, out_cap;
  char msg[200];
} png_ctx;

static void on_error(png_structp png, png_const_charp msg) {
  png_ctx *c = png_get_error_ptr(png);
  snprintf(c->msg, sizeof c->msg, "%s", msg ? msg : "unknown error");
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; } /* TF ignores them too */

static void read_bytes(png_structp png, png_bytep dst, png_size_t n) {
  png_ctx *c = png_get_io_ptr(png);
  if (n > c->size - c->pos) png_error(png, "the data ends early (truncated file?)");
  memcpy(dst, c->data + c->pos, n);
  c->pos += n;
}

/* ---- decode_png --------------------------------------------------------- */

/* decode_png(contents) -> [H, W, C]; n = channels (0: the file's), dtype
 * uint8, or int32 for 16-bit samples (tide has no uint16: values 0..65535). */
tide_status tide_infer_decode_png(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status s = tide_image_check_decode(def, in[0], a->n, TIDE_IMAGE_CHANNELS(0, 1, 3, 4), "0, 1, 3 or 4");
  if (s != TIDE_OK) return s;
  if (a->dtype != TIDE_UINT8 && a->dtype != TIDE_INT32)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: dtype must be uint8, or int32 for 16-bit samples", def->name);
  tide_image_infer_hwc(out[0], a->dtype, a->n);
  return TIDE_OK;
}

/* Set up TF's transforms (png_io.cc CommonInitDecode) for the image whose
 * header png has read; returns the output channel count. */
static int set_transforms(png_structp png, png_infop info, int channels, bool want16) {
  int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (channels == 0)
    channels = color == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3) : png_get_channels(png, info);
  bool has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0;
  if ((channels & 1) == 0) { /* alpha wanted */
    if (!has_alpha) {
      if (has_trns) png_set_tRNS_to_alpha(png);
      else png_set_add_alpha(png, (1u << depth) - 1, PNG_FILLER_AFTER);
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (depth > 8 && !want16) png_set_strip_16(png); /* TF keeps the high byte */
  png_set_packing(png);
  if (want16) png_set_swap(png); /* 16-bit samples in host order (little-endian) */
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  bool want_gray = channels < 3, is_gray = !(color & PNG_COLOR_MASK_COLOR);
  if (is_gray && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (want_gray && !is_gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587); /* Rec. 601, as TF */
  if (!want_gray && is_gray) png_set_gray_to_rgb(png);
  return channels;
}

/* Decode c's bytes into out (allocated here once the header is read). The
 * locals that live across setjmp are volatile or set before it. */
static tide_status decode(const char *op, png_ctx *c, int channels, int dtype, tide_tensor *out) {
  bool want16 = dtype == TIDE_INT32;
  if (c->size < 8 || png_sig_cmp(c->data, 0, 8) != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: not a PNG image (%zu bytes that do not start with PNG's signature)", op,
                     c->size);
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, on_error, on_warning);
  if (!png) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", op);
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", op);
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, NULL);
    tide_tensor_release(out);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid PNG data: %s", op, c->msg);
  }
  png_set_read_fn(png, c, read_bytes);
  png_read_info(png, info);
  png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  int depth = png_get_bit_depth(png, info), interlace = png_get_interlace_type(png, info);
  int ch = set_transforms(png, info, channels, want16);
  int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  int64_t sample = want16 && depth > 8 ? 2 : 1, row_bytes = (int64_t)width * ch * sample;
  int64_t decoded = row_bytes * (int64_t)height;
  /* PNG's image data is deflated rows (a filter byte each): deflate expands
   * at most ~1032:1, so a header declaring more than that of the bytes
   * left is a lie (a hostile or truncated file), found before allocating. */
  int64_t raw_rows = ((int64_t)width * png_get_channels(png, info) * depth + 7) / 8 + 1;
  if (decoded > TIDE_IMAGE_MAX_BYTES || raw_rows * (int64_t)height / 1032 > (int64_t)(c->size - c->pos) + 1024) {
    png_destroy_read_struct(&png, &info, NULL);
    if (decoded > TIDE_IMAGE_MAX_BYTES)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the image is too large: %ux%u with %d channel(s) would take %lld bytes "
                       "(the limit is %lld)", op, (unsigned)width, (unsigned)height, ch, (long long)decoded,
                       (long long)TIDE_IMAGE_MAX_BYTES);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid PNG data: the header declares %ux%u pixels, more than %zu bytes "
                     "of data can hold (truncated or corrupt file)", op, (unsigned)width, (unsigned)height,
                     c->size);
  }
  int64_t dims[3] = {height, width, ch};
  if (tide_tensor_init(out, dtype, 3, dims) != TIDE_OK) {
    png_destroy_read_struct(&png, &info, NULL);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a %ux%ux%d image", op, (unsigned)height,
                     (unsigned)width, ch);
  }
  if ((int64_t)png_get_rowbytes(png, info) != row_bytes) png_error(png, "unexpected row size after transforms");
  unsigned char *rows = out->data; /* 16-bit: packed in the first half of the int32 buffer */
  for (int p = 0; p < passes; p++)
    for (png_uint_32 y = 0; y < height; y++) png_read_row(png, rows + (int64_t)y * row_bytes, NULL);
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  TIDE_UNUSED(interlace);
  int64_t n = out->nelem;
  int32_t *wide = out->data;
  if (want16 && depth > 8) { /* widen the uint16 samples in place, from the end */
    const uint16_t *u16 = (const uint16_t *)rows;
    for (int64_t i = n - 1; i >= 0; i--) wide[i] = u16[i];
  } else if (want16) { /* 8-bit samples as 16 (TF's Convert8to16: v * 257) */
    for (int64_t i = n - 1; i >= 0; i--) wide[i] = rows[i] * 257;
  }
  return TIDE_OK;
}

tide_status tide_cpu_decode_png(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  png_ctx c = {.data = b.data, .size = b.size};
  st = decode(def->name, &c, (int)a->n, a->dtype, out[0]);
  free(b.owned);
  return st;
}

/* ---- encode_png ---------------------------------------------------------- */

/* encode_png(image [H, W, C]) -> uint8 [bytes]: C 1 to 4; uint8 gives 8-bit
 * samples, int32 (values 0..65535) 16-bit; n = compression -1 (zlib's default) to 9. */
tide_status tide_infer_encode_png(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  char s[128];
  if (x->dt != TIDE_UINT8 && x->dt != TIDE_INT32)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: image must be uint8 (or int32 holding 16-bit samples), got %s (convert "
                     "with tide.image.convert_image_dtype(image, \"uint8\"))", def->name, tide_dtype_name(x->dt));
  if (x->ndim != 3 || (x->dims[2] >= 0 && (x->dims[2] < 1 || x->dims[2] > 4)))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: image must be [height, width, channels] with 1 to 4 channels, got shape %s",
                     def->name, TIDE_SHAPE_STR(s, x));
  if (a->n < -1 || a->n > 9)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: compression must be -1 to 9, got %lld", def->name, (long long)a->n);
  int64_t unknown = -1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_UINT8, 1, &unknown);
  return TIDE_OK;
}

static void write_bytes(png_structp png, png_bytep src, png_size_t n) {
  png_ctx *c = png_get_io_ptr(png);
  if (n > c->out_cap - c->out_size) {
    size_t cap = c->out_cap ? c->out_cap : 4096;
    while (cap - c->out_size < n) cap *= 2;
    unsigned char *grown = realloc(c->out, cap);
    if (!grown) png_error(png, "out of memory");
    c->out = grown;
    c->out_cap = cap;
  }
  memcpy(c->out + c->out_size, src, n);
  c->out_size += n;
}

static void flush_bytes(png_structp png) { (void)png; }

/* Encode the contiguous x into c->out (rows of 16-bit samples are packed
 * into `row`, a buffer of one row, big-endian as PNG stores them). */
static tide_status encode(const char *op, png_ctx *c, const tide_tensor *x, int level, unsigned char *row) {
  int64_t h = x->dims[0], w = x->dims[1], ch = x->dims[2];
  bool wide = x->dt == TIDE_INT32;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, on_error, on_warning);
  if (!png) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", op);
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", op);
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s", op, c->msg);
  }
  static const int color[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                               PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png, c, write_bytes, flush_bytes);
  png_set_compression_level(png, level < 0 ? Z_DEFAULT_COMPRESSION : level);
  png_set_compression_mem_level(png, MAX_MEM_LEVEL);
  png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, wide ? 16 : 8, color[ch], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < h; y++) {
    if (wide) {
      const int32_t *src = (const int32_t *)x->data + y * w * ch;
      for (int64_t i = 0; i < w * ch; i++) {
        row[2 * i] = (unsigned char)(src[i] >> 8);
        row[2 * i + 1] = (unsigned char)src[i];
      }
      png_write_row(png, row);
    } else {
      png_write_row(png, (png_bytep)x->data + y * w * ch);
    }
  }
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return TIDE_OK;
}

/* A contiguous copy of x (any strides) in the blank header tmp, or x itself. */
static tide_status contiguous(const char *op, const tide_tensor *x, tide_tensor *tmp, const tide_tensor **use) {
  int64_t want = 1;
  bool dense = true;
  for (int d = x->ndim - 1; d >= 0; d--) {
    if (x->dims[d] != 1 && x->strides[d] != want) dense = false;
    want *= x->dims[d];
  }
  *use = x;
  if (dense) return TIDE_OK;
  if (tide_tensor_init(tmp, x->dt, x->ndim, x->dims)) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", op);
  size_t es = tide_dtype_size_unchecked(x->dt);
  int64_t idx[3] = {0, 0, 0};
  for (int64_t i = 0; i < x->nelem; i++) {
    const char *src = (const char *)x->data + (idx[0] * x->strides[0] + idx[1] * x->strides[1] + idx[2] * x->strides[2]) * (int64_t)es;
    memcpy((char *)tmp->data + i * (int64_t)es, src, es);
    for (int d = 2; d >= 0 && ++idx[d] == x->dims[d]; d--) idx[d] = 0;
  }
  *use = tmp;
  return TIDE_OK;
}

tide_status tide_cpu_encode_png(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  char s[128];
  if (x->dims[0] < 1 || x->dims[1] < 1 || x->dims[0] > 0x7fffffff || x->dims[1] > 0x7fffffff)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: image must have at least one pixel (and at most 2^31 - 1 a side), got "
                     "shape %s", def->name, TIDE_SHAPE_STR(s, x));
  if (x->dt == TIDE_INT32) {
    for (int64_t i = 0; i < x->nelem; i++) {
      int64_t off = 0, rest = i;
      for (int d = 2; d >= 0; d--) {
        off += (rest % x->dims[d]) * x->strides[d];
        rest /= x->dims[d];
      }
      int32_t v = ((const int32_t *)x->data)[off];
      if (v < 0 || v > 65535)
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: an int32 image holds 16-bit samples (0 to 65535), got %d", def->name, v);
    }
  }
  tide_tensor tmp = {0};
  const tide_tensor *use;
  tide_status st = contiguous(def->name, x, &tmp, &use);
  if (st) return st;
  unsigned char *row = malloc((size_t)(x->dims[1] * x->dims[2] * 2));
  png_ctx c = {0};
  if (!row) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  if (!st) st = encode(def->name, &c, use, (int)a->n, row);
  if (!st) {
    int64_t n = (int64_t)c.out_size;
    st = tide_tensor_init(out[0], TIDE_UINT8, 1, &n);
    if (!st) memcpy(out[0]->data, c.out, c.out_size);
  }
  free(c.out);
  free(row);
  tide_tensor_release(&tmp);
  return st;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* The generic rule: the dtype rule on the bytes or image, outputs of unknown rank. */
const tide_rank_rule tide_infer_decode_png_rank = {NULL, NULL, NULL};
const tide_rank_rule tide_infer_encode_png_rank = {NULL, NULL, NULL};
