/* io/jpeg.c — decode_jpeg (TF's DecodeJpeg) with libjpeg-turbo and TF's
 * options (jpeg_mem.cc), errors caught by a setjmp error manager. */
#include "image_io.h"
#include "jpeg_errors.h"
#include "../core/infer_rank.h"

#include <string.h>

/* A source over the whole buffer. Running out of data is an error, as TF's
 * decoder (try_recover_truncated=false) has it: no fake end marker. */
static void src_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean src_fill(j_decompress_ptr cinfo) {
  jpeg_errors *e = (jpeg_errors *)cinfo->err;
  snprintf(e->msg, sizeof e->msg, "the data ends early (truncated file?)");
  longjmp(e->jump, 1);
  return FALSE;
}

static void src_skip(j_decompress_ptr cinfo, long n) {
  struct jpeg_source_mgr *s = cinfo->src;
  if (n <= 0) return;
  if ((size_t)n > s->bytes_in_buffer) src_fill(cinfo);
  s->next_input_byte += n;
  s->bytes_in_buffer -= (size_t)n;
}

static void src_term(j_decompress_ptr cinfo) { (void)cinfo; }

/* decode_jpeg(contents) -> uint8 [H, W, C]; n = channels (0: the file's, 1
 * or 3), m = ratio (1, 2, 4, 8: the image shrunk that many times), axis = dct
 * method (0 INTEGER_ACCURATE, 1 INTEGER_FAST: TF 2.21's default, which tide.image passes). */
tide_status tide_infer_decode_jpeg(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status s = tide_image_check_decode(def, in[0], a->n, TIDE_IMAGE_CHANNELS(0, 1, 3), "0, 1 or 3");
  if (s != TIDE_OK) return s;
  if (!(a->m == 1 || a->m == 2 || a->m == 4 || a->m == 8))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: ratio must be 1, 2, 4 or 8, got %lld", def->name, (long long)a->m);
  if (a->axis != 0 && a->axis != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: dct method code must be 0 (INTEGER_ACCURATE) or 1 (INTEGER_FAST), got %d",
                     def->name, a->axis);
  if (a->dtype != TIDE_UINT8) return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: dtype must be uint8", def->name);
  tide_image_infer_hwc(out[0], TIDE_UINT8, a->n);
  return TIDE_OK;
}

/* CMYK (Adobe's inverted form when the file says so) to RGB, as TF does it:
 * libjpeg-turbo gives CMYK only as CMYK. */
static void cmyk_to_rgb(const unsigned char *src, unsigned char *dst, int64_t w, bool adobe) {
  for (int64_t i = 0; i < w; i++) {
    int c = src[4 * i], m = src[4 * i + 1], y = src[4 * i + 2], k = src[4 * i + 3];
    if (adobe) {
      dst[3 * i] = (unsigned char)(k * c / 255);
      dst[3 * i + 1] = (unsigned char)(k * m / 255);
      dst[3 * i + 2] = (unsigned char)(k * y / 255);
    } else {
      dst[3 * i] = (unsigned char)((255 - k) * (255 - c) / 255);
      dst[3 * i + 1] = (unsigned char)((255 - k) * (255 - m) / 255);
      dst[3 * i + 2] = (unsigned char)((255 - k) * (255 - y) / 255);
    }
  }
}

typedef struct decoder {
  struct jpeg_decompress_struct cinfo;
  jpeg_errors err;
  struct jpeg_source_mgr src;
  unsigned char *cmyk_row; /* one row of CMYK samples, for CMYK files */
} decoder;

/* Decode into out (allocated once the header is read). Everything that
 * setjmp's return needs lives in *d, not in locals. */
static tide_status decode(const char *op, decoder *d, const tide_image_bytes *b, const tide_attrs *a,
                          tide_tensor *out) {
  if (b->size < 2 || b->data[0] != 0xff || b->data[1] != 0xd8)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: not a JPEG image (%zu bytes that do not start with JPEG's SOI marker)", op,
                     b->size);
  j_decompress_ptr cinfo = &d->cinfo;
  tide_jpeg_errors_init((j_common_ptr)cinfo, &d->err);
  if (setjmp(d->err.jump)) {
    jpeg_destroy_decompress(cinfo);
    tide_tensor_release(out);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid JPEG data: %s", op, d->err.msg);
  }
  jpeg_create_decompress(cinfo);
  d->src.next_input_byte = b->data;
  d->src.bytes_in_buffer = b->size;
  d->src.init_source = src_init;
  d->src.fill_input_buffer = src_fill;
  d->src.skip_input_data = src_skip;
  d->src.resync_to_restart = jpeg_resync_to_restart;
  d->src.term_source = src_term;
  cinfo->src = &d->src;
  jpeg_read_header(cinfo, TRUE);
  int channels = a->n ? (int)a->n : (cinfo->num_components < 3 ? cinfo->num_components : 3);
  bool cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
  if (channels == 1) cinfo->out_color_space = JCS_GRAYSCALE;
  else if (channels == 3) cinfo->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  else {
    snprintf(d->err.msg, sizeof d->err.msg, "%d color components (expected 1, 3 or 4)", cinfo->num_components);
    longjmp(d->err.jump, 1);
  }
  cinfo->do_fancy_upsampling = TRUE;
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned)a->m;
  cinfo->dct_method = a->axis == 1 ? JDCT_IFAST : JDCT_ISLOW;
  jpeg_calc_output_dimensions(cinfo);
  int64_t w = cinfo->output_width, h = cinfo->output_height, decoded = w * h * channels;
  /* Checked before libjpeg allocates anything of the image's size (a
   * progressive file's coefficients take 2 bytes a sample for the whole
   * image): a hostile header declares up to 65500x65500. Above 16 MiB, an
   * image must also be plausible for its data: each 8x8 block of the first
   * component takes at least one bit in any Huffman-coded scan. */
  int64_t full = (int64_t)cinfo->image_width * cinfo->image_height;
  if (decoded > TIDE_IMAGE_MAX_BYTES || full * cinfo->num_components > 4 * TIDE_IMAGE_MAX_BYTES ||
      (full > ((int64_t)16 << 20) && full / 512 > (int64_t)b->size)) {
    snprintf(d->err.msg, sizeof d->err.msg, "the header declares %ux%u pixels, %s", cinfo->image_width,
             cinfo->image_height, decoded > TIDE_IMAGE_MAX_BYTES ? "larger than the limit of 2^29 bytes decoded"
                                                               : "more than the data can hold (truncated or corrupt file)");
    longjmp(d->err.jump, 1);
  }
  jpeg_start_decompress(cinfo);
  if ((int64_t)cinfo->output_width != w || (int64_t)cinfo->output_height != h || w <= 0 || h <= 0) {
    snprintf(d->err.msg, sizeof d->err.msg, "unexpected output size %ux%u", cinfo->output_width,
             cinfo->output_height);
    longjmp(d->err.jump, 1);
  }
  int64_t dims[3] = {h, w, channels};
  if (tide_tensor_init(out, TIDE_UINT8, 3, dims) != TIDE_OK) {
    snprintf(d->err.msg, sizeof d->err.msg, "out of memory for a %lldx%lldx%d image", (long long)h, (long long)w,
             channels);
    longjmp(d->err.jump, 1);
  }
  if (cmyk && channels == 3 && !(d->cmyk_row = malloc((size_t)w * 4))) {
    snprintf(d->err.msg, sizeof d->err.msg, "out of memory");
    longjmp(d->err.jump, 1);
  }
  unsigned char *pixels = out->data;
  while (cinfo->output_scanline < cinfo->output_height) {
    unsigned char *row = pixels + (int64_t)cinfo->output_scanline * w * channels;
    JSAMPROW target = d->cmyk_row ? d->cmyk_row : row;
    if (jpeg_read_scanlines(cinfo, &target, 1) != 1) {
      snprintf(d->err.msg, sizeof d->err.msg, "the data ends early (truncated file?)");
      longjmp(d->err.jump, 1);
    }
    if (d->cmyk_row) cmyk_to_rgb(d->cmyk_row, row, w, cinfo->saw_Adobe_marker);
  }
  jpeg_finish_decompress(cinfo);
  jpeg_destroy_decompress(cinfo);
  return TIDE_OK;
}

tide_status tide_cpu_decode_jpeg(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  decoder *d = calloc(1, sizeof *d);
  if (!d) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  else st = decode(def->name, d, &b, a, out[0]);
  if (d) free(d->cmyk_row);
  free(d);
  free(b.owned);
  return st;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* The generic rule: the dtype rule on the bytes, outputs of unknown rank. */
const tide_rank_rule tide_infer_decode_jpeg_rank = {NULL, NULL, NULL};
