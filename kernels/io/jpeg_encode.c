/* io/jpeg_encode.c — encode_jpeg (TF's EncodeJpeg and EncodeJpegVariableQuality) with
 * libjpeg-turbo and TF's settings (jpeg_mem.cc's Compress), errors caught as the decoder's. */
#include "image_io.h"
#include "jpeg_errors.h"
#include "../core/infer_rank.h"

#include <string.h>

enum { ENC_PROGRESSIVE = 1, ENC_OPTIMIZE = 2, ENC_CHROMA_DOWNSAMPLING = 4 }; /* attrs.m (ops.def) */

/* The channels format n asks for: 0 (the image's), 1 (grayscale) or 3 (rgb). */
static tide_status check_format(const tide_op_def *def, const tide_tensor *x, int64_t format) {
  char s[128];
  if (format != 0 && format != 1 && format != 3)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: format code must be 0 (by channels), 1 (grayscale) or 3 (rgb), got %lld",
                     def->name, (long long)format);
  int64_t c = x->dims[2];
  if (c >= 0 && (format ? c != format : (c != 1 && c != 3)))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: image must have %s channels, got shape %s", def->name,
                     format == 1 ? "1" : format == 3 ? "3" : "1 or 3", TIDE_SHAPE_STR(s, x));
  return TIDE_OK;
}

/* encode_jpeg(image uint8 [H, W, 1|3], quality int32 []) -> uint8 [n], n known once encoded. */
tide_status tide_infer_encode_jpeg(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *q = in[1];
  char s[128];
  if (x->dt != TIDE_UINT8)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: image must be uint8, got %s (convert it with tide.image.convert_image_dtype)",
                     def->name, tide_dtype_name(x->dt));
  if (x->ndim != 3)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: image must be 3-dimensional [height, width, channels], got shape %s",
                     def->name, TIDE_SHAPE_STR(s, x));
  tide_status st = check_format(def, x, a->n);
  if (st) return st;
  if (q->dt != TIDE_INT32 || q->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: quality must be an int32 scalar, got %s %s", def->name,
                     tide_dtype_name(q->dt), TIDE_SHAPE_STR(s, q));
  if (a->nints != 3 || (a->ints[0] != 0 && a->ints[0] != 1) || a->ints[1] < 0 || a->ints[1] > 65535 ||
      a->ints[2] < 0 || a->ints[2] > 65535)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects ints = {density_unit (0 in, 1 cm), x_density, y_density} with "
                     "densities in [0, 65535]", def->name);
  if (a->dtype != TIDE_UINT8) return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: dtype must be uint8", def->name);
  int64_t unknown = -1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_UINT8, 1, &unknown);
  return TIDE_OK;
}

typedef struct encoder {
  struct jpeg_compress_struct cinfo;
  jpeg_errors err;
  unsigned char *buf;   /* jpeg_mem_dest's, freed by us */
  unsigned long size;
  unsigned char *row;   /* a contiguous row of a strided image */
} encoder;

static tide_status encode(const char *op, encoder *e, const tide_tensor *x, int quality, const tide_attrs *a,
                          tide_tensor *out) {
  j_compress_ptr cinfo = &e->cinfo;
  tide_jpeg_errors_init((j_common_ptr)cinfo, &e->err);
  if (setjmp(e->err.jump)) {
    jpeg_destroy_compress(cinfo);
    tide_tensor_release(out);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: cannot encode the image as JPEG: %s", op, e->err.msg);
  }
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, &e->buf, &e->size);
  int64_t h = x->dims[0], w = x->dims[1], c = x->dims[2];
  if (h > 65500 || w > 65500 || h == 0 || w == 0) {
    snprintf(e->err.msg, sizeof e->err.msg, "its size %lldx%lld is outside JPEG's 1 to 65500 pixels a side",
             (long long)h, (long long)w);
    longjmp(e->err.jump, 1);
  }
  cinfo->image_width = (JDIMENSION)w;
  cinfo->image_height = (JDIMENSION)h;
  cinfo->input_components = (int)c;
  cinfo->in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  if (a->m & ENC_OPTIMIZE) cinfo->optimize_coding = TRUE;
  cinfo->density_unit = (UINT8)(a->ints[0] + 1); /* JFIF: 1 dots per inch, 2 per cm */
  cinfo->X_density = (UINT16)a->ints[1];
  cinfo->Y_density = (UINT16)a->ints[2];
  jpeg_set_quality(cinfo, quality, TRUE);
  if (a->m & ENC_PROGRESSIVE) jpeg_simple_progression(cinfo);
  if (!(a->m & ENC_CHROMA_DOWNSAMPLING))
    for (int i = 0; i < cinfo->num_components; i++) cinfo->comp_info[i].h_samp_factor = cinfo->comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(cinfo, TRUE);
  bool packed = x->strides[2] == 1 && x->strides[1] == c;
  if (!packed && !(e->row = malloc((size_t)(w * c)))) {
    snprintf(e->err.msg, sizeof e->err.msg, "out of memory");
    longjmp(e->err.jump, 1);
  }
  const unsigned char *px = x->data;
  while (cinfo->next_scanline < cinfo->image_height) {
    int64_t r = cinfo->next_scanline;
    JSAMPROW row = (JSAMPROW)(px + r * x->strides[0]);
    if (!packed) {
      for (int64_t j = 0; j < w; j++)
        for (int64_t k = 0; k < c; k++) e->row[j * c + k] = px[r * x->strides[0] + j * x->strides[1] + k * x->strides[2]];
      row = e->row;
    }
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  int64_t n = (int64_t)e->size;
  if (tide_tensor_init(out, TIDE_UINT8, 1, &n) != TIDE_OK) {
    snprintf(e->err.msg, sizeof e->err.msg, "out of memory for %lld bytes", (long long)n);
    longjmp(e->err.jump, 1);
  }
  memcpy(out->data, e->buf, (size_t)n);
  jpeg_destroy_compress(cinfo);
  return TIDE_OK;
}

tide_status tide_cpu_encode_jpeg(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int quality = *(const int32_t *)in[1]->data;
  if (quality < 0 || quality > 100)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: quality must be in [0, 100], got %d", def->name, quality);
  encoder *e = calloc(1, sizeof *e);
  if (!e) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  tide_status st = encode(def->name, e, in[0], quality, a, out[0]);
  free(e->buf);
  free(e->row);
  free(e);
  return st;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* The image is [H, W, C] and quality a scalar: the result is a vector whatever the stand-ins. */
static int encode_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 3 : 0;
}
const tide_rank_rule tide_infer_encode_jpeg_rank = {encode_rank, tide_rank_keeps, NULL};
