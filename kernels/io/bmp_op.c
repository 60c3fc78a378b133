/* io/bmp_op.c — the decode_bmp op (TF's DecodeBmp) over io/bmp.c's reader: the contents (a string scalar or
 * uint8 bytes) to a uint8 [H, W, C] tensor sized from the checked header. */
#include "image_io.h"
#include "../core/infer_rank.h"
#include "tide/bmp.h"

/* decode_bmp(contents) -> uint8 [H, W, C]; n = channels: 0 (the file's), 3 or 4. */
tide_status tide_infer_decode_bmp(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status s = tide_image_check_decode(def, in[0], a->n, TIDE_IMAGE_CHANNELS(0, 3, 4), "0, 3 or 4 for BMP");
  if (s != TIDE_OK) return s;
  tide_image_infer_hwc(out[0], TIDE_UINT8, a->n);
  return TIDE_OK;
}

const tide_rank_rule tide_infer_decode_bmp_rank = {NULL, NULL, NULL};

tide_status tide_cpu_decode_bmp(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  tide_bmp_info info;
  st = tide_bmp_header(def->name, b.data, b.size, &info);
  if (st == TIDE_OK) {
    int channels = a->n ? (int)a->n : info.file_channels;
    int64_t dims[3] = {info.rows, info.width, channels};
    if (info.rows * info.width * channels > TIDE_IMAGE_MAX_BYTES)
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: the image is too large: %lldx%lld with %d channels", def->name,
                     (long long)info.rows, (long long)info.width, channels);
    else if (tide_tensor_init(out[0], TIDE_UINT8, 3, dims) != TIDE_OK)
      st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a %lldx%lldx%d image", def->name, (long long)info.rows,
                     (long long)info.width, channels);
    else
      tide_bmp_pixels(b.data, &info, channels, out[0]->data);
  }
  free(b.owned);
  return st;
}
